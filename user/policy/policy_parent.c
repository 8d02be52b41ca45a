// SPDX-License-Identifier: MIT
/*
 * bpfbox.network.parentProxy: the URL of the host's proxy, parsed strictly.
 * Anything the proxy would have to guess about (a path, a query, a missing
 * port, an unknown scheme) is refused rather than read one way.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

/* RFC 1929 caps each of username and password at 255 bytes. */
#define CRED_MAX 255
/* A host as written, with its NUL. */
#define HOST_MAX 256

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* Percent-decodes s[0..n) into a new string; NULL with *why on a bad byte. */
static char *decode_cred(const char *s, size_t n, bool is_user, const char **why, int *err)
{
	char *out = malloc(n + 1);
	size_t o = 0;

	if (!out) {
		*err = -ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch == '%') {
			int hi = i + 2 < n ? hexval(s[i + 1]) : -1;
			int lo = i + 2 < n ? hexval(s[i + 2]) : -1;

			if (hi < 0 || lo < 0) {
				*why = "a '%' in the credentials is not followed by two hex digits";
				goto bad;
			}
			ch = (unsigned char)(hi << 4 | lo);
			i += 2;
		} else if (ch <= 0x20 || ch >= 0x7f || ch == '/' || ch == '?' || ch == '#' || ch == '[' ||
			   ch == ']' || ch == '@') {
			*why = "the credentials hold a character that must be percent-encoded";
			goto bad;
		}
		/* Bytes that would end a header line or a string in the SOCKS exchange. */
		if (ch < 0x20 || ch == 0x7f) {
			*why = "the credentials decode to a control character";
			goto bad;
		}
		/* Basic authentication joins user and password with ':'. */
		if (is_user && ch == ':') {
			*why = "the user name decodes to a ':'";
			goto bad;
		}
		out[o++] = (char)ch;
	}
	out[o] = '\0';
	if (o > CRED_MAX) {
		*why = "user name and password are each at most 255 bytes";
		goto bad;
	}
	return out;
bad:
	free(out);
	*err = -EINVAL;
	return NULL;
}

/* A DNS name: labels of letters, digits and '-', not starting or ending with '-'. */
static bool host_name_ok(const char *h)
{
	size_t len = strlen(h), label = 0;

	if (!len || len > 253 || h[len - 1] == '.')
		return false;
	for (size_t i = 0; i <= len; i++) {
		char ch = h[i];

		if (ch == '.' || !ch) {
			if (!label || h[i - 1] == '-')
				return false;
			label = 0;
			continue;
		}
		if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-'))
			return false;
		if (ch == '-' && !label)
			return false;
		if (++label > 63)
			return false;
	}
	return true;
}

void policy_parent_free(struct policy_parent *pp)
{
	free(pp->host);
	free(pp->user);
	if (pp->pass)
		explicit_bzero(pp->pass, strlen(pp->pass));
	free(pp->pass);
	free(pp->shown);
	memset(pp, 0, sizeof(*pp));
}

static int set_shown(struct policy_parent *pp)
{
	bool v6 = strchr(pp->host, ':') != NULL;

	return asprintf(&pp->shown, "%s://%s%s%s%s:%u", pp->scheme == PARENT_HTTP ? "http" : "socks5",
			pp->user ? "***@" : "", v6 ? "[" : "", pp->host, v6 ? "]" : "", pp->port) < 0 ? -ENOMEM : 0;
}

/* The scheme; *rest is what follows "://". */
static int parse_scheme(const char *url, struct policy_parent *out, const char **rest,
			const char **why)
{
	if (!strncmp(url, "http://", 7)) {
		out->scheme = PARENT_HTTP;
		*rest = url + 7;
	} else if (!strncmp(url, "socks5://", 9)) {
		out->scheme = PARENT_SOCKS5;
		*rest = url + 9;
	} else {
		*why = "expected a URL starting with \"http://\" or \"socks5://\" (https:// and socks4 are not "
		       "supported)";
		return -EINVAL;
	}
	return 0;
}

/* "user[:pass]" in s..at, percent-decoded into out. */
static int parse_userinfo(const char *s, const char *at, struct policy_parent *out, const char **why)
{
	const char *sep = memchr(s, ':', (size_t)(at - s));
	size_t ulen = sep ? (size_t)(sep - s) : (size_t)(at - s);
	int err = -EINVAL;

	if (!ulen) {
		*why = "empty user name before '@'";
		return -EINVAL;
	}
	out->user = decode_cred(s, ulen, true, why, &err);
	if (!out->user)
		return err;
	out->pass = sep ? decode_cred(sep + 1, (size_t)(at - sep - 1), false, why, &err)
			: decode_cred("", 0, false, why, &err);
	if (!out->pass)
		return err;
	return 0;
}

/* "[IPv6]" at hs, before end, into host; *colon is the ':' after it, or NULL. */
static int parse_v6_host(const char *hs, const char *end, char host[HOST_MAX], const char **colon,
			 const char **why)
{
	const char *he = memchr(hs, ']', (size_t)(end - hs));
	unsigned char a6[16];

	if (!he || he - hs - 1 >= HOST_MAX || he - hs < 2) {
		*why = "malformed [IPv6] host";
		return -EINVAL;
	}
	memcpy(host, hs + 1, (size_t)(he - hs - 1));
	host[he - hs - 1] = '\0';
	if (inet_pton(AF_INET6, host, a6) != 1) {
		*why = "malformed [IPv6] host";
		return -EINVAL;
	}
	*colon = he + 1 < end && he[1] == ':' ? he + 1 : NULL;
	if (!*colon && he + 1 != end) {
		*why = "unexpected characters after the [IPv6] host";
		return -EINVAL;
	}
	return 0;
}

/* A DNS name or an IPv4 address at hs, before end, lower-cased into host; *colon as above. */
static int parse_name_host(const char *hs, const char *end, char host[HOST_MAX], const char **colon,
			   const char **why)
{
	const char *he;

	*colon = memchr(hs, ':', (size_t)(end - hs));
	he = *colon ? *colon : end;
	if (he - hs <= 0 || he - hs >= HOST_MAX) {
		*why = "missing or overlong host";
		return -EINVAL;
	}
	memcpy(host, hs, (size_t)(he - hs));
	host[he - hs] = '\0';
	for (char *h = host; *h; h++)
		if (*h >= 'A' && *h <= 'Z')
			*h = (char)(*h - 'A' + 'a');
	if (!host_name_ok(host)) {
		*why = "the host is not a DNS name, an IPv4 address or an [IPv6] address";
		return -EINVAL;
	}
	/* All digits and dots: it must then be a dotted-quad IPv4 address. */
	if (strspn(host, "0123456789.") == strlen(host)) {
		unsigned char a4[4];

		if (inet_pton(AF_INET, host, a4) != 1) {
			*why = "malformed IPv4 address";
			return -EINVAL;
		}
	}
	return 0;
}

/* The port after colon, before end: digits only, 1 to 65535, no leading zero. */
static int parse_port(const char *colon, const char *end, unsigned *out, const char **why)
{
	unsigned long port = 0;

	if (!colon) {
		*why = "the port must be given (HOST:PORT)";
		return -EINVAL;
	}
	for (const char *p = colon + 1; p < end; p++) {
		if (*p < '0' || *p > '9' || port > 65535) {
			port = 0;
			break;
		}
		port = port * 10 + (unsigned long)(*p - '0');
	}
	if (!port || port > 65535 || colon[1] == '0') {
		*why = "the port must be a number from 1 to 65535";
		return -EINVAL;
	}
	*out = (unsigned)port;
	return 0;
}

int policy_parent_parse(const char *url, struct policy_parent *out, const char **why)
{
	const char *s, *at, *end, *hs, *colon;
	char host[HOST_MAX];
	int err;

	memset(out, 0, sizeof(*out));
	err = parse_scheme(url, out, &s, why);
	if (err)
		return err;
	err = -EINVAL;
	/* The authority ends at the first '/'; only a lone trailing "/" may follow it. */
	end = s + strcspn(s, "/?#");
	if (*end && strcmp(end, "/")) {
		*why = "a parent proxy URL has no path, query or fragment";
		goto fail;
	}
	at = memchr(s, '@', (size_t)(end - s));
	if (at && memchr(at + 1, '@', (size_t)(end - at - 1))) {
		*why = "more than one '@' (percent-encode an '@' in the credentials as %40)";
		goto fail;
	}
	if (at) {
		err = parse_userinfo(s, at, out, why);
		if (err)
			goto fail;
		hs = at + 1;
	} else {
		hs = s;
	}
	err = *hs == '[' ? parse_v6_host(hs, end, host, &colon, why) :
			   parse_name_host(hs, end, host, &colon, why);
	if (!err)
		err = parse_port(colon, end, &out->port, why);
	if (err)
		goto fail;
	out->host = strdup(host);
	if (!out->host || set_shown(out)) {
		err = -ENOMEM;
		*why = "out of memory";
		goto fail;
	}
	return 0;
fail:
	policy_parent_free(out);
	return err;
}

int policy_parent_copy(struct policy_parent *dst, const struct policy_parent *src)
{
	memset(dst, 0, sizeof(*dst));
	dst->scheme = src->scheme;
	dst->port = src->port;
	if (src->scheme == PARENT_NONE)
		return 0;
	dst->host = strdup(src->host);
	dst->shown = strdup(src->shown);
	dst->user = src->user ? strdup(src->user) : NULL;
	dst->pass = src->pass ? strdup(src->pass) : NULL;
	if (!dst->host || !dst->shown || (src->user && !dst->user) || (src->pass && !dst->pass)) {
		policy_parent_free(dst);
		return -ENOMEM;
	}
	return 0;
}
