/* SPDX-License-Identifier: MIT */
/* Durations on the command line: exec --timeout and --kill-after, daemon --stop-grace. */
#ifndef BPFBOX_DURATION_H
#define BPFBOX_DURATION_H

/* "30s", "5m", "1500ms", "2h" or plain seconds; -EINVAL for anything else. */
int parse_duration(const char *s, long long *ms);

#endif
