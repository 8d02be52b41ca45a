/* SPDX-License-Identifier: MIT */
/* The human-readable form of an event, for a terminal. */
#ifndef BPFBOX_LOG_TEXT_H
#define BPFBOX_LOG_TEXT_H

#include "log_level.h"

struct cJSON;

/* The human line of an event, without newline. */
char *log_text_render(struct cJSON *root, enum log_level level);

#endif
