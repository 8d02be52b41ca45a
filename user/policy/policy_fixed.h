/* SPDX-License-Identifier: MIT */
/*
 * The fields of a policy a running sandbox took at its start and cannot
 * take again: resource limits, the proxy's request rules and parent
 * proxy, the command's environment and masked credentials, the CA files
 * of TLS termination. A live update or a ceiling reload that changes one
 * cannot be applied; the caller refuses the update, or stops the sandbox
 * when the administrator's policy narrowed (fail closed).
 */
#ifndef BPFBOX_POLICY_FIXED_H
#define BPFBOX_POLICY_FIXED_H

#include "policy.h"

/* The first such field that differs between a and b, by its settings name; NULL when none does. */
const char *policy_fixed_change(const struct policy *a, const struct policy *b);

#endif
