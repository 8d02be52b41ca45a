/* SPDX-License-Identifier: MIT */
/* `bpfbox policy suggest`: grants proposed from a log's refusals. */
#ifndef BPFBOX_POLICY_SUGGEST_CLI_H
#define BPFBOX_POLICY_SUGGEST_CLI_H

/* argv: what follows "suggest". Returns the exit status (0, 2 usage, 125). */
int policy_suggest_command(int argc, char **argv);

#endif
