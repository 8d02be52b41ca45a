// SPDX-License-Identifier: MIT
/*
 * Objects that have no path, made and used the ordinary ways: the VM tests
 * run this confined and unconfined and compare. One line per operation,
 * "NAME ok" or "NAME <errno name>"; exit 0 when every operation ran (a failed
 * operation is a result, not an error).
 *   pathless [--drop-caps] probe DIR [OP...]  every operation (or the OPs
 *                                             named); DIR must be writable
 *   pathless reopen PATH r|w                  open PATH with O_PATH, then
 *                                             reopen /proc/self/fd/N for reading
 *                                             or as fopen "w" does
 *   pathless spawn                            clone3(CLONE_PIDFD) + execve of
 *                                             sh, signals it with
 *                                             pidfd_send_signal, reaps it
 *                                             through the pidfd
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/io_uring.h>
#include <linux/sched.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

static const char *dir;

/* Each step: on failure return -errno from the op. */
#define TRY(expr)                          \
	do {                                   \
		if ((long)(expr) < 0)              \
			return -errno;                 \
	} while (0)
#define CHECK(cond, err)                   \
	do {                                   \
		if (!(cond))                       \
			return -(err);                 \
	} while (0)

static int pidfd_open(pid_t pid)
{
	return syscall(SYS_pidfd_open, pid, 0);
}

static int pidfd_send_signal(int pidfd, int sig)
{
	return syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

/* A child that waits for a signal: created by fork, so only the pidfd is new. */
static pid_t sleeper(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		pause();
		_exit(0);
	}
	return pid;
}

static int reap_pidfd(int pidfd, int want_sig, int want_code)
{
	siginfo_t si = {};

	TRY(waitid(P_PIDFD, pidfd, &si, WEXITED));
	if (want_sig)
		CHECK(si.si_code == CLD_KILLED && si.si_status == want_sig, EPROTO);
	else
		CHECK(si.si_code == CLD_EXITED && si.si_status == want_code, EPROTO);
	return 0;
}

static int op_pidfd_self(void)
{
	int fd = pidfd_open(getpid());

	TRY(fd);
	/* Signal 0 checks the pidfd end to end without delivering anything. */
	TRY(pidfd_send_signal(fd, 0));
	close(fd);
	return 0;
}

static int op_pidfd_child(void)
{
	pid_t pid = sleeper();
	int fd, ret;

	TRY(pid);
	fd = pidfd_open(pid);
	if (fd < 0) {
		ret = -errno;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return ret;
	}
	ret = pidfd_send_signal(fd, SIGTERM) < 0 ? -errno : reap_pidfd(fd, SIGTERM, 0);
	if (ret) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	close(fd);
	return ret;
}

static pid_t clone3_pidfd(int *pidfd)
{
	struct clone_args args = {
		.flags = CLONE_PIDFD,
		.pidfd = (uint64_t)(uintptr_t)pidfd,
		.exit_signal = SIGCHLD,
	};

	return syscall(SYS_clone3, &args, sizeof(args));
}

static int op_clone3_pidfd(void)
{
	int pidfd = -1, ret;
	struct pollfd p;
	pid_t pid = clone3_pidfd(&pidfd);

	TRY(pid);
	if (pid == 0)
		_exit(7);
	p = (struct pollfd){ .fd = pidfd, .events = POLLIN };
	ret = poll(&p, 1, 10000) == 1 ? reap_pidfd(pidfd, 0, 7) : -ETIMEDOUT;
	close(pidfd);
	return ret;
}

static int op_pidfd_signal(void)
{
	int pidfd = -1, ret;
	pid_t pid = clone3_pidfd(&pidfd);

	TRY(pid);
	if (pid == 0) {
		pause();
		_exit(0);
	}
	ret = pidfd_send_signal(pidfd, SIGUSR1) < 0 ? -errno : reap_pidfd(pidfd, SIGUSR1, 0);
	if (ret) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	close(pidfd);
	return ret;
}

static int op_memfd(void)
{
	int fd = memfd_create("bbprobe", MFD_ALLOW_SEALING | MFD_CLOEXEC), ret = 0;
	char *map, buf[6] = "";

	TRY(fd);
	if (write(fd, "hello", 5) != 5 || ftruncate(fd, 8192) < 0)
		goto fail;
	map = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		goto fail;
	memcpy(map + 4096, "world", 5);
	munmap(map, 8192);
	if (pread(fd, buf, 5, 4096) != 5 || memcmp(buf, "world", 5))
		goto fail;
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
		goto fail;
	/* Sealed: the kernel itself now refuses writes. */
	if (write(fd, "x", 1) != -1 || errno != EPERM)
		ret = -EPROTO;
	close(fd);
	return ret;
fail:
	ret = errno ? -errno : -EPROTO;
	close(fd);
	return ret;
}

/* Metadata changes reach path_chmod and inode_setattr. */
static int op_memfd_meta(void)
{
	struct timespec ts[2] = { { 1, 0 }, { 1, 0 } };
	int fd = memfd_create("bbprobe", MFD_CLOEXEC), ret = 0;

	TRY(fd);
	if (fchmod(fd, 0600) < 0 || futimens(fd, ts) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* user.* xattrs on the internal shmem mount: supported from 6.6, so compared, not required. */
static int op_memfd_xattr(void)
{
	int fd = memfd_create("bbprobe", MFD_CLOEXEC), ret = 0;

	TRY(fd);
	if (fsetxattr(fd, "user.bbprobe", "1", 1, 0) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static int reopen_fd(int fd, int flags)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return open(path, flags | O_CLOEXEC, 0600);
}

/* fopen(path, "w") is open(O_WRONLY | O_CREAT | O_TRUNC). */
#define FOPEN_W (O_WRONLY | O_CREAT | O_TRUNC)

static int op_memfd_reopen(void)
{
	int fd = memfd_create("bbprobe", MFD_CLOEXEC), fd2, ret = 0;

	TRY(fd);
	if (write(fd, "old", 3) != 3)
		goto fail;
	fd2 = reopen_fd(fd, FOPEN_W);
	if (fd2 < 0)
		goto fail;
	if (write(fd2, "new", 3) != 3)
		ret = -errno;
	close(fd2);
	close(fd);
	return ret;
fail:
	ret = -errno;
	close(fd);
	return ret;
}

static int op_sysv_shm(void)
{
	int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600), ret = 0;
	char *p;

	TRY(id);
	p = shmat(id, NULL, 0);
	if (p == (void *)-1) {
		ret = -errno;
	} else {
		strcpy(p, "shm");
		shmdt(p);
	}
	shmctl(id, IPC_RMID, NULL);
	return ret;
}

static int op_shared_anon(void)
{
	char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t pid;
	int status;

	CHECK(p != MAP_FAILED, errno);
	pid = fork();
	if (pid == 0) {
		strcpy(p, "child");
		_exit(0);
	}
	waitpid(pid, &status, 0);
	CHECK(!strcmp(p, "child"), EPROTO);
	munmap(p, 4096);
	return 0;
}

static int op_tmpfile(void)
{
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600), ret = 0;
	char name[512], proc[64];

	TRY(fd);
	snprintf(name, sizeof(name), "%s/bbprobe-tmpfile-%d", dir, getpid());
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (write(fd, "tmp", 3) != 3 || ftruncate(fd, 1) < 0 ||
	    linkat(AT_FDCWD, proc, AT_FDCWD, name, AT_SYMLINK_FOLLOW) < 0)
		ret = -errno;
	unlink(name);
	close(fd);
	return ret;
}

static int op_eventfd(void)
{
	int fd = eventfd(0, EFD_CLOEXEC), ep, ret = 0;
	uint64_t v = 3;
	struct epoll_event ev = { .events = EPOLLIN }, out;

	TRY(fd);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0 || write(fd, &v, 8) != 8 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0 ||
	    epoll_wait(ep, &out, 1, 1000) != 1 || read(fd, &v, 8) != 8)
		ret = errno ? -errno : -EPROTO;
	if (ep >= 0)
		close(ep);
	close(fd);
	return ret;
}

static int op_timerfd(void)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC), ret = 0;
	struct itimerspec its = { .it_value = { 0, 1000000 } };
	uint64_t n;

	TRY(fd);
	if (timerfd_settime(fd, 0, &its, NULL) < 0 || read(fd, &n, 8) != 8)
		ret = -errno;
	close(fd);
	return ret;
}

static int op_signalfd(void)
{
	struct signalfd_siginfo si;
	sigset_t set;
	int fd, ret = 0;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	fd = signalfd(-1, &set, SFD_CLOEXEC);
	TRY(fd);
	if (raise(SIGUSR2) || read(fd, &si, sizeof(si)) != sizeof(si))
		ret = -errno;
	else if (si.ssi_signo != SIGUSR2)
		ret = -EPROTO;
	close(fd);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	return ret;
}

static int op_inotify(void)
{
	char name[512], buf[4096];
	int fd = inotify_init1(IN_CLOEXEC), f, ret = 0;

	TRY(fd);
	snprintf(name, sizeof(name), "%s/bbprobe-inotify-%d", dir, getpid());
	if (inotify_add_watch(fd, dir, IN_CREATE) < 0) {
		ret = -errno;
	} else if ((f = open(name, O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) < 0) {
		ret = -errno;
	} else {
		close(f);
		unlink(name);
		if (read(fd, buf, sizeof(buf)) <= 0)
			ret = -errno;
	}
	close(fd);
	return ret;
}

/* Unprivileged fanotify (5.13+) needs FAN_REPORT_FID and inode marks. */
static int op_fanotify(void)
{
	int fd = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_FID | FAN_CLOEXEC, O_RDONLY), ret = 0;

	TRY(fd);
	if (fanotify_mark(fd, FAN_MARK_ADD, FAN_CREATE | FAN_ONDIR, AT_FDCWD, dir) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* fopen "w" and plain reads of a pipe's ends through /proc/self/fd. */
static int op_pipe(void)
{
	int p[2], w = -1, r = -1, ret = 0;
	char buf[8] = "";

	TRY(pipe2(p, O_CLOEXEC));
	w = reopen_fd(p[1], FOPEN_W);
	r = reopen_fd(p[0], O_RDONLY);
	if (w < 0 || r < 0)
		ret = -errno;
	else if (write(w, "pipe", 4) != 4 || read(r, buf, 4) != 4 || strcmp(buf, "pipe"))
		ret = errno ? -errno : -EPROTO;
	if (w >= 0)
		close(w);
	if (r >= 0)
		close(r);
	close(p[0]);
	close(p[1]);
	return ret;
}

/* A regular file in DIR reopened through /proc/self/fd as fopen "w" does. */
static int op_file_reopen(void)
{
	char name[512];
	int fd, fd2, ret = 0;

	snprintf(name, sizeof(name), "%s/bbprobe-reopen-%d", dir, getpid());
	fd = open(name, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	TRY(fd);
	fd2 = reopen_fd(fd, FOPEN_W);
	if (fd2 < 0 || write(fd2, "x", 1) != 1)
		ret = -errno;
	if (fd2 >= 0)
		close(fd2);
	close(fd);
	unlink(name);
	return ret;
}

static int op_socketpair(void)
{
	int sv[2], ret = 0;
	char buf[4] = "";

	TRY(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	if (send(sv[0], "sp", 2, 0) != 2 || recv(sv[1], buf, 2, 0) != 2)
		ret = -errno;
	close(sv[0]);
	close(sv[1]);
	return ret;
}

static int op_posix_shm(void)
{
	char name[64];
	int fd, ret = 0;
	void *p;

	snprintf(name, sizeof(name), "/bbprobe-%d", getpid());
	fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
	TRY(fd);
	if (ftruncate(fd, 4096) < 0)
		ret = -errno;
	else if ((p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED)
		ret = -errno;
	else
		munmap(p, 4096);
	close(fd);
	shm_unlink(name);
	return ret;
}

static int op_userfaultfd(void)
{
	struct uffdio_api api = { .api = UFFD_API };
	int fd = syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY), ret = 0;

	TRY(fd);
	if (ioctl(fd, UFFDIO_API, &api) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static int op_io_uring(void)
{
	struct io_uring_params p = {};
	int fd = syscall(SYS_io_uring_setup, 4, &p), ret = 0;
	void *sq;

	TRY(fd);
	sq = mmap(NULL, p.sq_off.array + p.sq_entries * sizeof(uint32_t), PROT_READ | PROT_WRITE, MAP_SHARED,
		  fd, IORING_OFF_SQ_RING);
	if (sq == MAP_FAILED)
		ret = -errno;
	else
		munmap(sq, p.sq_off.array + p.sq_entries * sizeof(uint32_t));
	close(fd);
	return ret;
}

static int op_dev_null(void)
{
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

	TRY(fd);
	CHECK(write(fd, "x", 1) == 1, errno);
	close(fd);
	return 0;
}

static int op_proc_self(void)
{
	const char *const files[] = { "/proc/self/status", "/proc/self/maps", "/proc/self/stat",
				      "/proc/self/cmdline", "/proc/self/fd" };
	char buf[256];
	int fd;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		fd = open(files[i], O_RDONLY | O_CLOEXEC);
		TRY(fd);
		if (i + 1 < sizeof(files) / sizeof(files[0]))
			CHECK(read(fd, buf, sizeof(buf)) > 0, errno);
		close(fd);
	}
	return 0;
}

static const struct op {
	const char *name;
	int (*run)(void);
	bool by_default;
} ops[] = {
	{ "pidfd_open_self", op_pidfd_self, true },
	{ "pidfd_open_child", op_pidfd_child, true },
	{ "clone3_pidfd", op_clone3_pidfd, true },
	{ "pidfd_send_signal", op_pidfd_signal, true },
	{ "memfd", op_memfd, true },
	{ "memfd_meta", op_memfd_meta, true },
	{ "memfd_xattr", op_memfd_xattr, true },
	{ "memfd_reopen", op_memfd_reopen, true },
	{ "sysv_shm", op_sysv_shm, true },
	{ "shared_anon", op_shared_anon, true },
	{ "tmpfile", op_tmpfile, true },
	{ "eventfd_epoll", op_eventfd, true },
	{ "timerfd", op_timerfd, true },
	{ "signalfd", op_signalfd, true },
	{ "inotify", op_inotify, true },
	{ "fanotify", op_fanotify, true },
	{ "pipe_reopen", op_pipe, true },
	{ "file_reopen", op_file_reopen, true },
	{ "socketpair", op_socketpair, true },
	{ "posix_shm", op_posix_shm, false }, /* needs /dev/shm writable */
	{ "userfaultfd", op_userfaultfd, true },
	{ "io_uring", op_io_uring, true },
	{ "dev_null", op_dev_null, true },
	{ "proc_self", op_proc_self, true },
};

static void report(const char *name, int ret)
{
	const char *e = ret ? strerrorname_np(-ret) : NULL;

	printf("%s %s\n", name, ret ? (e ? e : "error") : "ok");
	fflush(stdout);
}

static int run(const struct op *op)
{
	errno = 0;
	report(op->name, op->run());
	return 0;
}

/* As the sandbox runs its command: no capability left, in any set. */
static int drop_caps(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {};

	for (int c = 0; c <= CAP_LAST_CAP; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
			return -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return syscall(SYS_capset, &h, d);
}

static int probe(int argc, char **argv)
{
	size_t i;
	int j;

	if (argc < 1)
		return 2;
	dir = argv[0];
	if (argc == 1) {
		for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
			if (ops[i].by_default)
				run(&ops[i]);
		return 0;
	}
	for (j = 1; j < argc; j++) {
		for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
			if (!strcmp(ops[i].name, argv[j]))
				break;
		if (i == sizeof(ops) / sizeof(ops[0])) {
			fprintf(stderr, "pathless: no operation %s\n", argv[j]);
			return 2;
		}
		run(&ops[i]);
	}
	return 0;
}

static int reopen(const char *path, const char *how)
{
	char buf[128] = "";
	int fd = open(path, O_PATH | O_CLOEXEC), fd2, ret = 0;
	ssize_t n;

	TRY(fd);
	fd2 = reopen_fd(fd, how[0] == 'w' ? FOPEN_W : O_RDONLY);
	if (fd2 < 0) {
		ret = -errno;
	} else {
		if (how[0] == 'r' && (n = read(fd2, buf, sizeof(buf) - 1)) > 0)
			printf("read: %.*s", (int)n, buf);
		close(fd2);
	}
	close(fd);
	return ret;
}

static int spawn(void)
{
	char *const argv[] = { "sh", "-c", "read line; exit 3", NULL };
	int pidfd = -1, in[2], ex[2], err = 0, ret;
	pid_t pid;

	TRY(pipe2(in, O_CLOEXEC));
	TRY(pipe2(ex, O_CLOEXEC));
	pid = clone3_pidfd(&pidfd);
	TRY(pid);
	if (pid == 0) {
		dup2(in[0], 0);
		execv("/bin/sh", argv);
		err = errno;
		write(ex[1], &err, sizeof(err));
		_exit(127);
	}
	close(in[0]);
	close(ex[1]);
	/* End of file on ex: the exec happened. */
	if (read(ex[0], &err, sizeof(err)) > 0)
		return -err;
	/* The shell waits on its stdin: signal it through the pidfd, then reap it there. */
	ret = pidfd_send_signal(pidfd, SIGTERM) < 0 ? -errno : reap_pidfd(pidfd, SIGTERM, 0);
	close(in[1]);
	close(ex[0]);
	close(pidfd);
	return ret;
}

int main(int argc, char **argv)
{
	int i = 1;

	if (argc > i && !strcmp(argv[i], "--drop-caps")) {
		if (drop_caps() < 0) {
			perror("pathless: dropping capabilities");
			return 2;
		}
		i++;
	}
	if (argc > i + 1 && !strcmp(argv[i], "probe"))
		return probe(argc - i - 1, argv + i + 1);
	if (argc == i + 3 && !strcmp(argv[i], "reopen")) {
		report("reopen", reopen(argv[i + 1], argv[i + 2]));
		return 0;
	}
	if (argc == i + 1 && !strcmp(argv[i], "spawn")) {
		report("spawn", spawn());
		return 0;
	}
	fprintf(stderr, "usage: pathless [--drop-caps] probe DIR [OP...] | reopen PATH r|w | spawn\n");
	return 2;
}
