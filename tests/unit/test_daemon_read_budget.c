// SPDX-License-Identifier: MIT
/* The daemon's per-uid read budget, and the wire reader that honours it. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/read_budget.h"
#include "daemon/wire.h"

/* A new uid may send one request of the largest size at once; then RATE a second. */
static void test_burst_then_rate(void **state)
{
	struct read_budget b = { 0 };

	(void)state;
	assert_int_equal(read_budget_left(&b, 1000, 5000), READ_BUDGET_BURST);
	read_budget_spend(&b, 1000, READ_BUDGET_BURST);
	assert_int_equal(read_budget_left(&b, 1000, 5000), 0);
	/* Half a second later: half the rate. */
	assert_int_equal(read_budget_left(&b, 1000, 5500), READ_BUDGET_RATE / 2);
	read_budget_spend(&b, 1000, 100);
	assert_int_equal(read_budget_left(&b, 1000, 5500), READ_BUDGET_RATE / 2 - 100);
	/* Spending more than is left leaves nothing, never a wrap. */
	read_budget_spend(&b, 1000, READ_BUDGET_BURST);
	assert_int_equal(read_budget_left(&b, 1000, 5500), 0);
	/* A long pause refills to the burst, no further. */
	assert_int_equal(read_budget_left(&b, 1000, 5500 + 3600 * 1000), READ_BUDGET_BURST);
	/* A clock that goes back adds nothing. */
	read_budget_spend(&b, 1000, READ_BUDGET_BURST);
	assert_int_equal(read_budget_left(&b, 1000, 1000), 0);
}

/* One uid's spending is not another's. */
static void test_uids_apart(void **state)
{
	struct read_budget b = { 0 };

	(void)state;
	assert_int_equal(read_budget_left(&b, 1001, 0), READ_BUDGET_BURST);
	read_budget_spend(&b, 1001, READ_BUDGET_BURST);
	assert_int_equal(read_budget_left(&b, 1002, 0), READ_BUDGET_BURST);
	assert_int_equal(read_budget_left(&b, 1001, 0), 0);
}

/* A full table: a new uid takes the fullest slot; an emptied uid keeps its own. */
static void test_table_full(void **state)
{
	struct read_budget b = { 0 };

	(void)state;
	for (uid_t u = 0; u < READ_BUDGET_UIDS; u++) {
		assert_int_equal(read_budget_left(&b, 2000 + u, 0), READ_BUDGET_BURST);
		read_budget_spend(&b, 2000 + u, u == 7 ? 1 : READ_BUDGET_BURST);
	}
	/* uid 2007 has the fullest bucket: the newcomer takes its slot, every emptied one stays. */
	assert_int_equal(read_budget_left(&b, 9999, 0), READ_BUDGET_BURST);
	for (uid_t u = 0; u < READ_BUDGET_UIDS; u++)
		if (u != 7)
			assert_int_equal(read_budget_left(&b, 2000 + u, 0), 0);
}

/* The reader stops at its allowance and goes on where it stopped. */
static void test_reader_max(void **state)
{
	struct wire_reader rd;
	char body[3000];
	int sv[2], fds[WIRE_MAX_FDS];
	uint32_t len;
	size_t n_fds;
	char *got;

	(void)state;
	memset(body, 'a', sizeof(body) - 1);
	body[0] = '"';
	body[sizeof(body) - 2] = '"';
	body[sizeof(body) - 1] = 0;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(wire_send(sv[0], body, NULL, 0), 0);
	wire_reader_init(&rd, WIRE_MAX_REQUEST);
	assert_int_equal(wire_reader_read_max(&rd, sv[1], 5), 0);
	assert_int_equal(rd.have, 5);
	assert_int_equal(wire_reader_read_max(&rd, sv[1], 1000), 0);
	assert_int_equal(rd.have, 1005);
	assert_int_equal(wire_reader_read_max(&rd, sv[1], 0), 0);
	assert_int_equal(rd.have, 1005);
	assert_int_equal(wire_reader_read_max(&rd, sv[1], 100000), 1);
	assert_int_equal(rd.have, WIRE_HEADER_LEN + strlen(body));
	got = wire_reader_take(&rd, &len, fds, &n_fds);
	assert_string_equal(got, body);
	free(got);
	wire_reader_release(&rd);
	close(sv[0]);
	close(sv[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_burst_then_rate),
		cmocka_unit_test(test_uids_apart),
		cmocka_unit_test(test_table_full),
		cmocka_unit_test(test_reader_max),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
