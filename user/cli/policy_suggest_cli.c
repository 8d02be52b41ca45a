// SPDX-License-Identifier: MIT
/*
 * `bpfbox policy suggest [--policy FILE] [--sandbox ID] [--collapse N] [LOG|-]`:
 * reads a log's refusals (an --audit run's, typically), merges the grants that
 * cover them into FILE's document (or an empty one) and prints the result,
 * checked by the loader; what was proposed and what was not goes to stderr.
 * The log is read as the caller (this command needs no privilege); a line
 * over 1 MiB is skipped, so a hostile log cannot make it hold more.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "commands.h"
#include "log/log_utf8.h"
#include "policy/policy.h"
#include "policy/policy_suggest.h"
#include "policy_suggest_cli.h"

#define EXIT_USAGE 2
#define LINE_MAX_BYTES (1 << 20)

struct suggest_opts {
	const char *policy, *sandbox, *log;
	unsigned collapse;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: bpfbox policy suggest [--policy FILE] [--sandbox ID] [--collapse N] [LOG|-]\n"
		"\n"
		"  The smallest grants that cover the refusals of LOG (a bpfbox JSON log,\n"
		"  typically of an --audit run; - or nothing: standard input), merged into\n"
		"  FILE's settings (without --policy: into an empty policy) and printed on\n"
		"  stdout, checked by the loader. What was proposed, and each refusal no\n"
		"  grant can cover (the mandatory set, a ceiling, a deny of the policy's\n"
		"  own, direct egress, ...) with why, go to stderr.\n"
		"  --sandbox ID  only that sandbox's refusals\n"
		"  --collapse N  more than N refused paths in one directory become the\n"
		"                directory (default %d; 0: exact paths only)\n",
		SUGGEST_COLLAPSE_DEFAULT);
}

static int parse(int argc, char **argv, struct suggest_opts *o)
{
	o->collapse = SUGGEST_COLLAPSE_DEFAULT;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		char *end;

		if (!strcmp(a, "--policy") || !strcmp(a, "--sandbox") || !strcmp(a, "--collapse")) {
			if (i + 1 == argc || !*argv[i + 1]) {
				fprintf(stderr, "bpfbox: policy suggest: %s needs a value\n", a);
				return -1;
			}
			if (a[2] == 'p')
				o->policy = argv[++i];
			else if (a[2] == 's')
				o->sandbox = argv[++i];
			else {
				unsigned long n;

				errno = 0;
				n = strtoul(argv[++i], &end, 10);
				if (errno || *end || argv[i][0] == '-' || n > 100000) {
					fprintf(stderr, "bpfbox: policy suggest: --collapse '%s': a number "
						"from 0 to 100000\n", argv[i]);
					return -1;
				}
				o->collapse = (unsigned)n;
			}
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "bpfbox: policy suggest: unknown option '%s'\n", a);
			return -1;
		} else if (o->log) {
			fprintf(stderr, "bpfbox: policy suggest: one log only\n");
			return -1;
		} else {
			o->log = a;
		}
	}
	return 0;
}

/* Every line of f into s; a line over LINE_MAX_BYTES is skipped to its newline. */
static int read_log(FILE *f, struct policy_suggest *s)
{
	char *buf = malloc(LINE_MAX_BYTES + 2);
	int ret = 0;

	if (!buf)
		return -ENOMEM;
	while (!ret && fgets(buf, LINE_MAX_BYTES + 2, f)) {
		size_t len = strlen(buf);

		if (len && buf[len - 1] == '\n') {
			ret = policy_suggest_line(s, buf, len - 1);
			continue;
		}
		if (len <= LINE_MAX_BYTES && feof(f)) {
			ret = policy_suggest_line(s, buf, len);	/* the last line, without newline */
			continue;
		}
		s->lines++;
		s->not_json++;
		while (fgets(buf, LINE_MAX_BYTES + 2, f) && !strchr(buf, '\n'))
			;
	}
	if (!ret && ferror(f))
		ret = -EIO;
	free(buf);
	return ret;
}

/* FILE's document, after the loader accepted it; or the empty policy without FILE. */
static int base_document(const char *file, cJSON **doc)
{
	struct policy_load_opts lo = { 0 };
	struct diag_list d = DIAG_LIST_INIT;
	struct policy *p = NULL;
	char *text = NULL;
	size_t len = 0;
	int ret;

	if (!file) {
		*doc = policy_suggest_skeleton();
		return *doc ? 0 : -ENOMEM;
	}
	ret = policy_read_file(file, &text, &len, &d);
	if (!ret)
		ret = policy_load_buffer(file, text, len, &lo, &p, &d);
	diag_print(&d, file, stderr, false);
	if (!ret) {
		*doc = cJSON_ParseWithLength(text, len);
		ret = cJSON_IsObject(*doc) ? 0 : -ENOMEM;
	} else {
		fprintf(stderr, "bpfbox: policy suggest: --policy %s is rejected; nothing proposed\n",
			file);
	}
	policy_free(p);
	diag_list_free(&d);
	free(text);
	return ret;
}

/* The proposal must load as it is printed; a refusal here is bpfbox's bug, reported. */
static int check_proposal(const char *text)
{
	struct policy_load_opts lo = { 0 };
	struct diag_list d = DIAG_LIST_INIT;
	struct policy *p = NULL;
	int ret = policy_load_buffer("(proposal)", text, strlen(text), &lo, &p, &d);

	if (ret) {
		diag_print(&d, "(proposal)", stderr, false);
		fprintf(stderr, "bpfbox: policy suggest: the proposal does not load; nothing printed\n");
	}
	policy_free(p);
	diag_list_free(&d);
	return ret;
}

int policy_suggest_command(int argc, char **argv)
{
	struct suggest_opts o = { 0 };
	struct policy_suggest s;
	cJSON *doc = NULL;
	char *text = NULL;
	FILE *f = NULL;
	int ret, status = BPFBOX_EXIT_SETUP;

	if (argc == 1 && (!strcmp(argv[0], "--help") || !strcmp(argv[0], "-h"))) {
		usage(stdout);
		return 0;
	}
	if (parse(argc, argv, &o)) {
		usage(stderr);
		return EXIT_USAGE;
	}
	policy_suggest_init(&s, o.sandbox, o.collapse);
	if (base_document(o.policy, &doc))
		goto cleanup;
	f = !o.log || !strcmp(o.log, "-") ? stdin : fopen(o.log, "re");
	if (!f) {
		fprintf(stderr, "bpfbox: policy suggest: cannot open the log %s: %s\n", o.log,
			strerror(errno));
		goto cleanup;
	}
	ret = read_log(f, &s);
	if (!ret)
		ret = policy_suggest_finish(&s);
	if (!ret)
		ret = policy_suggest_merge(&s, doc);
	if (ret < 0) {
		fprintf(stderr, "bpfbox: policy suggest: %s: %s\n",
			ret == -EINVAL ? "--policy" : o.log && strcmp(o.log, "-") ? o.log : "standard input",
			ret == -EINVAL ? "a section or list of the policy is not of its type" : strerror(-ret));
		goto cleanup;
	}
	text = cJSON_Print(doc);
	if (!text || check_proposal(text))
		goto cleanup;
	policy_suggest_report(&s, stderr, log_terminal_text);
	printf("%s\n", text);
	status = fflush(stdout) ? BPFBOX_EXIT_SETUP : 0;
cleanup:
	if (f && f != stdin)
		fclose(f);
	free(text);
	cJSON_Delete(doc);
	policy_suggest_free(&s);
	return status;
}
