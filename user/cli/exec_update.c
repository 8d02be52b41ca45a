// SPDX-License-Identifier: MIT
/*
 * A running sandbox's policy changed from outside (exec_update.h): every
 * source loads its document as the start did, under the same ceiling, and
 * the run switches to the result or keeps what it has.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec_update.h"
#include "lib/diag.h"
#include "log/log.h"
#include "policy/policy_ceiling.h"
#include "policy/policy_grants.h"
#include "sandbox/identity.h"
#include "sandbox/run_control.h"
#include "sandbox/sandbox_maps.h"

/* A root-owned file read whole (the administrator's policy): NULL if unreadable. */
static char *read_text(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n;

	if (!f)
		return NULL;
	n = getdelim(&buf, &cap, 0, f);
	fclose(f);
	if (n < 0 || (size_t)n > RUN_CONTROL_POLICY_MAX) {
		free(buf);
		return NULL;
	}
	*len = (size_t)n;
	return buf;
}

/* The administrator's policy in force, loaded for this caller as at start. */
static int load_admin(const struct live_policy *lp, const char *text, size_t len, FILE *msgs,
		      struct policy **out)
{
	struct policy_load_opts alo = lp->lo;
	const struct identity *id = &lp->run->ident;
	struct diag_list diags;
	int err;

	alo.strict = false;
	alo.guard = lp->caller && id->switch_user && id->uid != 0;
	alo.guard_uid = id->uid;
	if (!text)
		return policy_default(&alo, out);
	diag_list_init(&diags);
	err = policy_load_buffer(lp->ceiling_name, text, len, &alo, out, &diags);
	if (err)
		diag_print(&diags, lp->ceiling_name, msgs, false);
	diag_list_free(&diags);
	return err;
}

/* The caller's document, its paths resolved with the caller's credentials (as load_as_caller at start). */
static int load_mine(const struct live_policy *lp, const char *name, const char *text, size_t len, FILE *msgs,
		     struct policy **out)
{
	const struct identity *id = &lp->run->ident;
	bool as_caller = lp->caller && id->switch_user && id->uid;
	struct identity_fs saved;
	struct diag_list diags;
	int err, back = 0;

	if (as_caller) {
		err = identity_fs_enter(id, &saved);
		if (err) {
			fprintf(msgs, "bpfbox: cannot take uid %u's credentials to resolve the policy's paths: %s\n",
				(unsigned)id->uid, strerror(-err));
			return err;
		}
	}
	diag_list_init(&diags);
	err = policy_load_buffer(name, text, len, &lp->lo, out, &diags);
	if (as_caller)
		back = identity_fs_leave(&saved);
	diag_print(&diags, name, msgs, false);
	diag_list_free(&diags);
	if (back) {
		/* The supervisor would go on with the caller's view of the filesystem: it must not. */
		fprintf(stderr, "bpfbox: cannot return to root's credentials after reading a policy: %s; "
			"stopping\n", strerror(-back));
		abort();
	}
	return err;
}

/*
 * The effective policy of a document: itself, or under the ceiling with
 * every cut said on msgs. own: the caller has a document of its own (else
 * the ceiling's applies as it is, as at start).
 */
static int load_effective(const struct live_policy *lp, const char *name, const char *text, size_t len, bool own,
			  FILE *msgs, struct policy **out)
{
	struct ceiling_cuts cuts = CEILING_CUTS_INIT;
	struct policy *admin = NULL, *mine = NULL;
	int err;

	*out = NULL;
	if (!lp->bound)
		return load_mine(lp, name, text, len, msgs, out);
	err = load_admin(lp, lp->ceiling, lp->ceiling_len, msgs, &admin);
	if (err) {
		fprintf(msgs, "bpfbox: the administrator's policy %s no longer loads; nothing changed\n",
			lp->ceiling_name);
		return err;
	}
	if (!own) {
		*out = admin;
		return 0;
	}
	err = load_mine(lp, name, text, len, msgs, &mine);
	if (!err) {
		err = policy_ceiling_apply(admin, mine, lp->lo.strict, out, &cuts);
		ceiling_cuts_print(&cuts, msgs);
		if (err == -EPERM)
			fprintf(msgs, "bpfbox: --strict: %zu grant(s) are outside the administrator's policy\n", cuts.n);
	}
	ceiling_cuts_free(&cuts);
	policy_free(mine);
	policy_free(admin);
	return err;
}

/* A --control-fd line that passed exec_live's checks. */
static int apply_line(void *ctx, const char *text, size_t len, struct errmsg *em)
{
	struct live_policy *lp = ctx;
	struct policy *next;
	int err = load_effective(lp, "control-fd", text, len, true, stderr, &next);

	if (err)
		return errmsg_set(em, err, "the settings are not valid (see above)");
	err = sandbox_run_update(lp->run, next, "control-fd", em);
	if (err)
		policy_free(next);
	else
		lp->doc_is_ceiling = false;
	return err;
}

/* update: the next document, whole or the one in force with names allowed and denied. */
static cJSON *next_document(const struct live_policy *lp, const struct run_control_request *q, struct errmsg *em)
{
	cJSON *doc;

	if (q->policy) {
		doc = cJSON_ParseWithLength(q->policy, q->policy_len);
		if (!cJSON_IsObject(doc)) {
			cJSON_Delete(doc);
			errmsg_set(em, -EINVAL, "the policy is not a JSON object");
			return NULL;
		}
		return doc;
	}
	doc = lp->ctl.doc ? cJSON_Duplicate(lp->ctl.doc, true) : cJSON_CreateObject();
	for (size_t i = 0; doc && i < q->n_allow + q->n_deny; i++) {
		bool allow = i < q->n_allow;

		if (live_doc_edit_domain(doc, allow ? q->allow[i] : q->deny[i - q->n_allow], allow, em)) {
			cJSON_Delete(doc);
			return NULL;
		}
	}
	if (!doc)
		errmsg_set(em, -ENOMEM, "out of memory");
	return doc;
}

static int handle_update(struct live_policy *lp, const struct run_control_request *q, FILE *msgs,
			 struct errmsg *em)
{
	struct policy *next = NULL;
	cJSON *doc;
	char *text = NULL;
	int err;

	if (q->for_caller && (!lp->caller || lp->run->ident.uid != q->for_uid))
		return errmsg_set(em, -EPERM, "%s: no such sandbox of yours (see bpfbox ps)", lp->run->id);
	doc = next_document(lp, q, em);
	if (!doc)
		return -EINVAL;
	err = lp->ctl.doc ? live_doc_check_fixed(lp->ctl.doc, doc, em) : 0;
	if (err)
		goto cleanup;
	text = cJSON_PrintUnformatted(doc);
	if (!text) {
		err = errmsg_set(em, -ENOMEM, "out of memory");
		goto cleanup;
	}
	err = load_effective(lp, "update", text, strlen(text), true, msgs, &next);
	if (err) {
		errmsg_set(em, err, "the settings are not valid (see above); nothing changed");
		goto cleanup;
	}
	err = sandbox_run_update(lp->run, next, "update", em);
	if (err)
		goto cleanup;
	next = NULL;
	cJSON_Delete(lp->ctl.doc);
	lp->ctl.doc = doc;
	doc = NULL;
	lp->doc_is_ceiling = false;
	fprintf(msgs, "%s: policy updated (generation %u)\n", lp->run->id, (unsigned)lp->run->gen);
cleanup:
	policy_free(next);
	free(text);
	cJSON_Delete(doc);
	return err;
}

/*
 * The administrator's policy changed (the daemon's reload): this caller's
 * document under the new ceiling, or, when the run cannot take it, the
 * sandbox stopped. The administrator's policy is a floor: a sandbox never
 * runs on wider than the ceiling in force.
 */
static int handle_ceiling(struct live_policy *lp, const struct run_control_request *q, FILE *msgs,
			  struct errmsg *em)
{
	struct policy *admin = NULL, *next = NULL;
	char *text = NULL, *old = lp->ceiling;
	size_t old_len = lp->ceiling_len;
	/* Empty: the administrator has no file, and the built-in default is the ceiling (as for a new sandbox). */
	const char *now = q->ceiling_len ? q->ceiling : NULL;
	int err;

	if (!lp->caller)
		return errmsg_set(em, -EPERM, "%s was not started through the daemon: its ceiling is its own",
				  lp->run->id);
	if ((!old && !now) || (old && now && old_len == q->ceiling_len && !memcmp(old, now, old_len))) {
		fprintf(msgs, "%s: the administrator's policy is unchanged\n", lp->run->id);
		return 0;
	}
	err = load_admin(lp, now, q->ceiling_len, msgs, &admin);
	policy_free(admin);
	if (err) {
		/*
		 * The daemon loaded it; for this sandbox's user it does not (a ~ with
		 * no home, a path of theirs): the old, wider one must not stay.
		 */
		free(old);
		lp->ceiling = NULL;
		lp->ceiling_len = 0;
		errmsg_set(em, err, "the new administrator's policy does not load for this sandbox (see above)");
		goto stop;
	}
	lp->ceiling = now ? strndup(now, q->ceiling_len) : NULL;
	if (now && !lp->ceiling) {
		lp->ceiling = old;
		return errmsg_set(em, -ENOMEM, "out of memory");
	}
	lp->ceiling_len = q->ceiling_len;
	if (!lp->doc_is_ceiling)
		text = cJSON_PrintUnformatted(lp->ctl.doc);
	err = lp->doc_is_ceiling || text ? load_effective(lp, "ceiling-reload", text, text ? strlen(text) : 0,
							  !lp->doc_is_ceiling, msgs, &next)
					  : -ENOMEM;
	if (!err)
		err = sandbox_run_update(lp->run, next, "ceiling-reload", em);
	free(text);
	if (!err) {
		free(old);
		if (lp->doc_is_ceiling) {
			cJSON_Delete(lp->ctl.doc);
			lp->ctl.doc = lp->ceiling ? cJSON_ParseWithLength(lp->ceiling, lp->ceiling_len)
						  : cJSON_CreateObject();
		}
		fprintf(msgs, "%s: narrowed to the administrator's new policy (generation %u)\n", lp->run->id,
			(unsigned)lp->run->gen);
		return 0;
	}
	policy_free(next);
	free(old);
	if (!em->text[0])
		errmsg_set(em, err, "the policy under the new ceiling does not load");
stop:
	log_msg(lp->run->log, LOG_WARN, "sandbox-stopped-by-ceiling",
		"the administrator's new policy cannot be applied to the running sandbox (%s); it is stopped",
		em->text);
	/* Fail closed: the supervisor's own stop (SIGTERM to the tree, SIGKILL after its grace). */
	kill(getpid(), SIGTERM);
	fprintf(msgs, "%s: stopped: %s\n", lp->run->id, em->text);
	return 0;
}

/* An array of the grants in a that b lacks, on o under key; false when out of memory. */
static bool add_missing(cJSON *o, const char *key, char *const *a, size_t na, char *const *b, size_t nb)
{
	char **missing = policy_grants_missing(a, na, b, nb);
	cJSON *arr = cJSON_AddArrayToObject(o, key);
	bool ok = missing && arr;

	for (char **m = missing; ok && *m; m++)
		ok = cJSON_AddItemToArray(arr, cJSON_CreateString(*m));
	free(missing);
	return ok;
}

/*
 * preview: what the administrator's policy q->ceiling would change here, as
 * one JSON object on msgs, nothing changed: {"unchanged":true}, or the grants
 * this sandbox would lose and gain, or that it would be stopped and why.
 * bpfbox policy apply shows it for each running sandbox before a reload.
 */
static int handle_preview(struct live_policy *lp, const struct run_control_request *q, FILE *msgs,
			  struct errmsg *em)
{
	char *saved = lp->ceiling, *text = NULL, *notes = NULL, *json = NULL, **now = NULL, **then = NULL;
	size_t saved_len = lp->ceiling_len, notes_len = 0, n_now = 0, n_then = 0;
	struct policy *admin = NULL, *next = NULL;
	cJSON *o = NULL;
	FILE *nf = NULL;
	bool ok;
	int err;

	if (!lp->caller)
		return errmsg_set(em, -EPERM, "%s was not started through the daemon: its ceiling is its own",
				  lp->run->id);
	o = cJSON_CreateObject();
	nf = open_memstream(&notes, &notes_len);
	if (!o || !nf) {
		err = errmsg_set(em, -ENOMEM, "out of memory");
		goto cleanup;
	}
	/* Which administrator's file: the client lists only the sandboxes under the one it changes. */
	if (!cJSON_AddStringToObject(o, "file", lp->ceiling_name)) {
		err = errmsg_set(em, -ENOMEM, "out of memory");
		goto cleanup;
	}
	if (saved && saved_len == q->ceiling_len && !memcmp(saved, q->ceiling, saved_len)) {
		ok = cJSON_AddBoolToObject(o, "unchanged", true);
		goto print;
	}
	err = load_admin(lp, q->ceiling, q->ceiling_len, nf, &admin);
	policy_free(admin);
	if (!err) {
		/* load_effective reads the ceiling in force: the new one only for this call. */
		lp->ceiling = (char *)q->ceiling;
		lp->ceiling_len = q->ceiling_len;
		if (!lp->doc_is_ceiling)
			text = cJSON_PrintUnformatted(lp->ctl.doc);
		err = lp->doc_is_ceiling || text ? load_effective(lp, "ceiling-preview", text, text ? strlen(text) : 0,
								  !lp->doc_is_ceiling, nf, &next)
						  : -ENOMEM;
		lp->ceiling = saved;
		lp->ceiling_len = saved_len;
	}
	fflush(nf);
	if (err) {
		ok = cJSON_AddBoolToObject(o, "stops", true) &&
		     cJSON_AddStringToObject(o, "reason", notes_len ? notes : strerror(-err));
		goto print;
	}
	now = policy_grants(lp->run->policy, &n_now);
	then = policy_grants(next, &n_then);
	ok = now && then && cJSON_AddBoolToObject(o, "stops", false) &&
	     add_missing(o, "removed", now, n_now, then, n_then) && add_missing(o, "added", then, n_then, now, n_now);
	if (ok && notes_len)
		ok = cJSON_AddStringToObject(o, "notes", notes);
print:
	json = ok ? cJSON_PrintUnformatted(o) : NULL;
	err = json ? 0 : errmsg_set(em, -ENOMEM, "out of memory");
	if (json)
		fputs(json, msgs);
cleanup:
	if (nf)
		fclose(nf);
	free(notes);
	free(json);
	free(text);
	policy_grants_free(now, n_now);
	policy_grants_free(then, n_then);
	policy_free(next);
	cJSON_Delete(o);
	return err;
}

/*
 * status: the policy in force (generation, digests, mode) and the refusals
 * so far (reported ones, audited among them, and the kernel's unreported
 * ones), one JSON object on msgs, for bpfbox ps --json.
 */
static int handle_status(struct live_policy *lp, FILE *msgs, struct errmsg *em)
{
	const struct sandbox_run *r = lp->run;
	const struct policy *p = r->policy;
	uint64_t lost = 0, denied = 0;
	struct log_counts counts;
	char digest[80];
	cJSON *o = cJSON_CreateObject();
	char *json = NULL;
	bool ok = o != NULL;

	log_get_counts(r->log, &counts);
	sandbox_maps_counters(r->bpf, r->cg.id, &lost, &denied);
	snprintf(digest, sizeof(digest), "sha256:%s", p->digest);
	ok = ok && cJSON_AddNumberToObject(o, "generation", r->gen) && cJSON_AddStringToObject(o, "digest", digest);
	if (ok && p->has_ceiling) {
		snprintf(digest, sizeof(digest), "sha256:%s", p->ceiling_digest);
		ok = cJSON_AddStringToObject(o, "ceiling_digest", digest) != NULL;
	}
	ok = ok && cJSON_AddStringToObject(o, "mode", p->audit ? "audit" : "enforce") &&
	     cJSON_AddNumberToObject(o, "refusals", (double)(counts.violations + lost)) &&
	     cJSON_AddNumberToObject(o, "audited", (double)counts.audited) &&
	     cJSON_AddNumberToObject(o, "unreported", (double)lost);
	json = ok ? cJSON_PrintUnformatted(o) : NULL;
	cJSON_Delete(o);
	if (!json)
		return errmsg_set(em, -ENOMEM, "out of memory");
	fputs(json, msgs);
	free(json);
	return 0;
}

/* One connection of the control socket: its request handled, the answer with every message. */
static void serve_one(struct live_policy *lp)
{
	struct run_control_request q;
	struct errmsg em = { { 0 } };
	char *text = NULL, *out = NULL;
	size_t len = 0, out_len = 0;
	FILE *msgs;
	int conn = -1, err = run_control_accept(lp->listen_fd, &conn, &text, &len, &em);

	if (err)
		return;
	msgs = open_memstream(&out, &out_len);
	if (!msgs) {
		run_control_answer(conn, false, "out of memory");
		free(text);
		return;
	}
	err = run_control_request_decode(text, len, &q, &em);
	if (!err) {
		switch (q.op) {
		case RUN_CONTROL_CEILING:
			err = handle_ceiling(lp, &q, msgs, &em);
			break;
		case RUN_CONTROL_PREVIEW:
			err = handle_preview(lp, &q, msgs, &em);
			break;
		case RUN_CONTROL_STATUS:
			err = handle_status(lp, msgs, &em);
			break;
		default:
			err = handle_update(lp, &q, msgs, &em);
		}
	}
	if (err)
		fprintf(msgs, "bpfbox: %s\n", em.text);
	fclose(msgs);
	run_control_answer(conn, !err, out);
	run_control_request_free(&q);
	free(out);
	free(text);
}

int live_policy_read(void *ctx, int fd)
{
	struct live_policy *lp = ctx;

	if (fd == lp->ctl.fd)
		return live_control_read(&lp->ctl, fd);
	/* A few connections a wake-up: the command's events wait for no one. */
	for (int i = 0; i < 4; i++)
		serve_one(lp);
	return 0;
}

/* The caller's document at start, and whether it is the ceiling's. */
static cJSON *start_document(struct live_policy *lp, const char *policy_file, const char *ceiling_file)
{
	const struct exec_caller *c = lp->caller;

	if (c && c->has_policy)
		return cJSON_ParseWithLength(c->policy_json, c->policy_len);
	if (lp->bound && !(ceiling_file && policy_file)) {
		lp->doc_is_ceiling = true;
		return lp->ceiling ? cJSON_ParseWithLength(lp->ceiling, lp->ceiling_len) : cJSON_CreateObject();
	}
	if (!policy_file)
		policy_file = policy_discover(NULL);
	return policy_file ? live_doc_read(policy_file) : cJSON_CreateObject();
}

int live_policy_start(struct live_policy *lp, struct sandbox_run *run, const struct exec_caller *caller,
		      const char *policy_file, const char *ceiling_file, int control_fd, bool strict,
		      struct errmsg *em)
{
	const char *admin_file = caller ? caller->ceiling_file : ceiling_file;
	struct stat st;
	cJSON *doc;
	int err;

	memset(lp, 0, sizeof(*lp));
	lp->listen_fd = -1;
	lp->ctl.fd = -1;
	lp->run = run;
	lp->caller = caller;
	lp->bound = caller || ceiling_file;
	lp->lo.strict = strict;
	lp->lo.home = caller || run->ident.switch_user ? run->ident.home : NULL;
	lp->lo.cwd = caller ? caller->cwd : NULL;
	lp->ceiling_name = admin_file ? admin_file : "the built-in default";
	if (caller && caller->ceiling_json) {
		lp->ceiling = strndup(caller->ceiling_json, caller->ceiling_len);
		lp->ceiling_len = caller->ceiling_len;
		if (!lp->ceiling)
			return errmsg_set(em, -ENOMEM, "out of memory");
	} else if (!caller && lp->bound && admin_file && !stat(admin_file, &st)) {
		lp->ceiling = read_text(admin_file, &lp->ceiling_len);
		if (!lp->ceiling)
			return errmsg_set(em, -EIO, "cannot read the administrator's policy %s again", admin_file);
	}
	doc = start_document(lp, policy_file, ceiling_file);
	if (!cJSON_IsObject(doc)) {
		cJSON_Delete(doc);
		return errmsg_set(em, -EINVAL, "cannot keep the starting policy %s as a document",
				  policy_file ? policy_file : "");
	}
	err = live_control_init(&lp->ctl, control_fd, doc);
	if (err)
		return errmsg_set(em, err, "out of memory");
	if (caller && caller->control_fd_shown >= 3)
		lp->ctl.shown_fd = caller->control_fd_shown;
	lp->ctl.apply = apply_line;
	lp->ctl.apply_ctx = lp;
	lp->listen_fd = run_control_listen(run->id, em);
	if (lp->listen_fd < 0) {
		err = lp->listen_fd;
		lp->listen_fd = -1;
		return err;
	}
	run->req.live_fds[0] = control_fd;
	run->req.live_fds[1] = lp->listen_fd;
	run->req.live = live_policy_read;
	run->req.live_ctx = lp;
	return 0;
}

void live_policy_stop(struct live_policy *lp)
{
	if (!lp->run)
		return;
	if (lp->listen_fd >= 0) {
		close(lp->listen_fd);
		run_control_unlink(lp->run->id);
	}
	lp->listen_fd = -1;
	live_control_free(&lp->ctl);
	free(lp->ceiling);
	lp->ceiling = NULL;
}
