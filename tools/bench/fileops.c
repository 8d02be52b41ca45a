// SPDX-License-Identifier: MIT
/*
 * fileops: nanoseconds per file operation, for comparing a process bare and
 * under bpfbox. Every operation goes through the LSM hooks bpfbox attaches
 * (file_open, inode_getattr, inode_create/unlink), so the difference between
 * two runs is the cost of the hooks and their dentry walk.
 *
 * usage: fileops ITER READFILE WRITEDIR
 * prints "open_read_close NS", "stat NS" and "create_unlink NS", one a line.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static long iter;

static void die(const char *what, const char *path)
{
	fprintf(stderr, "fileops: %s %s: %s\n", what, path, strerror(errno));
	exit(1);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void open_read_close(long n, const char *path)
{
	char buf[4096];

	for (long i = 0; i < n; i++) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			die("open", path);
		if (read(fd, buf, sizeof(buf)) < 0)
			die("read", path);
		close(fd);
	}
}

static void stat_file(long n, const char *path)
{
	struct stat st;

	for (long i = 0; i < n; i++)
		if (stat(path, &st) < 0)
			die("stat", path);
}

/* Names cycle through 16 subdirectories, so the walk sees a small tree, not one flat directory. */
static void create_unlink(long n, const char *dir)
{
	char path[4096];

	for (long i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/s%ld/f%ld", dir, i % 16, i);
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

		if (fd < 0)
			die("create", path);
		close(fd);
		if (unlink(path) < 0)
			die("unlink", path);
	}
}

static void measure(const char *name, void (*op)(long, const char *), const char *arg)
{
	double t0;

	/* A short warm-up first, so dentry and page caches are hot for every contender. */
	op(iter / 10 + 1, arg);
	t0 = now_ns();
	op(iter, arg);
	printf("%s %.1f\n", name, (now_ns() - t0) / (double)iter);
}

int main(int argc, char **argv)
{
	char sub[4096];

	if (argc != 4 || (iter = atol(argv[1])) <= 0) {
		fprintf(stderr, "usage: fileops ITER READFILE WRITEDIR\n");
		return 2;
	}
	for (int i = 0; i < 16; i++) {
		snprintf(sub, sizeof(sub), "%s/s%d", argv[3], i);
		if (mkdir(sub, 0700) < 0 && errno != EEXIST)
			die("mkdir", sub);
	}
	measure("open_read_close", open_read_close, argv[2]);
	measure("stat", stat_file, argv[2]);
	measure("create_unlink", create_unlink, argv[3]);
	return 0;
}
