// SPDX-License-Identifier: MIT
/*
 * A non-root `bpfbox exec`: the daemon runs the sandbox. Everything the
 * caller names is opened here, as the caller, and passed as a descriptor or
 * sent as content (the policy's text); the daemon learns who the caller is
 * from the kernel. On a terminal the command gets a pty of the caller's own
 * (job control, ^C and ^Z inside the sandbox, the window size followed).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include "commands.h"
#include "daemon/client.h"
#include "daemon/wire.h"
#include "exec_caller.h"
#include "lib/signals.h"
#include "lib/start_trace.h"

extern char **environ;

/* The policy's text, read as the caller: the daemon never opens it. */
static int read_policy(const char *path, char **out, size_t *len, struct errmsg *em)
{
	size_t cap = 65536, n = 0;
	char *buf = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY), err = 0;
	struct stat st;

	if (fd < 0)
		return errmsg_set(em, -errno, "policy %s", path);
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		err = errmsg_set(em, -EINVAL, "policy %s: not a regular file", path);
		goto cleanup;
	}
	buf = malloc(cap + 1);
	for (;;) {
		ssize_t r;

		if (!buf) {
			err = errmsg_set(em, -ENOMEM, "reading policy %s", path);
			goto cleanup;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = errmsg_set(em, -errno, "reading policy %s", path);
			goto cleanup;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > WIRE_MAX_POLICY) {
			err = errmsg_set(em, -E2BIG, "policy %s: larger than %u bytes", path, WIRE_MAX_POLICY);
			goto cleanup;
		}
		if (n == cap) {
			char *nb = realloc(buf, cap * 2 + 1);

			if (!nb)
				free(buf);
			buf = nb;
			cap *= 2;
		}
	}
	if (memchr(buf, 0, n)) {
		err = errmsg_set(em, -EINVAL, "policy %s: contains a NUL byte; not a JSON text", path);
		goto cleanup;
	}
	buf[n] = 0;
	*out = buf;
	*len = n;
	buf = NULL;
cleanup:
	free(buf);
	close(fd);
	return err;
}

struct client {
	int sock;
	int master; /* the pty's master, -1 without a terminal */
	int sig_fd;
	bool raw; /* the caller's terminal is in raw mode: restore it */
	struct termios saved;
	sigset_t old_mask;
};

static void restore_terminal(struct client *c)
{
	if (c->raw)
		tcsetattr(STDIN_FILENO, TCSADRAIN, &c->saved);
	c->raw = false;
}

/* A pty of the caller's own, set up like its terminal; its slave becomes the command's. */
static int open_pty(struct client *c, int *slave, struct errmsg *em)
{
	struct winsize ws;
	struct termios t;
	char name[128];

	c->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (c->master < 0 || grantpt(c->master) || unlockpt(c->master) || ptsname_r(c->master, name, sizeof(name)))
		return errmsg_set(em, -errno, "opening a pseudo-terminal for the command");
	*slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (*slave < 0)
		return errmsg_set(em, -errno, "opening %s", name);
	if (!tcgetattr(STDIN_FILENO, &t)) {
		tcsetattr(*slave, TCSANOW, &t);
		c->saved = t;
		cfmakeraw(&t);
		if (!tcsetattr(STDIN_FILENO, TCSADRAIN, &t))
			c->raw = true;
	}
	if (!ioctl(STDIN_FILENO, TIOCGWINSZ, &ws))
		ioctl(c->master, TIOCSWINSZ, &ws);
	return 0;
}

static int block_signals(struct client *c)
{
	static const int watch[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT, 0 };
	int fd = signals_block_to_fd(watch, NULL, &c->old_mask);

	if (fd < 0)
		return fd;
	signal(SIGPIPE, SIG_IGN);
	c->sig_fd = fd;
	return 0;
}

/* Copies what one descriptor has to another; false at its end. */
static bool pump(int from, int to)
{
	char buf[16384];
	ssize_t n = read(from, buf, sizeof(buf));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0)
		return false;
	for (ssize_t off = 0; off < n;) {
		ssize_t w = write(to, buf + off, (size_t)(n - off));

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		off += w;
	}
	return true;
}

static void handle_signal(struct client *c)
{
	struct signalfd_siginfo si;
	struct winsize ws;

	if (read(c->sig_fd, &si, sizeof(si)) != sizeof(si))
		return;
	switch (si.ssi_signo) {
	case SIGWINCH:
		if (c->master >= 0 && !ioctl(STDIN_FILENO, TIOCGWINSZ, &ws))
			ioctl(c->master, TIOCSWINSZ, &ws);
		return;
	case SIGCONT:
		/* Back in the foreground after a ^Z: raw again, and the command resumes. */
		if (c->master >= 0) {
			struct termios t = c->saved;

			cfmakeraw(&t);
			c->raw = !tcsetattr(STDIN_FILENO, TCSADRAIN, &t);
		}
		wire_send_msg(c->sock, WIRE_MSG_CONT, 0, NULL);
		return;
	default:
		wire_send_msg(c->sock, WIRE_MSG_SIGNAL, (int)si.ssi_signo, NULL);
	}
}

/* Returns the run's exit status once the daemon sent it (and the pty is drained). */
static int wait_for_end(struct client *c)
{
	struct wire_reader rd;
	bool have_status = false, stdin_open = c->master >= 0, master_open = c->master >= 0;
	int status = BPFBOX_EXIT_SETUP;

	wire_reader_init(&rd, WIRE_MAX_CONTROL);
	while (!have_status || master_open) {
		struct pollfd p[4] = {
			/* Once the status is in, the connection's hangup is no news (poll reports it anyway). */
			{ have_status ? -1 : c->sock, POLLIN, 0 },
			{ c->sig_fd, POLLIN, 0 },
			{ master_open ? c->master : -1, POLLIN, 0 },
			{ stdin_open ? STDIN_FILENO : -1, POLLIN, 0 },
		};
		/* After the status, what the pty still holds is drained, briefly. */
		int n = poll(p, 4, have_status ? 200 : -1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (p[1].revents)
			handle_signal(c);
		if (p[2].revents && !pump(c->master, STDOUT_FILENO))
			master_open = false;
		if (p[3].revents && !pump(STDIN_FILENO, c->master))
			stdin_open = false;
		if (p[0].revents) {
			struct wire_msg msg;
			struct errmsg em;
			uint32_t len;
			size_t n_fds;
			int fds[WIRE_MAX_FDS], ret = wire_reader_read(&rd, c->sock);
			char *body;

			if (ret == 0)
				continue;
			if (ret < 0) {
				restore_terminal(c);
				fprintf(stderr, "bpfbox: the daemon ended the connection before the command's exit "
					"status came (%s); its sandbox is stopped\n",
					ret == -EPIPE ? "closed" : strerror(-ret));
				wire_reader_release(&rd);
				return BPFBOX_EXIT_SETUP;
			}
			body = wire_reader_take(&rd, &len, fds, &n_fds);
			for (size_t i = 0; i < n_fds; i++)
				close(fds[i]);
			if (wire_msg_decode(body, len, &msg, &em)) {
				free(body);
				restore_terminal(c);
				fprintf(stderr, "bpfbox: a bad answer from the daemon: %s\n", em.text);
				return BPFBOX_EXIT_SETUP;
			}
			free(body);
			switch (msg.type) {
			case WIRE_MSG_EXIT:
				status = msg.status;
				have_status = true;
				break;
			case WIRE_MSG_ERROR:
				restore_terminal(c);
				fprintf(stderr, "bpfbox: %s\n", msg.message ? msg.message : "the daemon refused the request");
				status = msg.status;
				have_status = true;
				break;
			default:
				break;
			}
			wire_msg_free(&msg);
		}
	}
	wire_reader_release(&rd);
	return status;
}

/* The daemon's error frame, if one is waiting: true, with its message in em. */
static bool daemon_refusal(int sock, struct errmsg *em)
{
	struct pollfd p = { sock, POLLIN, 0 };
	struct wire_reader rd;
	struct wire_msg msg;
	struct errmsg bad;
	int fds[WIRE_MAX_FDS], ret = 0;
	uint32_t len;
	size_t n_fds;
	bool found = false;
	char *body;

	wire_reader_init(&rd, WIRE_MAX_CONTROL);
	while (ret == 0 && poll(&p, 1, 1000) > 0)
		ret = wire_reader_read(&rd, sock);
	if (ret == 1) {
		body = wire_reader_take(&rd, &len, fds, &n_fds);
		for (size_t i = 0; i < n_fds; i++)
			close(fds[i]);
		if (!wire_msg_decode(body, len, &msg, &bad) && msg.type == WIRE_MSG_ERROR && msg.message) {
			snprintf(em->text, sizeof(em->text), "%s", msg.message);
			found = true;
		}
		wire_msg_free(&msg);
		free(body);
	}
	wire_reader_release(&rd);
	return found;
}

/*
 * The request's fields and the descriptors that go with it (the command's standard streams,
 * its working directory, the log, what --pass-fd names); returns how many descriptors.
 */
static int fill_request(struct wire_exec *x, const struct exec_client_opts *o, int fds[WIRE_MAX_FDS], int slave,
			int cwd_fd, int log_fd, char *cwd)
{
	int n_fds = 0;

	fds[n_fds++] = slave >= 0 ? slave : STDIN_FILENO;
	fds[n_fds++] = slave >= 0 ? slave : STDOUT_FILENO;
	fds[n_fds++] = slave >= 0 && isatty(STDERR_FILENO) ? slave : STDERR_FILENO;
	x->fd_stdin = 0;
	x->fd_stdout = 1;
	x->fd_stderr = 2;
	x->fd_cwd = n_fds;
	fds[n_fds++] = cwd_fd;
	x->fd_log = -1;
	x->fd_control = -1;
	if (o->control_fd >= 0) {
		x->fd_control = n_fds;
		x->control_fd_number = o->control_fd;
		fds[n_fds++] = o->control_fd;
	}
	if (log_fd >= 0 || o->log_fd >= 0) {
		x->fd_log = n_fds;
		fds[n_fds++] = log_fd >= 0 ? log_fd : o->log_fd;
	}
	for (size_t i = 0; i < o->n_pass_fds; i++) {
		x->pass[x->n_pass++] = (struct wire_pass_fd){ n_fds, o->pass_fds[i] };
		fds[n_fds++] = o->pass_fds[i];
	}
	x->argv = o->argv;
	for (x->argc = 0; o->argv[x->argc]; x->argc++)
		;
	x->env = environ;
	for (x->n_env = 0; environ[x->n_env]; x->n_env++)
		;
	x->cwd = cwd;
	x->strict = o->strict;
	x->audit = o->audit;
	x->timeout_ms = o->timeout_ms;
	x->kill_after_ms = o->kill_after_ms;
	x->log_format = o->log_format;
	x->log_level = o->log_level;
	return n_fds;
}

int exec_client(const struct exec_client_opts *o)
{
	struct client c = { .sock = -1, .master = -1, .sig_fd = -1 };
	struct wire_request req = { .op = WIRE_OP_EXEC };
	struct wire_exec *x = &req.exec;
	struct errmsg em = { { 0 } };
	int fds[WIRE_MAX_FDS], n_fds = 0, slave = -1, cwd_fd = -1, log_fd = -1, status = BPFBOX_EXIT_SETUP, err;
	char *policy = NULL, *body = NULL, cwd[4096];
	size_t policy_len = 0;

	if (o->policy) {
		err = read_policy(o->policy, &policy, &policy_len, &em);
		if (err)
			goto fail;
		x->has_policy = true;
		x->policy_name = (char *)o->policy;
		x->policy_json = policy;
		x->policy_len = policy_len;
	}
	if (o->log_file) {
		log_fd = open(o->log_file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
		if (log_fd < 0) {
			err = errmsg_set(&em, -errno, "opening the log %s", o->log_file);
			goto fail;
		}
	}
	cwd_fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cwd_fd < 0 || !getcwd(cwd, sizeof(cwd))) {
		err = errmsg_set(&em, -errno, "opening the working directory");
		goto fail;
	}
	err = daemon_connect(&em);
	if (err < 0)
		goto fail;
	c.sock = err;
	start_trace("connected to the daemon");
	err = block_signals(&c);
	if (err) {
		errmsg_set(&em, err, "blocking signals");
		goto fail;
	}
	if (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO)) {
		err = open_pty(&c, &slave, &em);
		if (err)
			goto fail;
		x->tty = true;
	}
	n_fds = fill_request(x, o, fds, slave, cwd_fd, log_fd, cwd);
	body = wire_request_encode(&req);
	if (!body) {
		err = errmsg_set(&em, -ENOMEM, "building the request");
		goto fail;
	}
	err = wire_send(c.sock, body, fds, (size_t)n_fds);
	if (err) {
		/* A daemon that refused at once has said why before it closed. */
		if (daemon_refusal(c.sock, &em))
			goto fail;
		errmsg_set(&em, err, "sending the request to the daemon");
		goto fail;
	}
	start_trace("request sent");
	/* The daemon holds its copies now; the pty's slave is the command's alone. */
	if (slave >= 0)
		close(slave);
	slave = -1;
	status = wait_for_end(&c);
	start_trace("exit status received");
	goto cleanup;
fail:
	restore_terminal(&c);
	fprintf(stderr, "bpfbox: %s; the command was not run\n", em.text);
	status = BPFBOX_EXIT_SETUP;
cleanup:
	restore_terminal(&c);
	free(body);
	free(policy);
	if (slave >= 0)
		close(slave);
	if (cwd_fd >= 0)
		close(cwd_fd);
	if (log_fd >= 0)
		close(log_fd);
	if (c.master >= 0)
		close(c.master);
	if (c.sock >= 0)
		close(c.sock);
	if (c.sig_fd >= 0)
		close(c.sig_fd);
	return status;
}
