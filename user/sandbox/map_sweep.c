// SPDX-License-Identifier: MIT
/*
 * One pass collects the matching keys, then they go: deleting while iterating a hash map
 * can skip entries, and restarting the walk after each deletion is quadratic.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "map_sweep.h"

bool map_sweep_key_is_id(const void *key, const void *value, const void *id)
{
	return !memcmp(key, id, sizeof(uint64_t));
}

bool map_sweep_value_is_id(const void *key, const void *value, const void *id)
{
	return !memcmp(value, id, sizeof(uint64_t));
}

static bool entry_matches(int fd, const void *key, size_t value_size, map_sweep_match match,
			  const void *ctx)
{
	unsigned char value[MAP_SWEEP_MAX];

	if (!value_size)
		return match(key, NULL, ctx);
	/* Gone since the walk saw it: nothing to delete. */
	if (bpf_map_lookup_elem(fd, key, value))
		return false;
	return match(key, value, ctx);
}

/* Without memory for the list: delete as found, restarting the walk after each one. */
static int sweep_one_by_one(int fd, size_t value_size, map_sweep_match match, const void *ctx)
{
	unsigned char key[MAP_SWEEP_MAX];
	void *prev = NULL;
	int n = 0;

	while (!bpf_map_get_next_key(fd, prev, key)) {
		if (entry_matches(fd, key, value_size, match, ctx)) {
			if (!bpf_map_delete_elem(fd, key))
				n++;
			prev = NULL;
			continue;
		}
		prev = key;
	}
	return n;
}

int map_sweep(int fd, size_t key_size, size_t value_size, map_sweep_match match, const void *ctx)
{
	unsigned char key[MAP_SWEEP_MAX], *found = NULL, *grown;
	size_t n = 0, cap = 0;
	bool short_of_memory = false;
	void *prev = NULL;
	int deleted = 0;

	if (key_size > MAP_SWEEP_MAX || value_size > MAP_SWEEP_MAX)
		return -EINVAL;
	while (!bpf_map_get_next_key(fd, prev, key)) {
		prev = key;
		if (!entry_matches(fd, key, value_size, match, ctx))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			grown = realloc(found, cap * key_size);
			if (!grown) {
				short_of_memory = true;
				break;
			}
			found = grown;
		}
		memcpy(found + n++ * key_size, key, key_size);
	}
	for (size_t i = 0; i < n; i++)
		if (!bpf_map_delete_elem(fd, found + i * key_size))
			deleted++;
	free(found);
	if (short_of_memory)
		deleted += sweep_one_by_one(fd, value_size, match, ctx);
	return deleted;
}
