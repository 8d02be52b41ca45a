// SPDX-License-Identifier: MIT
/*
 * git's config format (git/git_config.c), read from a config the sandbox
 * wrote: any bytes end in entries or an error with its line; a parsed
 * config, serialised without a subset of its entries (a mask drawn from the
 * input), reads back as exactly the rest, and is a fixed point; every entry
 * is classified, the same way before and after.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "git/git_config.h"

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool name_ok(const char *s, bool first_alpha)
{
	if (first_alpha && !(*s >= 'a' && *s <= 'z'))
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-'))
			return false;
	return true;
}

static void check_entries(const struct git_config *c, int lines)
{
	int prev_line = 1;

	FUZZ_CHECK(c->n <= GIT_CONFIG_MAX_ENTRIES);
	for (size_t i = 0; i < c->n; i++) {
		const struct git_config_entry *e = &c->entries[i];
		const char *why = git_config_exec_reason(e);

		FUZZ_CHECK(e->section && e->key && name_ok(e->section, false) && name_ok(e->key, true));
		FUZZ_CHECK(!e->subsection || !strchr(e->subsection, '\n'));
		/* Only keys before any header lack a section and a subsection. */
		if (!e->section[0] && !e->subsection)
			FUZZ_CHECK(i == 0 || (!c->entries[i - 1].section[0] && !c->entries[i - 1].subsection));
		FUZZ_CHECK(e->line >= prev_line && e->line <= lines);
		prev_line = e->line;
		FUZZ_CHECK(!why || why[0]);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct git_config c, d;
	char *out = NULL, *again = NULL;
	size_t out_len = 0, again_len = 0, j = 0;
	uint64_t h = 0xcbf29ce484222325ull;
	bool *skip = NULL;
	int line = -1, err, lines = 1;

	for (size_t i = 0; i < size; i++) {
		lines += data[i] == '\n';
		h = (h ^ data[i]) * 0x100000001b3ull;
	}
	err = git_config_parse((const char *)data, size, &c, &line);
	if (err) {
		FUZZ_CHECK(err == -EINVAL || err == -EFBIG || err == -E2BIG || err == -ENOMEM);
		FUZZ_CHECK(!c.entries && !c.n);
		/* git's line: at most one past the end (a continuation there counts the end twice). */
		if (err == -EINVAL || err == -E2BIG)
			FUZZ_CHECK(line >= 1 && line <= lines + 1);
		return 0;
	}
	FUZZ_CHECK(line == 0);
	check_entries(&c, lines);

	skip = malloc(c.n ? c.n : 1);
	if (!skip)
		goto cleanup;
	for (size_t i = 0; i < c.n; i++) {
		h ^= h << 13;
		h ^= h >> 7;
		h ^= h << 17;
		skip[i] = (h & 3) == 0;
	}
	err = git_config_serialise(&c, skip, &out, &out_len);
	FUZZ_CHECK(err == 0 || err == -ENOMEM);
	if (err)
		goto cleanup;
	FUZZ_CHECK(strlen(out) == out_len);
	err = git_config_parse(out, out_len, &d, &line);
	FUZZ_CHECK(err == 0 || err == -ENOMEM);
	if (err)
		goto cleanup;
	for (size_t i = 0; i < c.n; i++) {
		const struct git_config_entry *a = &c.entries[i], *b;

		if (skip[i])
			continue;
		FUZZ_CHECK(j < d.n);
		b = &d.entries[j++];
		FUZZ_CHECK(str_eq(a->section, b->section) && str_eq(a->subsection, b->subsection));
		FUZZ_CHECK(str_eq(a->key, b->key) && str_eq(a->value, b->value));
		FUZZ_CHECK(git_config_exec_reason(a) == git_config_exec_reason(b));
	}
	FUZZ_CHECK(j == d.n);
	/* The canonical form is a fixed point. */
	if (!git_config_serialise(&d, NULL, &again, &again_len))
		FUZZ_CHECK(again_len == out_len && !memcmp(again, out, out_len));
	git_config_free(&d);
cleanup:
	free(again);
	free(out);
	free(skip);
	git_config_free(&c);
	return 0;
}
