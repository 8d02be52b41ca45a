// SPDX-License-Identifier: MIT
/*
 * bpfbox update ID: a running sandbox's policy replaced, or domains allowed
 * or denied in it. Root asks the sandbox's control socket itself; other
 * users ask the daemon, which relays to their own sandboxes only, where the
 * administrator's policy stays the ceiling.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "daemon/wire.h"
#include "sandbox/run_control.h"

struct update_opts {
	const char *id;
	const char *policy_file;
	char *policy; /* the file's text, read with the credentials of whoever runs this */
	size_t policy_len;
	const char *allow[RUN_CONTROL_NAMES_MAX];
	size_t n_allow;
	const char *deny[RUN_CONTROL_NAMES_MAX];
	size_t n_deny;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: bpfbox update ID (--policy FILE | --allow-domain NAME | --deny-domain NAME)...\n\n"
		"  --policy FILE         replace the sandbox's policy with FILE (a whole settings document)\n"
		"  --allow-domain NAME   add NAME to network.allowedDomains (and drop it from deniedDomains)\n"
		"  --deny-domain NAME    add NAME to network.deniedDomains (and drop it from allowedDomains)\n\n"
		"Only what may change while the sandbox runs may differ (docs/policy.md, \"Live policy\"); the\n"
		"kernel switches to the new rules in one step and established connections to a name no longer\n"
		"allowed are closed. Root updates any sandbox; other users update their own through the\n"
		"daemon, within the administrator's policy as at start.\n");
}

static int add_name(const char **v, size_t *n, const char *name)
{
	if (*n == RUN_CONTROL_NAMES_MAX) {
		fprintf(stderr, "bpfbox: update: more than %d names\n", RUN_CONTROL_NAMES_MAX);
		return -E2BIG;
	}
	v[(*n)++] = name;
	return 0;
}

static int parse_args(int argc, char **argv, struct update_opts *o)
{
	static const struct option opts[] = { { "policy", required_argument, NULL, 'p' },
					      { "allow-domain", required_argument, NULL, 'a' },
					      { "deny-domain", required_argument, NULL, 'd' },
					      { "help", no_argument, NULL, 'h' },
					      { 0 } };
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (o->policy_file) {
				fprintf(stderr, "bpfbox: update: --policy given twice\n");
				return -EINVAL;
			}
			o->policy_file = optarg;
			break;
		case 'a':
			if (add_name(o->allow, &o->n_allow, optarg))
				return -EINVAL;
			break;
		case 'd':
			if (add_name(o->deny, &o->n_deny, optarg))
				return -EINVAL;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind + 1 != argc || (!o->policy_file && !o->n_allow && !o->n_deny) ||
	    (o->policy_file && (o->n_allow || o->n_deny))) {
		usage(stderr);
		return -EINVAL;
	}
	o->id = argv[optind];
	return 0;
}

static int read_policy(struct update_opts *o)
{
	FILE *f = fopen(o->policy_file, "re");
	size_t cap = 0;
	ssize_t n;

	if (!f) {
		fprintf(stderr, "bpfbox: update: %s: %s\n", o->policy_file, strerror(errno));
		return -errno;
	}
	n = getdelim(&o->policy, &cap, 0, f);
	fclose(f);
	if (n < 0 || (size_t)n > RUN_CONTROL_POLICY_MAX || strlen(o->policy) != (size_t)n) {
		fprintf(stderr, "bpfbox: update: %s: %s\n", o->policy_file,
			n < 0 ? "cannot read it" : "not a settings document of at most 1 MiB");
		return -EINVAL;
	}
	o->policy_len = (size_t)n;
	return 0;
}

/* Root: the sandbox's control socket, directly. */
static int update_as_root(const struct update_opts *o)
{
	struct run_control_request q = {
		.op = RUN_CONTROL_UPDATE,
		.policy = o->policy,
		.policy_len = o->policy_len,
		.allow = (const char **)o->allow,
		.n_allow = o->n_allow,
		.deny = (const char **)o->deny,
		.n_deny = o->n_deny,
	};
	struct errmsg em = { { 0 } };
	char *message = NULL;
	int err = run_control_call(o->id, &q, &message, &em);

	if (message && *message)
		fputs(message, err ? stderr : stdout);
	else if (err)
		fprintf(stderr, "bpfbox: update: %s\n", em.text);
	free(message);
	return err ? 1 : 0;
}

static int update_through_daemon(const struct update_opts *o)
{
	struct wire_request req = {
		.op = WIRE_OP_UPDATE,
		.update_policy = o->policy,
		.update_policy_len = o->policy_len,
		.update_allow = (char **)o->allow,
		.n_update_allow = o->n_allow,
		.update_deny = (char **)o->deny,
		.n_update_deny = o->n_deny,
	};

	if (strlen(o->id) >= sizeof(req.sandbox_id)) {
		fprintf(stderr, "bpfbox: update: %s: not a sandbox id (bb-...; see bpfbox ps)\n", o->id);
		return 1;
	}
	snprintf(req.sandbox_id, sizeof(req.sandbox_id), "%s", o->id);
	return daemon_ask(&req);
}

int cmd_update(int argc, char **argv)
{
	struct update_opts o = { 0 };
	int ret = parse_args(argc, argv, &o);

	if (ret)
		return ret > 0 ? 0 : 2;
	if (o.policy_file && read_policy(&o)) {
		free(o.policy);
		return 1;
	}
	ret = geteuid() == 0 ? update_as_root(&o) : update_through_daemon(&o);
	free(o.policy);
	return ret;
}
