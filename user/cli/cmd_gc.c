// SPDX-License-Identifier: MIT
/* bpfbox gc. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "commands.h"
#include "sandbox/bpf_state.h"
#include "sandbox/cgroup.h"
#include "sandbox/registry.h"
#include "sandbox/ring_pool.h"
#include "sandbox/run_control.h"
#include "sandbox/sandbox_gc.h"
#include "sandbox/sandbox_tmpdir.h"

/* Cgroups under bpfbox's parent that no registry entry explains: left by a crash mid-setup. */
static int gc_stray_cgroups(void)
{
	char parent[PATH_MAX], path[PATH_MAX + 300], id_file[PATH_MAX + 300];
	struct dirent *de;
	int count = 0;
	DIR *dir;

	if (cgroup_parent_ensure(parent, sizeof(parent), NULL))
		return 0;
	dir = opendir(parent);
	if (!dir)
		return 0;
	while ((de = readdir(dir))) {
		if (strncmp(de->d_name, "bb-", 3))
			continue;
		snprintf(id_file, sizeof(id_file), "%s/%s", REGISTRY_DIR, de->d_name);
		if (access(id_file, F_OK) == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", parent, de->d_name);
		cgroup_kill_all(path, 5000);
		if (rmdir(path) == 0)
			count++;
	}
	closedir(dir);
	return count;
}

/* Control sockets no registry entry explains: their supervisor was killed before gc saw it. */
static void gc_stray_control_sockets(void)
{
	char id_file[PATH_MAX + 300];
	struct dirent *de;
	DIR *dir = opendir(RUN_CONTROL_DIR);

	if (!dir)
		return;
	while ((de = readdir(dir))) {
		if (strncmp(de->d_name, "bb-", 3))
			continue;
		snprintf(id_file, sizeof(id_file), "%s/%s", REGISTRY_DIR, de->d_name);
		if (access(id_file, F_OK))
			run_control_unlink(de->d_name);
	}
	closedir(dir);
}

static void gc_note(void *ctx, const char *text)
{
	(void)ctx;
	fprintf(stderr, "bpfbox: gc: %s\n", text);
}

static int count_live(void *ctx, const struct registry_entry *e)
{
	*(int *)ctx += registry_alive(e);
	return 0;
}

int cmd_gc(int argc, char **argv)
{
	struct bpf_state *st = NULL;
	struct errmsg em = { { 0 } };
	bool all = argc > 1 && !strcmp(argv[1], "--all");
	bool unpin = argc > 1 && !strcmp(argv[1], "--unpin");
	int n, stray, trimmed = 0, live = 0;

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("usage: bpfbox gc [--all | --unpin]\n  removes sandboxes whose supervisor died and frees idle "
		       "pooled event buffers;\n  --unpin then also removes bpfbox's pinned programs if no sandbox "
		       "is running (package removal);\n  --all also stops live sandboxes and removes the pins\n");
		return 0;
	}
	if (argc > 2 || (argc == 2 && !all && !unpin)) {
		fprintf(stderr, "bpfbox: gc: unknown option '%s' (--all or --unpin)\n", argv[argc - 1]);
		return 2;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "bpfbox: gc must run as root (it kills sandboxes and removes their cgroups)\n");
		return BPFBOX_EXIT_SETUP;
	}
	libbpf_set_print(NULL);
	if (bpf_state_open(&st, &em))
		fprintf(stderr, "bpfbox: gc: %s; removing cgroups and files only\n", em.text);
	n = sandbox_gc_dead(st, all, gc_note, NULL);
	stray = gc_stray_cgroups();
	gc_stray_control_sockets();
	if (st && !all && !unpin)
		trimmed = ring_pool_trim(st);	/* --all and --unpin drop the whole pool with the pins */
	bpf_state_close(st);
	if (unpin) {
		/* Never under a running sandbox: its enforcement would end with the pins. */
		registry_each(count_live, &live);
		if (live)
			printf("bpfbox: gc: %d sandbox(es) still running; the pinned programs are kept\n", live);
	}
	if (all || (unpin && !live)) {
		/* Unpinning detaches the shared programs once no sandbox needs them. */
		if (remove_tree(BPFBOX_PIN_ROOT))
			fprintf(stderr, "bpfbox: gc: could not remove %s\n", BPFBOX_PIN_ROOT);
	}
	printf("bpfbox: gc removed %d sandbox(es) and %d stray cgroup(s)", n, stray);
	if (trimmed)
		printf("; freed %d idle event buffer(s)", trimmed);
	printf("\n");
	return 0;
}
