// SPDX-License-Identifier: MIT
/* Loading, attaching and pinning the shared programs, under a host-wide lock. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf_state.h"
#include "cgroup_attach.h"
#include "bpfbox.h"
#include "bpfbox.digest.h"
#include "bpfbox.skel.h"
#include "policy/mandatory.h"

#define BPF_FS_MAGIC 0xcafe4a11

/* A build's pins are kept apart from other builds': the object's bytes name the directory. */
int bpf_state_pin_dir(char *out, size_t len)
{
	/* A digest of the embedded object, taken by the build: reading 700 KiB at every start cost more. */
	if ((size_t)snprintf(out, len, "%s/%s", BPFBOX_PIN_ROOT, BPFBOX_BPF_DIGEST) >= len)
		return -ENAMETOOLONG;
	return 0;
}

static int ensure_bpffs(struct errmsg *em)
{
	struct statfs sfs;

	if (statfs("/sys/fs/bpf", &sfs) == 0 && (unsigned long)sfs.f_type == BPF_FS_MAGIC)
		return 0;
	if (mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700"))
		return errmsg_set(em, -errno, "/sys/fs/bpf is not a BPF filesystem and mounting one failed "
				  "(mount -t bpf bpf /sys/fs/bpf)");
	return 0;
}

static int mkdir_p(const char *path, mode_t mode)
{
	char tmp[PATH_MAX];

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, mode) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, mode) && errno != EEXIST)
		return -errno;
	return 0;
}

/* Number of parameters of the kernel's LSM hook, or -1 when the hook does not exist. */
static int lsm_hook_params(const struct btf *vmlinux, const char *hook)
{
	char fn[128];
	const struct btf_type *t;
	int id;

	snprintf(fn, sizeof(fn), "bpf_lsm_%s", hook);
	id = btf__find_by_name_kind(vmlinux, fn, BTF_KIND_FUNC);
	if (id < 0)
		return -1;
	t = btf__type_by_id(vmlinux, id);
	t = btf__type_by_id(vmlinux, t->type);
	return btf_vlen(t);
}

/* Picks the program variant that fits this kernel's hook prototypes. */
static int select_programs(struct bpfbox_bpf *skel, struct errmsg *em)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	struct bpf_program *prog;
	int n, err = 0;

	if (!vmlinux)
		return errmsg_set(em, -errno ? -errno : -ENOENT,
				  "reading kernel BTF (/sys/kernel/btf/vmlinux; CONFIG_DEBUG_INFO_BTF=y is required)");
	n = lsm_hook_params(vmlinux, "inode_setattr");
	bpf_program__set_autoload(skel->progs.bb_inode_setattr_old, n == 2);
	bpf_program__set_autoload(skel->progs.bb_inode_setattr_idmap, n == 3);
	/* Without the compat hook, 32-bit callers' ioctls reach file_ioctl. */
	bpf_program__set_autoload(skel->progs.bb_file_ioctl_compat, lsm_hook_params(vmlinux, "file_ioctl_compat") >= 0);
	bpf_object__for_each_program(prog, skel->obj)
	{
		const char *sec = bpf_program__section_name(prog);

		if (strncmp(sec, "lsm/", 4) || !bpf_program__autoload(prog) || lsm_hook_params(vmlinux, sec + 4) >= 0)
			continue;
		/* Every hook is part of the policy: a missing one is a hole, so refuse. */
		err = errmsg_set(em, -ENOTSUP, "this kernel has no LSM hook %s%s", sec + 4,
				 !strncmp(sec + 4, "path_", 5) ? " (needs CONFIG_SECURITY_PATH=y)" : "");
		break;
	}
	btf__free(vmlinux);
	return err;
}

static int fill_mandatory(struct bpfbox_bpf *skel)
{
	int fd = bpf_map__fd(skel->maps.mandatory_names);

	for (size_t i = 0; i < mandatory_names_count; i++) {
		const struct mandatory_name *m = &mandatory_names_table[i];
		struct bb_mandatory v = { .flags = m->flags, .rule = BB_RULE_MANDATORY_NAME + (uint32_t)i };
		uint64_t h = component_name_hash(m->name, strlen(m->name));

		if (bpf_map_update_elem(fd, &h, &v, BPF_ANY))
			return -errno;
	}
	return 0;
}

static int load_error(struct errmsg *em, int err)
{
	if (err == -EPERM)
		return errmsg_set(em, err,
				  "the kernel refused to load bpfbox's BPF-LSM programs although bpfbox runs as root; "
				  "this host cannot enforce a sandbox (run 'bpfbox doctor' for the reason and the fix)");
	return errmsg_set(em, err, "loading bpfbox's BPF programs (run 'bpfbox doctor')");
}

/* First launcher on this build: load, attach and pin everything. */
static int load_and_pin(struct bpf_state *st, struct errmsg *em)
{
	char path[PATH_MAX + 64];
	struct bpf_program *prog;
	struct bpf_link *link;
	int err;

	err = select_programs(st->skel, em);
	if (err)
		return err;
	err = bpfbox_bpf__load(st->skel);
	if (err)
		return load_error(em, err);
	err = fill_mandatory(st->skel);
	if (err)
		return errmsg_set(em, err, "filling the mandatory deny map");
	snprintf(path, sizeof(path), "%s/links", st->pin_dir);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/progs", st->pin_dir);
	mkdir(path, 0700);
	bpf_object__for_each_program(prog, st->skel->obj)
	{
		const char *sec = bpf_program__section_name(prog);

		if (!bpf_program__autoload(prog))
			continue;
		if (!strncmp(sec, "lsm/", 4)) {
			link = bpf_program__attach_lsm(prog);
			err = libbpf_get_error(link);
			if (err)
				return errmsg_set(em, err, "attaching %s", sec);
			snprintf(path, sizeof(path), "%s/links/%s", st->pin_dir, bpf_program__name(prog));
			err = bpf_link__pin(link, path);
			bpf_link__destroy(link); /* the pin keeps it attached */
			if (err)
				return errmsg_set(em, err, "pinning %s", path);
		}
	}
	/* The cgroup programs are pinned last: their presence marks a complete set. */
	for (int i = 0; i < NET_PROG_COUNT; i++) {
		prog = bpf_object__find_program_by_name(st->skel->obj, cgroup_prog_name(i));
		snprintf(path, sizeof(path), "%s/progs/%s", st->pin_dir, cgroup_prog_name(i));
		err = bpf_program__pin(prog, path);
		if (err)
			return errmsg_set(em, err, "pinning %s", path);
	}
	st->loaded_here = true;
	return 0;
}

static bool pinned_set_complete(const char *pin_dir)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/progs/%s", pin_dir, cgroup_prog_name(NET_PROG_COUNT - 1));
	return access(path, F_OK) == 0;
}

/* Removes a half-made set left by a launcher that died while loading. */
static void remove_partial(const char *pin_dir)
{
	static const char *const subdirs[] = { "links", "progs" };
	char path[PATH_MAX + 300];
	struct dirent *de;
	DIR *dir;

	for (size_t i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", pin_dir, subdirs[i]);
		dir = opendir(path);
		if (!dir)
			continue;
		while ((de = readdir(dir))) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s/%s", pin_dir, subdirs[i], de->d_name);
			unlink(path);
		}
		closedir(dir);
	}
}

/* Removes the map pins and directories of an incomplete set. */
static void remove_pins(const char *pin_dir)
{
	char path[PATH_MAX + 300];
	struct dirent *de;
	DIR *dir = opendir(pin_dir);

	while (dir && (de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", pin_dir, de->d_name);
		if (unlink(path))
			rmdir(path);
	}
	if (dir)
		closedir(dir);
	rmdir(pin_dir);
	rmdir(BPFBOX_PIN_ROOT);
}

/* /run/bpfbox/<build>.lock: shared by launchers of that build for as long as they run. */
static int user_lock_open(const char *pin_dir, int how)
{
	char path[PATH_MAX];
	const char *build = strrchr(pin_dir, '/');
	int fd;

	snprintf(path, sizeof(path), "%s/%s.lock", BPFBOX_RUN_DIR, build ? build + 1 : pin_dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, how)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

static bool set_has_sandboxes(const char *dir)
{
	char path[PATH_MAX + 32];
	uint64_t key;
	int fd;
	bool busy;

	snprintf(path, sizeof(path), "%s/sandboxes", dir);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return errno != ENOENT; /* unreadable: keep it */
	busy = bpf_map_get_next_key(fd, NULL, &key) == 0;
	close(fd);
	return busy;
}

int bpf_state_remove_stale(const char *keep_pin_dir)
{
	char dir[PATH_MAX + 300];
	struct dirent *de;
	int count = 0, fd;
	DIR *root = opendir(BPFBOX_PIN_ROOT);

	while (root && (de = readdir(root))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", BPFBOX_PIN_ROOT, de->d_name);
		if (keep_pin_dir && !strcmp(dir, keep_pin_dir))
			continue;
		fd = user_lock_open(dir, LOCK_EX | LOCK_NB);
		if (fd < 0)
			continue; /* a launcher of that build is running */
		if (!set_has_sandboxes(dir)) {
			remove_partial(dir);
			remove_pins(dir);
			count++;
		}
		close(fd);
	}
	if (root)
		closedir(root);
	return count;
}

static int *map_slot(struct bpf_state_maps *m, const char *name)
{
	static const struct {
		const char *name;
		size_t off;
	} slots[] = {
		{ "sandboxes", offsetof(struct bpf_state_maps, sandboxes) },
		{ "inode_rules", offsetof(struct bpf_state_maps, inode_rules) },
		{ "name_rules", offsetof(struct bpf_state_maps, name_rules) },
		{ "mandatory_names", offsetof(struct bpf_state_maps, mandatory_names) },
		{ "resolve_slots", offsetof(struct bpf_state_maps, resolve_slots) },
		{ "sandbox_events", offsetof(struct bpf_state_maps, sandbox_events) },
		{ "ring_owners", offsetof(struct bpf_state_maps, ring_owners) },
		{ "rate_limit", offsetof(struct bpf_state_maps, rate_limit) },
		{ "sock_owner", offsetof(struct bpf_state_maps, sock_owner) },
		{ "unix_names", offsetof(struct bpf_state_maps, unix_names) },
		{ "device_allow", offsetof(struct bpf_state_maps, device_allow) },
		{ "private_dirs", offsetof(struct bpf_state_maps, private_dirs) },
		{ "shm_owner", offsetof(struct bpf_state_maps, shm_owner) },
		{ "key_owner", offsetof(struct bpf_state_maps, key_owner) },
		{ "sigio_owners", offsetof(struct bpf_state_maps, sigio_owners) },
		{ "learned", offsetof(struct bpf_state_maps, learned) },
		{ "tconns", offsetof(struct bpf_state_maps, tconns) },
		{ "dns_peers", offsetof(struct bpf_state_maps, dns_peers) },
		{ "quotas", offsetof(struct bpf_state_maps, quotas) },
		{ "git_made", offsetof(struct bpf_state_maps, git_made) },
		{ "rule_keys", offsetof(struct bpf_state_maps, rule_keys) },
	};

	for (size_t i = 0; i < sizeof(slots) / sizeof(slots[0]); i++)
		if (!strcmp(slots[i].name, name))
			return (int *)((char *)m + slots[i].off);
	return NULL;
}

static const char *const pinned_map_names[] = { "sandboxes",	  "inode_rules", "name_rules",
						 "mandatory_names", "resolve_slots", "sandbox_events",
						 "rate_limit",	  "sock_owner",	 "unix_names",
						 "ring_owners",	  "device_allow",
						 "private_dirs", "shm_owner",
						 "key_owner",	  "sigio_owners", "learned",
						 "tconns",	  "dns_peers",	 "quotas",
						 "git_made",	  "rule_keys" };

/* The maps by their pins, the same way whether this launcher loaded them or not. */
static int open_pinned_maps(struct bpf_state *st, struct errmsg *em)
{
	char path[PATH_MAX + 64];

	for (size_t i = 0; i < sizeof(pinned_map_names) / sizeof(pinned_map_names[0]); i++) {
		int *slot = map_slot(&st->maps, pinned_map_names[i]);

		snprintf(path, sizeof(path), "%s/%s", st->pin_dir, pinned_map_names[i]);
		*slot = bpf_obj_get(path);
		if (*slot < 0)
			return errmsg_set(em, -errno, "opening pinned map %s (remove stale pins with 'bpfbox gc --all')",
					  path);
	}
	return 0;
}

static void close_maps(struct bpf_state_maps *m)
{
	for (size_t i = 0; i < sizeof(pinned_map_names) / sizeof(pinned_map_names[0]); i++) {
		int *slot = map_slot(m, pinned_map_names[i]);

		if (*slot >= 0)
			close(*slot);
		*slot = -1;
	}
}

int bpf_state_open(struct bpf_state **out, struct errmsg *em)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts);
	char lock_path[] = BPFBOX_RUN_DIR "/bpf.lock";
	struct bpf_state *st;
	struct bpf_program *prog;
	int lock_fd = -1, err;

	st = calloc(1, sizeof(*st));
	if (!st)
		return errmsg_set(em, -ENOMEM, "allocating");
	for (int i = 0; i < NET_PROG_COUNT; i++)
		st->net_prog_fd[i] = -1;
	st->user_lock_fd = -1;
	memset(&st->maps, 0xff, sizeof(st->maps));
	err = ensure_bpffs(em);
	if (err)
		goto cleanup;
	err = bpf_state_pin_dir(st->pin_dir, sizeof(st->pin_dir));
	if (!err)
		err = mkdir_p(st->pin_dir, 0700);
	if (!err)
		err = mkdir_p(BPFBOX_RUN_DIR, 0755);
	if (err) {
		errmsg_set(em, err, "creating %s", st->pin_dir);
		goto cleanup;
	}
	lock_fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lock_fd < 0 || flock(lock_fd, LOCK_EX)) {
		err = errmsg_set(em, -errno, "locking %s", lock_path);
		goto cleanup;
	}
	st->user_lock_fd = user_lock_open(st->pin_dir, LOCK_SH);
	if (st->user_lock_fd < 0) {
		err = errmsg_set(em, st->user_lock_fd, "locking this build's program set");
		goto cleanup;
	}
	bpf_state_remove_stale(st->pin_dir);
	if (pinned_set_complete(st->pin_dir)) {
		/* Warm: the maps and programs come from the pins; nothing is loaded or parsed. */
		err = open_pinned_maps(st, em);
		if (err)
			goto cleanup;
	} else {
		opts.pin_root_path = st->pin_dir;
		st->skel = bpfbox_bpf__open_opts(&opts);
		if (!st->skel) {
			err = errmsg_set(em, -errno, "opening bpfbox's BPF object");
			goto cleanup;
		}
		remove_partial(st->pin_dir);
		err = load_and_pin(st, em);
		if (err) {
			/* Nothing can be using an incomplete set: leave no pins behind. */
			bpfbox_bpf__destroy(st->skel);
			st->skel = NULL;
			remove_partial(st->pin_dir);
			remove_pins(st->pin_dir);
			goto cleanup;
		}
		for (int i = 0; i < NET_PROG_COUNT; i++) {
			prog = bpf_object__find_program_by_name(st->skel->obj, cgroup_prog_name(i));
			st->net_prog_fd[i] = fcntl(bpf_program__fd(prog), F_DUPFD_CLOEXEC, 3);
		}
		err = open_pinned_maps(st, em);
		if (err)
			goto cleanup;
	}
	/* Once for every sandbox, still under the lock: a start attaches nothing. */
	err = cgroup_attach_parent(st, em);
	if (err)
		goto cleanup;
	close(lock_fd);
	*out = st;
	return 0;
cleanup:
	if (lock_fd >= 0)
		close(lock_fd);
	bpf_state_close(st);
	return err;
}

void bpf_state_close(struct bpf_state *st)
{
	if (!st)
		return;
	for (int i = 0; i < NET_PROG_COUNT; i++)
		if (st->net_prog_fd[i] >= 0)
			close(st->net_prog_fd[i]);
	if (st->user_lock_fd >= 0)
		close(st->user_lock_fd);
	close_maps(&st->maps);
	bpfbox_bpf__destroy(st->skel);
	free(st);
}

