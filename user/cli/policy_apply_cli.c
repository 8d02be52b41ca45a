// SPDX-License-Identifier: MIT
/*
 * `bpfbox policy apply|history|rollback`: the administrator's policy changed
 * as a whole, only once the loader accepts it, with the grants it adds and
 * removes shown first, every version kept with who applied it, when and why,
 * and any kept version applied again. The policy file is replaced atomically,
 * so the daemon's reload never reads half a file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>

#include "ceiling_preview.h"
#include "commands.h"
#include "policy/policy.h"
#include "policy/policy_grants.h"
#include "policy/policy_store.h"
#include "policy_apply_cli.h"

#define EXIT_USAGE 2

struct apply_opts {
	bool dry_run, json;
	const char *message, *target, *history, *arg;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: bpfbox policy apply [--dry-run] [--message TEXT] [--target FILE] [--history DIR] FILE|-\n"
		"       bpfbox policy history [--json] [--target FILE] [--history DIR]\n"
		"       bpfbox policy rollback [--dry-run] [--message TEXT] [--target FILE] [--history DIR] N\n"
		"\n"
		"  apply     check FILE (- : standard input) with the loader, print the grants it\n"
		"            adds and removes, keep it as the next version and replace the\n"
		"            administrator's policy with it atomically\n"
		"  history   the kept versions: number, when, who, sha256, message; * the one\n"
		"            in force\n"
		"  rollback  apply kept version N again, as a new version\n"
		"  --dry-run  only check and print the grants that would change\n"
		"  --message  why, kept with the version (at most %d bytes)\n"
		"  --target   the policy file (default " POLICY_SYSTEM_PATH ")\n"
		"  --history  where versions are kept (default " POLICY_HISTORY_DIR ")\n",
		POLICY_MESSAGE_MAX - 1);
}

static int parse(int argc, char **argv, bool takes_arg, struct apply_opts *o)
{
	o->target = POLICY_SYSTEM_PATH;
	o->history = POLICY_HISTORY_DIR;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		const char **val = !strcmp(a, "--message") ? &o->message :
				   !strcmp(a, "--target") ? &o->target :
				   !strcmp(a, "--history") ? &o->history : NULL;

		if (val) {
			if (i + 1 == argc || !*argv[i + 1]) {
				fprintf(stderr, "bpfbox: policy: %s needs a value\n", a);
				return -1;
			}
			*val = argv[++i];
		} else if (!strcmp(a, "--dry-run")) {
			o->dry_run = true;
		} else if (!strcmp(a, "--json")) {
			o->json = true;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "bpfbox: policy: unknown option '%s'\n", a);
			return -1;
		} else if (o->arg || !takes_arg) {
			fprintf(stderr, "bpfbox: policy: too many arguments\n");
			return -1;
		} else {
			o->arg = a;
		}
	}
	if (takes_arg && !o->arg)
		return -1;
	if (o->message && strlen(o->message) >= POLICY_MESSAGE_MAX) {
		fprintf(stderr, "bpfbox: policy: --message: longer than %d bytes\n", POLICY_MESSAGE_MAX - 1);
		return -1;
	}
	return 0;
}

/* The loader's verdict on text, problems printed under name. */
static struct policy *load(const char *name, const char *text, size_t len)
{
	struct policy_load_opts lo = { 0 };
	struct diag_list d = DIAG_LIST_INIT;
	struct policy *p = NULL;

	policy_load_buffer(name, text, len, &lo, &p, &d);
	diag_print(&d, name, stderr, false);
	diag_list_free(&d);
	return p;
}

/* "+ grant" for what next adds, "- grant" for what it removes; the count of both. */
static int print_changes(const struct policy *cur, const struct policy *next)
{
	size_t nc = 0, nn = 0, changes = 0;
	char **gc = cur ? policy_grants(cur, &nc) : NULL, **gn = policy_grants(next, &nn);
	char **added = NULL, **removed = NULL;

	if ((cur && !gc) || !gn)
		goto out;
	added = policy_grants_missing(gn, nn, gc, nc);
	removed = policy_grants_missing(gc, nc, gn, nn);
	for (char **a = added; a && *a; a++, changes++)
		printf("+ %s\n", *a);
	for (char **r = removed; r && *r; r++, changes++)
		printf("- %s\n", *r);
out:
	free(added);
	free(removed);
	policy_grants_free(gc, nc);
	policy_grants_free(gn, nn);
	return (int)changes;
}

/* The file in force, kept as a version of its own when the history does not hold it yet. */
static int keep_found(int dirfd, const char *text, size_t len)
{
	struct policy_version *v, found = { 0 };
	char sha[65];
	size_t n;
	int ret = policy_store_list(dirfd, &v, &n);

	if (ret)
		return ret;
	policy_sha256_hex(text, len, sha);
	if (n && !strcmp(v[n - 1].sha256, sha)) {
		free(v);
		return 0;
	}
	free(v);
	policy_store_who(&found);
	snprintf(found.source, sizeof(found.source), "found");
	snprintf(found.message, sizeof(found.message), "the file in force before this apply");
	return policy_store_add(dirfd, text, len, &found);
}

static int apply_text(const struct apply_opts *o, const char *name, const char *text, size_t len,
		      const char *source, const char *message)
{
	struct policy *next = NULL, *cur = NULL;
	struct diag_list d = DIAG_LIST_INIT;
	struct policy_version meta = { 0 };
	char *cur_text = NULL, sha[65], cur_sha[65] = "", *preview = NULL;
	size_t cur_len = 0, preview_len = 0;
	int dirfd = -1, ret, changes, status = BPFBOX_EXIT_SETUP;
	FILE *preview_out;

	next = load(name, text, len);
	if (!next) {
		fprintf(stderr, "bpfbox: policy %s: %s is rejected; nothing applied\n", source, name);
		return BPFBOX_EXIT_SETUP;
	}
	/*
	 * The running sandboxes are asked before the history's lock is taken (the
	 * answer depends on the new text alone): one slow to answer, up to 5 s
	 * each, delays this apply, never another apply or a history.
	 */
	preview_out = open_memstream(&preview, &preview_len);
	if (preview_out) {
		ceiling_preview_print(o->target, text, len, preview_out);
		fclose(preview_out);
	}
	/*
	 * The history's lock is taken before the file in force is read: another apply between
	 * the read and the lock would otherwise have this one keep the text it replaced as a
	 * "found" version and compare against it.
	 */
	if (!o->dry_run) {
		dirfd = policy_store_open(o->history, true);
		if (dirfd < 0) {
			fprintf(stderr, "bpfbox: policy %s: the history %s: %s\n", source, o->history,
				dirfd == -EPERM ? "not root's own, or writable by others" : strerror(-dirfd));
			goto out;
		}
	}
	ret = policy_read_file(o->target, &cur_text, &cur_len, &d);
	diag_list_free(&d);
	if (ret && ret != -ENOENT) {
		fprintf(stderr, "bpfbox: policy %s: cannot read %s: %s\n", source, o->target, strerror(-ret));
		goto out;
	}
	if (!ret) {
		policy_sha256_hex(cur_text, cur_len, cur_sha);
		cur = load(o->target, cur_text, cur_len);
	}
	policy_sha256_hex(text, len, sha);
	if (!strcmp(sha, cur_sha)) {
		printf("no change: %s is already this policy (sha256 %s)\n", o->target, sha);
		status = 0;
		goto out;
	}
	changes = print_changes(cur, next);
	if (!changes)
		printf("no grant added or removed; settings change (sha256 %.12s -> %.12s)\n",
		       *cur_sha ? cur_sha : "(none)", sha);
	/* What the running sandboxes under this file would lose is part of the change. */
	if (preview)
		fputs(preview, stdout);
	else
		ceiling_preview_print(o->target, text, len, stdout);
	if (o->dry_run) {
		status = 0;
		goto out;
	}
	ret = cur_text ? keep_found(dirfd, cur_text, cur_len) : 0;
	policy_store_who(&meta);
	snprintf(meta.source, sizeof(meta.source), "%s", source);
	snprintf(meta.message, sizeof(meta.message), "%s", message ? message : "");
	if (!ret)
		ret = policy_store_add(dirfd, text, len, &meta);
	if (ret) {
		fprintf(stderr, "bpfbox: policy %s: cannot keep the version in %s: %s; nothing applied\n",
			source, o->history, strerror(-ret));
		goto out;
	}
	ret = policy_store_replace(o->target, text, len);
	if (ret) {
		fprintf(stderr, "bpfbox: policy %s: cannot replace %s: %s; version %u is kept but not "
			"in force\n", source, o->target, strerror(-ret), meta.number);
		goto out;
	}
	printf("applied as version %u (sha256 %s).\n"
	       "The daemon reads it on reload (systemctl reload bpfbox.service, or SIGHUP):\n"
	       "new sandboxes get it, running ones are narrowed to it or stopped.\n",
	       meta.number, sha);
	status = 0;
out:
	if (dirfd >= 0)
		close(dirfd);
	policy_free(next);
	policy_free(cur);
	free(cur_text);
	free(preview);
	return status;
}

static int do_apply(const struct apply_opts *o)
{
	struct diag_list d = DIAG_LIST_INIT;
	const char *name = strcmp(o->arg, "-") ? o->arg : "(standard input)";
	char *text = NULL;
	size_t len = 0;
	int ret, status;

	ret = strcmp(o->arg, "-") ? policy_read_file(o->arg, &text, &len, &d) :
				    policy_read_fd(0, &text, &len);
	diag_print(&d, name, stderr, false);
	diag_list_free(&d);
	if (ret) {
		fprintf(stderr, "bpfbox: policy apply: cannot read %s: %s\n", name, strerror(-ret));
		return BPFBOX_EXIT_SETUP;
	}
	status = apply_text(o, name, text, len, "apply", o->message);
	free(text);
	return status;
}

static int do_rollback(const struct apply_opts *o)
{
	char *end, *text = NULL, name[64], message[POLICY_MESSAGE_MAX];
	unsigned long n;
	size_t len = 0;
	int dirfd, ret, status;

	errno = 0;
	n = strtoul(o->arg, &end, 10);
	if (errno || *end || !n || n > 999999 || o->arg[0] == '-' || o->arg[0] == '+') {
		fprintf(stderr, "bpfbox: policy rollback: '%s' is not a version number\n", o->arg);
		return EXIT_USAGE;
	}
	dirfd = policy_store_open(o->history, false);
	if (dirfd < 0) {
		fprintf(stderr, "bpfbox: policy rollback: the history %s: %s\n", o->history,
			strerror(-dirfd));
		return BPFBOX_EXIT_SETUP;
	}
	ret = policy_store_read(dirfd, (unsigned)n, &text, &len);
	close(dirfd);	/* apply_text takes the lock again */
	if (ret) {
		fprintf(stderr, "bpfbox: policy rollback: no version %lu in %s: %s\n", n, o->history,
			strerror(-ret));
		return BPFBOX_EXIT_SETUP;
	}
	snprintf(name, sizeof(name), "version %lu", n);
	snprintf(message, sizeof(message), "%s", o->message ? o->message : "");
	if (!o->message)
		snprintf(message, sizeof(message), "rollback to version %lu", n);
	status = apply_text(o, name, text, len, "rollback", message);
	free(text);
	return status;
}

/* The kept metadata, and whether it is the version in force. */
static cJSON *version_json(const struct policy_version *v, bool current)
{
	cJSON *o = policy_version_json(v);

	cJSON_AddBoolToObject(o, "current", current);
	return o;
}

static int do_history(const struct apply_opts *o)
{
	struct diag_list d = DIAG_LIST_INIT;
	struct policy_version *v = NULL;
	char *text = NULL, sha[65] = "", *printed;
	size_t n = 0, len, current = (size_t)-1;
	cJSON *arr = NULL;
	int dirfd = policy_store_open(o->history, false), ret;

	if (dirfd == -ENOENT) {
		/* Nothing applied yet: no versions, and nothing made on the host by looking. */
		printf(o->json ? "[]\n" : "");
		return 0;
	}
	if (dirfd < 0) {
		fprintf(stderr, "bpfbox: policy history: %s: %s\n", o->history, strerror(-dirfd));
		return BPFBOX_EXIT_SETUP;
	}
	ret = policy_store_list(dirfd, &v, &n);
	close(dirfd);
	if (ret) {
		fprintf(stderr, "bpfbox: policy history: %s: %s\n", o->history, strerror(-ret));
		return BPFBOX_EXIT_SETUP;
	}
	if (!policy_read_file(o->target, &text, &len, &d))
		policy_sha256_hex(text, len, sha);
	diag_list_free(&d);
	free(text);
	if (o->json)
		arr = cJSON_CreateArray();
	/* In force: the newest version with the file's bytes (a rollback repeats older ones). */
	for (size_t i = n; i-- > 0;)
		if (!strcmp(v[i].sha256, sha)) {
			current = i;
			break;
		}
	for (size_t i = 0; i < n; i++) {
		bool cur = i == current;

		if (arr) {
			cJSON_AddItemToArray(arr, version_json(&v[i], cur));
			continue;
		}
		printf("%c %6u  %-20s  %-12s  %-8s  %.12s  %s\n", cur ? '*' : ' ', v[i].number,
		       v[i].applied_at, *v[i].login_name ? v[i].login_name : "-", v[i].source,
		       v[i].sha256, v[i].message);
	}
	if (arr) {
		printed = cJSON_PrintUnformatted(arr);
		if (printed)
			printf("%s\n", printed);
		free(printed);
		cJSON_Delete(arr);
	}
	free(v);
	return 0;
}

int policy_apply_command(const char *sub, int argc, char **argv)
{
	struct apply_opts o = { 0 };
	bool takes_arg = strcmp(sub, "history");

	if (argc == 1 && (!strcmp(argv[0], "--help") || !strcmp(argv[0], "-h"))) {
		usage(stdout);
		return 0;
	}
	if (parse(argc, argv, takes_arg, &o) || (o.json && takes_arg) ||
	    ((o.dry_run || o.message) && !takes_arg)) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(sub, "apply"))
		return do_apply(&o);
	if (!strcmp(sub, "rollback"))
		return do_rollback(&o);
	return do_history(&o);
}
