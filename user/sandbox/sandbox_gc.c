// SPDX-License-Identifier: MIT
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "sandbox_gc.h"
#include "sandbox_maps.h"
#include "sandbox_private.h"

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type == FTW_DP ? rmdir(path) : unlink(path))
		return errno == ENOENT ? 0 : -1;
	return 0;
}

int remove_tree(const char *path)
{
	if (!path || !path[0])
		return 0;
	/*
	 * FTW_PHYS: symlinks are removed, never followed. No FTW_MOUNT: on
	 * overlayfs a file's st_dev differs from its directory's, and the
	 * sandbox cannot mount anything into its TMPDIR.
	 */
	if (nftw(path, remove_entry, 32, FTW_DEPTH | FTW_PHYS) && errno != ENOENT)
		return -errno;
	return 0;
}

void sandbox_gc_one(const struct bpf_state *st, const struct registry_entry *e)
{
	if (e->cgroup[0]) {
		cgroup_kill_all(e->cgroup, 5000);
		rmdir(e->cgroup);
	}
	if (st && e->cgroup_id) {
		sandbox_private_sweep_shm(st, e->cgroup_id);
		sandbox_maps_remove(st, e->cgroup_id);
	}
	remove_tree(e->tmpdir);
	if (e->cgroup_id)
		sandbox_private_release(st, e->cgroup_id);
	registry_remove(e->id);
}

struct gc_ctx {
	const struct bpf_state *st;
	bool all;
	int count;
};

static int gc_entry(void *ctx, const struct registry_entry *e)
{
	struct gc_ctx *g = ctx;

	if (!g->all && registry_alive(e))
		return 0;
	sandbox_gc_one(g->st, e);
	g->count++;
	return 0;
}

int sandbox_gc_dead(const struct bpf_state *st, bool all)
{
	struct gc_ctx g = { .st = st, .all = all };

	registry_each(gc_entry, &g);
	return g.count;
}
