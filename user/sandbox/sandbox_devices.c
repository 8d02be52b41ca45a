// SPDX-License-Identifier: MIT
/* Loading a sandbox's allowed devices into the kernel's device_allow map. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpfbox.h"
#include "sandbox_devices.h"

static int allow(const struct bpf_state *st, uint64_t id, const struct stat *s, const char *what,
		 struct errmsg *em)
{
	struct bb_device_key key = {
		.sandbox = id,
		.rdev = BB_KDEV(major(s->st_rdev), minor(s->st_rdev)),
		.type = S_ISBLK(s->st_mode) ? BB_DEV_BLOCK : BB_DEV_CHAR,
	};
	uint32_t yes = 1;

	if (bpf_map_update_elem(st->maps.device_allow, &key, &yes, BPF_ANY))
		return errmsg_set(em, -errno, "allowing %s (device map full? limit %d)", what, BB_MAX_DEVICES);
	return 0;
}

int sandbox_devices_load(const struct bpf_state *st, uint64_t id, char *const *paths, size_t n,
			 void (*note)(void *ctx, const char *path, const char *what), void *ctx, struct errmsg *em)
{
	struct stat s;
	int err;

	for (size_t i = 0; i < n; i++) {
		if (stat(paths[i], &s)) {
			note(ctx, paths[i], strerror(errno));
			continue;
		}
		if (!S_ISCHR(s.st_mode) && !S_ISBLK(s.st_mode)) {
			note(ctx, paths[i], "not a device node");
			continue;
		}
		err = allow(st, id, &s, paths[i], em);
		if (err)
			return err;
	}
	/* The terminal the command is given, whichever pts or console it is, by its number. */
	for (int fd = 0; fd <= 2; fd++) {
		if (!isatty(fd) || fstat(fd, &s) || !S_ISCHR(s.st_mode))
			continue;
		err = allow(st, id, &s, "the command's terminal", em);
		if (err)
			return err;
	}
	return 0;
}
