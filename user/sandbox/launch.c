// SPDX-License-Identifier: MIT
/* The child that becomes the command. */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/keyctl.h>
#include <linux/sched.h>
#include <linux/securebits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/nofile.h"

#include "launch.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

/* Messages on status_fd. */
#define MSG_RESOLVED 'R'
#define MSG_EXEC_FAILED 'E'
#define MSG_SETUP_FAILED 'S'

int launch_find_program(const char *name, const char *path_env, char *out, size_t len)
{
	const char *p = path_env && *path_env ? path_env : "/usr/local/bin:/usr/bin:/bin";
	struct stat st;
	int err = -ENOENT;

	if (strchr(name, '/')) {
		if ((size_t)snprintf(out, len, "%s", name) >= len)
			return -ENAMETOOLONG;
		return 0;
	}
	while (*p) {
		const char *end = strchrnul(p, ':');
		int n = (int)(end - p);

		snprintf(out, len, "%.*s/%s", n, n ? p : ".", name);
		if (stat(out, &st) == 0 && S_ISREG(st.st_mode)) {
			if (access(out, X_OK) == 0)
				return 0;
			err = -EACCES;
		}
		p = *end ? end + 1 : end;
	}
	return err;
}

static void write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		p += n;
		len -= (size_t)n;
	}
}

static __attribute__((noreturn)) void child_fail(int fd, char what, int err, enum launch_stage stage)
{
	char msg[2 + sizeof(int)];

	msg[0] = what;
	msg[1] = (char)stage;
	memcpy(msg + 2, &err, sizeof(int));
	write_all(fd, msg, sizeof(msg));
	_exit(what == MSG_EXEC_FAILED ? (err == ENOENT ? 127 : 126) : 125);
}

/*
 * No way to regain a capability: not by exec of a setuid file, not as uid 0.
 * The capabilities themselves go in drop_capabilities, after the user switch
 * that still needs CAP_SETUID and CAP_SETGID.
 */
static int lock_privileges(void)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
					     SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
					     SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
		  0, 0, 0) &&
	    errno != EPERM)
		return -errno;
	for (int cap = 0; cap <= 63; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) && errno != EINVAL)
			return -errno;
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	return 0;
}

static int drop_capabilities(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = { 0 };

	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	return 0;
}

/* Groups, gid and uid of the target user, then proof that uid 0 cannot come back. */
static int become_user(const struct identity *id, pid_t launcher)
{
	int err = identity_switch(id);

	if (err)
		return err;
	/* A changed euid clears the parent-death signal: set it again, and catch a launcher already gone. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0))
		return -errno;
	if (getppid() != launcher)
		_exit(125);
	err = drop_capabilities();
	if (err)
		return err;
	if (!syscall(SYS_setresuid, 0, 0, 0) || (id->gid != 0 && !syscall(SYS_setresgid, 0, 0, 0)))
		return -EPERM;
	return 0;
}

static __attribute__((noreturn)) void child_main(const struct launch_spec *spec, struct resolve_result *results,
						  int go_fd, int status_fd)
{
	char go, prog[4096];
	sigset_t none;
	pid_t launcher;
	ssize_t n;
	int err;

	/* If the launcher dies before exec, so does this child. */
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	sandbox_resolve_paths(spec->bpf, spec->sandbox_id, spec->resolve_paths, spec->resolve_no_links,
			      spec->n_resolve, results);
	write_all(status_fd, (char[]){ MSG_RESOLVED }, 1);
	do
		n = read(go_fd, &go, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1 || go != 'G')
		_exit(125);
	close(go_fd);

	launcher = getppid();
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	/* Only stdio (and what --pass-fd names) reaches the command; status_fd closes on exec too. */
	syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
	if (spec->keep_fd_sources && spec->n_keep_fds) {
		/*
		 * The caller's descriptors go to the numbers it asked for. First all
		 * of them (and status_fd) above every target, so that no dup2 lands
		 * on a descriptor still to be moved.
		 */
		int high = 3, moved[LAUNCH_MAX_KEEP_FDS];

		for (size_t i = 0; i < spec->n_keep_fds; i++)
			high = spec->keep_fds[i] >= high ? spec->keep_fds[i] + 1 : high;
		status_fd = fcntl(status_fd, F_DUPFD_CLOEXEC, high);
		if (status_fd < 0)
			_exit(125);
		for (size_t i = 0; i < spec->n_keep_fds && i < LAUNCH_MAX_KEEP_FDS; i++) {
			moved[i] = fcntl(spec->keep_fd_sources[i], F_DUPFD_CLOEXEC, high);
			if (moved[i] < 0)
				child_fail(status_fd, MSG_SETUP_FAILED, errno, LAUNCH_STAGE_PRIVILEGES);
		}
		for (size_t i = 0; i < spec->n_keep_fds && i < LAUNCH_MAX_KEEP_FDS; i++)
			if (dup2(moved[i], spec->keep_fds[i]) < 0)
				child_fail(status_fd, MSG_SETUP_FAILED, errno, LAUNCH_STAGE_PRIVILEGES);
	} else {
		for (size_t i = 0; i < spec->n_keep_fds; i++)
			fcntl(spec->keep_fds[i], F_SETFD, 0);
	}
	/* The daemon's caller's terminal: job control inside the sandbox, ^C to its foreground. */
	if (spec->new_session_tty && (setsid() < 0 || ioctl(0, TIOCSCTTY, 0) < 0))
		child_fail(status_fd, MSG_SETUP_FAILED, errno, LAUNCH_STAGE_PRIVILEGES);

	/* The descriptor limit bpfbox was started with, not the supervisor's raised one. */
	nofile_restore();
	err = lock_privileges();
	if (err)
		child_fail(status_fd, MSG_SETUP_FAILED, -err, LAUNCH_STAGE_PRIVILEGES);
	if (spec->identity && spec->identity->switch_user) {
		err = become_user(spec->identity, launcher);
		if (err)
			child_fail(status_fd, MSG_SETUP_FAILED, -err, LAUNCH_STAGE_USER);
		/* The working directory is kept, if the user may enter it at all. */
		if (spec->cwd && chdir(spec->cwd))
			child_fail(status_fd, MSG_SETUP_FAILED, errno, LAUNCH_STAGE_CWD);
	} else {
		err = drop_capabilities();
		if (err)
			child_fail(status_fd, MSG_SETUP_FAILED, -err, LAUNCH_STAGE_PRIVILEGES);
	}
	/*
	 * A new, empty session key ring, made as the command's user: the
	 * command starts with none of the invoker's keys, and the kernel records
	 * it as the sandbox's own. A kernel without key rings has nothing to hide.
	 */
	if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0 && errno != ENOSYS)
		child_fail(status_fd, MSG_SETUP_FAILED, errno, LAUNCH_STAGE_PRIVILEGES);
	/* As the command's user, inside the sandbox: what it cannot search answers "not found". */
	err = launch_find_program(spec->argv[0], spec->search_path, prog, sizeof(prog));
	if (err)
		child_fail(status_fd, MSG_EXEC_FAILED, -err, LAUNCH_STAGE_EXEC);
	execve(prog, spec->argv, spec->envp);
	child_fail(status_fd, MSG_EXEC_FAILED, errno, LAUNCH_STAGE_EXEC);
}

int launch_start(const struct launch_spec *spec, struct launch *out, struct errmsg *em)
{
	struct clone_args args = { 0 };
	int go[2] = { -1, -1 }, status[2] = { -1, -1 }, pidfd = -1, err;
	size_t map_len = (spec->n_resolve ? spec->n_resolve : 1) * sizeof(struct resolve_result);
	struct resolve_result *results;
	pid_t pid;

	memset(out, 0, sizeof(*out));
	out->pidfd = out->go_fd = out->status_fd = -1;
	results = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (results == MAP_FAILED)
		return errmsg_set(em, -errno, "allocating the resolution table");
	if (pipe2(go, O_CLOEXEC) || pipe2(status, O_CLOEXEC)) {
		err = errmsg_set(em, -errno, "creating pipes");
		goto cleanup;
	}
	args.flags = CLONE_INTO_CGROUP | CLONE_PIDFD;
	args.pidfd = (uint64_t)(uintptr_t)&pidfd;
	args.exit_signal = SIGCHLD;
	args.cgroup = (uint64_t)spec->cgroup_fd;
	pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
	if (pid < 0) {
		err = errmsg_set(em, -errno, "starting the command in its cgroup (clone3 with CLONE_INTO_CGROUP, "
					     "Linux 5.7 or later)");
		goto cleanup;
	}
	if (pid == 0) {
		close(go[1]);
		close(status[0]);
		child_main(spec, results, go[0], status[1]);
	}
	close(go[0]);
	close(status[1]);
	out->pid = pid;
	out->pidfd = pidfd;
	out->go_fd = go[1];
	out->status_fd = status[0];
	out->results = results;
	out->n_results = spec->n_resolve;
	return 0;
cleanup:
	for (int i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]);
		if (status[i] >= 0)
			close(status[i]);
	}
	munmap(results, map_len);
	return err;
}

static ssize_t read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

int launch_wait_resolved(struct launch *l, struct errmsg *em)
{
	char msg;

	if (read_full(l->status_fd, &msg, 1) != 1 || msg != MSG_RESOLVED)
		return errmsg_set(em, -ECHILD, "the sandbox's first process died while resolving rule paths");
	return 0;
}

int launch_go(struct launch *l)
{
	char msg[2 + sizeof(int)];
	ssize_t n;
	int err;

	l->setup_failed = false;
	l->exec_errno = 0;
	write_all(l->go_fd, "G", 1);
	close(l->go_fd);
	l->go_fd = -1;
	/* EOF: the pipe closed on exec. A message: exec or setup failed. */
	n = read_full(l->status_fd, msg, sizeof(msg));
	close(l->status_fd);
	l->status_fd = -1;
	if (n != (ssize_t)sizeof(msg))
		return 0;
	memcpy(&err, msg + 2, sizeof(int));
	l->setup_failed = msg[0] == MSG_SETUP_FAILED;
	l->stage = (enum launch_stage)msg[1];
	l->exec_errno = err;
	return -err;
}

void launch_abort(struct launch *l)
{
	if (l->go_fd >= 0) {
		close(l->go_fd);
		l->go_fd = -1;
	}
}

void launch_release(struct launch *l)
{
	if (l->go_fd >= 0)
		close(l->go_fd);
	if (l->status_fd >= 0)
		close(l->status_fd);
	if (l->pidfd >= 0)
		close(l->pidfd);
	if (l->results)
		munmap(l->results, (l->n_results ? l->n_results : 1) * sizeof(struct resolve_result));
	memset(l, 0, sizeof(*l));
	l->pidfd = l->go_fd = l->status_fd = -1;
}
