/* SPDX-License-Identifier: MIT */
/*
 * Domain patterns of network.allowedDomains / deniedDomains, canonical host
 * names for matching, and the IP/CIDR lists of deniedResolvedAddresses.
 * Pure functions with no allocation: the proxy calls them per request.
 */
#ifndef BPFBOX_DOMAIN_H
#define BPFBOX_DOMAIN_H

#include <stdbool.h>
#include <stddef.h>

/* 255 bytes of host name plus the NUL (the DNS limit, also enforced on requests). */
#define DOMAIN_HOST_MAX 256
/* Canonical entry text: "[" host "]" ":" port, with room to spare. */
#define DOMAIN_TEXT_MAX 272

enum domain_kind {
	DOMAIN_NAME,		/* exact name, e.g. example.com or localhost */
	DOMAIN_WILDCARD,	/* *.SUFFIX: strict subdomains of SUFFIX only */
	DOMAIN_ANY,		/* "*" (deniedDomains only) */
	DOMAIN_IPV4,		/* IPv4 literal (canonical dotted quad) */
	DOMAIN_IPV6,		/* IPv6 literal (canonical RFC 5952 text, no brackets) */
};

struct domain_pattern {
	enum domain_kind kind;
	/* Canonical host: the name; the SUFFIX of a wildcard; "" for DOMAIN_ANY. */
	char host[DOMAIN_HOST_MAX];
	unsigned port;			/* 1-65535, 0 = any port */
	char text[DOMAIN_TEXT_MAX];	/* canonical entry, e.g. "*.example.com:443", "[::1]" */
};

/*
 * Parses one allowedDomains (deny_list false) or deniedDomains (deny_list
 * true) entry with srt's grammar: example.com, *.example.com, localhost,
 * IPv4, bracketed IPv6, each with an optional :port; "*" and "*:port" only
 * when deny_list. Returns 0 or -EINVAL with *err set to a static message.
 */
int domain_pattern_parse(const char *s, bool deny_list, struct domain_pattern *out,
			 const char **err);

/* The same hosts on any port (the port dropped, the text remade). */
void domain_pattern_any_port(struct domain_pattern *p);

/* Does a canonical host (from host_canonicalise) and port match the pattern? */
bool domain_pattern_match(const struct domain_pattern *p, const char *canon_host,
			  unsigned port);

/*
 * The entries matching what both a and b match, as one pattern (patterns are
 * closed under intersection: a name, a narrower wildcard, an address, or the
 * tighter port). Returns false when nothing matches both; out gets its
 * canonical text. b covers a exactly when the intersection is a itself
 * (domain_pattern_covers).
 */
bool domain_pattern_intersect(const struct domain_pattern *a, const struct domain_pattern *b,
			      struct domain_pattern *out);
/* Does every host and port a matches also match b? */
bool domain_pattern_covers(const struct domain_pattern *b, const struct domain_pattern *a);

/*
 * Validates a requested host and writes its canonical form: lower case,
 * trailing dot removed, IPv4 in any inet_aton/WHATWG spelling (127.1,
 * 2130706433, 0x7f.0.0.1, 0177.0.0.1) as a dotted quad, IPv6 (bracketed or
 * not) in RFC 5952 form, IPv4-mapped IPv6 as IPv4. Refuses control bytes
 * (CR, LF, ...), whitespace, "%" zone ids, non-ASCII, empty labels and more
 * than 255 bytes. Returns 0, -EINVAL (*err set) or -ENAMETOOLONG when out is
 * too small.
 */
int host_canonicalise(const char *host, char *out, size_t outlen, const char **err);

/* AF_INET or AF_INET6 when a canonical host is an IP literal, else 0. */
int host_ip_family(const char *canon_host);

/* An entry of network.deniedResolvedAddresses: an address or a CIDR block. */
struct ip_cidr {
	int family;			/* AF_INET or AF_INET6 */
	unsigned char addr[16];		/* network order, host bits cleared */
	unsigned prefix;		/* 0-32 or 0-128 */
	char text[64];			/* canonical, "/prefix" omitted when full */
};

/*
 * Parses "192.0.2.1", "10.0.0.0/8", "fd00:ec2::/32" or "[::1]". IPv4-mapped
 * IPv6 becomes IPv4. Host bits below the prefix are cleared. Returns 0 or
 * -EINVAL with *err set.
 */
int ip_cidr_parse(const char *s, struct ip_cidr *out, const char **err);

/* Is addr (4 or 16 bytes per family; IPv4-mapped IPv6 counts as IPv4) inside c? */
bool ip_cidr_contains(const struct ip_cidr *c, int family, const void *addr);

#endif
