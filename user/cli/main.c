// SPDX-License-Identifier: MIT
/* bpfbox command-line entry: dispatches to the subcommands. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "lib/start_trace.h"

struct subcommand {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct subcommand subcommands[] = {
	{ "exec", cmd_exec, "run a command confined by a policy" },
	{ "doctor", cmd_doctor, "check that this host can enforce a sandbox" },
	{ "policy", cmd_policy, "check, show, explain a policy file, or suggest grants from a log" },
	{ "ps", cmd_ps, "list live sandboxes" },
	{ "gc", cmd_gc, "remove what dead supervisors left behind" },
	{ "stop", cmd_stop, "stop a live sandbox" },
	{ "update", cmd_update, "change a live sandbox's policy (or allow, deny a domain)" },
	{ "daemon", cmd_daemon, "run sandboxes for users who are not root (a root service)" },
	{ "connect", cmd_connect, "tunnel stdio to HOST PORT through the sandbox proxy" },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: bpfbox COMMAND [ARGS...]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		fprintf(out, "  %-8s %s\n", subcommands[i].name, subcommands[i].summary);
	fprintf(out, "\nRun 'bpfbox COMMAND --help' for a command's options.\n");
}

int main(int argc, char **argv)
{
	start_trace("main");
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	/* BPFBOX_VERSION comes from the tree's VERSION file (Makefile), as the package's does. */
	if (!strcmp(argv[1], "--version")) {
		printf("bpfbox %s\n", BPFBOX_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		if (!strcmp(argv[1], subcommands[i].name))
			return subcommands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "bpfbox: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
