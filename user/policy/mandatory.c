// SPDX-License-Identifier: MIT
#include <stdbool.h>
#include <string.h>

#include "bpfbox.h"
#include "mandatory.h"

const struct mandatory_name mandatory_names_table[] = {
	{ ".gitconfig", BB_M_PROTECT, "mandatory:.gitconfig" },
	{ ".gitmodules", BB_M_PROTECT | BB_M_NEW_WORKTREE, "mandatory:.gitmodules" },
	{ ".bashrc", BB_M_PROTECT, "mandatory:.bashrc" },
	{ ".bash_profile", BB_M_PROTECT, "mandatory:.bash_profile" },
	{ ".zshrc", BB_M_PROTECT, "mandatory:.zshrc" },
	{ ".zprofile", BB_M_PROTECT, "mandatory:.zprofile" },
	{ ".profile", BB_M_PROTECT, "mandatory:.profile" },
	{ ".ripgreprc", BB_M_PROTECT, "mandatory:.ripgreprc" },
	{ ".mcp.json", BB_M_PROTECT, "mandatory:.mcp.json" },
	{ ".vscode", BB_M_PROTECT, "mandatory:.vscode" },
	{ ".idea", BB_M_PROTECT, "mandatory:.idea" },
	{ ".git", BB_M_GIT, "mandatory:.git" },
	{ ".claude", BB_M_CLAUDE, "mandatory:.claude" },
	{ "hooks", BB_M_CHILD_HOOKS, "mandatory:.git/hooks" },
	{ "config", BB_M_CHILD_CONFIG, "mandatory:.git/config" },
	{ "config.worktree", BB_M_CHILD_CONFIG, "mandatory:.git/config.worktree" },
	{ "commondir", BB_M_CHILD_COMMONDIR, "mandatory:.git/commondir" },
	{ "commands", BB_M_CHILD_AGENT_DIR, "mandatory:.claude/commands" },
	{ "agents", BB_M_CHILD_AGENT_DIR, "mandatory:.claude/agents" },
};

const size_t mandatory_names_count = sizeof(mandatory_names_table) / sizeof(mandatory_names_table[0]);

uint64_t component_name_hash(const char *name, size_t len)
{
	uint64_t words[BB_NAME_HASHED / 8] = { 0 };

	memcpy(words, name, len < BB_NAME_HASHED ? len : BB_NAME_HASHED);
	return bb_name_hash_words(words, (uint32_t)len);
}

static const char *const special_names[] = {
	[BB_RULE_DEFAULT_WRITE - BB_RULE_SPECIAL] = "default:write",
	[BB_RULE_TOO_DEEP - BB_RULE_SPECIAL] = "limit:path-too-deep",
	[BB_RULE_PROTECTED_FS - BB_RULE_SPECIAL] = "builtin:protected-filesystem",
	[BB_RULE_DEVICE_NODE - BB_RULE_SPECIAL] = "builtin:device-node",
	[BB_RULE_MOUNT - BB_RULE_SPECIAL] = "builtin:mount",
	[BB_RULE_PTRACE - BB_RULE_SPECIAL] = "builtin:ptrace-outside-sandbox",
	[BB_RULE_BPF - BB_RULE_SPECIAL] = "builtin:bpf",
	[BB_RULE_USERNS - BB_RULE_SPECIAL] = "builtin:user-namespace",
	[BB_RULE_RENAME_LOOSER - BB_RULE_SPECIAL] = "builtin:move-to-looser-place",
	[BB_RULE_LINK_SOURCE - BB_RULE_SPECIAL] = "builtin:link-source",
	[BB_RULE_NET_DEFAULT - BB_RULE_SPECIAL] = "default:network",
	[BB_RULE_NET_FAMILY - BB_RULE_SPECIAL] = "builtin:socket-family",
	[BB_RULE_UNIX_DEFAULT - BB_RULE_SPECIAL] = "default:unix-socket",
	[BB_RULE_UNIX_ABSTRACT - BB_RULE_SPECIAL] = "default:unix-abstract",
	[BB_RULE_BIND - BB_RULE_SPECIAL] = "allowLocalBinding:false",
	[BB_RULE_MANDATORY_GIT_HOOKS - BB_RULE_SPECIAL] = "mandatory:.git/hooks",
	[BB_RULE_MANDATORY_GIT_CONFIG - BB_RULE_SPECIAL] = "mandatory:.git/config",
	[BB_RULE_MANDATORY_GIT_FILE - BB_RULE_SPECIAL] = "mandatory:.git",
	[BB_RULE_MANDATORY_CLAUDE - BB_RULE_SPECIAL] = "mandatory:.claude",
	[BB_RULE_MANDATORY_RENAME - BB_RULE_SPECIAL] = "mandatory:rename",
	[BB_RULE_DEVICE - BB_RULE_SPECIAL] = "builtin:device",
	[BB_RULE_OTHER_TMPDIR - BB_RULE_SPECIAL] = "builtin:other-sandbox-tmpdir",
	[BB_RULE_BPFBOX_STATE - BB_RULE_SPECIAL] = "builtin:bpfbox-state",
	[BB_RULE_SHM_OTHER - BB_RULE_SPECIAL] = "builtin:shm-not-own",
	[BB_RULE_KEY_OTHER - BB_RULE_SPECIAL] = "builtin:key-not-own",
	[BB_RULE_SIGNAL - BB_RULE_SPECIAL] = "builtin:signal-outside-sandbox",
	[BB_RULE_TTY_INJECT - BB_RULE_SPECIAL] = "builtin:terminal-input",
	[BB_RULE_CEILING_DEFAULT_WRITE - BB_RULE_SPECIAL] = "ceiling:default:write",
	[BB_RULE_GIT_LIMIT - BB_RULE_SPECIAL] = "limit:new-git-repositories",
};

const char *special_rule_name(uint32_t rule)
{
	if (rule >= BB_RULE_MANDATORY_NAME && rule < BB_RULE_MANDATORY_NAME + mandatory_names_count)
		return mandatory_names_table[rule - BB_RULE_MANDATORY_NAME].rule;
	if (rule >= BB_RULE_SPECIAL && rule < BB_RULE_SPECIAL_END)
		return special_names[rule - BB_RULE_SPECIAL];
	return NULL;
}

const char *mandatory_rule_of_path(const char *path)
{
	const char *c = path, *parent = NULL;
	size_t parent_len = 0;

	while (*c) {
		const char *end;
		size_t len;

		while (*c == '/')
			c++;
		end = strchrnul(c, '/');
		len = (size_t)(end - c);
		for (size_t i = 0; len && i < mandatory_names_count; i++) {
			const struct mandatory_name *m = &mandatory_names_table[i];
			bool named = strlen(m->name) == len && !memcmp(m->name, c, len);

			if (!named)
				continue;
			if (m->flags & BB_M_PROTECT)
				return m->rule;
			if ((m->flags & (BB_M_CHILD_HOOKS | BB_M_CHILD_CONFIG | BB_M_CHILD_COMMONDIR)) && parent &&
			    parent_len == 4 && !memcmp(parent, ".git", 4))
				return m->rule;
			if ((m->flags & BB_M_CHILD_AGENT_DIR) && parent && parent_len == 7 && !memcmp(parent, ".claude", 7))
				return m->rule;
		}
		parent = c;
		parent_len = len;
		c = end;
	}
	return NULL;
}
