/* test_out.c: the output layer: column choice, formats, unknown values, sorting, totals. */
#include "unit.h"

#include "render/out.h"

enum { C_NAME, C_SIZE, C_PAGES, C_PERCENT, C_COUNT };

static const struct out_column columns[C_COUNT] = {
	[C_NAME] = { "name", "Name", NULL, OUT_TEXT, true, "a name" },
	[C_SIZE] = { "size", "Size (bytes)", "Size", OUT_BYTES, true, "a size" },
	[C_PAGES] = { "pages", "Pages", NULL, OUT_COUNT, false, "a count" },
	[C_PERCENT] = { "percent", "Percent", NULL, OUT_PERCENT, true, "a share", .total_ratio = "pages/size" },
};

/* Prints the table into a string; the caller frees it. */
static char *print(struct out_table *table)
{
	char *text = NULL;
	size_t len = 0;
	FILE *stream = open_memstream(&text, &len);

	assert_non_null(stream);
	assert_int_equal(out_table_print(table, stream), 0);
	fclose(stream);
	return text;
}

static struct out_table *sample(const struct out_options *opts)
{
	struct out_table *table = out_table_new(columns, C_COUNT, opts, "rows");
	struct out_row *row;

	assert_non_null(table);
	row = out_row_add(table);
	out_set_text(row, C_NAME, "b, \"quoted\"");
	out_set_count(row, C_SIZE, 1536);
	out_set_count(row, C_PAGES, 7);
	out_set_percent(row, C_PERCENT, 12.3456);
	row = out_row_add(table);
	out_set_text(row, C_NAME, "a");
	out_set_count(row, C_SIZE, 10);
	/* pages and percent unknown */
	row = out_row_add(table);
	out_set_text(row, C_NAME, "c\nd");
	out_set_count(row, C_SIZE, 1536);
	out_set_count(row, C_PAGES, 9);
	out_set_percent(row, C_PERCENT, 100);
	return table;
}

static void test_csv(void **state)
{
	struct out_options opts = { .format = OUT_CSV, .columns = "name,size,pages,percent" };
	struct out_table *table = sample(&opts);
	char *text = print(table);
	(void)state;

	assert_string_equal(text, "name,size,pages,percent\n"
				  "\"b, \"\"quoted\"\"\",1536,7,12.346\n"
				  "a,10,,\n"
				  "\"c\nd\",1536,9,100.000\n");
	free(text);
	out_table_free(table);

	/* What would move a terminal's cursor back or start a sequence is written as \xNN; bad UTF-8 too. */
	table = out_table_new(columns, C_COUNT, &opts, "rows");
	out_set_text(out_row_add(table), C_NAME, "a\rb\x1b[31mc\x07\xff\td");
	text = print(table);
	assert_string_equal(text, "name,size,pages,percent\n"
				  "a\\x0db\\x1b[31mc\\x07\\xff\td,,,\n");
	free(text);
	out_table_free(table);
}

static void test_default_and_added_columns(void **state)
{
	struct out_options opts = { .format = OUT_CSV, .no_header = false };
	struct out_table *table = sample(&opts);
	char *text = print(table);
	(void)state;

	assert_true(!strncmp(text, "name,size,percent\n", 18));
	free(text);
	out_table_free(table);

	opts.columns = "+pages";
	table = sample(&opts);
	assert_true(out_column_shown(table, C_PAGES));
	text = print(table);
	assert_true(!strncmp(text, "name,size,percent,pages\n", 24));
	free(text);
	out_table_free(table);
}

static void test_unknown_column(void **state)
{
	struct out_options opts = { .columns = "name,nosuch" };
	(void)state;

	assert_null(out_table_new(columns, C_COUNT, &opts, "rows"));
	opts.columns = ",";
	assert_null(out_table_new(columns, C_COUNT, &opts, "rows")); /* nothing to show */
}

static void test_table(void **state)
{
	struct out_options opts = { .format = OUT_TABLE, .columns = "name,size,pages" };
	struct out_table *table = sample(&opts);
	char *text = print(table);
	(void)state;

	/* Numbers right-aligned, unknown as '-', control characters escaped. */
	assert_string_equal(text, "Name        Size (bytes) Pages\n"
				  "b, \"quoted\"         1536     7\n"
				  "a                     10     -\n"
				  "c\\x0ad              1536     9\n");
	free(text);
	out_table_free(table);
}

static void test_human(void **state)
{
	struct out_options opts = { .format = OUT_TABLE, .columns = "size", .human = true, .no_header = true };
	struct out_table *table = sample(&opts);
	char *text = print(table);
	(void)state;

	assert_string_equal(text, "1.5K\n 10B\n1.5K\n");
	free(text);
	out_table_free(table);
}

static void test_json(void **state)
{
	struct out_options opts = { .format = OUT_JSON, .columns = "name,pages,percent" };
	struct out_table *table = sample(&opts);
	char *text;
	(void)state;

	out_table_total(table, C_NAME, "TOTAL");
	text = print(table);
	assert_non_null(strstr(text, "\"rows\": ["));
	assert_non_null(strstr(text, "\"name\": \"b, \\\"quoted\\\"\""));
	assert_non_null(strstr(text, "\"name\": \"c\\nd\""));
	assert_non_null(strstr(text, "\"pages\": null"));
	assert_non_null(strstr(text, "\"percent\": 12.346"));
	/* One row does not know its pages: neither does the total, nor the ratio built on them. */
	assert_non_null(strstr(text, "\"total\": { \"name\": \"TOTAL\", \"pages\": null, \"percent\": null }"));
	assert_null(strstr(text, "size")); /* not chosen */
	free(text);
	out_table_free(table);
}

static void test_total(void **state)
{
	struct out_options opts = { .format = OUT_CSV, .columns = "name,size,pages,percent", .no_header = true };
	struct out_table *table = out_table_new(columns, C_COUNT, &opts, "rows");
	char *text;
	(void)state;

	out_table_total(table, C_NAME, "TOTAL");
	for (int i = 1; i <= 3; i++) {
		struct out_row *row = out_row_add(table);
		out_set_text(row, C_NAME, "x");
		out_set_count(row, C_SIZE, 100u * (unsigned)i);
		out_set_count(row, C_PAGES, (unsigned)i);
		out_set_percent(row, C_PERCENT, 1);
	}
	text = print(table);
	/* Sums, and the percentage from the sums (6 of 600), not a sum of percentages. */
	assert_string_equal(text, "x,100,1,1.000\nx,200,2,1.000\nx,300,3,1.000\nTOTAL,600,6,1.000\n");
	free(text);
	out_table_free(table);

	/* Only the total: rows are added up and dropped as they come. */
	table = out_table_new(columns, C_COUNT, &opts, "rows");
	out_table_summary_only(table, C_NAME, "ALL");
	for (int i = 0; i < 1000; i++) {
		struct out_row *row = out_row_add(table);
		out_set_count(row, C_SIZE, 50);
		out_set_count(row, C_PAGES, 1);
		assert_true(out_table_rows(table) <= 1);
	}
	text = print(table);
	assert_string_equal(text, "ALL,50000,1000,2.000\n");
	free(text);
	out_table_free(table);
}

static char *sorted(const char *column, bool reverse)
{
	struct out_options opts = { .format = OUT_CSV, .columns = "name", .no_header = true };
	struct out_table *table = sample(&opts);
	char *text;

	assert_int_equal(out_table_sort(table, column, reverse), 0);
	text = print(table);
	out_table_free(table);
	return text;
}

static void test_sort(void **state)
{
	char *text;
	(void)state;

	text = sorted("pages", false); /* largest first, unknown last */
	assert_string_equal(text, "\"c\nd\"\n\"b, \"\"quoted\"\"\"\na\n");
	free(text);
	text = sorted("pages", true); /* reversed, unknown still last */
	assert_string_equal(text, "\"b, \"\"quoted\"\"\"\n\"c\nd\"\na\n");
	free(text);
	text = sorted("size", false); /* ties keep the order rows came in */
	assert_string_equal(text, "\"b, \"\"quoted\"\"\"\n\"c\nd\"\na\n");
	free(text);
	text = sorted("NAME", false); /* A to Z; case of the column name ignored */
	assert_string_equal(text, "a\n\"b, \"\"quoted\"\"\"\n\"c\nd\"\n");
	free(text);

	struct out_options opts = {0};
	struct out_table *table = sample(&opts);
	assert_int_equal(out_table_sort(table, "nosuch", false), -1);
	out_table_free(table);
}

static void test_set_unknown(void **state)
{
	struct out_options opts = { .format = OUT_CSV, .columns = "name,pages", .no_header = true };
	struct out_table *table = out_table_new(columns, C_COUNT, &opts, "rows");
	struct out_row *row = out_row_add(table);
	char *text;
	(void)state;

	out_set_text(row, C_NAME, "x");
	out_set_text(row, C_NAME, "y"); /* replaced, not leaked */
	out_set_count(row, C_PAGES, 3);
	out_set_unknown(row, C_PAGES);
	text = print(table);
	assert_string_equal(text, "y,\n");
	assert_int_equal(out_table_rows(table), 1);
	free(text);
	out_table_free(table);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_csv),
		cmocka_unit_test(test_default_and_added_columns),
		cmocka_unit_test(test_unknown_column),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_human),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_total),
		cmocka_unit_test(test_sort),
		cmocka_unit_test(test_set_unknown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
