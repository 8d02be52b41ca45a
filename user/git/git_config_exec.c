// SPDX-License-Identifier: MIT
/*
 * Which config entries make git run a program: every key of git-config(1)
 * (and of git-archive(1), git-send-email(1)) whose value is a command, a
 * program's path, or names what git then runs. One table; an entry matches
 * a row by section and key (case-insensitively, as git compares them), by
 * subsection (case kept, as git compares names), then by a test of its
 * value. In doubt a row flags: what it removes is only ever re-added by hand.
 */
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "git_config.h"

enum sub_rule {
	SUB_NONE, /* section.key */
	SUB_ANY, /* section.<name>.key */
	SUB_OPT, /* either */
	SUB_NAME, /* section.<name>.key for exactly that name */
	SUB_EXT, /* url.<base>.key where <base> is an ext:: URL */
};

enum value_rule {
	VAL_ANY,
	VAL_NOT_BOOL, /* anything but a boolean git reads: a boolean picks built-in behaviour */
	VAL_BANG, /* "!..." after leading whitespace: a shell command */
	VAL_EXT_URL, /* an ext:: URL: git runs the command it names */
	VAL_ABS_PATH, /* '/...' is a program to send-email, not a host; '~...' too, in doubt */
	VAL_NOT_NEVER, /* a protocol policy other than "never": lets ext:: run */
};

struct exec_rule {
	const char *section;
	enum sub_rule sub;
	const char *name; /* SUB_NAME */
	const char *key; /* NULL: any key */
	enum value_rule value;
	const char *reason;
};

#define R_CMD "runs a command"
#define R_EXT "lets the ext:: transport run a command"

static const struct exec_rule rules[] = {
	/* core: hooks, the fsmonitor hook (true/false pick the built-in daemon or none), programs. */
	{ "core", SUB_NONE, NULL, "hookspath", VAL_ANY, "runs a hook directory" },
	{ "core", SUB_NONE, NULL, "fsmonitor", VAL_NOT_BOOL, "runs a filesystem monitor hook" },
	{ "core", SUB_NONE, NULL, "sshcommand", VAL_ANY, "runs a command in place of ssh" },
	{ "core", SUB_NONE, NULL, "editor", VAL_ANY, "runs an editor" },
	{ "core", SUB_NONE, NULL, "pager", VAL_ANY, "runs a pager" },
	{ "core", SUB_NONE, NULL, "askpass", VAL_ANY, "runs a password prompt program" },
	{ "core", SUB_NONE, NULL, "gitproxy", VAL_ANY, "runs a proxy command for git://" },
	{ "core", SUB_NONE, NULL, "alternaterefscommand", VAL_ANY, R_CMD },
	/* git-lfs, run by the filter on every checkout: its transfer agents and extensions. */
	{ "lfs", SUB_ANY, NULL, "path", VAL_ANY, "runs a git-lfs transfer agent" },
	{ "lfs", SUB_NONE, NULL, "standalonetransferagent", VAL_ANY, "runs a git-lfs transfer agent" },
	{ "lfs", SUB_ANY, NULL, "clean", VAL_ANY, "runs a git-lfs extension" },
	{ "lfs", SUB_ANY, NULL, "smudge", VAL_ANY, "runs a git-lfs extension" },
	{ "sequence", SUB_NONE, NULL, "editor", VAL_ANY, "runs an editor" },
	/* Hooks defined in config (git 2.54 and later), and gc's hook. */
	{ "hook", SUB_ANY, NULL, "command", VAL_ANY, "runs a hook command" },
	{ "gc", SUB_NONE, NULL, "recentobjectshook", VAL_ANY, "runs a hook command" },
	{ "uploadpack", SUB_NONE, NULL, "packobjectshook", VAL_ANY, "runs a hook command" },
	/* A template directory's hooks/ is copied into each repository git init or clone makes. */
	{ "init", SUB_NONE, NULL, "templatedir", VAL_ANY, "copies hooks into new repositories" },
	/* The included file is wherever the sandbox could write: anything may be in it. */
	{ "include", SUB_NONE, NULL, "path", VAL_ANY, "includes a file of config" },
	{ "includeif", SUB_ANY, NULL, "path", VAL_ANY, "includes a file of config" },
	/* credential.helper and credential.<url>.helper. */
	{ "credential", SUB_OPT, NULL, "helper", VAL_ANY, "runs a credential helper" },
	{ "filter", SUB_ANY, NULL, "clean", VAL_ANY, "runs a filter command" },
	{ "filter", SUB_ANY, NULL, "smudge", VAL_ANY, "runs a filter command" },
	{ "filter", SUB_ANY, NULL, "process", VAL_ANY, "runs a filter command" },
	{ "diff", SUB_NONE, NULL, "external", VAL_ANY, "runs an external diff command" },
	{ "diff", SUB_ANY, NULL, "command", VAL_ANY, "runs an external diff command" },
	{ "diff", SUB_ANY, NULL, "textconv", VAL_ANY, "runs a text conversion command" },
	{ "merge", SUB_ANY, NULL, "driver", VAL_ANY, "runs a merge driver" },
	{ "difftool", SUB_ANY, NULL, "cmd", VAL_ANY, "runs a diff tool" },
	{ "difftool", SUB_ANY, NULL, "path", VAL_ANY, "runs a diff tool" },
	{ "mergetool", SUB_ANY, NULL, "cmd", VAL_ANY, "runs a merge tool" },
	{ "mergetool", SUB_ANY, NULL, "path", VAL_ANY, "runs a merge tool" },
	{ "interactive", SUB_NONE, NULL, "difffilter", VAL_ANY, "runs a diff filter command" },
	/* alias.<name> = !cmd, and alias.<name>.command = !cmd (git 2.54 and later). */
	{ "alias", SUB_OPT, NULL, NULL, VAL_BANG, "runs a shell command" },
	/* pager.<cmd>: a boolean turns paging on or off; anything else is the pager. */
	{ "pager", SUB_OPT, NULL, NULL, VAL_NOT_BOOL, "runs a pager" },
	/* gpg.program and gpg.<format>.program (openpgp, x509, ssh). */
	{ "gpg", SUB_OPT, NULL, "program", VAL_ANY, "runs a signing program" },
	{ "gpg", SUB_NAME, "ssh", "defaultkeycommand", VAL_ANY, R_CMD },
	/* Run by git itself for a local remote, or by the remote's shell. */
	{ "remote", SUB_ANY, NULL, "uploadpack", VAL_ANY, "runs a command in place of git-upload-pack" },
	{ "remote", SUB_ANY, NULL, "receivepack", VAL_ANY, "runs a command in place of git-receive-pack" },
	{ "remote", SUB_ANY, NULL, "vcs", VAL_ANY, "runs a remote helper" },
	{ "remote", SUB_ANY, NULL, "url", VAL_EXT_URL, R_EXT },
	{ "remote", SUB_ANY, NULL, "pushurl", VAL_EXT_URL, R_EXT },
	{ "submodule", SUB_ANY, NULL, "url", VAL_EXT_URL, R_EXT },
	{ "url", SUB_EXT, NULL, "insteadof", VAL_ANY, R_EXT },
	{ "url", SUB_EXT, NULL, "pushinsteadof", VAL_ANY, R_EXT },
	/* ext is "never" unless these say otherwise; protocol.allow covers every unnamed one. */
	{ "protocol", SUB_NONE, NULL, "allow", VAL_NOT_NEVER, R_EXT },
	{ "protocol", SUB_NAME, "ext", "allow", VAL_NOT_NEVER, R_EXT },
	{ "submodule", SUB_ANY, NULL, "update", VAL_BANG, "runs a shell command" },
	{ "man", SUB_ANY, NULL, "cmd", VAL_ANY, "runs a manual viewer" },
	{ "man", SUB_ANY, NULL, "path", VAL_ANY, "runs a manual viewer" },
	/* A browser by name (git web--browse runs it), or browser.<tool>.cmd and .path. */
	{ "web", SUB_NONE, NULL, "browser", VAL_ANY, "runs a web browser" },
	{ "help", SUB_NONE, NULL, "browser", VAL_ANY, "runs a web browser" },
	{ "instaweb", SUB_NONE, NULL, "browser", VAL_ANY, "runs a web browser" },
	{ "instaweb", SUB_NONE, NULL, "httpd", VAL_ANY, "runs a web server" },
	{ "browser", SUB_ANY, NULL, "cmd", VAL_ANY, "runs a web browser" },
	{ "browser", SUB_ANY, NULL, "path", VAL_ANY, "runs a web browser" },
	/* sendemail.<key> and sendemail.<identity>.<key>. A server that is a path is sendmail. */
	{ "sendemail", SUB_OPT, NULL, "smtpserver", VAL_ABS_PATH, "runs a sendmail program" },
	{ "sendemail", SUB_OPT, NULL, "sendmailcmd", VAL_ANY, "runs a sendmail command" },
	{ "sendemail", SUB_OPT, NULL, "tocmd", VAL_ANY, R_CMD },
	{ "sendemail", SUB_OPT, NULL, "cccmd", VAL_ANY, R_CMD },
	{ "sendemail", SUB_OPT, NULL, "headercmd", VAL_ANY, R_CMD },
	{ "imap", SUB_NONE, NULL, "tunnel", VAL_ANY, "runs a tunnel command" },
	{ "trailer", SUB_ANY, NULL, "command", VAL_ANY, "runs a trailer command" },
	{ "trailer", SUB_ANY, NULL, "cmd", VAL_ANY, "runs a trailer command" },
	/* git archive pipes through tar.<format>.command (git-archive(1)). */
	{ "tar", SUB_ANY, NULL, "command", VAL_ANY, "runs a compression command" },
	{ "guitool", SUB_ANY, NULL, "cmd", VAL_ANY, "runs a git gui tool" },
};

static bool git_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static const char *skip_space(const char *s)
{
	while (git_space(*s))
		s++;
	return s;
}

/*
 * Booleans every git reads as one (git_parse_maybe_bool): NULL is true, ""
 * false. git also takes integers ("2", "0x10", "1k"); those are flagged: a
 * false alarm, never a miss.
 */
static bool is_bool(const char *v)
{
	static const char *const words[] = { "true", "false", "yes", "no", "on", "off", "1", "0", "" };

	if (!v)
		return true;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (!strcasecmp(v, words[i]))
			return true;
	return false;
}

static bool is_ext_url(const char *s)
{
	return s && !strncasecmp(skip_space(s), "ext::", 5);
}

static bool sub_matches(const struct exec_rule *r, const char *sub)
{
	switch (r->sub) {
	case SUB_NONE:
		return !sub;
	case SUB_ANY:
		return sub != NULL;
	case SUB_OPT:
		return true;
	case SUB_NAME:
		return sub && !strcmp(sub, r->name);
	case SUB_EXT:
		return is_ext_url(sub);
	}
	return false;
}

static bool value_matches(enum value_rule rule, const char *v)
{
	switch (rule) {
	case VAL_ANY:
		return true;
	case VAL_NOT_BOOL:
		return !is_bool(v);
	case VAL_BANG:
		return v && *skip_space(v) == '!';
	case VAL_EXT_URL:
		return is_ext_url(v);
	case VAL_ABS_PATH:
		return v && (*skip_space(v) == '/' || *skip_space(v) == '~');
	case VAL_NOT_NEVER:
		return !v || strcasecmp(v, "never");
	}
	return false;
}

const char *git_config_exec_reason(const struct git_config_entry *e)
{
	if (!e || !e->section || !e->key)
		return NULL;
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		const struct exec_rule *r = &rules[i];

		if (strcasecmp(e->section, r->section) || (r->key && strcasecmp(e->key, r->key)))
			continue;
		if (sub_matches(r, e->subsection) && value_matches(r->value, e->value))
			return r->reason;
	}
	return NULL;
}
