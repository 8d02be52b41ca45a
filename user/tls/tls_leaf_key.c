// SPDX-License-Identifier: MIT
/* The names a leaf certificate may be made for, in one canonical spelling (tls_leaf.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "tls_leaf.h"

#define NAME_MAX_LEN 253

static int ip_key(const char *name, char *out, size_t cap)
{
	unsigned char addr[sizeof(struct in6_addr)];
	char text[INET6_ADDRSTRLEN];
	int fam = tls_leaf_key_family(name);

	if (!fam || inet_pton(fam, name, addr) != 1 || !inet_ntop(fam, addr, text, sizeof(text)))
		return -EINVAL;
	if (strlen(text) >= cap)
		return -ENAMETOOLONG;
	memcpy(out, text, strlen(text) + 1);
	return 0;
}

static bool name_byte(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
}

int tls_leaf_key(const char *name, char *out, size_t cap)
{
	size_t len;

	if (!name || !cap)
		return -EINVAL;
	if (tls_leaf_key_family(name))
		return ip_key(name, out, cap);
	len = strnlen(name, NAME_MAX_LEN + 2);
	if (len && name[len - 1] == '.')
		len--;
	if (len > NAME_MAX_LEN)
		return -ENAMETOOLONG;
	if (!len || name[0] == '.')
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		char c = name[i] >= 'A' && name[i] <= 'Z' ? (char)(name[i] - 'A' + 'a') : name[i];

		/* name[len] is the dropped trailing dot, if any: "a.." has an empty label. */
		if (!name_byte(c) || (c == '.' && name[i + 1] == '.'))
			return -EINVAL;
	}
	if (len >= cap)
		return -ENAMETOOLONG;
	for (size_t i = 0; i < len; i++)
		out[i] = name[i] >= 'A' && name[i] <= 'Z' ? (char)(name[i] - 'A' + 'a') : name[i];
	out[len] = '\0';
	return 0;
}

int tls_leaf_key_family(const char *key)
{
	unsigned char addr[sizeof(struct in6_addr)];

	if (inet_pton(AF_INET, key, addr) == 1)
		return AF_INET;
	if (inet_pton(AF_INET6, key, addr) == 1)
		return AF_INET6;
	return 0;
}
