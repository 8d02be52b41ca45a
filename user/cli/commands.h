/* SPDX-License-Identifier: MIT */
/* Entry points of the bpfbox subcommands; each returns the process exit status. */
#ifndef BPFBOX_COMMANDS_H
#define BPFBOX_COMMANDS_H

/* Exit status for bpfbox's own failures (policy, host, setup); the command was not run. */
#define BPFBOX_EXIT_SETUP 125

int cmd_exec(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_policy(int argc, char **argv);
int cmd_ps(int argc, char **argv);
int cmd_gc(int argc, char **argv);
int cmd_connect(int argc, char **argv);

#endif
