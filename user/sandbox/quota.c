// SPDX-License-Identifier: MIT
/* Shares of the host-wide maps: the limits, the decision, the ledger. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpfbox.h"
#include "quota.h"

void quota_limits_default(struct quota_limits *q, const char *option)
{
	*q = (struct quota_limits){
		.rules = QUOTA_DEFAULT_RULES,
		.user_rules = QUOTA_DEFAULT_USER_RULES,
		.learned = QUOTA_DEFAULT_LEARNED,
		.user_learned = QUOTA_DEFAULT_USER_LEARNED,
		.learned_min_ttl_s = QUOTA_DEFAULT_LEARNED_MIN_TTL_S,
		.option = option,
	};
}

uint32_t quota_capacity(enum quota_kind kind)
{
	return kind == QUOTA_RULES ? BB_MAX_RULES : BB_MAX_LEARNED;
}

uint32_t quota_root_reserve(const struct quota_limits *q, enum quota_kind kind)
{
	/* One sandbox's full share, so that root can always start one; never more than half the map. */
	uint32_t share = kind == QUOTA_RULES ? q->rules : q->learned;

	return share < quota_capacity(kind) / 2 ? share : quota_capacity(kind) / 2;
}

static const struct {
	const char *key;
	size_t off;
	uint32_t max;
} limit_keys[] = {
	{ "rules", offsetof(struct quota_limits, rules), BB_MAX_RULES },
	{ "user-rules", offsetof(struct quota_limits, user_rules), BB_MAX_RULES },
	{ "learned", offsetof(struct quota_limits, learned), BB_MAX_LEARNED },
	{ "user-learned", offsetof(struct quota_limits, user_learned), BB_MAX_LEARNED },
	{ "learned-min-ttl", offsetof(struct quota_limits, learned_min_ttl_s), 86400 },
};

int quota_limits_parse(const char *spec, struct quota_limits *q, struct errmsg *em)
{
	struct quota_limits out = *q;
	const char *p = spec;

	if (!*p)
		return errmsg_set(em, -EINVAL, "empty; expected KEY=N[,KEY=N...] with KEY one of rules, user-rules, "
				  "learned, user-learned, learned-min-ttl");
	while (*p) {
		size_t klen = strcspn(p, "=,"), i;
		unsigned long long v;
		char *end;

		for (i = 0; i < sizeof(limit_keys) / sizeof(limit_keys[0]); i++)
			if (strlen(limit_keys[i].key) == klen && !strncmp(p, limit_keys[i].key, klen))
				break;
		if (i == sizeof(limit_keys) / sizeof(limit_keys[0]))
			return errmsg_set(em, -EINVAL, "unknown key '%.*s'; expected rules, user-rules, learned, "
					  "user-learned or learned-min-ttl", (int)(klen > 64 ? 64 : klen), p);
		if (p[klen] != '=')
			return errmsg_set(em, -EINVAL, "%s: expected %s=N", limit_keys[i].key, limit_keys[i].key);
		p += klen + 1;
		errno = 0;
		v = *p >= '0' && *p <= '9' ? strtoull(p, &end, 10) : (end = (char *)p, 0);
		if (end == p || errno || (*end && *end != ',') || v > limit_keys[i].max ||
		    (v == 0 && limit_keys[i].off != offsetof(struct quota_limits, learned_min_ttl_s)))
			return errmsg_set(em, -EINVAL, "%s: expected a number from %d to %u, got '%.*s'",
					  limit_keys[i].key,
					  limit_keys[i].off == offsetof(struct quota_limits, learned_min_ttl_s) ? 0 : 1,
					  limit_keys[i].max, (int)strcspn(p, ","), p);
		*(uint32_t *)((char *)&out + limit_keys[i].off) = (uint32_t)v;
		p = *end ? end + 1 : end;
		if (*end && !*p)
			return errmsg_set(em, -EINVAL, "a ',' ends the list; expected KEY=N after it");
	}
	if (out.rules > out.user_rules)
		return errmsg_set(em, -EINVAL, "rules=%u is more than user-rules=%u: a sandbox's share is at most "
				  "its user's", out.rules, out.user_rules);
	if (out.learned > out.user_learned)
		return errmsg_set(em, -EINVAL, "learned=%u is more than user-learned=%u: a sandbox's share is at "
				  "most its user's", out.learned, out.user_learned);
	*q = out;
	return 0;
}

void quota_limits_format(const struct quota_limits *q, char *buf, size_t len)
{
	snprintf(buf, len, "rules=%u,user-rules=%u,learned=%u,user-learned=%u,learned-min-ttl=%u", q->rules,
		 q->user_rules, q->learned, q->user_learned, q->learned_min_ttl_s);
}

int quota_decide(const struct quota_limits *q, enum quota_kind kind, uint32_t uid, const struct quota_usage *u,
		 uint64_t need, struct errmsg *em)
{
	bool rules = kind == QUOTA_RULES;
	const char *what = rules ? "rule map entries" : "learned addresses";
	uint32_t per_sandbox = rules ? q->rules : q->learned;
	uint32_t per_user = rules ? q->user_rules : q->user_learned;
	uint64_t cap = quota_capacity(kind), reserve = quota_root_reserve(q, kind);

	if (u->sandbox + need > per_sandbox)
		return errmsg_set(em, -EDQUOT, "the sandbox needs %llu %s, over the limit of %u per sandbox; "
				  "the administrator raises it with %s %s=N",
				  (unsigned long long)(u->sandbox + need), what, per_sandbox, q->option,
				  rules ? "rules" : "learned");
	if (u->uid + need > per_user)
		return errmsg_set(em, -EDQUOT, "uid %u's sandboxes would hold %llu %s (this one needs %llu, the "
				  "others hold %llu), over the limit of %u per user; wait for its other sandboxes "
				  "to end, or the administrator raises it with %s %s=N",
				  (unsigned)uid, (unsigned long long)(u->uid + need), what,
				  (unsigned long long)(u->sandbox + need), (unsigned long long)(u->uid - u->sandbox),
				  per_user, q->option, rules ? "user-rules" : "user-learned");
	if (uid != 0 && u->non_root + need > cap - reserve)
		return errmsg_set(em, -EDQUOT, "the sandboxes of all users but root would hold %llu %s (this one "
				  "needs %llu), over the %llu the host's map of %llu leaves them (%llu are kept for "
				  "root); wait for sandboxes to end, or the administrator lowers the per-user limit "
				  "with %s %s=N",
				  (unsigned long long)(u->non_root + need), what, (unsigned long long)need,
				  (unsigned long long)(cap - reserve), (unsigned long long)cap,
				  (unsigned long long)reserve, q->option, rules ? "user-rules" : "user-learned");
	if (u->all + need > cap)
		return errmsg_set(em, -EDQUOT, "the host's map of %llu %s is full (%llu held, this sandbox needs "
				  "%llu); wait for sandboxes to end", (unsigned long long)cap, what,
				  (unsigned long long)u->all, (unsigned long long)need);
	return 0;
}

/* The host-wide lock every reservation is made under; released when its descriptor closes (and by a crash). */
static int ledger_lock(void)
{
	int fd = open(QUOTA_LOCK_PATH, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (fd < 0)
		return -errno;
	while (flock(fd, LOCK_EX)) {
		if (errno != EINTR) {
			int err = -errno;

			close(fd);
			return err;
		}
	}
	return fd;
}

static uint32_t *field(struct bb_quota *v, enum quota_kind kind)
{
	return kind == QUOTA_RULES ? &v->rules : &v->learned;
}

/* Sums the ledger for the sandbox id of uid; *own is its entry (zero when it has none). */
static int ledger_sum(int fd, uint64_t id, uint32_t uid, enum quota_kind kind, struct quota_usage *u,
		      struct bb_quota *own)
{
	uint64_t key, *prev = NULL;
	struct bb_quota v;

	memset(u, 0, sizeof(*u));
	memset(own, 0, sizeof(*own));
	own->uid = uid;
	while (!bpf_map_get_next_key(fd, prev, &key)) {
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &v))
			continue; /* deleted meanwhile: an end only lowers the sums */
		u->all += *field(&v, kind);
		if (v.uid != 0)
			u->non_root += *field(&v, kind);
		if (v.uid == uid)
			u->uid += *field(&v, kind);
		if (key == id) {
			*own = v;
			u->sandbox = *field(&v, kind);
		}
	}
	if (errno != ENOENT)
		return -errno;
	return 0;
}

int quota_reserve(const struct bpf_state *st, const struct quota_limits *q, uint64_t id, uint32_t uid,
		  enum quota_kind kind, uint32_t need, struct errmsg *em)
{
	struct quota_usage u;
	struct bb_quota own;
	int lock, err;

	lock = ledger_lock();
	if (lock < 0)
		return errmsg_set(em, lock, "locking %s", QUOTA_LOCK_PATH);
	err = ledger_sum(st->maps.quotas, id, uid, kind, &u, &own);
	if (err) {
		errmsg_set(em, err, "reading the quota ledger");
		goto cleanup;
	}
	if (own.uid != uid) {
		err = errmsg_set(em, -EINVAL, "the sandbox is in the ledger under uid %u, not %u", (unsigned)own.uid,
				 (unsigned)uid);
		goto cleanup;
	}
	err = quota_decide(q, kind, uid, &u, need, em);
	if (err)
		goto cleanup;
	*field(&own, kind) += need;
	if (bpf_map_update_elem(st->maps.quotas, &id, &own, BPF_ANY))
		err = errmsg_set(em, -errno, "writing the quota ledger (limit %d sandboxes)", BB_MAX_SANDBOXES);
cleanup:
	close(lock);
	return err;
}

void quota_settle(const struct bpf_state *st, uint64_t id, enum quota_kind kind, uint32_t held)
{
	struct bb_quota v;
	int lock = ledger_lock();

	if (lock < 0)
		return; /* the reservation stays as high as it was: never less than what is held */
	if (!bpf_map_lookup_elem(st->maps.quotas, &id, &v) && held < *field(&v, kind)) {
		*field(&v, kind) = held;
		bpf_map_update_elem(st->maps.quotas, &id, &v, BPF_EXIST);
	}
	close(lock);
}

void quota_release(const struct bpf_state *st, uint64_t id)
{
	/* Under the lock, so that a reservation's walk of the ledger never restarts on a deleted key. */
	int lock = ledger_lock();

	bpf_map_delete_elem(st->maps.quotas, &id);
	if (lock >= 0)
		close(lock);
}
