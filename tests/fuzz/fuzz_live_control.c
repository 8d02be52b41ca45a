// SPDX-License-Identifier: MIT
/*
 * What arrives on exec --control-fd (cli/exec_live.c): any bytes split into
 * lines (none holds a newline or runs past LIVE_LINE_MAX), each line that is
 * a JSON object compared with the document in force (a document always
 * agrees with itself; an error always names a field) and edited as
 * --allow-domain would, the edit keeping it an object.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli/exec_live.h"
#include "fuzz.h"

static void check_line(const char *line)
{
	cJSON *doc = cJSON_Parse(line), *copy;
	struct errmsg em = { { 0 } };
	int r;

	if (!doc)
		return;
	FUZZ_CHECK(live_doc_check_fixed(doc, doc, &em) == 0);
	copy = cJSON_Duplicate(doc, 1);
	if (copy && cJSON_IsObject(copy)) {
		r = live_doc_edit_domain(copy, "example.org", true, &em);
		FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ENOMEM);
		r = live_doc_check_fixed(doc, copy, &em);
		FUZZ_CHECK(r == 0 || (r == -EINVAL && em.text[0]));
	}
	cJSON_Delete(copy);
	cJSON_Delete(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct live_lines l;
	int p[2], r;
	char *line;

	/* One pipe's worth, written whole before reading: the reader never waits. */
	if (size > 60000 || pipe(p))
		return 0;
	if (write(p[1], data, size) != (ssize_t)size || live_lines_init(&l)) {
		close(p[0]);
		close(p[1]);
		return 0;
	}
	close(p[1]);
	while (!l.eof) {
		if (live_lines_fill(&l, p[0]) < 0)
			break;
		while ((r = live_lines_next(&l, &line)) != 0) {
			if (r < 0) {
				FUZZ_CHECK(r == -E2BIG);
				continue;
			}
			FUZZ_CHECK(!strchr(line, '\n') && strlen(line) <= LIVE_LINE_MAX);
			if (!live_line_blank(line))
				check_line(line);
		}
	}
	live_lines_free(&l);
	close(p[0]);
	return 0;
}
