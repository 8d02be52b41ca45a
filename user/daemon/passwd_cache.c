// SPDX-License-Identifier: MIT
/* The daemon's bounded cache of passwd answers, with a bounded lookup rate (passwd_cache.h). */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passwd_cache.h"

void passwd_cache_init(struct passwd_cache *c)
{
	memset(c, 0, sizeof(*c));
}

static struct passwd_cached *find(const struct passwd_cache *c, uid_t uid, time_t now)
{
	for (size_t i = 0; i < PASSWD_CACHE_SIZE; i++) {
		const struct passwd_cached *e = &c->e[i];

		if (e->used && e->uid == uid && now - e->at < PASSWD_CACHE_TTL_S && now >= e->at)
			return (struct passwd_cached *)e;
	}
	return NULL;
}

/* A free or expired slot, else the oldest uid without an entry, else the oldest. */
static struct passwd_cached *victim(struct passwd_cache *c, time_t now)
{
	struct passwd_cached *oldest = &c->e[0], *oldest_none = NULL;

	for (size_t i = 0; i < PASSWD_CACHE_SIZE; i++) {
		struct passwd_cached *e = &c->e[i];

		if (!e->used || now - e->at >= PASSWD_CACHE_TTL_S || now < e->at)
			return e;
		if (!e->exists && (!oldest_none || e->at < oldest_none->at))
			oldest_none = e;
		if (e->at < oldest->at)
			oldest = e;
	}
	return oldest_none ? oldest_none : oldest;
}

/* getpwuid_r: 1 found, 0 no entry, -errno on failure; a record too large for 64 KiB is a failure. */
static int lookup(uid_t uid, char *name, size_t len)
{
	struct passwd pw, *res = NULL;
	size_t size = 1024;
	int err;

	for (;;) {
		char *buf = malloc(size);

		if (!buf)
			return -ENOMEM;
		err = getpwuid_r(uid, &pw, buf, size, &res);
		if (!err && res)
			snprintf(name, len, "%s", pw.pw_name);
		free(buf);
		if (err != ERANGE || size >= 65536)
			break;
		size *= 4;
	}
	/* Not found is res == NULL with 0 or, for some NSS modules, ENOENT/ESRCH/EBADF/EPERM. */
	if (!res && (!err || err == ENOENT || err == ESRCH || err == EBADF || err == EPERM))
		return 0;
	return err ? -err : 1;
}

int passwd_cache_lookup(struct passwd_cache *c, uid_t uid, time_t now, const char **name)
{
	struct passwd_cached *e = find(c, uid, now);
	char found[sizeof(e->name)] = "";
	int ret;

	if (!e) {
		if (now != c->second) {
			c->second = now;
			c->lookups = 0;
		}
		if (c->lookups >= PASSWD_LOOKUPS_PER_S)
			return -EAGAIN;
		c->lookups++;
		c->total++;
		ret = lookup(uid, found, sizeof(found));
		if (ret < 0)
			return ret;
		e = victim(c, now);
		*e = (struct passwd_cached){ .used = true, .exists = ret == 1, .uid = uid, .at = now };
		memcpy(e->name, found, sizeof(e->name));
	}
	if (name)
		*name = e->exists ? e->name : "?";
	return e->exists;
}

const char *passwd_cache_name(const struct passwd_cache *c, uid_t uid)
{
	for (size_t i = 0; i < PASSWD_CACHE_SIZE; i++)
		if (c->e[i].used && c->e[i].exists && c->e[i].uid == uid)
			return c->e[i].name;
	return "?";
}
