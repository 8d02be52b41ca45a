// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"

int parse_duration(const char *s, long long *ms)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || v < 0)
		return -EINVAL;
	if (!*end || !strcmp(end, "s"))
		*ms = (long long)(v * 1000);
	else if (!strcmp(end, "ms"))
		*ms = (long long)v;
	else if (!strcmp(end, "m"))
		*ms = (long long)(v * 60000);
	else if (!strcmp(end, "h"))
		*ms = (long long)(v * 3600000);
	else
		return -EINVAL;
	return 0;
}
