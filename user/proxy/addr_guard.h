/* SPDX-License-Identifier: MIT */
/*
 * Resolved-address guard: an allowed *name* must not lead the proxy to an
 * address that reaches the host itself, its link, or a cloud metadata
 * service. The proxy resolves once, checks every address with
 * addr_guard_refuses_name() and dials exactly the checked address.
 */
#ifndef BPFBOX_ADDR_GUARD_H
#define BPFBOX_ADDR_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

/* One IPv4 or IPv6 prefix; addr holds 4 or 16 bytes in network order. */
struct addr_cidr {
	sa_family_t family;
	unsigned char prefix;
	unsigned char addr[16];
	const char *why;	/* static text naming the class; never freed */
};

/*
 * The host's own addresses, listed on first use: getifaddrs() costs two
 * netlink dumps, which a sandbox that never resolves a name should not pay
 * at startup. Only the proxy's thread checks addresses, so no lock.
 */
struct addr_host_list {
	struct addr_cidr *list;
	size_t n;
	bool loaded;
	int err;	/* listing failed: every resolved address is refused */
};

struct addr_guard {
	struct addr_cidr *deny;		/* refused prefixes beyond the built-ins */
	size_t n_deny;
	struct addr_host_list *host;	/* NULL: the host's addresses are not guarded */
	struct addr_cidr *allow;	/* literal addresses that stay reachable */
	size_t n_allow;
	/*
	 * Optional: lets the policy say "this address is itself allowed as a
	 * literal" (e.g. allowedDomains holds 10.1.2.3:8080); sa carries the
	 * port. Called from the proxy's thread; must not block.
	 */
	bool (*allow_literal)(void *ctx, const struct sockaddr *sa);
	void *allow_ctx;
};

/*
 * Built-in refusals are always active; init adds extra_cidrs (the policy's
 * deniedResolvedAddresses) and the host's own addresses (getifaddrs, taken
 * once, at the first check). Returns 0 or negative errno; on -EINVAL *err
 * (static text) names the problem. On failure g is left empty (safe to free).
 */
int addr_guard_init(struct addr_guard *g, const char *const *extra_cidrs, size_t n,
		    const char **err);
/* As init, without the host's addresses: for tests and callers that add their own. */
int addr_guard_init_empty(struct addr_guard *g);
int addr_guard_add_deny(struct addr_guard *g, const char *cidr, const char *why,
			const char **err);
int addr_guard_add_allow(struct addr_guard *g, const char *cidr, const char **err);
/* Lists the host's addresses now (init defers it to the first check). */
int addr_guard_add_host_addresses(struct addr_guard *g);
void addr_guard_free(struct addr_guard *g);

/* Pure check of one address. *why (static text) says which class matched. */
bool addr_guard_refuses(const struct addr_guard *g, const struct sockaddr *sa,
			const char **why);
/* As above for an address that NAME resolved to: "localhost" may be loopback. */
bool addr_guard_refuses_name(const struct addr_guard *g, const char *name,
			     const struct sockaddr *sa, const char **why);

/* "10.0.0.0/8", "::1", "fd00:ec2::/32": 0 or -EINVAL. */
int addr_cidr_parse(const char *s, struct addr_cidr *out);
bool addr_cidr_contains(const struct addr_cidr *c, const struct sockaddr *sa);

#endif
