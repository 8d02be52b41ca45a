// SPDX-License-Identifier: MIT
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "errmsg.h"

int errmsg_set(struct errmsg *em, int err, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	if (!em)
		return err;
	va_start(ap, fmt);
	vsnprintf(em->text, sizeof(em->text), fmt, ap);
	va_end(ap);
	n = strlen(em->text);
	if (err < 0 && n + 3 < sizeof(em->text))
		snprintf(em->text + n, sizeof(em->text) - n, ": %s", strerror(-err));
	return err;
}
