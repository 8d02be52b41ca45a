// SPDX-License-Identifier: MIT
/* The daemon's wire protocol: frames and descriptor passing (the JSON inside them: wire_json.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "wire.h"

int wire_header_parse(const uint8_t hdr[WIRE_HEADER_LEN], uint32_t max, uint32_t *len)
{
	uint32_t n;

	if (memcmp(hdr, WIRE_MAGIC, 4))
		return -EPROTO;
	n = (uint32_t)hdr[4] << 24 | (uint32_t)hdr[5] << 16 | (uint32_t)hdr[6] << 8 | hdr[7];
	if (n > max)
		return -EMSGSIZE;
	*len = n;
	return 0;
}

void wire_header_make(uint8_t hdr[WIRE_HEADER_LEN], uint32_t len)
{
	memcpy(hdr, WIRE_MAGIC, 4);
	hdr[4] = (uint8_t)(len >> 24);
	hdr[5] = (uint8_t)(len >> 16);
	hdr[6] = (uint8_t)(len >> 8);
	hdr[7] = (uint8_t)len;
}

void wire_reader_init(struct wire_reader *r, uint32_t max)
{
	memset(r, 0, sizeof(*r));
	r->max = max;
}

static void take_fds(struct wire_reader *r, struct msghdr *mh)
{
	if (mh->msg_flags & MSG_CTRUNC)
		r->too_many_fds = true;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		size_t n;
		int *fds;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		fds = (int *)CMSG_DATA(c);
		for (size_t i = 0; i < n; i++) {
			if (r->n_fds < WIRE_MAX_FDS) {
				r->fds[r->n_fds++] = fds[i];
			} else {
				close(fds[i]);
				r->too_many_fds = true;
			}
		}
	}
}

int wire_reader_read(struct wire_reader *r, int sock)
{
	return wire_reader_read_max(r, sock, SIZE_MAX);
}

int wire_reader_read_max(struct wire_reader *r, int sock, size_t max)
{
	size_t taken = 0;
	/* Room for more than the limit, so that an excess is seen and refused rather than cut silently. */
	union {
		char buf[CMSG_SPACE(sizeof(int) * (WIRE_MAX_FDS + 8))];
		struct cmsghdr align;
	} ctl;

	for (;;) {
		struct iovec iov;
		struct msghdr mh = { 0 };
		ssize_t n;
		int err;

		if (r->have < WIRE_HEADER_LEN) {
			iov = (struct iovec){ r->hdr + r->have, WIRE_HEADER_LEN - r->have };
		} else {
			size_t got = r->have - WIRE_HEADER_LEN;

			if (got == r->len && r->body)
				break;
			/*
			 * Memory follows the bytes that arrived, not the length a
			 * peer announced: a header alone costs nothing.
			 */
			if (!r->body || got == r->cap) {
				size_t cap = r->cap ? r->cap * 2 : 65536;
				char *nb;

				cap = cap < r->len ? cap : r->len;
				nb = realloc(r->body, cap + 1);
				if (!nb)
					return -ENOMEM;
				r->body = nb;
				r->cap = cap;
			}
			if (got == r->len)
				break;
			iov = (struct iovec){ r->body + got, r->cap - got };
		}
		if (taken == max)
			return 0;
		if (iov.iov_len > max - taken)
			iov.iov_len = max - taken;
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
		}
		take_fds(r, &mh);
		if (n == 0)
			return r->have ? -EPROTO : -EPIPE;
		r->have += (size_t)n;
		taken += (size_t)n;
		if (r->have == WIRE_HEADER_LEN) {
			err = wire_header_parse(r->hdr, r->max, &r->len);
			if (err)
				return err;
		}
	}
	if (r->too_many_fds)
		return -E2BIG;
	r->body[r->len] = 0;
	return 1;
}

char *wire_reader_take(struct wire_reader *r, uint32_t *len, int *fds, size_t *n_fds)
{
	char *body = r->body;
	uint32_t max = r->max;

	*len = r->len;
	memcpy(fds, r->fds, r->n_fds * sizeof(int));
	*n_fds = r->n_fds;
	memset(r, 0, sizeof(*r));
	r->max = max;
	return body;
}

void wire_reader_release(struct wire_reader *r)
{
	uint32_t max = r->max;

	for (size_t i = 0; i < r->n_fds; i++)
		close(r->fds[i]);
	free(r->body);
	memset(r, 0, sizeof(*r));
	r->max = max;
}

int wire_send(int sock, const char *body, const int *fds, size_t n_fds)
{
	size_t len = strlen(body), off = 0;
	uint8_t hdr[WIRE_HEADER_LEN];
	union {
		char buf[CMSG_SPACE(sizeof(int) * WIRE_MAX_FDS)];
		struct cmsghdr align;
	} ctl;

	if (len > WIRE_MAX_REQUEST)
		return -EMSGSIZE;
	if (n_fds > WIRE_MAX_FDS)
		return -E2BIG;
	wire_header_make(hdr, (uint32_t)len);
	while (off < WIRE_HEADER_LEN + len) {
		struct iovec iov[2];
		struct msghdr mh = { 0 };
		ssize_t n;

		if (off < WIRE_HEADER_LEN) {
			iov[0] = (struct iovec){ hdr + off, WIRE_HEADER_LEN - off };
			iov[1] = (struct iovec){ (void *)body, len };
			mh.msg_iovlen = 2;
		} else {
			iov[0] = (struct iovec){ (void *)(body + off - WIRE_HEADER_LEN), WIRE_HEADER_LEN + len - off };
			mh.msg_iovlen = 1;
		}
		mh.msg_iov = iov;
		if (!off && n_fds) {
			struct cmsghdr *c;

			memset(&ctl, 0, sizeof(ctl));
			mh.msg_control = ctl.buf;
			mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
			c = CMSG_FIRSTHDR(&mh);
			c->cmsg_level = SOL_SOCKET;
			c->cmsg_type = SCM_RIGHTS;
			c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
			memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
		}
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		off += (size_t)n;
	}
	return 0;
}

int wire_send_msg(int sock, enum wire_msg_type type, int status_or_signal, const char *message)
{
	char *body = wire_msg_encode(type, status_or_signal, message);
	int err;

	if (!body)
		return -ENOMEM;
	err = wire_send(sock, body, NULL, 0);
	free(body);
	return err;
}
