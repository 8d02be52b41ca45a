// SPDX-License-Identifier: MIT
/* The cgroup programs attached once to the parent of every sandbox (cgroup_attach.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "cgroup.h"
#include "cgroup_attach.h"

static const char *const prog_names[NET_PROG_COUNT] = {
	[NET_CONNECT4] = "bb_connect4",	    [NET_CONNECT6] = "bb_connect6",
	[NET_SENDMSG4] = "bb_sendmsg4",	    [NET_SENDMSG6] = "bb_sendmsg6",
	[NET_BIND4] = "bb_bind4",	    [NET_BIND6] = "bb_bind6",
	[NET_POST_BIND4] = "bb_post_bind4", [NET_POST_BIND6] = "bb_post_bind6",
	[NET_RECVMSG4] = "bb_recvmsg4",	    [NET_RECVMSG6] = "bb_recvmsg6",
	[NET_GETPEERNAME4] = "bb_getpeername4", [NET_GETPEERNAME6] = "bb_getpeername6",
	[NET_SOCKOPS] = "bb_sockops",		    [NET_SOCK_RELEASE] = "bb_sock_release",
};

static const enum bpf_attach_type attach_types[NET_PROG_COUNT] = {
	[NET_CONNECT4] = BPF_CGROUP_INET4_CONNECT,     [NET_CONNECT6] = BPF_CGROUP_INET6_CONNECT,
	[NET_SENDMSG4] = BPF_CGROUP_UDP4_SENDMSG,      [NET_SENDMSG6] = BPF_CGROUP_UDP6_SENDMSG,
	[NET_BIND4] = BPF_CGROUP_INET4_BIND,	       [NET_BIND6] = BPF_CGROUP_INET6_BIND,
	[NET_POST_BIND4] = BPF_CGROUP_INET4_POST_BIND, [NET_POST_BIND6] = BPF_CGROUP_INET6_POST_BIND,
	[NET_RECVMSG4] = BPF_CGROUP_UDP4_RECVMSG,      [NET_RECVMSG6] = BPF_CGROUP_UDP6_RECVMSG,
	[NET_GETPEERNAME4] = BPF_CGROUP_INET4_GETPEERNAME, [NET_GETPEERNAME6] = BPF_CGROUP_INET6_GETPEERNAME,
	[NET_SOCKOPS] = BPF_CGROUP_SOCK_OPS,	       [NET_SOCK_RELEASE] = BPF_CGROUP_INET_SOCK_RELEASE,
};

const char *cgroup_prog_name(int prog)
{
	return prog >= 0 && prog < NET_PROG_COUNT ? prog_names[prog] : "?";
}

/* The program's descriptor, from its pin when this launcher did not load it. */
static int prog_fd(struct bpf_state *st, int i, struct errmsg *em)
{
	char path[PATH_MAX + 64];

	if (st->net_prog_fd[i] >= 0)
		return st->net_prog_fd[i];
	snprintf(path, sizeof(path), "%s/progs/%s", st->pin_dir, prog_names[i]);
	st->net_prog_fd[i] = bpf_obj_get(path);
	if (st->net_prog_fd[i] < 0)
		return errmsg_set(em, -errno, "opening pinned program %s", path);
	return st->net_prog_fd[i];
}

static void link_path(const char *pin_dir, int i, char *out, size_t len)
{
	snprintf(out, len, "%s/links/cgroup_%s", pin_dir, prog_names[i]);
}

/* A pinned link still attached to the parent, for the right hook (a removed cgroup leaves its links defunct). */
static bool link_attached(const char *path, uint64_t parent_id, enum bpf_attach_type type)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	bool ok;
	int fd = bpf_obj_get(path);

	if (fd < 0)
		return false;
	memset(&info, 0, sizeof(info));
	ok = !bpf_obj_get_info_by_fd(fd, &info, &len) && info.type == BPF_LINK_TYPE_CGROUP &&
	     info.cgroup.cgroup_id == parent_id && info.cgroup.attach_type == type;
	close(fd);
	return ok;
}

/*
 * A program someone else attached to the parent without BPF_F_ALLOW_MULTI:
 * returns its flags (BPF_F_ALLOW_OVERRIDE or 0) for the first hook that has
 * one, -1 when every hook is free for links.
 */
static int foreign_attachment(int parent_fd, int *hook)
{
	for (int i = 0; i < NET_PROG_COUNT; i++) {
		__u32 flags = 0, cnt = 0;

		if (bpf_prog_query(parent_fd, attach_types[i], 0, &flags, NULL, &cnt))
			continue;
		if (cnt && !(flags & BPF_F_ALLOW_MULTI)) {
			*hook = i;
			return (int)(flags & BPF_F_ALLOW_OVERRIDE);
		}
	}
	return -1;
}

static int foreign_note(int flags, int hook, const char *parent, char *out, size_t len)
{
	if (flags)
		return snprintf(out, len,
				"per sandbox: a program was attached to %s for %s with BPF_F_ALLOW_OVERRIDE, which "
				"shares the hook with no link; each sandbox's cgroup gets bpfbox's programs at its "
				"start (detach that program to attach them once)",
				parent, prog_names[hook]);
	return snprintf(out, len,
			"a program was attached to %s for %s without BPF_F_ALLOW_MULTI or BPF_F_ALLOW_OVERRIDE: "
			"no sandbox cgroup can carry bpfbox's network programs; detach it (bpftool cgroup tree %s)",
			parent, prog_names[hook], parent);
}

static void unpin_links(const char *pin_dir)
{
	char path[PATH_MAX + 64];

	for (int i = 0; i < NET_PROG_COUNT; i++) {
		link_path(pin_dir, i, path, sizeof(path));
		unlink(path); /* the last reference: the link detaches */
	}
}

int cgroup_attach_parent(struct bpf_state *st, struct errmsg *em)
{
	char parent[PATH_MAX], path[PATH_MAX + 64];
	uint64_t parent_id;
	int parent_fd = -1, err, flags, hook = 0;

	err = cgroup_parent_ensure(parent, sizeof(parent), em);
	if (err)
		return err;
	err = cgroup_id_of(parent, &parent_id);
	if (err)
		return errmsg_set(em, err, "cgroup id of %s", parent);
	for (int i = 0; i < NET_PROG_COUNT; i++) {
		int fd, link;

		link_path(st->pin_dir, i, path, sizeof(path));
		if (link_attached(path, parent_id, attach_types[i]))
			continue;
		unlink(path);
		if (parent_fd < 0) {
			parent_fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (parent_fd < 0) {
				err = errmsg_set(em, -errno, "opening cgroup %s", parent);
				goto cleanup;
			}
			flags = foreign_attachment(parent_fd, &hook);
			if (flags >= 0) {
				foreign_note(flags, hook, parent, st->attach_note, sizeof(st->attach_note));
				if (!flags) {
					err = errmsg_set(em, -EPERM, "%s", st->attach_note);
					goto cleanup;
				}
				/* No links beside per-sandbox attachments: a hook would run twice. */
				unpin_links(st->pin_dir);
				st->attach_per_sandbox = true;
				goto cleanup;
			}
		}
		fd = prog_fd(st, i, em);
		if (fd < 0) {
			err = fd;
			goto cleanup;
		}
		link = bpf_link_create(fd, parent_fd, attach_types[i], NULL);
		if (link < 0) {
			err = errmsg_set(em, -errno, "attaching %s to %s", prog_names[i], parent);
			goto cleanup;
		}
		if (bpf_obj_pin(link, path))
			err = errmsg_set(em, -errno, "pinning %s", path);
		close(link);
		if (err)
			goto cleanup;
	}
cleanup:
	if (parent_fd >= 0)
		close(parent_fd);
	return err;
}

int cgroup_attach_sandbox(struct bpf_state *st, int cgroup_fd, struct errmsg *em)
{
	if (!st->attach_per_sandbox)
		return 0;
	for (int i = 0; i < NET_PROG_COUNT; i++) {
		int fd = prog_fd(st, i, em);

		if (fd < 0)
			return fd;
		/* Not a link: the attachment belongs to the cgroup and outlives this process. */
		if (bpf_prog_attach(fd, cgroup_fd, attach_types[i], 0))
			return errmsg_set(em, -errno, "attaching %s to the sandbox cgroup", prog_names[i]);
	}
	return 0;
}

int cgroup_attach_mode(const char *pin_dir, char *why, size_t len)
{
	char parent[PATH_MAX], path[PATH_MAX + 64];
	uint64_t parent_id = 0;
	int fd, flags, hook = 0, attached = 0;

	if (cgroup_parent_ensure(parent, sizeof(parent), NULL) || cgroup_id_of(parent, &parent_id))
		return snprintf(why, len, "no cgroup v2 parent for sandboxes (see the cgroup2 check)"), -1;
	fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return snprintf(why, len, "opening %s: %s", parent, strerror(errno)), -1;
	flags = foreign_attachment(fd, &hook);
	close(fd);
	if (flags >= 0)
		return foreign_note(flags, hook, parent, why, len), flags ? 0 : -1;
	for (int i = 0; i < NET_PROG_COUNT; i++) {
		link_path(pin_dir, i, path, sizeof(path));
		attached += link_attached(path, parent_id, attach_types[i]);
	}
	if (attached == NET_PROG_COUNT)
		snprintf(why, len, "attached once to %s by %d pinned links; sandboxes inherit them", parent,
			 NET_PROG_COUNT);
	else
		snprintf(why, len, "attached once to %s at the next sandbox's start; sandboxes inherit them", parent);
	return 1;
}
