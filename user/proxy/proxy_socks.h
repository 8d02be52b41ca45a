/* SPDX-License-Identifier: MIT */
/* SOCKS5 and SOCKS4a handshakes. */
#ifndef BPFBOX_PROXY_SOCKS_H
#define BPFBOX_PROXY_SOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "proxy.h"

/* proxy_socks.c */
#define SOCKS5_REP_OK 0x00
#define SOCKS5_REP_FAIL 0x01
#define SOCKS5_REP_DENIED 0x02
#define SOCKS5_REP_NETUNREACH 0x03
#define SOCKS5_REP_HOSTUNREACH 0x04
#define SOCKS5_REP_REFUSED 0x05
#define SOCKS5_REP_CMD 0x07
#define SOCKS5_REP_ATYP 0x08
#define SOCKS4_REP_OK 0x5a
#define SOCKS4_REP_REJECT 0x5b

struct proxy_socks_req {
	unsigned char cmd;
	bool is_name;
	char host[PROXY_HOST_MAX];	/* name as sent, or numeric address */
	unsigned port;
};
ssize_t proxy_socks5_greeting(const unsigned char *buf, size_t len, bool *noauth);
ssize_t proxy_socks5_request(const unsigned char *buf, size_t len, struct proxy_socks_req *r,
			     unsigned char *rep);
size_t proxy_socks5_reply(unsigned char *out, unsigned char rep);
ssize_t proxy_socks4_request(const unsigned char *buf, size_t len, struct proxy_socks_req *r);
size_t proxy_socks4_reply(unsigned char *out, unsigned char rep);

#endif
