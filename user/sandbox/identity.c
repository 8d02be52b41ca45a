// SPDX-License-Identifier: MIT
/* Who the command runs as, and the switch to that user in the launcher's child. */
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "identity.h"

const char *identity_source_name(enum identity_source source)
{
	switch (source) {
	case IDENTITY_SUDO:
		return "sudo";
	case IDENTITY_OPTION:
		return "--user";
	case IDENTITY_PEER:
		return "the daemon's caller";
	default:
		return "root";
	}
}

static const char *env_value(char *const *env, const char *name)
{
	size_t len = strlen(name);

	for (char *const *v = env; v && *v; v++)
		if (!strncmp(*v, name, len) && (*v)[len] == '=')
			return *v + len + 1;
	return NULL;
}

/* A decimal id; false for anything else (signs, spaces, overflow). */
static bool parse_id(const char *s, unsigned *out)
{
	unsigned long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v >= (unsigned long)UINT_MAX)
		return false;
	*out = (unsigned)v;
	return true;
}

/* Copies what the switch and the environment need out of a passwd entry. */
static int take_passwd(const struct passwd *pw, gid_t gid, struct identity *id, struct errmsg *em)
{
	int n = 64;

	id->uid = pw->pw_uid;
	id->gid = gid;
	id->name = strdup(pw->pw_name);
	id->home = strdup(pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : "/");
	id->shell = strdup(pw->pw_shell && pw->pw_shell[0] ? pw->pw_shell : "/bin/sh");
	if (!id->name || !id->home || !id->shell)
		return errmsg_set(em, -ENOMEM, "copying the password entry of %s", pw->pw_name);
	if (!id->switch_user)
		return 0;
	/* initgroups(3)'s list, computed here so that the child only calls setgroups. */
	for (;;) {
		gid_t *g = realloc(id->groups, (size_t)n * sizeof(gid_t));
		int want = n;

		if (!g)
			return errmsg_set(em, -ENOMEM, "listing the groups of %s", pw->pw_name);
		id->groups = g;
		if (getgrouplist(pw->pw_name, gid, id->groups, &want) >= 0) {
			id->n_groups = want;
			return 0;
		}
		if (want <= n || want > NGROUPS_MAX + 1)
			return errmsg_set(em, -E2BIG, "listing the groups of %s", pw->pw_name);
		n = want;
	}
}

static int from_option(const char *opt, struct identity *id, struct errmsg *em)
{
	char user[256];
	const char *colon = strchr(opt, ':');
	size_t len = colon ? (size_t)(colon - opt) : strlen(opt);
	struct passwd *pw;
	struct group *gr;
	unsigned num;
	gid_t gid;

	if (!len || len >= sizeof(user) || (colon && !colon[1]))
		return errmsg_set(em, -EINVAL, "--user: expected NAME or UID, optionally :GROUP, got '%s'", opt);
	memcpy(user, opt, len);
	user[len] = 0;
	errno = 0;
	pw = parse_id(user, &num) ? getpwuid(num) : getpwnam(user);
	if (!pw)
		return errmsg_set(em, errno ? -errno : -ENOENT, "--user: no user '%s' in the password database", user);
	gid = pw->pw_gid;
	if (colon) {
		if (parse_id(colon + 1, &num)) {
			gid = num;
		} else {
			errno = 0;
			gr = getgrnam(colon + 1);
			if (!gr)
				return errmsg_set(em, errno ? -errno : -ENOENT, "--user: no group '%s'", colon + 1);
			gid = gr->gr_gid;
		}
	}
	id->source = IDENTITY_OPTION;
	/* --user root keeps today's uid 0 on purpose: nothing to switch, and no group to pick. */
	if (pw->pw_uid == 0 && colon)
		return errmsg_set(em, -EINVAL, "--user %s: uid 0 runs with root's groups; drop ':%s'", opt, colon + 1);
	id->switch_user = pw->pw_uid != 0;
	return take_passwd(pw, gid, id, em);
}

static int from_sudo(const char *sudo_uid, char *const *env, struct identity *id, struct errmsg *em)
{
	const char *sudo_user = env_value(env, "SUDO_USER"), *sudo_gid = env_value(env, "SUDO_GID");
	struct passwd *pw;
	unsigned uid, gid;

	if (!parse_id(sudo_uid, &uid))
		return errmsg_set(em, -EINVAL, "SUDO_UID=%s is not a uid", sudo_uid);
	errno = 0;
	pw = getpwuid(uid);
	if (!pw)
		return errmsg_set(em, errno ? -errno : -ENOENT, "SUDO_UID=%u: no such user in the password database",
				  uid);
	if (!sudo_user || strcmp(sudo_user, pw->pw_name))
		return errmsg_set(em, -EINVAL,
				  "SUDO_USER=%s does not match SUDO_UID=%u, which the password database names %s; "
				  "refusing to guess who to run the command as (use --user)",
				  sudo_user ? sudo_user : "(unset)", uid, pw->pw_name);
	/* The group sudo's caller was running with, else the user's primary group. */
	gid = pw->pw_gid;
	if (sudo_gid && *sudo_gid && !parse_id(sudo_gid, &gid))
		return errmsg_set(em, -EINVAL, "SUDO_GID=%s is not a gid", sudo_gid);
	id->source = IDENTITY_SUDO;
	id->switch_user = uid != 0;
	return take_passwd(pw, gid, id, em);
}

/*
 * uid 0's name, read from /etc/passwd itself: the name service's first call
 * (its configuration, its modules) cost a root start more than all the rest
 * of its identity, and uid 0 is a local account by convention. "root" when
 * the file has no such entry, as the name service's miss was.
 */
static char *root_name(void)
{
	FILE *f = fopen("/etc/passwd", "re");
	const struct passwd *pw;

	/* NIS compat lines (+name, -name) parse as uid 0: not an account. */
	while (f && (pw = fgetpwent(f)))
		if (pw->pw_uid == 0 && pw->pw_name[0] != '+' && pw->pw_name[0] != '-') {
			char *name = strdup(pw->pw_name);

			fclose(f);
			return name;
		}
	if (f)
		fclose(f);
	return strdup("root");
}

int identity_resolve(const char *user_opt, char *const *env, struct identity *id, struct errmsg *em)
{
	const char *sudo_uid = env_value(env, "SUDO_UID");
	int err;

	memset(id, 0, sizeof(*id));
	if (user_opt)
		err = from_option(user_opt, id, em);
	else if (sudo_uid && *sudo_uid)
		err = from_sudo(sudo_uid, env, id, em);
	else {
		id->source = IDENTITY_ROOT;
		id->name = root_name();
		err = id->name ? 0 : errmsg_set(em, -ENOMEM, "copying the user name");
	}
	if (err)
		identity_free(id);
	return err;
}

int identity_from_peer(uid_t uid, gid_t gid, struct identity *id, struct errmsg *em)
{
	struct passwd *pw;
	int err;

	memset(id, 0, sizeof(*id));
	errno = 0;
	pw = getpwuid(uid);
	if (!pw)
		return errmsg_set(em, errno ? -errno : -ENOENT,
				  "uid %u is not in the password database; the daemon runs commands only for "
				  "known users", (unsigned)uid);
	id->source = IDENTITY_PEER;
	id->switch_user = uid != 0;
	err = take_passwd(pw, gid, id, em);
	if (err)
		identity_free(id);
	return err;
}

void identity_free(struct identity *id)
{
	free(id->groups);
	free(id->name);
	free(id->home);
	free(id->shell);
	memset(id, 0, sizeof(*id));
}

static bool same_groups(const struct identity *id)
{
	static gid_t now[NGROUPS_MAX + 1];
	int n = getgroups(NGROUPS_MAX + 1, now);

	if (n < 0)
		return false;
	for (int i = 0; i < n; i++) {
		bool found = false;

		for (int j = 0; j < id->n_groups && !found; j++)
			found = now[i] == id->groups[j];
		if (!found)
			return false;
	}
	for (int j = 0; j < id->n_groups; j++) {
		bool found = false;

		for (int i = 0; i < n && !found; i++)
			found = now[i] == id->groups[j];
		if (!found)
			return false;
	}
	return true;
}

/*
 * The child was cloned by a raw clone3 from a process with other threads (the
 * proxy): glibc's setgroups/setresgid/setresuid would broadcast the change to
 * the threads it still lists, taking locks those threads may have held at
 * the clone, and hang. The raw system calls change this thread, the child's
 * only one.
 */
int identity_fs_enter(const struct identity *id, struct identity_fs *saved)
{
	int n = getgroups(0, NULL), err;

	memset(saved, 0, sizeof(*saved));
	if (n < 0)
		return -errno;
	saved->groups = calloc((size_t)n + 1, sizeof(gid_t));
	if (!saved->groups)
		return -ENOMEM;
	saved->n_groups = getgroups(n, saved->groups);
	if (saved->n_groups < 0) {
		err = -errno;
		goto fail;
	}
	saved->entered = true;
	if (syscall(SYS_setgroups, (size_t)id->n_groups, id->groups)) {
		err = -errno;
		goto undo;
	}
	syscall(SYS_setfsgid, id->gid);
	syscall(SYS_setfsuid, id->uid);
	/* setfsuid reports the previous value whatever happened: ask again with an invalid one. */
	if ((uid_t)syscall(SYS_setfsuid, (uid_t)-1) != id->uid ||
	    (gid_t)syscall(SYS_setfsgid, (gid_t)-1) != id->gid) {
		err = -EPERM;
		goto undo;
	}
	return 0;
undo:
	identity_fs_leave(saved);
	return err;
fail:
	free(saved->groups);
	saved->groups = NULL;
	return err;
}

int identity_fs_leave(struct identity_fs *saved)
{
	int err = 0;

	if (saved->entered) {
		syscall(SYS_setfsuid, geteuid());
		syscall(SYS_setfsgid, getegid());
		if (syscall(SYS_setgroups, (size_t)saved->n_groups, saved->groups))
			err = -errno;
		if ((uid_t)syscall(SYS_setfsuid, (uid_t)-1) != geteuid())
			err = -EPERM;
	}
	free(saved->groups);
	memset(saved, 0, sizeof(*saved));
	return err;
}

int identity_switch(const struct identity *id)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;

	if (syscall(SYS_setgroups, (size_t)id->n_groups, id->groups))
		return -errno;
	if (syscall(SYS_setresgid, id->gid, id->gid, id->gid))
		return -errno;
	if (syscall(SYS_setresuid, id->uid, id->uid, id->uid))
		return -errno;
	/* Trust nothing: read back what the kernel now holds. */
	if (getresuid(&ru, &eu, &su) || getresgid(&rg, &eg, &sg))
		return -errno;
	if (ru != id->uid || eu != id->uid || su != id->uid || rg != id->gid || eg != id->gid || sg != id->gid ||
	    !same_groups(id))
		return -EPERM;
	return 0;
}
