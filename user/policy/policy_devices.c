// SPDX-License-Identifier: MIT
/*
 * bpfbox.devices: device nodes a sandbox may open beyond its built-in set,
 * and the decision `policy explain` gives for a device path. The kernel
 * decides by the node's type and number, so this does too.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "policy_json.h"

static const struct key_spec dev_keys[] = {
	{ "allow", KEY_KNOWN, NULL },
	{ NULL, KEY_KNOWN, NULL },
};

void policy_parse_devices(struct pctx *c, const cJSON *dev)
{
	struct policy *p = c->p;
	const cJSON *arr;
	struct stat st;
	size_t i = 0;

	if (!want_object(c, dev, "bpfbox.devices"))
		return;
	check_keys(c, dev, "bpfbox.devices", dev_keys);
	arr = jget_array(c, dev, "allow", "bpfbox.devices", false, "device paths");
	if (!arr)
		return;
	for (const cJSON *n = arr->child; n; n = n->next, i++) {
		char *path = jpath_index(c, "bpfbox.devices.allow", i);
		const char *s;

		if (!path)
			return;
		s = jelem_string(c, n, path, true);
		if (s && s[0] != '/') {
			perr(c, path, "\"%s\": expected an absolute path of a device node, such as /dev/kvm", s);
		} else if (s) {
			/* Resolved again at launch: a node can come and go (hotplug). */
			if (stat(s, &st))
				pwarn(c, path, "\"%s\": %s; the sandbox cannot open it unless it exists at launch", s,
				      strerror(errno));
			else if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode))
				pwarn(c, path, "\"%s\" is not a device node; the entry allows nothing", s);
			strv_push(c, &p->device_allow, &p->n_device_allow, s);
		}
		free(path);
	}
}

struct builtin_device {
	unsigned int major, minor;
	const char *name;
};

/* The kernel's list (bpf/lib/devices.bpf.h), all character devices. */
static const struct builtin_device builtin[] = {
	{ 1, 3, "null" },   { 1, 5, "zero" }, { 1, 7, "full" }, { 1, 8, "random" },
	{ 1, 9, "urandom" }, { 5, 0, "tty (the controlling terminal)" }, { 5, 2, "ptmx (a new pseudo-terminal)" },
};

bool policy_decide_device(const struct policy *p, const char *abs_path, struct device_decision *out)
{
	struct stat st, ast;

	memset(out, 0, sizeof(*out));
	if (stat(abs_path, &st) || (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode)))
		return false;
	out->is_device = true;
	out->block = S_ISBLK(st.st_mode);
	out->major = major(st.st_rdev);
	out->minor = minor(st.st_rdev);
	for (size_t i = 0; !out->block && i < sizeof(builtin) / sizeof(builtin[0]); i++) {
		if (builtin[i].major == out->major && builtin[i].minor == out->minor) {
			out->allowed = true;
			out->rule_name = "builtin:device-set";
			out->what = builtin[i].name;
			return true;
		}
	}
	for (size_t i = 0; i < p->n_device_allow; i++) {
		if (!stat(p->device_allow[i], &ast) && (ast.st_mode & S_IFMT) == (st.st_mode & S_IFMT) &&
		    ast.st_rdev == st.st_rdev) {
			out->allowed = true;
			out->rule_name = "bpfbox.devices.allow";
			out->entry = p->device_allow[i];
			return true;
		}
	}
	out->rule_name = "builtin:device";
	if (!out->block && out->major >= 136 && out->major <= 143)
		out->what = "a pts is allowed only when the sandbox made its pty through /dev/ptmx, or it is "
			    "the terminal the command was given";
	return true;
}
