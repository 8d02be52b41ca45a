/* SPDX-License-Identifier: MIT */
/* `bpfbox policy check --json`: the verdict on one policy file as one JSON document. */
#ifndef BPFBOX_POLICY_CHECK_JSON_H
#define BPFBOX_POLICY_CHECK_JSON_H

#include <stdbool.h>
#include <stdio.h>

/*
 * Checks file ("-": standard input) as `policy check` does and writes
 * {"file", "valid", "sha256", "errors", "warnings", "problems": [{"severity",
 * "path", "line", "column", "exact", "message"}]} and a newline to out; debug
 * notes only with debug. Returns 0 when the policy is valid, else a negative
 * errno (-ENOMEM is also reported on stderr).
 */
int policy_check_json(const char *file, bool strict, bool debug, FILE *out);

#endif
