// SPDX-License-Identifier: MIT
/*
 * The log's string escaper: any bytes (kernel paths, argv, hostile file
 * names) become valid UTF-8 of bounded length, and the terminal form of that
 * carries no control byte.
 */
#include <string.h>

#include "fuzz.h"
#include "log/log_utf8.h"

/* RFC 3629 validity, written independently of log_utf8.c. */
static int valid_utf8(const unsigned char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned cp, need;

		if (s[i] < 0x80) {
			i++;
			continue;
		}
		if ((s[i] & 0xe0) == 0xc0) {
			need = 1;
			cp = s[i] & 0x1f;
		} else if ((s[i] & 0xf0) == 0xe0) {
			need = 2;
			cp = s[i] & 0x0f;
		} else if ((s[i] & 0xf8) == 0xf0) {
			need = 3;
			cp = s[i] & 0x07;
		} else {
			return 0;
		}
		if (i + need >= n)
			return 0;
		for (unsigned k = 1; k <= need; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if ((need == 1 && cp < 0x80) || (need == 2 && cp < 0x800) ||
		    (need == 3 && cp < 0x10000) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += need + 1;
	}
	return 1;
}

/* No C0/C1 control, DEL, or bidi override/isolate/mark left for a terminal. */
static int terminal_safe(const unsigned char *s)
{
	for (; *s; s++) {
		if (*s < 0x20 || *s == 0x7f)
			return 0;
		if (s[0] == 0xc2 && s[1] >= 0x80 && s[1] <= 0x9f)
			return 0;
		if (s[0] == 0xe2 && s[1] == 0x80 &&
		    (s[2] == 0x8e || s[2] == 0x8f || (s[2] >= 0xaa && s[2] <= 0xae)))
			return 0;
		if (s[0] == 0xe2 && s[1] == 0x81 && s[2] >= 0xa6 && s[2] <= 0xa9)
			return 0;
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	bool cut = false;
	char *clean, *esc;
	size_t n;

	clean = log_utf8_sanitize((const char *)data, size, &cut);
	if (!clean)
		return 0;
	n = strlen(clean);
	FUZZ_CHECK(valid_utf8((const unsigned char *)clean, n));
	FUZZ_CHECK(n <= LOG_VALUE_MAX);
	/* Nothing cut: every input byte before a NUL is accounted for. */
	if (!cut && !memchr(data, 0, size))
		FUZZ_CHECK(n >= size);

	esc = log_text_escape(clean);
	FUZZ_CHECK(esc != NULL);
	FUZZ_CHECK(terminal_safe((const unsigned char *)esc));
	FUZZ_CHECK(valid_utf8((const unsigned char *)esc, strlen(esc)));
	free(esc);
	free(clean);

	/* The escaper must stay safe on unsanitised input too. */
	if (size && !data[size - 1]) {
		esc = log_text_escape((const char *)data);
		FUZZ_CHECK(esc != NULL);
		FUZZ_CHECK(terminal_safe((const unsigned char *)esc));
		free(esc);
	}
	return 0;
}
