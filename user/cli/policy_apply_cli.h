/* SPDX-License-Identifier: MIT */
/* `bpfbox policy apply|history|rollback`: the administrator's policy, versioned. */
#ifndef BPFBOX_POLICY_APPLY_CLI_H
#define BPFBOX_POLICY_APPLY_CLI_H

/* sub: "apply", "history" or "rollback"; argv: what follows it. Returns the exit status. */
int policy_apply_command(const char *sub, int argc, char **argv);

#endif
