// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "run_control.h"
#include "sandbox_gc.h"
#include "sandbox_maps.h"
#include "sandbox_private.h"
#include "sandbox_tmpdir.h"

/* A live update's resolver cgroup (rule_resolve.c), left by a supervisor that died during the update. */
static void gc_rule_resolver(const struct bpf_state *st, const char *cgroup)
{
	char path[sizeof(((struct registry_entry *)0)->cgroup) + 8];
	uint64_t id;

	if ((size_t)snprintf(path, sizeof(path), "%s.rules", cgroup) >= sizeof(path) || access(path, F_OK))
		return;
	if (st && !cgroup_id_of(path, &id))
		sandbox_maps_remove(st, id);
	cgroup_kill_all(path, 5000);
	rmdir(path);
}

void sandbox_gc_one(const struct bpf_state *st, const struct registry_entry *e, gc_note_fn note, void *ctx)
{
	struct tmpdir_id tid = { e->tmpdir_dev, e->tmpdir_ino, e->uid, e->gid };
	struct errmsg em = { { 0 } };
	char text[sizeof(em.text) + 96];
	struct stat sb;

	if (e->cgroup[0]) {
		cgroup_kill_all(e->cgroup, 5000);
		rmdir(e->cgroup);
		gc_rule_resolver(st, e->cgroup);
	}
	if (st && e->cgroup_id) {
		sandbox_private_sweep_shm(st, e->cgroup_id);
		sandbox_maps_remove(st, e->cgroup_id);
	}
	/* A crash before the TMPDIR was made leaves no identity, and no TMPDIR either. */
	if (e->tmpdir[0] && (e->tmpdir_ino || !lstat(e->tmpdir, &sb)) &&
	    sandbox_tmpdir_remove(e->tmpdir, &tid, &em) && note) {
		snprintf(text, sizeof(text), "sandbox %s (uid %u): %s", e->id, (unsigned)e->uid, em.text);
		note(ctx, text);
	}
	if (e->cgroup_id)
		sandbox_private_release(st, e->cgroup_id);
	/* A supervisor killed outright leaves its control socket (bpfbox update's end). */
	run_control_unlink(e->id);
	registry_remove(e->id);
}

struct gc_ctx {
	const struct bpf_state *st;
	bool all;
	int count;
	gc_note_fn note;
	void *note_ctx;
};

static int gc_entry(void *ctx, const struct registry_entry *e)
{
	struct gc_ctx *g = ctx;

	if (!g->all && registry_alive(e))
		return 0;
	sandbox_gc_one(g->st, e, g->note, g->note_ctx);
	g->count++;
	return 0;
}

int sandbox_gc_dead(const struct bpf_state *st, bool all, gc_note_fn note, void *ctx)
{
	struct gc_ctx g = { .st = st, .all = all, .note = note, .note_ctx = ctx };

	registry_each(gc_entry, &g);
	return g.count;
}
