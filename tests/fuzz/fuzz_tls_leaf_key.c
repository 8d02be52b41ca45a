// SPDX-License-Identifier: MIT
/*
 * The name a leaf certificate is made for (tls_leaf_key): what the cache
 * keys on and what goes into the SAN. Input: the name (up to a NUL); its
 * last byte also picks a small output size, which must be refused, never
 * overrun.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "fuzz.h"
#include "tls/tls_leaf.h"

static void check_key(const char *key)
{
	char again[TLS_LEAF_KEY_MAX];
	unsigned char addr[sizeof(struct in6_addr)];
	size_t len = strlen(key);
	int fam = tls_leaf_key_family(key);

	FUZZ_CHECK(len >= 1 && len <= 253);
	for (const char *p = key; *p; p++)
		FUZZ_CHECK((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' ||
			   *p == '_' || *p == '.' || (fam == AF_INET6 && *p == ':'));
	/* A key is a fixed point. */
	FUZZ_CHECK(tls_leaf_key(key, again, sizeof(again)) == 0);
	FUZZ_CHECK(!strcmp(key, again));
	if (fam) {
		FUZZ_CHECK(inet_pton(fam, key, addr) == 1);
		return;
	}
	/* A DNS name: no empty label, so no dot first, last or doubled. */
	FUZZ_CHECK(key[0] != '.' && key[len - 1] != '.' && !strstr(key, ".."));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *name = malloc(size + 2), key[TLS_LEAF_KEY_MAX], upper[TLS_LEAF_KEY_MAX];
	size_t cap = size ? data[size - 1] % 64 : 0;
	char *small = malloc(cap ? cap : 1);
	int ret, ret_small;

	if (!name || !small)
		goto out;
	memcpy(name, data, size);
	name[size] = '\0';
	ret = tls_leaf_key(name, key, sizeof(key));
	FUZZ_CHECK(ret == 0 || ret == -EINVAL || ret == -ENAMETOOLONG);
	ret_small = tls_leaf_key(name, small, cap);
	if (ret) {
		FUZZ_CHECK(ret_small != 0);
		goto out;
	}
	check_key(key);
	FUZZ_CHECK(ret_small == (cap == 0 ? -EINVAL : strlen(key) < cap ? 0 : -ENAMETOOLONG));
	if (!ret_small)
		FUZZ_CHECK(!strcmp(small, key));

	/* Case does not matter, and a DNS name's trailing dot does not either. */
	for (size_t i = 0; name[i]; i++)
		name[i] = name[i] >= 'a' && name[i] <= 'z' ? (char)(name[i] - 'a' + 'A') : name[i];
	FUZZ_CHECK(tls_leaf_key(name, upper, sizeof(upper)) == 0 && !strcmp(upper, key));
	if (!tls_leaf_key_family(key) && strlen(name) && name[strlen(name) - 1] != '.') {
		strcat(name, ".");
		FUZZ_CHECK(tls_leaf_key(name, upper, sizeof(upper)) == 0 && !strcmp(upper, key));
	}
out:
	free(small);
	free(name);
	return 0;
}
