// SPDX-License-Identifier: MIT
/* Diagnostics list: collect every problem, print them in one place. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"

void diag_list_init(struct diag_list *l)
{
	memset(l, 0, sizeof(*l));
}

void diag_list_free(struct diag_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->items[i].path);
		free(l->items[i].message);
	}
	free(l->items);
	memset(l, 0, sizeof(*l));
}

int diag_add(struct diag_list *l, enum diag_severity sev, const char *path,
	     const char *fmt, ...)
{
	struct diag d = { .severity = sev };
	va_list ap;
	int ret;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct diag *items = realloc(l->items, cap * sizeof(*items));

		if (!items)
			goto oom;
		l->items = items;
		l->cap = cap;
	}
	d.path = strdup(path ? path : "");
	if (!d.path)
		goto oom;
	va_start(ap, fmt);
	ret = vasprintf(&d.message, fmt, ap);
	va_end(ap);
	if (ret < 0) {
		free(d.path);
		goto oom;
	}
	l->items[l->n++] = d;
	return 0;
oom:
	l->oom = true;
	return -ENOMEM;
}

size_t diag_count(const struct diag_list *l, enum diag_severity sev)
{
	size_t n = 0;

	for (size_t i = 0; i < l->n; i++)
		if (l->items[i].severity == sev)
			n++;
	return n;
}

bool diag_has_errors(const struct diag_list *l)
{
	return l->oom || diag_count(l, DIAG_ERROR) > 0;
}

const struct diag *diag_find(const struct diag_list *l, enum diag_severity sev,
			     const char *path)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->items[i].severity == sev && !strcmp(l->items[i].path, path))
			return &l->items[i];
	return NULL;
}

void diag_print(const struct diag_list *l, const char *file, FILE *out,
		bool with_debug)
{
	static const char *const prefix[] = {
		[DIAG_ERROR] = "",
		[DIAG_WARNING] = "warning: ",
		[DIAG_DEBUG] = "debug: ",
	};

	for (size_t i = 0; i < l->n; i++) {
		const struct diag *d = &l->items[i];

		if (d->severity == DIAG_DEBUG && !with_debug)
			continue;
		fprintf(out, "bpfbox: %s", prefix[d->severity]);
		if (file)
			fprintf(out, "%s: ", file);
		if (d->path[0])
			fprintf(out, "%s: ", d->path);
		fprintf(out, "%s\n", d->message);
	}
	if (l->oom)
		fprintf(out, "bpfbox: %s%sout of memory while recording problems\n",
			file ? file : "", file ? ": " : "");
}
