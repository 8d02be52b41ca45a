// SPDX-License-Identifier: MIT
/*
 * `bpfbox policy check --json`: the loader's verdict as one JSON document,
 * each problem with its JSON path and where that path is in the text (line
 * and column), for editors and pipelines that must not parse messages. The
 * text is read once and the loader checks those bytes, so the locations are
 * of what was checked.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "policy/policy.h"
#include "policy/policy_locate.h"
#include "policy_check_json.h"

static const char *const severity_name[] = {
	[DIAG_ERROR] = "error",
	[DIAG_WARNING] = "warning",
	[DIAG_DEBUG] = "debug",
};

/* The text of file ("-": standard input); a problem is added to d when it cannot be read. */
static int read_text(const char *file, char **buf, size_t *len, struct diag_list *d)
{
	int ret;

	if (strcmp(file, "-"))
		return policy_read_file(file, buf, len, d);
	ret = policy_read_fd(0, buf, len);
	if (ret)
		diag_add(d, DIAG_ERROR, NULL, "cannot read the policy from standard input: %s",
			 ret == -EFBIG ? "larger than the policy's limit" : strerror(-ret));
	return ret;
}

/* One problem: severity, path, message, and its line and column when the text has them. */
static cJSON *problem(const struct diag *it, const char *text, size_t len)
{
	cJSON *o = cJSON_CreateObject();
	struct policy_location loc;
	unsigned line, column;

	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "severity", severity_name[it->severity]);
	cJSON_AddStringToObject(o, "path", it->path ? it->path : "");
	if (sscanf(it->message, "invalid JSON at line %u, column %u", &line, &column) == 2) {
		cJSON_AddNumberToObject(o, "line", line);
		cJSON_AddNumberToObject(o, "column", column);
		cJSON_AddBoolToObject(o, "exact", 1);
	} else if (text && !policy_locate(text, len, it->path ? it->path : "", &loc)) {
		cJSON_AddNumberToObject(o, "line", loc.line);
		cJSON_AddNumberToObject(o, "column", loc.column);
		cJSON_AddBoolToObject(o, "exact", loc.exact);
	}
	cJSON_AddStringToObject(o, "message", it->message);
	return o;
}

int policy_check_json(const char *file, bool strict, bool debug, FILE *out)
{
	struct policy_load_opts lo = { .strict = strict };
	struct diag_list d = DIAG_LIST_INIT;
	struct policy *p = NULL;
	char *text = NULL, *printed = NULL, digest[65] = "";
	size_t len = 0;
	cJSON *root = cJSON_CreateObject(), *list;
	int ret = read_text(file, &text, &len, &d);

	if (!ret) {
		policy_sha256_hex(text, len, digest);
		ret = policy_load_buffer(strcmp(file, "-") ? file : "(standard input)", text, len,
					 &lo, &p, &d);
	}
	list = cJSON_CreateArray();
	if (!root || !list) {
		cJSON_Delete(list);
		ret = -ENOMEM;
		goto out;
	}
	cJSON_AddStringToObject(root, "file", file);
	cJSON_AddBoolToObject(root, "valid", !ret && !d.oom);
	if (digest[0])
		cJSON_AddStringToObject(root, "sha256", digest);
	cJSON_AddNumberToObject(root, "errors", (double)diag_count(&d, DIAG_ERROR));
	cJSON_AddNumberToObject(root, "warnings", (double)diag_count(&d, DIAG_WARNING));
	cJSON_AddItemToObject(root, "problems", list);
	for (size_t i = 0; i < d.n; i++) {
		cJSON *item;

		if (d.items[i].severity == DIAG_DEBUG && !debug)
			continue;
		item = problem(&d.items[i], text, len);
		if (!item) {
			ret = -ENOMEM;
			goto out;
		}
		cJSON_AddItemToArray(list, item);
	}
	printed = cJSON_PrintUnformatted(root);
	if (!printed) {
		ret = -ENOMEM;
		goto out;
	}
	fprintf(out, "%s\n", printed);
out:
	if (ret == -ENOMEM)
		fprintf(stderr, "bpfbox: policy check: out of memory\n");
	cJSON_free(printed);
	cJSON_Delete(root);
	policy_free(p);
	diag_list_free(&d);
	free(text);
	return ret;
}
