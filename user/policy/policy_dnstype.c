// SPDX-License-Identifier: MIT
/*
 * Which DNS query types the sandbox's resolver answers for an allowed name
 * (docs/network.md, "Query types"). An allow-list: the types a stub
 * resolver, a browser or git asks, and what a policy adds under
 * bpfbox.network.dnsQueryTypes. Types that carry data both ways (TXT, NULL,
 * ANY) are the usual tunnels: a policy names them or they are refused.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "policy.h"

/* Always answered: addresses, the aliases that lead to them, and the HTTPS records browsers ask. */
static const struct {
	const char *name;
	unsigned type;
} default_types[] = {
	{ "A", 1 }, { "CNAME", 5 }, { "AAAA", 28 }, { "HTTPS", 65 },
};

const struct policy_dns_type policy_dns_types[] = {
	{ "NS", 2, 1u << 0 },	    { "SOA", 6, 1u << 1 },     { "PTR", 12, 1u << 2 },	  { "MX", 15, 1u << 3 },
	{ "TXT", 16, 1u << 4 },	    { "SRV", 33, 1u << 5 },    { "NAPTR", 35, 1u << 6 },  { "DS", 43, 1u << 7 },
	{ "SSHFP", 44, 1u << 8 },   { "DNSKEY", 48, 1u << 9 }, { "TLSA", 52, 1u << 10 },  { "SVCB", 64, 1u << 11 },
	{ "CAA", 257, 1u << 12 },
};
const size_t policy_n_dns_types = sizeof(policy_dns_types) / sizeof(policy_dns_types[0]);

const struct policy_dns_type *policy_dns_type_by_name(const char *name)
{
	for (size_t i = 0; i < policy_n_dns_types; i++)
		if (!strcasecmp(name, policy_dns_types[i].name))
			return &policy_dns_types[i];
	return NULL;
}

bool policy_dns_type_answered(const struct policy *p, unsigned qtype)
{
	for (size_t i = 0; i < sizeof(default_types) / sizeof(default_types[0]); i++)
		if (default_types[i].type == qtype)
			return true;
	for (size_t i = 0; i < policy_n_dns_types; i++)
		if (policy_dns_types[i].type == qtype)
			return (p->dns_types & policy_dns_types[i].bit) != 0;
	return false;
}

const char *policy_dns_type_name(unsigned qtype, char *buf, size_t len)
{
	static const struct {
		const char *name;
		unsigned type;
	} others[] = { { "NULL", 10 }, { "OPT", 41 }, { "AXFR", 252 }, { "ANY", 255 } };

	for (size_t i = 0; i < sizeof(default_types) / sizeof(default_types[0]); i++)
		if (default_types[i].type == qtype)
			return default_types[i].name;
	for (size_t i = 0; i < policy_n_dns_types; i++)
		if (policy_dns_types[i].type == qtype)
			return policy_dns_types[i].name;
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		if (others[i].type == qtype)
			return others[i].name;
	snprintf(buf, len, "TYPE%u", qtype); /* RFC 3597 */
	return buf;
}
