/* SPDX-License-Identifier: MIT */
/*
 * The resolver's state, shared by its loop (dns_server.c: sockets, poll, the thread) and its
 * answering (dns_query.c: one query from parse to reply); the loop calls down into the answering.
 */
#ifndef BPFBOX_DNS_SERVER_STATE_H
#define BPFBOX_DNS_SERVER_STATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "dns_cache.h"
#include "dns_server.h"

#define MAX_PENDING 64
#define MAX_TCP 16
#define TCP_DEADLINE_MS 10000
#define MAX_ADDRS 64
#define DEFAULT_TIMEOUT_MS 2000

struct pending {
	bool used;
	int fd; /* connected UDP socket to the current upstream */
	int reply_fd; /* UDP listener to answer from, or -1 for a TCP client */
	int tcp; /* index of the TCP client, or -1 */
	struct sockaddr_storage client;
	socklen_t client_len;
	struct dns_client who;
	struct dns_question q;
	uint16_t up_id;
	uint8_t *query; /* the client's, for the answers we write ourselves */
	size_t query_len;
	uint8_t up[DNS_HEADER_LEN + DNS_NAME_MAX + 1 + 4 + 11]; /* what upstream gets: rebuilt */
	size_t up_len;
	size_t server;
	long long deadline;
	const char *rule;
	const char *transport;
	unsigned flushes; /* dns_server.flushes when it was asked: an answer after a flush is not kept */
};

struct tcp_client {
	int fd; /* -1 when free */
	uint8_t *buf;
	size_t have;
	bool waiting; /* its query is with an upstream */
	long long deadline;
	struct dns_client who;
};

struct dns_server {
	struct dns_server_config cfg;
	int udp[2], tcp[2]; /* [0] IPv4, [1] IPv6; -1 when absent */
	unsigned short port[2]; /* their port, UDP and TCP alike */
	int stop_fd;
	pthread_t thread;
	struct pending pend[MAX_PENDING];
	struct tcp_client tcp_clients[MAX_TCP];
	uint8_t buf[DNS_TCP_MAX + 2];
	struct dns_addr addrs[MAX_ADDRS];
	struct dns_cache *cache; /* the resolver thread's alone */
	unsigned flushes; /* flushes asked for (any thread, atomic) */
	unsigned flushes_done; /* of those, done on the cache (the resolver's thread) */
	uint8_t cached[DNS_CACHE_MSG_MAX]; /* a cached answer being sent (buf may hold the query) */
	long long ticked_ms; /* when cfg.tick was last called */
};

/* Answers or forwards one query from a UDP client (tcp -1) or TCP client tcp (from NULL). */
void dns_handle_query(struct dns_server *s, uint8_t *msg, size_t len, int udp_fd,
		      const struct sockaddr_storage *from, socklen_t from_len, int tcp, const char *transport,
		      const struct dns_client *client);
void dns_upstream_answer(struct dns_server *s, struct pending *p);
/* The current upstream did not answer in time: the next one is asked, or the client told. */
void dns_pending_timeout(struct dns_server *s, struct pending *p);
void dns_pending_free(struct pending *p);
/* Closes TCP client i; a query of it still with an upstream is orphaned. */
void dns_tcp_close(struct dns_server *s, int i);

#endif
