/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_record.c: typed records: units in keys, unknowns as null, escaping, reals, nesting, write errors. */
#include "unit.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render/out.h"
#include "render/record.h"

static char *write_record(struct out_record *r, enum out_record_style style)
{
	char *text = NULL;
	size_t len = 0;
	FILE *stream = open_memstream(&text, &len);

	assert_non_null(stream);
	assert_int_equal(out_record_write(r, stream, style), 0);
	fclose(stream);
	return text;
}

static void test_fields(void **state)
{
	(void)state;
	struct out_record *r = out_record_new();
	char *text;

	out_rec_ns(r, "time_ns", 1700000000123456789ULL);
	out_rec_bytes_if(r, "cached_bytes", 7, false);
	out_rec_count(r, "hits", 18446744073709551615ULL);
	out_rec_count_if(r, "misses", 3, true);
	out_rec_int(r, "pid", -1);
	out_rec_bool(r, "since_boot", true);
	out_rec_real(r, "hit_ratio", 0.25);
	out_rec_real(r, "whole", 12.0);
	out_rec_real(r, "none", NAN);
	out_rec_fixed(r, "mb", 1.5, 2);
	out_rec_text(r, "name", NULL);
	text = write_record(r, OUT_RECORD_LINE);
	assert_string_equal(text, "{\"time_ns\":1700000000123456789,\"cached_bytes\":null,"
				  "\"hits\":18446744073709551615,\"misses\":3,\"pid\":-1,\"since_boot\":true,"
				  "\"hit_ratio\":0.25,\"whole\":12,\"none\":null,\"mb\":1.50,\"name\":null}\n");
	free(text);
	out_record_free(r);
}

/* A name that is not UTF-8, with a backslash and a control character, reads back exactly. */
static void test_escape(void **state)
{
	(void)state;
	struct out_record *r = out_record_new();
	struct out_list *list = out_rec_list(r, "names");
	char *text;

	out_list_text(list, "a\\b\xff\x1b[31mRED/ok");
	out_list_count(list, 2);
	out_list_real(list, INFINITY);
	text = write_record(r, OUT_RECORD_LINE);
	assert_string_equal(text, "{\"names\":[\"a\\\\x5cb\\\\xff\\u001b[31mRED/ok\",2,null]}\n");
	assert_int_equal(out_list_length(list), 3);
	free(text);
	out_record_free(r);
}

static void test_nesting_and_table(void **state)
{
	(void)state;
	static const struct out_column columns[] = {
		{ "op", "OP", NULL, OUT_TEXT, true, "an op", .total_ratio = NULL },
		{ "count", "COUNT", NULL, OUT_COUNT, true, "a count", .total_ratio = NULL },
	};
	struct out_options opts = { .format = OUT_JSON };
	struct out_table *table = out_table_new(columns, 2, &opts, "ops");
	struct out_record *r = out_record_new(), *child;
	struct out_row *row;
	char *text;

	row = out_row_add(table);
	out_set_text(row, 0, "read");
	out_set_count(row, 1, 4);
	out_table_total(table, 0, "TOTAL");
	child = out_rec_object(r, "service");
	out_rec_text(child, "name", "s");
	out_rec_table(child, "ops", table, "total");
	out_list_object(out_rec_list(r, "empty"));
	text = write_record(r, OUT_RECORD_SPACED);
	assert_string_equal(text, "{ \"service\": { \"name\": \"s\", \"ops\": [ { \"op\": \"read\", \"count\": 4 } ], "
				  "\"total\": { \"op\": \"TOTAL\", \"count\": 4 } }, \"empty\": [ { } ] }\n");
	free(text);
	out_table_free(table);
	out_record_free(r);
}

/* A unit setter given a key that does not say its unit still writes it (and says so on stderr). */
static void test_wrong_unit_still_written(void **state)
{
	(void)state;
	struct out_record *r = out_record_new();
	char *text;

	out_rec_ns(r, "latency", 5);
	out_rec_bytes(r, "bytes", 6);
	text = write_record(r, OUT_RECORD_LINE);
	assert_string_equal(text, "{\"latency\":5,\"bytes\":6}\n");
	free(text);
	out_record_free(r);
}

static void test_write_error(void **state)
{
	(void)state;
	struct out_record *r = out_record_new();
	FILE *full = fopen("/dev/full", "w");

	assert_non_null(full);
	setvbuf(full, NULL, _IONBF, 0);
	out_rec_count(r, "n", 1);
	assert_int_equal(out_record_write(r, full, OUT_RECORD_LINE), -ENOSPC);
	fclose(full);
	out_record_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_nesting_and_table),
		cmocka_unit_test(test_wrong_unit_still_written),
		cmocka_unit_test(test_write_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
