// SPDX-License-Identifier: MIT
#include <string.h>

#include "json_keys.h"

bool json_key_repeated(const cJSON *m)
{
	for (const cJSON *b = m->next; b; b = b->next)
		if (m->string && b->string && !strcmp(m->string, b->string))
			return true;
	return false;
}

static bool key_known(const char *name, const char *const *keys)
{
	for (size_t i = 0; name && keys[i]; i++)
		if (!strcmp(name, keys[i]))
			return true;
	return false;
}

const cJSON *json_keys_check(const cJSON *obj, const char *const *keys, bool *repeated)
{
	for (const cJSON *m = obj->child; m; m = m->next) {
		*repeated = false;
		if (!key_known(m->string, keys))
			return m;
		*repeated = json_key_repeated(m);
		if (*repeated)
			return m;
	}
	return NULL;
}
