/* SPDX-License-Identifier: MIT */
/*
 * The keys of a strict JSON object: each one known, none repeated (parsers
 * disagree on which copy of a repeated key wins, so a repeat is refused).
 */
#ifndef BPFBOX_JSON_KEYS_H
#define BPFBOX_JSON_KEYS_H

#include <stdbool.h>

#include <cjson/cJSON.h>

/* Does a later member of m's object have m's name? */
bool json_key_repeated(const cJSON *m);
/*
 * The first member of obj that is not one of keys[] (NULL-terminated) or
 * that a later member repeats, with *repeated saying which; NULL when every
 * key is known and single.
 */
const cJSON *json_keys_check(const cJSON *obj, const char *const *keys, bool *repeated);

#endif
