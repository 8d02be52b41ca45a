// SPDX-License-Identifier: MIT
/*
 * bpfbox's own options, under a top-level "bpfbox" object that srt ignores:
 * mode, environment allow-list, cgroup limits, the event log, devices and
 * the network path (transparent switch, parent proxy, socket protocols).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpfbox.h"
#include "policy_json.h"

static const struct key_spec bb_keys[] = {
	{ "mode", KEY_KNOWN, NULL },
	{ "env", KEY_KNOWN, NULL },
	{ "limits", KEY_KNOWN, NULL },
	{ "log", KEY_KNOWN, NULL },
	{ "devices", KEY_KNOWN, NULL },
	{ "network", KEY_KNOWN, NULL },
	{ "git", KEY_KNOWN, NULL },
	{ NULL, KEY_KNOWN, NULL },
};
static const struct key_spec git_keys[] = {
	{ "newRepositories", KEY_KNOWN, NULL },
	{ NULL, KEY_KNOWN, NULL },
};
static const struct key_spec network_keys[] = {
	{ "transparent", KEY_KNOWN, NULL },
	{ "parentProxy", KEY_KNOWN, NULL },
	{ "allowSocketProtocols", KEY_KNOWN, NULL },
	{ "dnsQueryTypes", KEY_KNOWN, NULL },
	{ NULL, KEY_KNOWN, NULL },
};
static const struct key_spec env_keys[] = {
	{ "allow", KEY_KNOWN, NULL },
	{ NULL, KEY_KNOWN, NULL },
};
static const struct key_spec limit_keys[] = {
	{ "pids", KEY_KNOWN, NULL },
	{ "memory", KEY_KNOWN, NULL },
	{ "cpu", KEY_KNOWN, NULL },
	{ NULL, KEY_KNOWN, NULL },
};
static const struct key_spec log_keys[] = {
	{ "file", KEY_KNOWN, NULL },
	{ "format", KEY_KNOWN, NULL },
	{ NULL, KEY_KNOWN, NULL },
};

#define MEMORY_MIN (1LL << 20)
#define MEMORY_MAX (1LL << 50)

/* NAME or PREFIX* where NAME is a POSIX identifier. */
static bool env_pattern_ok(const char *s)
{
	size_t len = strlen(s);

	if (len && s[len - 1] == '*')
		len--;
	if (!len || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

static void parse_env(struct pctx *c, const cJSON *env)
{
	struct policy *p = c->p;
	const cJSON *arr;
	size_t i = 0;

	if (!want_object(c, env, "bpfbox.env"))
		return;
	check_keys(c, env, "bpfbox.env", env_keys);
	arr = jget_array(c, env, "allow", "bpfbox.env", false, "variable names");
	if (!arr)
		return;
	p->has_env_allow = true;
	for (const cJSON *n = arr->child; n; n = n->next, i++) {
		char *path = jpath_index(c, "bpfbox.env.allow", i);
		const char *s;

		if (!path)
			return;
		s = jelem_string(c, n, path, true);
		if (s && !env_pattern_ok(s))
			perr(c, path, "\"%s\": expected a variable name (letters, digits, "
			     "'_') or a prefix ending in '*', such as LC_*", s);
		else if (s)
			strv_push(c, &p->env_allow, &p->n_env_allow, s);
		free(path);
	}
}

/* "512M", "1G", "1048576", "64MiB": binary units. */
static int parse_size(const char *s, long long *out)
{
	unsigned long long v = 0, mul = 1;
	const char *q = s;

	if (*q < '0' || *q > '9')
		return -EINVAL;
	for (; *q >= '0' && *q <= '9'; q++) {
		v = v * 10 + (*q - '0');
		if (v > (unsigned long long)MEMORY_MAX)
			return -ERANGE;
	}
	switch (*q) {
	case 'k': case 'K': mul = 1ULL << 10; q++; break;
	case 'm': case 'M': mul = 1ULL << 20; q++; break;
	case 'g': case 'G': mul = 1ULL << 30; q++; break;
	case 't': case 'T': mul = 1ULL << 40; q++; break;
	}
	if (mul > 1 && *q == 'i')
		q++;
	if (*q == 'B' || *q == 'b')
		q++;
	if (*q)
		return -EINVAL;
	if (v > (unsigned long long)MEMORY_MAX / mul)
		return -ERANGE;
	*out = (long long)(v * mul);
	return 0;
}

static void parse_memory(struct pctx *c, const cJSON *lim)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(lim, "memory");
	long long bytes;

	if (!v)
		return;
	if (cJSON_IsNumber(v)) {
		if (jget_int(c, lim, "memory", "bpfbox.limits", MEMORY_MIN, MEMORY_MAX,
			     &bytes) == 1)
			c->p->limit_memory_bytes = bytes;
		return;
	}
	if (!cJSON_IsString(v) || parse_size(v->valuestring, &bytes) ||
	    bytes < MEMORY_MIN) {
		perr(c, "bpfbox.limits.memory", "expected a size of at least 1M such as "
		     "\"512M\" or \"2G\" (binary units), or a number of bytes");
		return;
	}
	c->p->limit_memory_bytes = bytes;
}

static void parse_cpu(struct pctx *c, const cJSON *lim)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(lim, "cpu");
	long long pct = 0;
	char *end;

	if (!v)
		return;
	if (cJSON_IsNumber(v)) {
		if (jget_int(c, lim, "cpu", "bpfbox.limits", 1, 100000, &pct) == 1)
			c->p->limit_cpu_percent = (int)pct;
		return;
	}
	if (cJSON_IsString(v) && v->valuestring[0] >= '1' && v->valuestring[0] <= '9') {
		pct = strtoll(v->valuestring, &end, 10);
		if (!strcmp(end, "%") && pct >= 1 && pct <= 100000) {
			c->p->limit_cpu_percent = (int)pct;
			return;
		}
	}
	perr(c, "bpfbox.limits.cpu", "expected a percentage of one CPU from 1%% to "
	     "100000%%, such as \"50%%\" or \"200%%\" (two CPUs)");
}

static void parse_limits(struct pctx *c, const cJSON *lim)
{
	if (!want_object(c, lim, "bpfbox.limits"))
		return;
	check_keys(c, lim, "bpfbox.limits", limit_keys);
	jget_int(c, lim, "pids", "bpfbox.limits", 1, 4194304, &c->p->limit_pids);
	parse_memory(c, lim);
	parse_cpu(c, lim);
}

static void parse_log(struct pctx *c, const cJSON *log)
{
	struct policy *p = c->p;
	const cJSON *v;
	const char *why;
	int ret;

	if (!want_object(c, log, "bpfbox.log"))
		return;
	check_keys(c, log, "bpfbox.log", log_keys);
	v = cJSON_GetObjectItemCaseSensitive(log, "file");
	if (v && jelem_string(c, v, "bpfbox.log.file", true)) {
		ret = policy_path_normalise(v->valuestring, p->cwd, p->home, true,
					    &p->log_file, NULL, &why);
		if (ret == -ENOMEM)
			c->oom = true;
		else if (ret)
			perr(c, "bpfbox.log.file", "\"%s\": %s", v->valuestring, why);
	}
	v = cJSON_GetObjectItemCaseSensitive(log, "format");
	if (v && jelem_string(c, v, "bpfbox.log.format", true)) {
		if (!strcmp(v->valuestring, "json"))
			p->log_format = POLICY_LOG_JSON;
		else if (strcmp(v->valuestring, "text"))
			perr(c, "bpfbox.log.format", "expected \"text\" or \"json\", got \"%s\"",
			     v->valuestring);
	}
}

const struct policy_socket_kind policy_socket_kinds[] = {
	{ "sctp", BB_SOCK_SCTP },	   { "ping", BB_SOCK_PING },	     { "udplite", BB_SOCK_UDPLITE },
	{ "raw", BB_SOCK_RAW },		   { "packet", BB_SOCK_PACKET },     { "netlink", BB_SOCK_NETLINK },
	{ "vsock", BB_SOCK_VSOCK },	   { "alg", BB_SOCK_ALG },	     { "bluetooth", BB_SOCK_BLUETOOTH },
	{ "can", BB_SOCK_CAN },		   { "tipc", BB_SOCK_TIPC },	     { "rds", BB_SOCK_RDS },
	{ "kcm", BB_SOCK_KCM },		   { "xdp", BB_SOCK_XDP },
};
const size_t policy_n_socket_kinds = sizeof(policy_socket_kinds) / sizeof(policy_socket_kinds[0]);

/* Names of socket kinds beyond the default allow-list (docs/network.md, Socket families). */
static void parse_socket_protocols(struct pctx *c, const cJSON *net)
{
	const cJSON *arr = jget_array(c, net, "allowSocketProtocols", "bpfbox.network", false,
				      "socket protocol names");
	size_t i = 0;

	if (!arr)
		return;
	for (const cJSON *n = arr->child; n; n = n->next, i++) {
		char *path = jpath_index(c, "bpfbox.network.allowSocketProtocols", i);
		const char *s;
		size_t k;

		if (!path)
			return;
		s = jelem_string(c, n, path, true);
		for (k = 0; s && k < policy_n_socket_kinds; k++)
			if (!strcmp(s, policy_socket_kinds[k].name))
				break;
		if (s && k == policy_n_socket_kinds)
			perr(c, path, "\"%s\": expected one of sctp, ping, udplite, raw, packet, netlink, "
			     "vsock, alg, bluetooth, can, tipc, rds, kcm, xdp (TCP, MPTCP, UDP, Unix and "
			     "NETLINK_ROUTE are always allowed; other families cannot be opened)", s);
		else if (s)
			c->p->sock_allow |= policy_socket_kinds[k].bit;
		free(path);
	}
}

/* DNS query types answered for allowed names beyond the default ones (docs/network.md, Query types). */
static void parse_dns_types(struct pctx *c, const cJSON *net)
{
	const cJSON *arr = jget_array(c, net, "dnsQueryTypes", "bpfbox.network", false, "DNS query type names");
	size_t i = 0;

	if (!arr)
		return;
	for (const cJSON *n = arr->child; n; n = n->next, i++) {
		char *path = jpath_index(c, "bpfbox.network.dnsQueryTypes", i);
		const struct policy_dns_type *t = NULL;
		const char *s;

		if (!path)
			return;
		s = jelem_string(c, n, path, true);
		if (s)
			t = policy_dns_type_by_name(s);
		if (s && !t)
			perr(c, path, "\"%s\": expected one of NS, SOA, PTR, MX, TXT, SRV, NAPTR, DS, SSHFP, DNSKEY, "
			     "TLSA, SVCB, CAA (A, AAAA, CNAME and HTTPS are always answered; NULL, ANY and zone "
			     "transfers never are)", s);
		else if (t)
			c->p->dns_types |= t->bit;
		free(path);
	}
}

static void parse_network(struct pctx *c, const cJSON *net)
{
	const cJSON *v;
	bool on;

	if (!want_object(c, net, "bpfbox.network"))
		return;
	check_keys(c, net, "bpfbox.network", network_keys);
	if (jget_bool(c, net, "transparent", "bpfbox.network", &on) == 1)
		c->p->transparent_off = !on;
	v = cJSON_GetObjectItemCaseSensitive(net, "parentProxy");
	if (v && jelem_string(c, v, "bpfbox.network.parentProxy", true)) {
		const char *why = "invalid";
		int err = policy_parent_parse(v->valuestring, &c->p->parent, &why);

		/* The URL is not repeated: it may hold a password. */
		if (err == -ENOMEM)
			pcheck(c, NULL);
		else if (err)
			perr(c, "bpfbox.network.parentProxy", "%s", why);
	}
	parse_socket_protocols(c, net);
	parse_dns_types(c, net);
}

const char *policy_git_new_name(enum policy_git_new g)
{
	return g == POLICY_GIT_REPORT ? "report" : g == POLICY_GIT_REFUSE ? "refuse" : "strict";
}

/* What the end of a run does with executing keys in repositories the sandbox made (docs/git.md). */
static void parse_git(struct pctx *c, const cJSON *git)
{
	const cJSON *v;

	if (!want_object(c, git, "bpfbox.git"))
		return;
	check_keys(c, git, "bpfbox.git", git_keys);
	v = cJSON_GetObjectItemCaseSensitive(git, "newRepositories");
	if (!v || !jelem_string(c, v, "bpfbox.git.newRepositories", true))
		return;
	if (!strcmp(v->valuestring, "report"))
		c->p->git_new = POLICY_GIT_REPORT;
	else if (!strcmp(v->valuestring, "refuse"))
		c->p->git_new = POLICY_GIT_REFUSE;
	else if (strcmp(v->valuestring, "strict"))
		perr(c, "bpfbox.git.newRepositories", "expected \"strict\", \"report\" or \"refuse\", got \"%s\"",
		     v->valuestring);
}

static void parse_mode(struct pctx *c, const cJSON *v)
{
	if (!jelem_string(c, v, "bpfbox.mode", true))
		return;
	if (!strcmp(v->valuestring, "audit"))
		c->p->audit = true;
	else if (strcmp(v->valuestring, "enforce"))
		perr(c, "bpfbox.mode", "expected \"enforce\" or \"audit\", got \"%s\"",
		     v->valuestring);
}

/* The members, in the order their problems are reported. */
static const struct json_member bb_members[] = {
	{ "mode", parse_mode, false },
	{ "env", parse_env, false },
	{ "limits", parse_limits, false },
	{ "log", parse_log, false },
	{ "devices", policy_parse_devices, false },
	{ "git", parse_git, false },
	{ "network", parse_network, false },
	{ NULL, NULL, false },
};

void policy_parse_bpfbox(struct pctx *c, const cJSON *bb)
{
	if (!want_object(c, bb, "bpfbox"))
		return;
	check_keys(c, bb, "bpfbox", bb_keys);
	parse_members(c, bb, "bpfbox", bb_members);
}
