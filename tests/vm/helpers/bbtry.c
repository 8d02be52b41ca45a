// SPDX-License-Identifier: MIT
/*
 * Escape attempts bash cannot make: raw syscalls run inside a sandbox by the
 * VM tests. Each prints "ok" or "error: <errno name>" and exits 0 or 1.
 *   bbtry handle PATH            name_to_handle_at + open_by_handle_at
 *   bbtry openat2 DIR REL        openat2 relative to a directory fd
 *   bbtry uring PATH             IORING_OP_OPENAT, then read through the fd
 *   bbtry ptrace PID             PTRACE_ATTACH
 *   bbtry bpf                    BPF_PROG_GET_NEXT_ID
 *   bbtry fds                    lists the open descriptors above 2
 *   bbtry read PATH              open + read (prints the first line)
 *   bbtry connect4 IP PORT       a TCP connect, the program's first act after its libc's start
 *   bbtry cgprogs CGROUP own|effective  how many connect4 programs the kernel lists for a cgroup
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/openat2.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

static int result(int ret)
{
	if (ret >= 0) {
		printf("ok\n");
		return 0;
	}
	printf("error: %s\n", strerrorname_np(errno) ? strerrorname_np(errno) : "?");
	return 1;
}

static int show(int fd)
{
	char buf[256];
	ssize_t n;

	if (fd < 0)
		return result(-1);
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		return result(-1);
	buf[n] = 0;
	printf("ok: %s", buf);
	return 0;
}

static int try_handle(const char *path)
{
	struct file_handle *fh = calloc(1, sizeof(*fh) + 128);
	int mount_id, fd;

	fh->handle_bytes = 128;
	if (name_to_handle_at(AT_FDCWD, path, fh, &mount_id, 0))
		return result(-1);
	fd = open_by_handle_at(AT_FDCWD, fh, O_RDONLY);
	return show(fd);
}

static int try_openat2(const char *dir, const char *rel)
{
	struct open_how how = { .flags = O_RDONLY };
	int dfd = open(dir, O_PATH | O_DIRECTORY);

	if (dfd < 0)
		return result(-1);
	return show((int)syscall(SYS_openat2, dfd, rel, &how, sizeof(how)));
}

/* The smallest io_uring user: one OPENAT, waited for with io_uring_enter. */
static int try_uring(const char *path)
{
	struct io_uring_params p = { 0 };
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqe;
	uint32_t *sq_tail, *sq_array, *cq_head, *cq_tail;
	void *sq, *cq;
	int ring;

	ring = (int)syscall(SYS_io_uring_setup, 4, &p);
	if (ring < 0)
		return result(-1);
	sq = mmap(NULL, p.sq_off.array + p.sq_entries * 4, PROT_READ | PROT_WRITE, MAP_SHARED, ring,
		  IORING_OFF_SQ_RING);
	cq = mmap(NULL, p.cq_off.cqes + p.cq_entries * sizeof(*cqe), PROT_READ | PROT_WRITE, MAP_SHARED, ring,
		  IORING_OFF_CQ_RING);
	sqes = mmap(NULL, p.sq_entries * sizeof(*sqes), PROT_READ | PROT_WRITE, MAP_SHARED, ring, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED)
		return result(-1);
	sq_tail = (uint32_t *)((char *)sq + p.sq_off.tail);
	sq_array = (uint32_t *)((char *)sq + p.sq_off.array);
	cq_head = (uint32_t *)((char *)cq + p.cq_off.head);
	cq_tail = (uint32_t *)((char *)cq + p.cq_off.tail);
	memset(&sqes[0], 0, sizeof(sqes[0]));
	sqes[0].opcode = IORING_OP_OPENAT;
	sqes[0].fd = AT_FDCWD;
	sqes[0].addr = (uint64_t)(uintptr_t)path;
	sqes[0].open_flags = O_RDONLY;
	sq_array[0] = 0;
	__atomic_store_n(sq_tail, *sq_tail + 1, __ATOMIC_RELEASE);
	if (syscall(SYS_io_uring_enter, ring, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
		return result(-1);
	if (__atomic_load_n(cq_tail, __ATOMIC_ACQUIRE) == *cq_head) {
		errno = EIO;
		return result(-1);
	}
	cqe = (struct io_uring_cqe *)((char *)cq + p.cq_off.cqes);
	if (cqe[0].res < 0) {
		errno = -cqe[0].res;
		return result(-1);
	}
	return show(cqe[0].res);
}

static int try_bpf(void)
{
	union bpf_attr attr;

	/* Not MAP_CREATE: with unprivileged BPF off, 6.1 refuses that before any LSM hook. */
	memset(&attr, 0, sizeof(attr));
	return result((int)syscall(SYS_bpf, BPF_PROG_GET_NEXT_ID, &attr, sizeof(attr)));
}

/* The kernel's own count, whatever bpftool's version shows by default. */
static int cgroup_progs(const char *cgroup, const char *which)
{
	union bpf_attr attr;
	int fd = open(cgroup, O_RDONLY | O_DIRECTORY);

	if (fd < 0)
		return result(-1);
	memset(&attr, 0, sizeof(attr));
	attr.query.target_fd = (unsigned)fd;
	attr.query.attach_type = BPF_CGROUP_INET4_CONNECT;
	attr.query.query_flags = strcmp(which, "effective") ? 0 : BPF_F_QUERY_EFFECTIVE;
	if (syscall(SYS_bpf, BPF_PROG_QUERY, &attr, sizeof(attr)))
		return result(-1);
	printf("%u\n", attr.query.prog_cnt);
	return 0;
}

static int list_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int self;

	if (!d)
		return result(-1);
	self = dirfd(d);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && atoi(de->d_name) > 2 && atoi(de->d_name) != self)
			printf("fd %s\n", de->d_name);
	closedir(d);
	return 0;
}

static int try_connect4(const char *ip, const char *port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port)) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || inet_pton(AF_INET, ip, &sin.sin_addr) != 1)
		return result(-1);
	return result(connect(fd, (struct sockaddr *)&sin, sizeof(sin)));
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "connect4"))
		return try_connect4(argv[2], argv[3]);
	if (argc == 3 && !strcmp(argv[1], "handle"))
		return try_handle(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "openat2"))
		return try_openat2(argv[2], argv[3]);
	if (argc == 3 && !strcmp(argv[1], "uring"))
		return try_uring(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "ptrace"))
		return result((int)ptrace(PTRACE_ATTACH, atoi(argv[2]), NULL, NULL));
	if (argc == 2 && !strcmp(argv[1], "bpf"))
		return try_bpf();
	if (argc == 4 && !strcmp(argv[1], "cgprogs"))
		return cgroup_progs(argv[2], argv[3]);
	if (argc == 2 && !strcmp(argv[1], "fds"))
		return list_fds();
	if (argc == 3 && !strcmp(argv[1], "read"))
		return show(open(argv[2], O_RDONLY));
	fprintf(stderr, "usage: bbtry handle|openat2|uring|ptrace|bpf|fds|read ...\n");
	return 2;
}
