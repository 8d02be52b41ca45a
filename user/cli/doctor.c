// SPDX-License-Identifier: MIT
/* bpfbox doctor: can this host enforce a sandbox? Each check proves it, or names the fix. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <cjson/cJSON.h>

#include "commands.h"
#include "probe.skel.h"
#include "sandbox/bpf_state.h"
#include "sandbox/cgroup.h"
#include "sandbox/cgroup_attach.h"

struct check {
	const char *name;
	bool pass;
	char detail[512];
	char fix[512];
};

struct report {
	struct check checks[16];
	int n;
};

static struct check *add(struct report *r, const char *name, bool pass)
{
	struct check *c = &r->checks[r->n++];

	c->name = name;
	c->pass = pass;
	c->detail[0] = c->fix[0] = 0;
	return c;
}

static void check_kernel(struct report *r)
{
	struct utsname u;
	int major = 0, minor = 0;
	struct check *c;

	uname(&u);
	sscanf(u.release, "%d.%d", &major, &minor);
	c = add(r, "kernel", major > 5 || (major == 5 && minor >= 14));
	snprintf(c->detail, sizeof(c->detail), "Linux %s", u.release);
	if (!c->pass)
		snprintf(c->fix, sizeof(c->fix), "bpfbox needs Linux 5.14 or later (cgroup.kill, BPF-LSM, ring buffers)");
}

static void check_btf(struct report *r)
{
	struct check *c = add(r, "btf", access("/sys/kernel/btf/vmlinux", R_OK) == 0);

	snprintf(c->detail, sizeof(c->detail), c->pass ? "/sys/kernel/btf/vmlinux present" : "no kernel BTF");
	if (!c->pass)
		snprintf(c->fix, sizeof(c->fix), "use a kernel built with CONFIG_DEBUG_INFO_BTF=y");
}

static void check_cgroup(struct report *r)
{
	char parent[PATH_MAX], probe[PATH_MAX + 32];
	struct errmsg em = { { 0 } };
	struct check *c;
	int err;

	err = cgroup_parent_ensure(parent, sizeof(parent), &em);
	if (!err) {
		snprintf(probe, sizeof(probe), "%s/doctor-%d", parent, getpid());
		if (mkdir(probe, 0755))
			err = errmsg_set(&em, -errno, "creating %s", probe);
		else
			rmdir(probe);
	}
	c = add(r, "cgroup2", err == 0);
	if (!err)
		snprintf(c->detail, sizeof(c->detail), "cgroup v2; sandboxes go under %s (root-owned)", parent);
	else {
		snprintf(c->detail, sizeof(c->detail), "%s", em.text);
		snprintf(c->fix, sizeof(c->fix), "mount cgroup v2 (mount -t cgroup2 none /sys/fs/cgroup) and run "
						 "bpfbox as root");
	}
}

static void check_lsm_list(struct report *r)
{
	char buf[512] = "";
	struct check *c;
	int fd;
	ssize_t n;

	if (access("/sys/kernel/security/lsm", R_OK))
		mount("securityfs", "/sys/kernel/security", "securityfs", 0, NULL);
	fd = open("/sys/kernel/security/lsm", O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = 0;
	buf[strcspn(buf, "\n")] = 0;
	c = add(r, "lsm-list", n > 0 && (strstr(buf, ",bpf") || !strncmp(buf, "bpf", 3)));
	snprintf(c->detail, sizeof(c->detail), "active LSMs: %s", n > 0 ? buf : "(unknown: securityfs unreadable)");
	if (!c->pass)
		snprintf(c->fix, sizeof(c->fix),
			 "add bpf to the kernel's LSM list: boot with lsm=%s%sbpf (e.g. in GRUB_CMDLINE_LINUX, then "
			 "update-grub and reboot)",
			 n > 0 ? buf : "landlock,lockdown,yama,integrity,apparmor", n > 0 ? "," : ",");
}

static void check_path_hooks(struct report *r)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	struct check *c;
	bool ok = vmlinux && btf__find_by_name_kind(vmlinux, "bpf_lsm_path_unlink", BTF_KIND_FUNC) > 0;

	c = add(r, "lsm-path-hooks", ok);
	snprintf(c->detail, sizeof(c->detail), ok ? "security_path_* hooks available" : "no security_path_* hooks");
	if (!ok)
		snprintf(c->fix, sizeof(c->fix), "use a kernel built with CONFIG_SECURITY_PATH=y");
	btf__free(vmlinux);
}

static int count_event(void *ctx, void *data, size_t size)
{
	(*(int *)ctx)++;
	return 0;
}

/* Loads an LSM program, attaches it and makes a throwaway child trigger it. */
static void check_lsm_fires(struct report *r)
{
	struct probe_bpf *skel = NULL;
	struct ring_buffer *rb = NULL;
	struct bpf_link *link = NULL;
	struct check *c = add(r, "lsm-program", false);
	int go[2], status = 0, events = 0, err;
	pid_t child;

	if (pipe2(go, O_CLOEXEC))
		return;
	child = fork();
	if (child == 0) {
		char b;
		int fd;

		close(go[1]);
		if (read(go[0], &b, 1) != 1)
			_exit(3);
		fd = open("/dev/null", O_RDONLY);
		_exit(fd < 0 && errno == EPERM ? 0 : 1);
	}
	close(go[0]);
	skel = probe_bpf__open();
	if (!skel) {
		snprintf(c->detail, sizeof(c->detail), "opening the probe object failed");
		goto out;
	}
	skel->rodata->target_tgid = (unsigned)child;
	bpf_program__set_autoload(skel->progs.probe_connect4, false);
	err = probe_bpf__load(skel);
	if (err) {
		snprintf(c->detail, sizeof(c->detail), "loading a BPF_PROG_TYPE_LSM program failed: %s%s",
			 strerror(-err),
			 err == -EPERM ? " (the kernel refused the load before verification although we are root)"
				       : "");
		snprintf(c->fix, sizeof(c->fix),
			 "%s",
			 err == -EPERM
				 ? "this kernel or its environment forbids LSM/tracing BPF programs (a locked-down kernel, "
				   "a seccomp or container policy, or a hypervisor's restriction); run bpfbox on a host or "
				   "VM whose kernel lists bpf in /sys/kernel/security/lsm and allows root to load LSM programs"
				 : "check the kernel log (dmesg) and CONFIG_BPF_LSM=y");
		goto out;
	}
	link = bpf_program__attach_lsm(skel->progs.probe_file_open);
	if (libbpf_get_error(link)) {
		err = (int)libbpf_get_error(link);
		link = NULL;
		snprintf(c->detail, sizeof(c->detail), "attaching the LSM program failed: %s", strerror(-err));
		snprintf(c->fix, sizeof(c->fix), "add bpf to the kernel's LSM list (lsm=...,bpf)");
		goto out;
	}
	rb = ring_buffer__new(bpf_map__fd(skel->maps.probe_events), count_event, &events, NULL);
	(void)!write(go[1], "g", 1);
	waitpid(child, &status, 0);
	child = 0;
	if (rb)
		ring_buffer__consume(rb);
	c->pass = WIFEXITED(status) && WEXITSTATUS(status) == 0 && skel->bss->lsm_hits > 0 && events > 0;
	snprintf(c->detail, sizeof(c->detail),
		 c->pass ? "an lsm/file_open program loaded, attached, refused a test child's open with EPERM "
			   "and reported it through a ring buffer"
			 : "the LSM program loaded and attached but did not fire (hits %llu, events %d)",
		 (unsigned long long)skel->bss->lsm_hits, events);
	if (!c->pass)
		snprintf(c->fix, sizeof(c->fix), "add bpf to the kernel's LSM list (lsm=...,bpf)");
out:
	close(go[1]);
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	ring_buffer__free(rb);
	bpf_link__destroy(link);
	probe_bpf__destroy(skel);
}

/* Loads a cgroup connect4 program on a throwaway cgroup and makes a child there try to connect. */
static void check_cgroup_programs(struct report *r)
{
	struct check *c = add(r, "cgroup-sock-addr", false);
	struct sandbox_cgroup cg = { .dir_fd = -1 };
	struct errmsg em = { { 0 } };
	struct probe_bpf *skel = NULL;
	struct clone_args args = { 0 };
	char name[64];
	int status = 0, err;
	pid_t child;

	snprintf(name, sizeof(name), "doctor-%d", getpid());
	if (cgroup_create(name, &cg, &em)) {
		snprintf(c->detail, sizeof(c->detail), "%s", em.text);
		return;
	}
	skel = probe_bpf__open();
	if (!skel)
		goto out;
	bpf_program__set_autoload(skel->progs.probe_file_open, false);
	err = probe_bpf__load(skel);
	if (!err && bpf_prog_attach(bpf_program__fd(skel->progs.probe_connect4), cg.dir_fd,
				    BPF_CGROUP_INET4_CONNECT, 0))
		err = -errno;
	if (err) {
		snprintf(c->detail, sizeof(c->detail), "loading or attaching a cgroup/connect4 program failed: %s",
			 strerror(-err));
		snprintf(c->fix, sizeof(c->fix), "use a kernel with CONFIG_CGROUP_BPF=y");
		goto out;
	}
	args.flags = CLONE_INTO_CGROUP;
	args.exit_signal = SIGCHLD;
	args.cgroup = (unsigned long long)cg.dir_fd;
	child = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
	if (child == 0) {
		struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(9) };
		int s = socket(AF_INET, SOCK_STREAM, 0);

		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		_exit(connect(s, (struct sockaddr *)&sin, sizeof(sin)) < 0 && errno == EPERM ? 0 : 1);
	}
	if (child < 0) {
		snprintf(c->detail, sizeof(c->detail), "clone3(CLONE_INTO_CGROUP) failed: %s", strerror(errno));
		snprintf(c->fix, sizeof(c->fix), "bpfbox needs Linux 5.7 or later");
		goto out;
	}
	waitpid(child, &status, 0);
	c->pass = WIFEXITED(status) && WEXITSTATUS(status) == 0;
	snprintf(c->detail, sizeof(c->detail),
		 c->pass ? "a cgroup/connect4 program refused a test child's connect with EPERM"
			 : "the cgroup program was attached but the test connect was not refused");
out:
	probe_bpf__destroy(skel);
	cgroup_destroy(&cg);
}

/* Whether the network programs go on the parent of every sandbox once, or on each sandbox (cgroup_attach.h). */
static void check_cgroup_attach(struct report *r)
{
	char pin_dir[PATH_MAX];
	struct check *c = add(r, "cgroup-attach", false);
	int mode;

	if (bpf_state_pin_dir(pin_dir, sizeof(pin_dir))) {
		snprintf(c->detail, sizeof(c->detail), "the pin directory's name is too long");
		return;
	}
	mode = cgroup_attach_mode(pin_dir, c->detail, sizeof(c->detail));
	c->pass = mode >= 0;
	if (mode < 0)
		snprintf(c->fix, sizeof(c->fix), "detach the program named above from bpfbox's cgroup (bpftool cgroup "
						 "detach), or have it attached with BPF_F_ALLOW_MULTI");
}

static void check_ringbuf(struct report *r)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "bb_probe", 0, 0, 4096, NULL);
	struct check *c = add(r, "ring-buffer", fd >= 0);

	snprintf(c->detail, sizeof(c->detail), fd >= 0 ? "BPF ring buffers can be created" : "%s",
		 fd >= 0 ? "" : strerror(errno));
	if (fd < 0)
		snprintf(c->fix, sizeof(c->fix), "bpfbox needs Linux 5.8 or later with BPF ring buffers");
	else
		close(fd);
}

static void check_bpffs(struct report *r)
{
	struct statfs sfs;
	bool ok = statfs("/sys/fs/bpf", &sfs) == 0 && (unsigned long)sfs.f_type == 0xcafe4a11;
	struct check *c;

	if (!ok && mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700") == 0)
		ok = true;
	c = add(r, "bpffs", ok);
	snprintf(c->detail, sizeof(c->detail), ok ? "/sys/fs/bpf is a BPF filesystem" : "no BPF filesystem");
	if (!ok)
		snprintf(c->fix, sizeof(c->fix), "mount -t bpf bpf /sys/fs/bpf");
}

static int print_json(const struct report *r, bool ok)
{
	cJSON *root = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(root, "checks");
	char *text;

	cJSON_AddBoolToObject(root, "enforceable", ok);
	for (int i = 0; i < r->n; i++) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "name", r->checks[i].name);
		cJSON_AddStringToObject(o, "result", r->checks[i].pass ? "PASS" : "FAIL");
		cJSON_AddStringToObject(o, "detail", r->checks[i].detail);
		if (r->checks[i].fix[0])
			cJSON_AddStringToObject(o, "fix", r->checks[i].fix);
		cJSON_AddItemToArray(arr, o);
	}
	text = cJSON_PrintUnformatted(root);
	puts(text ? text : "{}");
	free(text);
	cJSON_Delete(root);
	return 0;
}

int cmd_doctor(int argc, char **argv)
{
	struct report r = { .n = 0 };
	bool json = false, ok = true;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: bpfbox doctor [--json]\n");
			return 0;
		} else {
			fprintf(stderr, "bpfbox: doctor: unknown option '%s'\n", argv[i]);
			return 2;
		}
	}
	libbpf_set_print(NULL);
	if (geteuid() != 0) {
		fprintf(stderr, "bpfbox: doctor must run as root\n");
		return BPFBOX_EXIT_SETUP;
	}
	check_kernel(&r);
	check_btf(&r);
	check_bpffs(&r);
	check_cgroup(&r);
	check_lsm_list(&r);
	check_path_hooks(&r);
	check_ringbuf(&r);
	check_lsm_fires(&r);
	check_cgroup_programs(&r);
	check_cgroup_attach(&r);
	for (int i = 0; i < r.n; i++)
		ok = ok && r.checks[i].pass;
	if (json)
		print_json(&r, ok);
	else {
		for (int i = 0; i < r.n; i++) {
			printf("%s %-17s %s\n", r.checks[i].pass ? "PASS" : "FAIL", r.checks[i].name,
			       r.checks[i].detail);
			if (r.checks[i].fix[0])
				printf("     %-17s fix: %s\n", "", r.checks[i].fix);
		}
		printf(ok ? "\nThis host can enforce bpfbox sandboxes.\n"
			  : "\nThis host cannot enforce bpfbox sandboxes; 'bpfbox exec' will refuse to run commands.\n");
	}
	return ok ? 0 : 1;
}
