/* SPDX-License-Identifier: MIT */
/*
 * What a new administrator's policy would change for the sandboxes running
 * under the daemon, before it is applied: each running sandbox is asked over
 * its control socket (run_control.h's preview, nothing changed) and answers
 * with the grants it would lose and gain under it, or that it would be
 * stopped. bpfbox policy apply prints it with the grant changes.
 */
#ifndef BPFBOX_CLI_CEILING_PREVIEW_H
#define BPFBOX_CLI_CEILING_PREVIEW_H

#include <stddef.h>
#include <stdio.h>

/*
 * One paragraph on out for the sandboxes running under the administrator's
 * file target (its new text, len bytes), or nothing when none does; the
 * count of those listed.
 */
size_t ceiling_preview_print(const char *target, const char *text, size_t len, FILE *out);

#endif
