// SPDX-License-Identifier: MIT
/*
 * A live update's rule paths, resolved in the kernel as the start's are
 * (launch.c): the sandbox itself is enforcing by then, so a child of the
 * supervisor opens them from a cgroup of its own, "<sandbox>.rules",
 * registered RESOLVING for as long as it takes. The file_open hook records
 * each identity and opens nothing.
 */
#include <errno.h>
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpfbox.h"
#include "rule_resolve.h"

/* Resolution opens each path once; a path that blocks (a hung mount) must not hold the supervisor. */
#define RULE_RESOLVE_TIMEOUT_MS 10000

static int register_resolver(const struct bpf_state *st, uint64_t id, uint32_t ring_slot, struct errmsg *em)
{
	struct bb_sandbox sb = { .id = id, .state = BB_STATE_RESOLVING, .ring_slot = ring_slot };
	struct bb_resolve slot = { 0 };

	if (bpf_map_update_elem(st->maps.resolve_slots, &id, &slot, BPF_ANY) ||
	    bpf_map_update_elem(st->maps.sandboxes, &id, &sb, BPF_NOEXIST))
		return errmsg_set(em, -errno, "registering the rule resolver (too many sandboxes? limit %d)",
				  BB_MAX_SANDBOXES);
	return 0;
}

static void unregister_resolver(const struct bpf_state *st, uint64_t id)
{
	bpf_map_delete_elem(st->maps.sandboxes, &id);
	bpf_map_delete_elem(st->maps.resolve_slots, &id);
}

/* Waits for the child, killing it past the bound; 0 when it exited 0. */
static int wait_child(int pidfd, struct errmsg *em)
{
	struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
	siginfo_t si = { 0 };
	int n;

	do
		n = poll(&pfd, 1, RULE_RESOLVE_TIMEOUT_MS);
	while (n < 0 && errno == EINTR);
	if (n == 0)
		syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
	while (waitid(P_PIDFD, (id_t)pidfd, &si, WEXITED) < 0)
		if (errno != EINTR)
			return errmsg_set(em, -errno, "waiting for the rule resolver");
	if (n == 0)
		return errmsg_set(em, -ETIMEDOUT, "resolving the new rule paths took over %d ms (a hung mount?)",
				  RULE_RESOLVE_TIMEOUT_MS);
	if (si.si_code != CLD_EXITED || si.si_status != 0)
		return errmsg_set(em, -ECHILD, "the rule resolver ended abnormally");
	return 0;
}

static int run_child(const struct bpf_state *st, const struct sandbox_cgroup *cg, const char *const *paths,
		     const bool *no_links, size_t n, struct resolve_result *out, struct errmsg *em)
{
	struct clone_args args = { 0 };
	int pidfd = -1, err;
	pid_t pid;

	args.flags = CLONE_INTO_CGROUP | CLONE_PIDFD;
	args.pidfd = (uint64_t)(uintptr_t)&pidfd;
	args.exit_signal = SIGCHLD;
	args.cgroup = (uint64_t)cg->dir_fd;
	pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
	if (pid < 0)
		return errmsg_set(em, -errno, "starting the rule resolver in %s", cg->path);
	if (pid == 0) {
		/* Only async-signal-safe work here: the supervisor has other threads. */
		sandbox_resolve_paths(st, cg->id, paths, no_links, n, out);
		_exit(0);
	}
	err = wait_child(pidfd, em);
	close(pidfd);
	return err;
}

int rule_resolve(const struct bpf_state *st, const struct sandbox_cgroup *sandbox, uint32_t ring_slot,
		 const char *const *paths, const bool *no_links, size_t n, struct resolve_result **out,
		 struct errmsg *em)
{
	size_t len = (n ? n : 1) * sizeof(struct resolve_result);
	struct sandbox_cgroup cg = { .dir_fd = -1 };
	struct resolve_result *res;
	const char *name;
	char rname[64];
	int err;

	*out = NULL;
	res = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED)
		return errmsg_set(em, -errno, "allocating the resolution table");
	name = strrchr(sandbox->path, '/');
	snprintf(rname, sizeof(rname), "%s.rules", name ? name + 1 : sandbox->path);
	err = cgroup_create(rname, &cg, em);
	if (err)
		goto cleanup;
	err = register_resolver(st, cg.id, ring_slot, em);
	if (!err) {
		err = run_child(st, &cg, paths, no_links, n, res, em);
		unregister_resolver(st, cg.id);
	}
	cgroup_destroy(&cg);
	if (!err) {
		*out = res;
		return 0;
	}
cleanup:
	munmap(res, len);
	return err;
}

void rule_resolve_free(struct resolve_result *res, size_t n)
{
	if (res)
		munmap(res, (n ? n : 1) * sizeof(struct resolve_result));
}
