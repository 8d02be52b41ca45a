// SPDX-License-Identifier: MIT
/* The running sandboxes' view of a new administrator's policy (ceiling_preview.h). */
#include <errno.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "ceiling_preview.h"
#include "log/log_utf8.h"
#include "sandbox/registry.h"
#include "sandbox/run_control.h"

struct preview_walk {
	const char *target; /* the administrator's file, resolved */
	const char *text;
	size_t len;
	FILE *out;
	size_t listed;
};

/* A sandbox's answer quotes its caller's own policy: printed to root's terminal escaped. */
static void print_caller_text(FILE *out, const char *s)
{
	char *text = log_terminal_text(s);

	fputs(text ? text : "(unprintable)", out);
	free(text);
}

static void print_grants(FILE *out, const cJSON *arr, char sign)
{
	const cJSON *g;

	cJSON_ArrayForEach(g, arr)
		if (cJSON_IsString(g)) {
			fprintf(out, "    %c ", sign);
			print_caller_text(out, g->valuestring);
			fputc('\n', out);
		}
}

/* "the user's sandbox bb-... (alice, uid 1000: make test)" as its heading. */
static void print_heading(FILE *out, const struct registry_entry *e)
{
	struct passwd pw, *found = NULL;
	char buf[1024];

	if (getpwuid_r(e->uid, &pw, buf, sizeof(buf), &found) || !found)
		found = NULL;
	char command[121];

	/* The command line is the caller's: cut, then escaped like its grants. */
	snprintf(command, sizeof(command), "%s", e->command);
	fprintf(out, "  %s (%s%suid %u: ", e->id, found ? found->pw_name : "", found ? ", " : "", (unsigned)e->uid);
	print_caller_text(out, command);
	fputc(')', out);
}

/* Is the sandbox's administrator's file the one being changed? */
static bool under_target(const struct preview_walk *w, const cJSON *file)
{
	char *real;
	bool same;

	if (!cJSON_IsString(file))
		return false;
	real = realpath(file->valuestring, NULL);
	same = real && w->target && !strcmp(real, w->target);
	free(real);
	return same;
}

static int preview_one(void *ctx, const struct registry_entry *e)
{
	struct preview_walk *w = ctx;
	struct run_control_request q = { .op = RUN_CONTROL_PREVIEW, .ceiling = w->text, .ceiling_len = w->len };
	struct errmsg em = { { 0 } };
	const cJSON *removed, *added;
	char *message = NULL;
	cJSON *ans = NULL;
	int err;

	if (!registry_alive(e))
		return 0;
	err = run_control_call(e->id, &q, &message, &em);
	/* Root's own runs answer that their ceiling is their own: the daemon's policy is not theirs. */
	if (err == -EPERM)
		goto out;
	if (!err && message)
		ans = cJSON_Parse(message);
	if (cJSON_IsObject(ans) && !under_target(w, cJSON_GetObjectItemCaseSensitive(ans, "file")))
		goto out;
	if (!w->listed++)
		fprintf(w->out, "running sandboxes, narrowed to it when the daemon reloads:\n");
	print_heading(w->out, e);
	if (!cJSON_IsObject(ans)) {
		fprintf(w->out, ": could not be asked (%s); it is told on reload, and stopped if it cannot take it\n",
			em.text[0] ? em.text : "no answer");
		goto out;
	}
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ans, "unchanged"))) {
		fprintf(w->out, ": runs under this policy already\n");
		goto out;
	}
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ans, "stops"))) {
		const cJSON *why = cJSON_GetObjectItemCaseSensitive(ans, "reason");

		fprintf(w->out, ": would be STOPPED, its policy does not load under this one: ");
		print_caller_text(w->out, cJSON_IsString(why) ? why->valuestring : "no reason given");
		fputc('\n', w->out);
		goto out;
	}
	removed = cJSON_GetObjectItemCaseSensitive(ans, "removed");
	added = cJSON_GetObjectItemCaseSensitive(ans, "added");
	if (!cJSON_GetArraySize(removed) && !cJSON_GetArraySize(added)) {
		fprintf(w->out, ": no grant changes\n");
		goto out;
	}
	fprintf(w->out, ": loses %d grant(s), gains %d\n", cJSON_GetArraySize(removed), cJSON_GetArraySize(added));
	print_grants(w->out, removed, '-');
	print_grants(w->out, added, '+');
out:
	cJSON_Delete(ans);
	free(message);
	return 0;
}

size_t ceiling_preview_print(const char *target, const char *text, size_t len, FILE *out)
{
	struct preview_walk w = { .target = realpath(target, NULL), .text = text, .len = len, .out = out };

	if (w.target)
		registry_each(preview_one, &w);
	free((char *)w.target);
	return w.listed;
}
