/* SPDX-License-Identifier: MIT */
/*
 * The descriptor limit (RLIMIT_NOFILE). A supervisor holds several
 * descriptors per proxied connection, so it runs with its soft limit raised
 * to the hard one; the command gets back the soft limit bpfbox was started
 * with, as it would have without bpfbox.
 */
#ifndef BPFBOX_NOFILE_H
#define BPFBOX_NOFILE_H

#include "lib/errmsg.h"

/* The least soft limit a sandbox starts with: its maps, listeners and some connections. */
#define NOFILE_MIN 256

/*
 * Raises the soft limit to the hard one, the first time keeping the limit
 * found (a daemon's worker keeps its daemon's). Fails with -EMFILE, em
 * saying how to fix it, when even the hard limit is below NOFILE_MIN.
 */
int nofile_raise(struct errmsg *em);
/* The soft limit found before the first nofile_raise, set again: the command's, before exec. */
void nofile_restore(void);
/* The soft limit in force. */
unsigned long nofile_soft(void);

#endif
