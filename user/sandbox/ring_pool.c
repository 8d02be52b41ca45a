// SPDX-License-Identifier: MIT
/* Event ring buffers, pooled by slot; see ring_pool.h. */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpfbox.h"
#include "map_sweep.h"
#include "ring_pool.h"

/*
 * The consumer position is the reader's to move: setting it to the producer
 * position drops what a previous owner left unread. Its late records, if
 * any, carry its sandbox id and are dropped by the reader (kevent.c).
 */
static int skip_stale(int fd)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned long *cons, *prod;
	int err = 0;

	cons = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (cons == MAP_FAILED)
		return -errno;
	prod = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fd, page);
	if (prod == MAP_FAILED)
		err = -errno;
	else
		__atomic_store_n(cons, __atomic_load_n(prod, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
	if (prod != MAP_FAILED)
		munmap(prod, (size_t)page);
	munmap(cons, (size_t)page);
	return err;
}

/* The ring buffer of a claimed slot: the pooled one, or a new one put in the slot. */
static int slot_ring(const struct bpf_state *st, uint32_t slot, struct errmsg *em)
{
	uint32_t inner_id;
	int fd, err;

	if (!bpf_map_lookup_elem(st->maps.sandbox_events, &slot, &inner_id)) {
		fd = bpf_map_get_fd_by_id(inner_id);
		if (fd < 0)
			return errmsg_set(em, -errno, "opening pooled ring buffer %u", slot);
		err = skip_stale(fd);
		if (err) {
			close(fd);
			return errmsg_set(em, err, "mapping pooled ring buffer %u", slot);
		}
		return fd;
	}
	fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "bb_events", 0, 0, BB_RINGBUF_BYTES, NULL);
	if (fd < 0)
		return errmsg_set(em, -errno, "creating a ring buffer");
	if (bpf_map_update_elem(st->maps.sandbox_events, &slot, &fd, BPF_NOEXIST)) {
		err = errmsg_set(em, -errno, "adding ring buffer %u to the pool", slot);
		close(fd);
		return err;
	}
	return fd;
}

int ring_pool_claim(const struct bpf_state *st, uint64_t id, uint32_t *slot, int *fd, struct errmsg *em)
{
	for (uint32_t s = 0; s < BB_MAX_SANDBOXES; s++) {
		int ret;

		if (bpf_map_update_elem(st->maps.ring_owners, &s, &id, BPF_NOEXIST)) {
			if (errno == EEXIST)
				continue;
			return errmsg_set(em, -errno, "claiming ring buffer slot %u", s);
		}
		ret = slot_ring(st, s, em);
		if (ret < 0) {
			bpf_map_delete_elem(st->maps.ring_owners, &s);
			return ret;
		}
		*slot = s;
		*fd = ret;
		return 0;
	}
	return errmsg_set(em, -ENOSPC, "every ring buffer slot is taken (limit %d sandboxes)", BB_MAX_SANDBOXES);
}

void ring_pool_release(const struct bpf_state *st, uint64_t id)
{
	map_sweep(st->maps.ring_owners, sizeof(uint32_t), sizeof(uint64_t), map_sweep_value_is_id, &id);
}

int ring_pool_trim(const struct bpf_state *st)
{
	uint32_t key, next, *prev = NULL;
	uint64_t owner;
	int n = 0;

	while (!bpf_map_get_next_key(st->maps.sandbox_events, prev, &next)) {
		key = next;
		prev = &key;
		if (!bpf_map_lookup_elem(st->maps.ring_owners, &key, &owner))
			continue;
		/* Claim it first, so no launcher picks it while it goes. */
		owner = 0;
		if (bpf_map_update_elem(st->maps.ring_owners, &key, &owner, BPF_NOEXIST))
			continue;
		if (!bpf_map_delete_elem(st->maps.sandbox_events, &key))
			n++;
		bpf_map_delete_elem(st->maps.ring_owners, &key);
		prev = NULL;
	}
	return n;
}
