/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_out.c: the output layer: column choice, formats, unknown values, sorting, totals; the lines of a monitor. */
#include "unit.h"

#include <locale.h>
#include <time.h>

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

/* The names of the table below: C1 (CSI, OSC), a right-to-left override, an isolate, CJK, é. */
static struct out_table *hostile_names(const struct out_options *opts)
{
	static const char *const names[] = { "c1\xc2\x9b" "31m", "osc\xc2\x9d" "0;t", "evil\xe2\x80\xaetxt",
					     "iso\xe2\x81\xa6x", "\xe4\xb8\xad\xe6\x96\x87", "\xc3\xa9t\xc3\xa9" };
	struct out_table *table = out_table_new(columns, C_COUNT, opts, "rows");

	assert_non_null(table);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct out_row *row = out_row_add(table);

		out_set_text(row, C_NAME, names[i]);
		out_set_count(row, C_SIZE, i);
	}
	return table;
}

/*
 * Names with C1 and bidirectional controls: each byte as \xNN in a table and CSV, as bytes
 * below 0x20 are; a JSON escape in JSON (the same string to a parser). The table's columns
 * stay aligned: an escape takes its four columns, a CJK character two.
 */
static void test_hostile_names(void **state)
{
	struct out_options opts = { .format = OUT_TABLE, .columns = "name,size" };
	struct out_table *table;
	char *text;
	(void)state;

	table = hostile_names(&opts);
	text = print(table);
	assert_string_equal(text, "Name                Size (bytes)\n"
				  "c1\\xc2\\x9b31m                  0\n"
				  "osc\\xc2\\x9d0;t                 1\n"
				  "evil\\xe2\\x80\\xaetxt            2\n"
				  "iso\\xe2\\x81\\xa6x               3\n"
				  "\xe4\xb8\xad\xe6\x96\x87                           4\n"
				  "\xc3\xa9t\xc3\xa9                            5\n");
	free(text);
	out_table_free(table);

	opts.format = OUT_CSV;
	table = hostile_names(&opts);
	text = print(table);
	assert_string_equal(text, "name,size\n"
				  "c1\\xc2\\x9b31m,0\n"
				  "osc\\xc2\\x9d0;t,1\n"
				  "evil\\xe2\\x80\\xaetxt,2\n"
				  "iso\\xe2\\x81\\xa6x,3\n"
				  "\xe4\xb8\xad\xe6\x96\x87,4\n"
				  "\xc3\xa9t\xc3\xa9,5\n");
	free(text);
	out_table_free(table);

	opts.format = OUT_JSON;
	table = hostile_names(&opts);
	text = print(table);
	assert_string_equal(text, "{\"rows\": [\n"
				  "{ \"name\": \"c1\\u009b31m\", \"size\": 0 },\n"
				  "{ \"name\": \"osc\\u009d0;t\", \"size\": 1 },\n"
				  "{ \"name\": \"evil\\u202etxt\", \"size\": 2 },\n"
				  "{ \"name\": \"iso\\u2066x\", \"size\": 3 },\n"
				  "{ \"name\": \"\xe4\xb8\xad\xe6\x96\x87\", \"size\": 4 },\n"
				  "{ \"name\": \"\xc3\xa9t\xc3\xa9\", \"size\": 5 }\n"
				  "]}\n");
	free(text);
	out_table_free(table);
}

/* A locale that is not UTF-8: a terminal that may be 8-bit, where c3 a9 is two characters. */
static void test_names_in_c_locale(void **state)
{
	struct out_options opts = { .format = OUT_TABLE, .columns = "name,size" };
	struct out_table *table;
	char *text, *json;
	(void)state;

	assert_non_null(setlocale(LC_CTYPE, "C"));
	table = hostile_names(&opts);
	text = print(table);
	out_table_free(table);
	/* JSON: the same strings, every character beyond ASCII as an escape. */
	opts.format = OUT_JSON;
	opts.columns = "name";
	table = hostile_names(&opts);
	json = print(table);
	out_table_free(table);
	assert_non_null(setlocale(LC_CTYPE, "C.UTF-8")); /* before a failure can leave it for the next tests */
	assert_string_equal(text, "Name                     Size (bytes)\n"
				  "c1\\xc2\\x9b31m                       0\n"
				  "osc\\xc2\\x9d0;t                      1\n"
				  "evil\\xe2\\x80\\xaetxt                 2\n"
				  "iso\\xe2\\x81\\xa6x                    3\n"
				  "\\xe4\\xb8\\xad\\xe6\\x96\\x87            4\n"
				  "\\xc3\\xa9t\\xc3\\xa9                   5\n");
	free(text);
	assert_non_null(strstr(json, "{ \"name\": \"\\u4e2d\\u6587\" }"));
	assert_non_null(strstr(json, "{ \"name\": \"\\u00e9t\\u00e9\" }"));
	free(json);
}

/* The JSON writer alone: hidden characters as JSON escapes (a tag as a surrogate pair), the rest as it is. */
static void test_json_write(void **state)
{
	static const char json[] =
	    "{\"a\": \"x\x7f\xc2\x85\xe2\x80\x8f\xf3\xa0\x81\x81\xc3\xa9\xf0\x9f\x98\x80\\u001b\"}";
	char *text = NULL;
	size_t len = 0;
	FILE *stream = open_memstream(&text, &len);
	(void)state;

	assert_non_null(stream);
	out_json_write(stream, json, strlen(json));
	out_json_write(stream, "\"\xc2\x9b\"", 2); /* cut short by len: a byte that is not UTF-8 */
	fclose(stream);
	assert_string_equal(text, "{\"a\": \"x\\u007f\\u0085\\u200f\\udb40\\udc41\xc3\xa9\xf0\x9f\x98\x80\\u001b\"}"
				  "\"\\ufffd");
	free(text);
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

/* ---- Lines: a monitor's rows, written as they come ----------------------------------------- */

enum { L_TIME, L_TIME_NS, L_MODE, L_NAME, L_PATH, L_HITS, L_RATIO, L_CACHED, L_READS, L_COUNT };

static const struct out_column line_columns[L_COUNT] = {
	[L_TIME] = { "time", "TIME", NULL, OUT_CLOCK, true, "time of day", .width = -8, .where = OUT_TABLE_ONLY },
	[L_TIME_NS] = { "time_ns", "TIME", NULL, OUT_CLOCK, true, "when", .where = OUT_GROUP },
	[L_MODE] = { "mode", "MODE", NULL, OUT_TEXT, true, "how", .where = OUT_GROUP },
	[L_NAME] = { "name", "CMD", NULL, OUT_TEXT, true, "a name", .width = -6 },
	[L_PATH] = { "path", "PATH", NULL, OUT_TEXT, true, "a path: last in a table" },
	[L_HITS] = { "hits", "HITS", NULL, OUT_COUNT, true, "a count", .width = 6 },
	[L_RATIO] = { "hit_ratio", "HIT%", NULL, OUT_RATIO, true, "a ratio", .decimals = 1, .width = 7 },
	[L_CACHED] = { "cached_bytes", "CACHED_MB", NULL, OUT_MIB, true, "bytes", .width = 10 },
	[L_READS] = { "reads", "READS", NULL, OUT_COUNT, true, "for programs only", .where = OUT_DATA_ONLY },
};

/* A stream into a string, and the lines table writing to it. */
struct lines {
	char *text;
	size_t len;
	FILE *stream;
	struct out_table *table;
};

static void lines_open(struct lines *l, enum out_format format, bool no_header)
{
	struct out_options opts = { .format = format, .no_header = no_header };

	setenv("TZ", "UTC", 1);
	tzset();
	l->text = NULL;
	l->stream = open_memstream(&l->text, &l->len);
	assert_non_null(l->stream);
	l->table = out_table_new(line_columns, L_COUNT, &opts, "rows");
	assert_non_null(l->table);
	out_table_lines(l->table, l->stream);
}

/* What was written so far. */
static const char *lines_text(struct lines *l)
{
	fflush(l->stream);
	return l->text ? l->text : "";
}

static void lines_close(struct lines *l)
{
	out_table_free(l->table);
	fclose(l->stream);
	free(l->text);
}

/* Two rows: every kind, an unknown ratio, a long name with an escape and a letter of two bytes. */
static void two_rows(struct out_table *table)
{
	struct out_row *row = out_row_add(table);

	out_set_count(row, L_TIME, 3723000000000ull); /* 01:02:03 UTC */
	out_set_count(row, L_TIME_NS, 3723000000000ull);
	out_set_text(row, L_MODE, "ebpf");
	out_set_text(row, L_NAME, "cat");
	out_set_text(row, L_PATH, "/a b,c");
	out_set_count(row, L_HITS, 183);
	out_set_ratio(row, L_RATIO, 180, 183);
	out_set_count(row, L_CACHED, 3565158); /* 3.4 MiB */
	out_set_count(row, L_READS, 7);
	row = out_row_add(table);
	out_set_count(row, L_TIME, 3724000000000ull);
	out_set_count(row, L_TIME_NS, 3724000000000ull);
	out_set_text(row, L_MODE, "ebpf");
	out_set_text(row, L_NAME, "h\xc3\xa9\x1b[31mlongname");
	out_set_text(row, L_PATH, "/x");
	out_set_count(row, L_HITS, 1234567);
	out_set_ratio(row, L_RATIO, 0, 0); /* nothing to hit: unknown */
	out_set_count(row, L_CACHED, 0);
	out_set_count(row, L_READS, 0);
}

static void test_lines_table(void **state)
{
	struct lines l;
	(void)state;

	lines_open(&l, OUT_TABLE, false);
	out_table_flush(l.table); /* the header before the first row */
	assert_string_equal(lines_text(&l), "TIME     CMD      HITS    HIT%  CACHED_MB  PATH\n");
	two_rows(l.table);
	out_table_flush(l.table);
	/*
	 * Fixed widths, one space apart: text left-aligned (negative width) and cut to it in
	 * characters, escaped, its last character a '+' when cut; numbers right-aligned and never
	 * cut; a ratio as a percentage
	 * with '%'; bytes as whole MiB; the column of width 0 last, after two spaces; the
	 * column for programs left out.
	 */
	assert_string_equal(lines_text(&l), "TIME     CMD      HITS    HIT%  CACHED_MB  PATH\n"
					    "01:02:03 cat       183   98.4%          3  /a b,c\n"
					    "01:02:04 h\xc3\xa9+    1234567       -          0  /x\n");
	lines_close(&l);

	/* --no-header: the rows only. */
	lines_open(&l, OUT_TABLE, true);
	out_table_flush(l.table);
	two_rows(l.table);
	assert_int_equal(out_table_print(l.table, l.stream), 0);
	assert_true(!strncmp(lines_text(&l), "01:02:03 cat", 12));
	lines_close(&l);
}

/* On a full screen (fit_numbers) a figure wider than its column loses decimals; piped, never. */
static void test_lines_fit_numbers(void **state)
{
	static const struct out_column usec[] = { { "max_ns", "MAX_us", NULL, OUT_USEC, true, "longest", .width = 8 } };
	char *text = NULL;
	size_t len;
	(void)state;

	for (int fit = 0; fit < 2; fit++) {
		struct out_options opts = { .format = OUT_TABLE, .fit_numbers = fit };
		FILE *stream = open_memstream(&text, &len);
		struct out_table *table = out_table_new(usec, 1, &opts, "rows");

		out_table_lines(table, stream);
		out_set_count(out_row_add(table), 0, 289666830); /* 289666.83 us: 9 characters */
		out_set_count(out_row_add(table), 0, 12345678912ull); /* 12345678.91 us: no decimal left, still 8 */
		out_set_count(out_row_add(table), 0, 36322310);       /* fits: as it is */
		out_table_flush(table);
		fclose(stream);
		assert_string_equal(text, fit ? "  MAX_us\n289666.8\n12345679\n36322.31\n"
					      : "  MAX_us\n289666.83\n12345678.91\n36322.31\n");
		out_table_free(table);
		free(text);
		text = NULL;
	}
}

static void test_lines_csv_json(void **state)
{
	struct lines l;
	(void)state;

	/* CSV: the header once, the columns for programs, each value as JSON has it. */
	lines_open(&l, OUT_CSV, false);
	two_rows(l.table);
	out_table_flush(l.table);
	assert_string_equal(lines_text(&l),
			    "time_ns,mode,name,path,hits,hit_ratio,cached_bytes,reads\n"
			    "3723000000000,ebpf,cat,\"/a b,c\",183,0.983607,3565158,7\n"
			    "3724000000000,ebpf,h\xc3\xa9\\x1b[31mlongname,/x,1234567,,0,0\n");
	lines_close(&l);

	/* JSON: one object a line, the same keys in the same order, the same values. */
	lines_open(&l, OUT_JSON, false);
	out_table_flush(l.table); /* no header in JSON */
	assert_string_equal(lines_text(&l), "");
	two_rows(l.table);
	out_table_flush(l.table);
	assert_string_equal(lines_text(&l),
			    "{\"time_ns\":3723000000000,\"mode\":\"ebpf\",\"name\":\"cat\",\"path\":\"/a b,c\","
			    "\"hits\":183,\"hit_ratio\":0.983607,\"cached_bytes\":3565158,\"reads\":7}\n"
			    "{\"time_ns\":3724000000000,\"mode\":\"ebpf\",\"name\":\"h\xc3\xa9\\u001b[31mlongname\","
			    "\"path\":\"/x\",\"hits\":1234567,\"hit_ratio\":null,\"cached_bytes\":0,\"reads\":0}\n");
	lines_close(&l);
}

/* An interval as a group: its own cells, then its rows. */
static void group_of(struct out_table *table, uint64_t time_ns, int rows)
{
	struct out_row *group = out_table_group(table, "title\x1b line");

	out_set_count(group, L_TIME_NS, time_ns);
	out_set_text(group, L_MODE, "ebpf");
	for (int i = 0; i < rows; i++) {
		struct out_row *row = out_row_add(table);

		out_set_count(row, L_TIME, time_ns);
		out_set_text(row, L_NAME, i ? "b" : "a");
		out_set_count(row, L_HITS, (uint64_t)i);
		out_set_ratio(row, L_RATIO, 1, 1);
		assert_true(out_table_rows(table) <= 1); /* written as they come, never held */
	}
	assert_int_equal(out_table_group_end(table), 0);
}

static void test_lines_groups(void **state)
{
	struct lines l;
	(void)state;

	/* JSON: one line a group, its cells first, its rows under rows_key; a group without rows too. */
	lines_open(&l, OUT_JSON, false);
	group_of(l.table, 1000000000, 2);
	group_of(l.table, 2000000000, 0);
	assert_string_equal(lines_text(&l),
			    "{\"time_ns\":1000000000,\"mode\":\"ebpf\",\"rows\":["
			    "{\"name\":\"a\",\"path\":null,\"hits\":0,\"hit_ratio\":1,\"cached_bytes\":null,"
			    "\"reads\":null},"
			    "{\"name\":\"b\",\"path\":null,\"hits\":1,\"hit_ratio\":1,\"cached_bytes\":null,"
			    "\"reads\":null}]}\n"
			    "{\"time_ns\":2000000000,\"mode\":\"ebpf\",\"rows\":[]}\n");
	lines_close(&l);

	/* CSV: the header once, the group's cells in each of its rows; a group without rows prints nothing. */
	lines_open(&l, OUT_CSV, false);
	group_of(l.table, 1000000000, 2);
	group_of(l.table, 2000000000, 0);
	group_of(l.table, 3000000000, 1);
	assert_string_equal(lines_text(&l), "time_ns,mode,name,path,hits,hit_ratio,cached_bytes,reads\n"
					    "1000000000,ebpf,a,,0,1,,\n"
					    "1000000000,ebpf,b,,1,1,,\n"
					    "3000000000,ebpf,a,,0,1,,\n");
	lines_close(&l);

	/* A table: the title (escaped) and the header at each group, an empty line after it. */
	lines_open(&l, OUT_TABLE, false);
	group_of(l.table, 1000000000, 1);
	group_of(l.table, 2000000000, 0);
	assert_string_equal(lines_text(&l), "title\\x1b line\n"
					    "TIME     CMD      HITS    HIT%  CACHED_MB  PATH\n"
					    "00:00:01 a           0  100.0%          -  -\n"
					    "\n"
					    "title\\x1b line\n"
					    "TIME     CMD      HITS    HIT%  CACHED_MB  PATH\n"
					    "\n");
	lines_close(&l);
	lines_open(&l, OUT_TABLE, true);
	group_of(l.table, 1000000000, 1);
	assert_string_equal(lines_text(&l), "00:00:01 a           0  100.0%          -  -\n\n");
	lines_close(&l);
}

static void test_where_in_documents(void **state)
{
	struct out_options opts = { .format = OUT_CSV, .no_header = false };
	struct out_table *table = out_table_new(line_columns, L_COUNT, &opts, "rows");
	char *text;
	(void)state;

	/* A whole document too: the table leaves out what is for programs, CSV what is for people. */
	two_rows(table);
	text = print(table);
	assert_true(!strncmp(text, "time_ns,mode,name,path,hits,hit_ratio,cached_bytes,reads\n", 57));
	free(text);
	out_table_free(table);
	opts.format = OUT_TABLE;
	table = out_table_new(line_columns, L_COUNT, &opts, "rows");
	two_rows(table);
	text = print(table);
	assert_non_null(strstr(text, "98.4%"));
	assert_null(strstr(text, "READS"));
	assert_null(strstr(text, "MODE"));
	assert_non_null(strstr(text, "01:02:03"));
	free(text);
	out_table_free(table);
}

int main(void)
{
	/* As iolens from the environment: tables measure UTF-8 names by the locale's widths. */
	if (!setlocale(LC_CTYPE, "C.UTF-8")) {
		fprintf(stderr, "test_out: no C.UTF-8 locale (glibc >= 2.35 has it built in)\n");
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_csv),
		cmocka_unit_test(test_default_and_added_columns),
		cmocka_unit_test(test_unknown_column),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_hostile_names),
		cmocka_unit_test(test_names_in_c_locale),
		cmocka_unit_test(test_json_write),
		cmocka_unit_test(test_human),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_total),
		cmocka_unit_test(test_sort),
		cmocka_unit_test(test_set_unknown),
		cmocka_unit_test(test_lines_table),
		cmocka_unit_test(test_lines_fit_numbers),
		cmocka_unit_test(test_lines_csv_json),
		cmocka_unit_test(test_lines_groups),
		cmocka_unit_test(test_where_in_documents),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
