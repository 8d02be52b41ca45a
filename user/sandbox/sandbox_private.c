// SPDX-License-Identifier: MIT
/* A sandbox's private state on the host: TMPDIR identity, /dev/shm objects, keys. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpfbox.h"
#include "map_sweep.h"
#include "sandbox_private.h"

int sandbox_private_claim_dir(const struct bpf_state *st, uint64_t id, uint32_t dev, uint64_t ino,
			      struct errmsg *em)
{
	struct bb_inode_key key = { .sandbox = 0, .ino = ino, .dev = dev, .dir = 1 };

	if (bpf_map_update_elem(st->maps.private_dirs, &key, &id, BPF_ANY))
		return errmsg_set(em, -errno, "making the TMPDIR private (map full? limit %d)", BB_MAX_SANDBOXES);
	return 0;
}

int sandbox_private_sweep_shm(const struct bpf_state *st, uint64_t id)
{
	struct bb_owner owner;
	struct dirent *de;
	int dir_fd, fd, count = 0;
	DIR *dir;

	dir_fd = open(SANDBOX_SHM_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir_fd < 0)
		return 0;
	dir = fdopendir(dir_fd);
	if (!dir) {
		close(dir_fd);
		return 0;
	}
	/* The sandbox can only create entries directly in /dev/shm. */
	while ((de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		fd = openat(dir_fd, de->d_name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		/* Inode storage is looked up by a descriptor of the file. */
		if (!bpf_map_lookup_elem(st->maps.shm_owner, &fd, &owner) && owner.sandbox == id &&
		    !unlinkat(dir_fd, de->d_name, de->d_type == DT_DIR ? AT_REMOVEDIR : 0))
			count++;
		close(fd);
	}
	closedir(dir);
	return count;
}

void sandbox_private_release(const struct bpf_state *st, uint64_t id)
{
	if (!st)
		return;
	map_sweep(st->maps.private_dirs, sizeof(struct bb_inode_key), sizeof(uint64_t),
		  map_sweep_value_is_id, &id);
	/* Keys the sandbox made: their entries go with it (a later key at an address rewrites its entry). */
	map_sweep(st->maps.key_owner, sizeof(uint64_t), sizeof(struct bb_owner), map_sweep_value_is_id,
		  &id);
}
