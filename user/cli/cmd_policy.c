// SPDX-License-Identifier: MIT
/*
 * `bpfbox policy check|show|explain`: the administrator's view of a policy
 * file, using exactly the loader and decision model that exec relies on.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "policy_check_json.h"
#include "policy_apply_cli.h"
#include "policy_suggest_cli.h"
#include "policy/domain.h"
#include "policy/policy.h"
#include "policy/policy_ceiling.h"
#include "sandbox/sandbox_learned.h"

#define EXIT_USAGE 2

struct opts {
	bool strict, debug, write, force_path, force_host, json;
	const char *ceiling;	/* --ceiling: the administrator's policy over FILE */
	const char *args[2];
	int nargs;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: bpfbox policy check [--strict] [--debug] [--ceiling ADMIN] [FILE]\n"
		"       bpfbox policy check --json [--strict] [--debug] [FILE|-]\n"
		"       bpfbox policy show [--strict] [--debug] [--ceiling ADMIN] [FILE]\n"
		"       bpfbox policy explain [--strict] [--write] [--path|--host] [--ceiling ADMIN]\n"
		"                             FILE TARGET\n"
		"       bpfbox policy suggest [--policy FILE] [--sandbox ID] [--collapse N] [LOG|-]\n"
		"       bpfbox policy apply [--dry-run] [--message TEXT] FILE|-\n"
		"       bpfbox policy history [--json]\n"
		"       bpfbox policy rollback [--dry-run] [--message TEXT] N\n"
		"\n"
		"  check    validate FILE, list every problem; exit 0, or 125 if rejected\n"
		"  show     print the effective policy as JSON (absolute paths, canonical\n"
		"           domains, mandatory entries, defaults filled in)\n"
		"  explain  the decision for TARGET and the rule that made it; TARGET is a\n"
		"           path (read, or write with --write) or HOST[:PORT] (port 443 if\n"
		"           omitted); exit 0 allowed, 1 denied\n"
		"  suggest  the grants that cover a log's refusals, merged into FILE\n"
		"           and printed (its options: 'bpfbox policy suggest -h')\n"
		"  apply    make FILE the administrator's policy once the loader accepts\n"
		"           it, showing the grants it adds and removes; every version kept\n"
		"  history  the kept versions, who applied each and when\n"
		"  rollback apply kept version N again (all three: 'bpfbox policy apply -h')\n"
		"\n"
		"Without FILE, check and show use --policy's discovery order:\n"
		"$BPFBOX_POLICY, then " POLICY_SYSTEM_PATH ", else the built-in default.\n"
		"  --strict  warnings (unknown keys, ...) are errors, and so is a grant\n"
		"            of FILE that the ceiling takes away\n"
		"  --debug   also print debug notes (ignored srt-only fields, ...)\n"
		"  --json    check: one JSON document on stdout, each problem with its\n"
		"            JSON path, line and column; FILE - reads standard input\n"
		"  --ceiling ADMIN  FILE as a caller bound by the administrator's policy\n"
		"            ADMIN: print each grant of FILE that ADMIN takes away, and use\n"
		"            the intersection of both (without FILE: ADMIN as it is)\n");
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--strict"))
			o->strict = true;
		else if (!strcmp(a, "--debug") || !strcmp(a, "-v"))
			o->debug = true;
		else if (!strcmp(a, "--json"))
			o->json = true;
		else if (!strcmp(a, "--write"))
			o->write = true;
		else if (!strcmp(a, "--path"))
			o->force_path = true;
		else if (!strcmp(a, "--host"))
			o->force_host = true;
		else if (!strcmp(a, "--ceiling") || !strncmp(a, "--ceiling=", 10)) {
			o->ceiling = a[9] ? a + 10 : i + 1 < argc ? argv[++i] : NULL;
			if (!o->ceiling || !*o->ceiling) {
				fprintf(stderr, "bpfbox: policy: --ceiling needs the administrator's "
					"policy file\n");
				return -1;
			}
		} else if (!strcmp(a, "--")) {
			/* Everything after "--" is FILE/TARGET, even "-x". */
			for (i++; i < argc; i++) {
				if (o->nargs == 2)
					return -1;
				o->args[o->nargs++] = argv[i];
			}
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "bpfbox: policy: unknown option '%s'\n", a);
			return -1;
		} else if (o->nargs == 2) {
			fprintf(stderr, "bpfbox: policy: too many arguments\n");
			return -1;
		} else {
			o->args[o->nargs++] = a;
		}
	}
	return 0;
}

/* Loads FILE (or the discovered/default policy); prints problems. */
static int load(const char *file, const struct opts *o, struct policy **p)
{
	struct policy_load_opts lo = { .strict = o->strict };
	struct diag_list d = DIAG_LIST_INIT;
	int ret;

	ret = file ? policy_load_file(file, &lo, p, &d) : policy_default(&lo, p);
	diag_print(&d, file, stderr, o->debug);
	diag_list_free(&d);
	if (ret)
		fprintf(stderr, "bpfbox: policy rejected; the command was not run\n");
	return ret;
}

/*
 * FILE under the --ceiling policy: both are loaded (problems printed), then
 * every cut is printed. Without FILE the administrator's policy is used as it
 * is. Returns 0 or a negative errno (-EPERM: cuts under --strict).
 */
static int load_under_ceiling(const char *file, const struct opts *o, struct policy **p)
{
	struct ceiling_cuts cuts = CEILING_CUTS_INIT;
	struct policy *admin = NULL, *caller = NULL;
	int ret;

	*p = NULL;
	ret = load(o->ceiling, o, &admin);
	if (ret || !file) {
		*p = admin;
		return ret;
	}
	ret = load(file, o, &caller);
	if (ret)
		goto out;
	ret = policy_ceiling_apply(admin, caller, o->strict, p, &cuts);
	ceiling_cuts_print(&cuts, stderr);
	if (ret == -EPERM)
		fprintf(stderr, "bpfbox: %s: the administrator's policy (%s) takes away %zu "
			"grant(s), an error under --strict; the command was not run\n", file,
			o->ceiling, cuts.n);
	else if (ret)
		fprintf(stderr, "bpfbox: %s\n", ret == -ENOMEM ? "out of memory" :
			"cannot apply the ceiling");
out:
	ceiling_cuts_free(&cuts);
	policy_free(caller);
	policy_free(admin);
	return ret;
}

static const char *discover(const struct opts *o)
{
	const char *f = o->nargs ? o->args[0] : policy_discover(NULL);

	if (!f)
		fprintf(stderr, "bpfbox: no policy file given or found; using the "
			"built-in default\n");
	return f;
}

/* FILE (or the discovered policy), or FILE under --ceiling. */
static int load_effective(const char *file, const struct opts *o, struct policy **p)
{
	return o->ceiling ? load_under_ceiling(file, o, p) : load(file, o, p);
}

static int do_check(const struct opts *o)
{
	const char *file;
	struct policy *p = NULL;

	if (o->json && o->ceiling) {
		fprintf(stderr, "bpfbox: policy check: --json checks one file; --ceiling is not "
			"taken with it (check each file alone)\n");
		return EXIT_USAGE;
	}
	if (o->json && !o->nargs && !policy_discover(NULL)) {
		fprintf(stderr, "bpfbox: policy check --json: no policy file given or found\n");
		return BPFBOX_EXIT_SETUP;
	}
	if (o->json)
		return policy_check_json(o->nargs ? o->args[0] : policy_discover(NULL), o->strict,
					 o->debug, stdout) ? BPFBOX_EXIT_SETUP : 0;
	file = o->ceiling ? (o->nargs ? o->args[0] : NULL) : discover(o);

	if (load_effective(file, o, &p))
		return BPFBOX_EXIT_SETUP;
	if (p->has_ceiling)
		printf("bpfbox: %s: policy ok (sha256 %s) under the administrator's %s "
		       "(sha256 %s)\n", file, p->digest, p->ceiling_file, p->ceiling_digest);
	else
		printf("bpfbox: %s: policy ok (sha256 %s)\n",
		       o->ceiling ? o->ceiling : file ? file : "(default)", p->digest);
	policy_free(p);
	return 0;
}

static int do_show(const struct opts *o)
{
	const char *file = o->ceiling ? (o->nargs ? o->args[0] : NULL) : discover(o);
	struct policy *p = NULL;
	char *text;

	if (load_effective(file, o, &p))
		return BPFBOX_EXIT_SETUP;
	text = policy_to_json(p);
	policy_free(p);
	if (!text) {
		fprintf(stderr, "bpfbox: out of memory\n");
		return BPFBOX_EXIT_SETUP;
	}
	printf("%s\n", text);
	free(text);
	return 0;
}

static bool looks_like_path(const char *t)
{
	return strchr(t, '/') || t[0] == '~' || t[0] == '.';
}

/* Under a ceiling: each layer's own decision, below the combined one. */
static void explain_layers(const struct policy *p, const char *abs, bool write)
{
	static const char *const who[FS_LAYERS] = { "caller", "administrator" };

	for (int l = 0; l < FS_LAYERS; l++) {
		struct fs_decision d;

		if (write)
			policy_decide_layer_write(p, (enum fs_layer)l, abs, &d);
		else
			policy_decide_layer_read(p, (enum fs_layer)l, abs, &d);
		printf("  %s layer (%s): %s by %s\n", who[l], l ? p->ceiling_file :
		       p->file ? p->file : "(default)", d.allowed ? "allowed" : "denied",
		       d.rule_name);
	}
	if (write)
		printf("  a write needs both layers, and the mandatory deny set applies to both\n");
	else
		printf("  a read needs both layers\n");
}

/*
 * A device node is first judged by its number (the sandbox's device set);
 * one in the set is writable without allowWrite. Returns true when refused.
 */
static bool explain_device(const struct policy *p, const char *abs, bool write, struct fs_decision *d)
{
	struct device_decision dd;

	if (write)
		policy_decide_write(p, abs, d);
	else
		policy_decide_read(p, abs, d);
	if (!policy_decide_device(p, abs, &dd))
		return false;
	printf("device %s (%s device %u:%u): %s by %s", abs, dd.block ? "block" : "char", dd.major, dd.minor,
	       dd.allowed ? "allowed" : "denied", dd.rule_name);
	if (dd.entry)
		printf(" (entry \"%s\")", dd.entry);
	if (dd.what)
		printf(" (%s)", dd.what);
	printf("\n");
	if (!dd.allowed) {
		if (p->audit)
			printf("audit mode: this would be logged, not blocked\n");
		return true;
	}
	if (write && !d->allowed && !strcmp(d->rule_name, "default:write")) {
		d->allowed = true;
		d->rule = NULL;
		d->rule_name = dd.rule_name;
	}
	return false;
}

static int explain_path(const struct policy *p, const char *target, bool write)
{
	struct fs_decision d;
	const char *why;
	char *abs = NULL;

	if (policy_path_resolve_target(target, p->cwd, p->home, &abs, &why)) {
		fprintf(stderr, "bpfbox: %s: %s\n", target, why ? why : "out of memory");
		return EXIT_USAGE;
	}
	if (explain_device(p, abs, write, &d)) {
		free(abs);
		return 1;
	}
	printf("%s %s: %s by %s", write ? "write" : "read", abs,
	       d.allowed ? "allowed" : "denied", d.rule_name);
	if (d.rule && !d.rule->from_default && strcmp(d.rule->source, d.rule->path))
		printf(" (written \"%s\")", d.rule->source);
	if (!strncmp(d.rule_name, "mandatory:", 10))
		printf(" (always write-protected, at any depth)");
	printf("\n");
	if (p->has_ceiling)
		explain_layers(p, abs, write);
	if (p->audit && !d.allowed)
		printf("audit mode: this would be logged, not blocked\n");
	free(abs);
	return d.allowed ? 0 : 1;
}

/* HOST, HOST:PORT, [V6], [V6]:PORT or a bare IPv6 literal. */
static int split_host(const char *t, char *host, size_t hlen, unsigned *port)
{
	const char *colon = NULL, *end;
	size_t n;

	*port = 443;
	if (t[0] == '[') {
		end = strchr(t, ']');
		if (!end)
			return -1;
		n = end - t + 1;
		if (end[1] == ':')
			colon = end + 1;
		else if (end[1])
			return -1;
	} else {
		colon = strchr(t, ':');
		if (colon && strchr(colon + 1, ':'))
			colon = NULL;	/* unbracketed IPv6: no port */
		n = colon ? (size_t)(colon - t) : strlen(t);
	}
	if (n >= hlen)
		return -1;
	memcpy(host, t, n);
	host[n] = '\0';
	if (colon) {
		char *e;
		long v = strtol(colon + 1, &e, 10);

		if (!colon[1] || *e || v < 1 || v > 65535)
			return -1;
		*port = (unsigned)v;
	}
	return 0;
}

/* How a client that ignores the proxy variables would fare (bpfbox.network.transparent). */
static void explain_transparent(const struct policy *p, const char *host, unsigned port, enum net_verdict v)
{
	char canon[DOMAIN_HOST_MAX];
	const char *why, *rule = NULL;

	if (v == NET_DENY_MALFORMED || host_canonicalise(host, canon, sizeof(canon), &why))
		return;
	if (p->transparent_off) {
		printf("transparent: off (bpfbox.network.transparent false): only clients using the proxy "
		       "variables can reach it\n");
		return;
	}
	if (host_ip_family(canon)) {
		if (v == NET_ALLOW)
			printf("transparent: learned at launch; a direct TCP connect to %s port %u goes to the "
			       "proxy, which dials it\n", canon, port);
		else
			printf("transparent: a direct connect is refused in the kernel\n");
		return;
	}
	if (policy_decide_name(p, canon, &rule, NULL) != NET_ALLOW) {
		printf("sandbox DNS: %s gets NXDOMAIN (%s); a direct connect has no address to go to\n", canon, rule);
		return;
	}
	if (p->parent.scheme)
		printf("sandbox DNS: %s is answered (%s) with a synthesized address of its own (198.18.0.0/15, "
		       "2001:2::/48), learned for the sandbox's life; upstream is not asked\n", canon, rule);
	else
		printf("sandbox DNS: %s is answered (%s); its addresses are learned for their TTL, at least %d s by default\n",
		       canon, rule, LEARNED_TTL_FLOOR_S);
	if (v == NET_ALLOW)
		printf("transparent: a direct TCP connect to a learned address on port %u goes to the proxy, which "
		       "requires TLS server_name or HTTP Host %s, or no name at all\n", port, canon);
	else
		printf("transparent: a direct connect on port %u is refused (in the kernel, or by the proxy when the "
		       "address was learned for another name)\n", port);
}

static int explain_host(const struct policy *p, const char *target)
{
	char host[DOMAIN_TEXT_MAX];
	const char *rule, *reason;
	enum net_verdict v;
	unsigned port;

	if (split_host(target, host, sizeof(host), &port)) {
		printf("%s: denied (malformed host or port)\n", target);
		return 1;
	}
	v = policy_decide_host(p, host, port, &rule, &reason);
	printf("connect %s port %u: %s by %s", host, port, v == NET_ALLOW ? "allowed" : "denied",
	       rule);
	if (reason)
		printf(" (%s: %s)", v == NET_DENY_MALFORMED ? "why" : "reason", reason);
	printf("\n");
	explain_transparent(p, host, port, v);
	/* Redacted: explain output ends up in tickets and chat. */
	if (v == NET_ALLOW && policy_mitm_routes(p, host, port))
		printf("mitmProxy: sent to the proxy on unix:%s (HTTP CONNECT, or absolute-form for plain HTTP)\n",
		       p->mitm.socket_path);
	else if (v == NET_ALLOW && p->parent.scheme)
		printf("parent proxy: reached through %s by name (%s), which resolves it\n", p->parent.shown,
		       p->parent.scheme == PARENT_HTTP ? "HTTP CONNECT, or absolute-form for plain HTTP" : "SOCKS5 CONNECT");
	if (p->audit && v != NET_ALLOW)
		printf("audit mode: this would be logged, not blocked\n");
	return v == NET_ALLOW ? 0 : 1;
}

static int do_explain(const struct opts *o)
{
	struct policy *p = NULL;
	const char *target;
	int ret;

	if (o->nargs != 2 || (o->force_path && o->force_host) ||
	    (o->write && o->force_host)) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (load_effective(o->args[0], o, &p))
		return BPFBOX_EXIT_SETUP;
	target = o->args[1];
	if (o->write || o->force_path || (!o->force_host && looks_like_path(target)))
		ret = explain_path(p, target, o->write);
	else
		ret = explain_host(p, target);
	policy_free(p);
	return ret;
}

int cmd_policy(int argc, char **argv)
{
	struct opts o = { 0 };
	const char *sub;

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	sub = argv[1];
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h") || !strcmp(sub, "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(sub, "suggest"))
		return policy_suggest_command(argc - 2, argv + 2);
	if (!strcmp(sub, "apply") || !strcmp(sub, "history") || !strcmp(sub, "rollback"))
		return policy_apply_command(sub, argc - 2, argv + 2);
	if (parse_args(argc - 2, argv + 2, &o)) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(sub, "check") && o.nargs <= 1)
		return do_check(&o);
	if (o.json) {
		fprintf(stderr, "bpfbox: policy: --json is an option of check only\n");
		return EXIT_USAGE;
	}
	if (!strcmp(sub, "show") && o.nargs <= 1)
		return do_show(&o);
	if (!strcmp(sub, "explain"))
		return do_explain(&o);
	usage(stderr);
	return EXIT_USAGE;
}
