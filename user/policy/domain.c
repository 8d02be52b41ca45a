// SPDX-License-Identifier: MIT
/*
 * allowedDomains / deniedDomains entries: srt's grammar, stored in canonical
 * form so matching is a string comparison against a canonical request host.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "domain.h"

static int fail(const char **err, const char *msg)
{
	*err = msg;
	return -EINVAL;
}

/* "1".."65535", digits only, no leading zero. */
static int parse_port(const char *s, unsigned *out)
{
	unsigned v = 0;

	if (!*s || *s == '0' || strlen(s) > 5)
		return -EINVAL;
	for (const char *c = s; *c; c++) {
		if (*c < '0' || *c > '9')
			return -EINVAL;
		v = v * 10 + (*c - '0');
	}
	if (v > 65535)
		return -EINVAL;
	*out = v;
	return 0;
}

static const char PORT_MSG[] = "port must be 1-65535, digits only, no leading zeros";

static int parse_wildcard(const char *suffix, struct domain_pattern *out,
			  const char **err)
{
	const char *why;

	if (strchr(suffix, '*'))
		return fail(err, "'*' is only accepted as one leading \"*.\" label");
	if (!strchr(suffix, '.') || suffix[0] == '.' ||
	    suffix[strlen(suffix) - 1] == '.' || strstr(suffix, ".."))
		return fail(err, "a wildcard needs at least two labels after it "
			    "(*.example.com, not *.com)");
	if (host_canonicalise(suffix, out->host, sizeof(out->host), &why))
		return fail(err, why);
	if (host_ip_family(out->host))
		return fail(err, "wildcards never match IP addresses; write the address itself");
	out->kind = DOMAIN_WILDCARD;
	return 0;
}

static int parse_host(const char *h, bool deny_list, struct domain_pattern *out,
		      const char **err)
{
	const char *why;
	int fam;

	if (!*h)
		return fail(err, "empty host");
	if (!strcmp(h, "*")) {
		if (!deny_list)
			return fail(err, "\"*\" (every host) is only accepted in deniedDomains");
		out->kind = DOMAIN_ANY;
		out->host[0] = '\0';
		return 0;
	}
	if (!strncmp(h, "*.", 2))
		return parse_wildcard(h + 2, out, err);
	if (strchr(h, '*'))
		return fail(err, "'*' is only accepted as one leading \"*.\" label "
			    "(or alone, in deniedDomains)");
	if (!strcasecmp(h, "localhost")) {
		out->kind = DOMAIN_NAME;
		strcpy(out->host, "localhost");
		return 0;
	}
	if (!strchr(h, '.'))
		return fail(err, "a host name needs at least one dot (or is localhost)");
	if (h[0] == '.' || h[strlen(h) - 1] == '.')
		return fail(err, "leading or trailing dot");
	if (host_canonicalise(h, out->host, sizeof(out->host), &why))
		return fail(err, why);
	fam = host_ip_family(out->host);
	out->kind = fam == AF_INET ? DOMAIN_IPV4 : fam == AF_INET6 ? DOMAIN_IPV6 : DOMAIN_NAME;
	return 0;
}

static void format_text(struct domain_pattern *p)
{
	const char *pre = p->kind == DOMAIN_WILDCARD ? "*." : p->kind == DOMAIN_ANY ? "*" : "";
	bool br = p->kind == DOMAIN_IPV6;
	int n;

	n = snprintf(p->text, sizeof(p->text), "%s%s%s%s", br ? "[" : "", pre,
		     p->host, br ? "]" : "");
	if (p->port && n > 0 && (size_t)n < sizeof(p->text))
		snprintf(p->text + n, sizeof(p->text) - n, ":%u", p->port);
}

void domain_pattern_any_port(struct domain_pattern *p)
{
	p->port = 0;
	format_text(p);
}

int domain_pattern_parse(const char *s, bool deny_list, struct domain_pattern *out,
			 const char **err)
{
	char host[DOMAIN_TEXT_MAX];
	const char *colon, *why, *port = NULL;
	size_t len, hlen;
	int ret;

	memset(out, 0, sizeof(*out));
	*err = NULL;
	if (!s || !*s)
		return fail(err, "empty entry");
	len = strlen(s);
	if (len >= DOMAIN_TEXT_MAX - 8)
		return fail(err, "entry is longer than 255 bytes");
	for (const char *c = s; *c; c++)
		if ((unsigned char)*c <= ' ' || *c == 0x7f)
			return fail(err, "whitespace or a control character in the entry");
	if (strstr(s, "://"))
		return fail(err, "a scheme (such as http://) is not accepted; write the host only");
	if (strchr(s, '/'))
		return fail(err, "a path is not accepted; write the host only");
	if (strchr(s, '%'))
		return fail(err, "zone identifiers ('%') are not accepted");

	colon = strchr(s, ':');
	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close)
			return fail(err, "unterminated '[' in IPv6 literal");
		if (close[1] && close[1] != ':')
			return fail(err, "unexpected text after ']' (only :port may follow)");
		if (close[1] == ':')
			port = close + 2;
		hlen = close - s + 1;
		memcpy(host, s, hlen);
		host[hlen] = '\0';
		if (!strchr(host, ':'))
			return fail(err, "brackets hold IPv6 literals only");
		if (host_canonicalise(host, out->host, sizeof(out->host), &why))
			return fail(err, "invalid IPv6 literal inside [...]");
		out->kind = host_ip_family(out->host) == AF_INET ? DOMAIN_IPV4 : DOMAIN_IPV6;
	} else {
		if (colon && strchr(colon + 1, ':'))
			return fail(err, "IPv6 literals must be bracketed, as in [::1] or "
				    "[2001:db8::1]:443");
		hlen = colon ? (size_t)(colon - s) : len;
		memcpy(host, s, hlen);
		host[hlen] = '\0';
		if (colon)
			port = colon + 1;
		ret = parse_host(host, deny_list, out, err);
		if (ret)
			return ret;
	}
	if (port && parse_port(port, &out->port))
		return fail(err, PORT_MSG);
	format_text(out);
	return 0;
}

bool domain_pattern_match(const struct domain_pattern *p, const char *canon_host,
			  unsigned port)
{
	size_t hl, sl;

	if (p->port && p->port != port)
		return false;
	switch (p->kind) {
	case DOMAIN_ANY:
		return true;
	case DOMAIN_NAME:
	case DOMAIN_IPV4:
	case DOMAIN_IPV6:
		return !strcmp(p->host, canon_host);
	case DOMAIN_WILDCARD:
		if (host_ip_family(canon_host))
			return false;
		hl = strlen(canon_host);
		sl = strlen(p->host);
		/* Strict subdomains only: *.example.com never matches example.com. */
		return hl > sl + 1 && canon_host[hl - sl - 1] == '.' &&
		       !strcmp(canon_host + hl - sl, p->host);
	}
	return false;
}

/* Is name a strict subdomain of suffix (not an IP address)? */
static bool strict_subdomain(const char *name, const char *suffix)
{
	size_t hl = strlen(name), sl = strlen(suffix);

	return !host_ip_family(name) && hl > sl + 1 && name[hl - sl - 1] == '.' &&
	       !strcmp(name + hl - sl, suffix);
}

static bool exact_kind(enum domain_kind k)
{
	return k == DOMAIN_NAME || k == DOMAIN_IPV4 || k == DOMAIN_IPV6;
}

/* Host part only; a is the narrower when one contains the other. */
static bool host_intersect(const struct domain_pattern *a, const struct domain_pattern *b,
			   struct domain_pattern *out)
{
	if (b->kind == DOMAIN_ANY || (a->kind == b->kind && !strcmp(a->host, b->host))) {
		*out = *a;
		return true;
	}
	if (a->kind == DOMAIN_ANY) {
		*out = *b;
		return true;
	}
	if (exact_kind(a->kind) && exact_kind(b->kind))
		return false;	/* different hosts */
	if (b->kind == DOMAIN_WILDCARD && (a->kind == DOMAIN_NAME || a->kind == DOMAIN_WILDCARD) &&
	    strict_subdomain(a->host, b->host)) {
		*out = *a;
		return true;
	}
	if (a->kind == DOMAIN_WILDCARD && (b->kind == DOMAIN_NAME || b->kind == DOMAIN_WILDCARD) &&
	    strict_subdomain(b->host, a->host)) {
		*out = *b;
		return true;
	}
	return false;
}

bool domain_pattern_intersect(const struct domain_pattern *a, const struct domain_pattern *b,
			      struct domain_pattern *out)
{
	struct domain_pattern r;

	if (a->port && b->port && a->port != b->port)
		return false;
	if (!host_intersect(a, b, &r))
		return false;
	r.port = a->port ? a->port : b->port;
	format_text(&r);
	*out = r;
	return true;
}

bool domain_pattern_covers(const struct domain_pattern *b, const struct domain_pattern *a)
{
	struct domain_pattern r;

	return domain_pattern_intersect(a, b, &r) && r.kind == a->kind && r.port == a->port &&
	       !strcmp(r.host, a->host);
}
