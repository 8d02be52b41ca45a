/* SPDX-License-Identifier: MIT */
/* Removing the entries of a shared map that belong to one sandbox. */
#ifndef BPFBOX_SANDBOX_MAP_SWEEP_H
#define BPFBOX_SANDBOX_MAP_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest key and value a swept map may have. */
#define MAP_SWEEP_MAX 128

/* Whether an entry belongs to what is being swept. */
typedef bool (*map_sweep_match)(const void *key, const void *value, const void *ctx);

/*
 * Deletes every entry of map fd that match accepts; value_size 0 matches by key alone.
 * Returns the number deleted, or -EINVAL for sizes over MAP_SWEEP_MAX.
 */
int map_sweep(int fd, size_t key_size, size_t value_size, map_sweep_match match, const void *ctx);

/* Matchers for the usual shapes: a key that starts with, or a value that starts with, a uint64 id. */
bool map_sweep_key_is_id(const void *key, const void *value, const void *id);
bool map_sweep_value_is_id(const void *key, const void *value, const void *id);

#endif
