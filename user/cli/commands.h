/* SPDX-License-Identifier: MIT */
/* Entry points of the bpfbox subcommands; each returns the process exit status. */
#ifndef BPFBOX_COMMANDS_H
#define BPFBOX_COMMANDS_H

#include "lib/errmsg.h"

/* Exit status for bpfbox's own failures (policy, host, setup); the command was not run. */
#define BPFBOX_EXIT_SETUP 125

int cmd_exec(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_policy(int argc, char **argv);
int cmd_ps(int argc, char **argv);
int cmd_gc(int argc, char **argv);
int cmd_connect(int argc, char **argv);
int cmd_daemon(int argc, char **argv);
int cmd_stop(int argc, char **argv);
int cmd_update(int argc, char **argv);

struct wire_request;
/* A non-root request to the daemon (ps, stop, update): its text answer on stdout, its error on stderr; the status. */
int daemon_ask(const struct wire_request *req);

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

/* bpfbox ps's table (or JSON) of every sandbox, or of uid's only. */
int ps_render(FILE *out, bool json, bool all_users, uid_t uid);

#endif
