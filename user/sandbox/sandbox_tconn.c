// SPDX-License-Identifier: MIT
#include <bpf/bpf.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "sandbox/sandbox_tconn.h"

static const uint8_t v4_mapped_prefix[12] = { [10] = 0xff, [11] = 0xff };

int sandbox_tconn_take(int map_fd, uint64_t sandbox, const struct sockaddr_storage *client,
		       unsigned short listener, struct bb_tconn *out)
{
	struct bb_tconn_key key;

	memset(&key, 0, sizeof(key));
	key.listener = listener;
	if (client->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)client;

		memcpy(key.addr, &s4->sin_addr, 4);
		key.family = AF_INET;
		key.port = ntohs(s4->sin_port);
	} else if (client->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)client;

		/* The kernel files an IPv4-mapped client as IPv4 (bb_sockops). */
		if (!memcmp(&s6->sin6_addr, v4_mapped_prefix, 12)) {
			memcpy(key.addr, (const uint8_t *)&s6->sin6_addr + 12, 4);
			key.family = AF_INET;
		} else {
			memcpy(key.addr, &s6->sin6_addr, 16);
			key.family = AF_INET6;
		}
		key.port = ntohs(s6->sin6_port);
	} else {
		return -EAFNOSUPPORT;
	}
	if (bpf_map_lookup_and_delete_elem(map_fd, &key, out))
		return -errno;
	/* Another sandbox's connection on a port this sandbox holds now: never used. */
	return out->sandbox == sandbox ? 0 : -EPERM;
}

void sandbox_peer_from_kernel(const struct bb_peer *p, struct proxy_peer *out)
{
	memset(out, 0, sizeof(*out));
	if (!p->pid)
		return;
	out->known = true;
	out->pid = (int)p->pid;
	out->tid = (int)p->tid;
	out->uid = p->uid;
	memcpy(out->comm, p->comm, sizeof(p->comm));
	out->comm[sizeof(out->comm) - 1] = 0;
}

void sandbox_peer_log(struct log_event *ev, int pid, int tid, unsigned uid, const char *comm)
{
	char text[16];

	log_event_set_int(ev, "process.pid", pid);
	log_event_set_int(ev, "process.thread.id", tid);
	log_event_set_bytes(ev, "process.name", comm, strnlen(comm, 16));
	snprintf(text, sizeof(text), "%u", uid);
	log_event_set_str(ev, "process.user.id", text);
}
