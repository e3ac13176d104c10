/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_json_lines.c: JSON lines (out_table_lines, out_table_group), which the output layer
 * writes as text, hold to json-c: byte for byte what json_object_to_json_string_ext writes
 * with JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE for the same objects, then
 * out_json_write, on many rows of random and edge values, in a UTF-8 locale and in C.
 */
#include "unit.h"

#include <float.h>
#include <json-c/json.h>
#include <locale.h>
#include <math.h>

#include "render/out.h"

#define LINE_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

enum {
	J_TIME, J_LABEL, J_NAME, J_COUNT, J_BYTES, J_USEC, J_SEC, J_MIB, J_PERCENT, J_PERCENT1,
	J_FLOAT, J_FLOAT4, J_RATE, J_RATIO, J_RATIO1, J_USER, J_EXTRA, J_PATH, J_COUNT_OF
};

/* Every kind, every place; a key with a slash. */
static const struct out_column columns[J_COUNT_OF] = {
	[J_TIME] = { "time_ns", "TIME", NULL, OUT_CLOCK, true, "x", .where = OUT_GROUP },
	[J_LABEL] = { "label", "LABEL", NULL, OUT_TEXT, true, "x", .where = OUT_GROUP },
	[J_NAME] = { "name", "NAME", NULL, OUT_TEXT, true, "x", .width = -8 },
	[J_COUNT] = { "count", "COUNT", NULL, OUT_COUNT, true, "x", .width = 8 },
	[J_BYTES] = { "bytes", "BYTES", NULL, OUT_BYTES, true, "x" },
	[J_USEC] = { "usec_ns", "USEC", NULL, OUT_USEC, true, "x" },
	[J_SEC] = { "sec_ns", "SEC", NULL, OUT_SEC, true, "x" },
	[J_MIB] = { "mib_bytes", "MIB", NULL, OUT_MIB, true, "x" },
	[J_PERCENT] = { "percent", "PCT", NULL, OUT_PERCENT, true, "x" },
	[J_PERCENT1] = { "percent1", "PCT1", NULL, OUT_PERCENT, true, "x", .decimals = 1 },
	[J_FLOAT] = { "float", "FLOAT", NULL, OUT_FLOAT, true, "x" },
	[J_FLOAT4] = { "float4", "FLOAT4", NULL, OUT_FLOAT, true, "x", .decimals = 4 },
	[J_RATE] = { "bytes/s", "RATE", NULL, OUT_BYTE_RATE, true, "x" },
	[J_RATIO] = { "ratio", "RATIO", NULL, OUT_RATIO, true, "x" },
	[J_RATIO1] = { "ratio1", "RATIO1", NULL, OUT_RATIO, true, "x", .decimals = 1 },
	[J_USER] = { "user", "USER", NULL, OUT_TEXT, true, "x", .where = OUT_TABLE_ONLY },
	[J_EXTRA] = { "extra", "EXTRA", NULL, OUT_COUNT, true, "x", .where = OUT_DATA_ONLY },
	[J_PATH] = { "path", "PATH", NULL, OUT_TEXT, true, "x" },
};

/* The decimals of each real in JSON: the column's, else 3 for a percentage, 2 for the others. */
static const int decimals[J_COUNT_OF] = {
	[J_PERCENT] = 3, [J_PERCENT1] = 1, [J_FLOAT] = 2, [J_FLOAT4] = 4, [J_RATE] = 2,
};

/* xorshift64*: the same rows at every run. */
static uint64_t seed = 0x9e3779b97f4a7c15ull;

static uint64_t next_random(void)
{
	seed ^= seed >> 12;
	seed ^= seed << 25;
	seed ^= seed >> 27;
	return seed * 0x2545f4914f6cdd1dull;
}

static size_t pick(size_t n)
{
	return (size_t)(next_random() % n);
}

/* What strings are made of: JSON's escapes, a slash, controls, DEL, UTF-8 valid and not, hidden characters. */
static const char *const pieces[] = {
	"a", "Z", " ", "~", "/", "/srv/data/dir", "\"", "\\", "\\x41", "\\u0041", "\b", "\f", "\n", "\r", "\t",
	"\x01", "\x1b[31m", "\x1f", "\x7f",
	"\xc3\xa9",         /* é */
	"\xe4\xb8\xad",     /* 中 */
	"\xf0\x9f\x98\x80", /* an emoji, beyond 16 bits */
	"\xc2\x85",         /* C1: NEL */
	"\xc2\x9b",         /* C1: CSI */
	"\xc2\xa0",         /* no-break space */
	"\xe2\x80\x8b",     /* zero width space */
	"\xe2\x80\x8f",     /* right-to-left mark */
	"\xe2\x80\xae",     /* right-to-left override */
	"\xe2\x81\xa6",     /* left-to-right isolate */
	"\xef\xbb\xbf",     /* byte order mark */
	"\xf3\xa0\x81\x81", /* a tag character */
	"\xff", "\xfe", "\x80", "\xc3", "\xe2\x82", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80",
	"\xf8\x88\x80\x80\x80",
};

/* Up to 12 pieces, or a random byte (never NUL). The caller frees it. */
static char *random_text(void)
{
	size_t n = pick(13), len = 0;
	char *text = malloc(n * 16 + 1); /* no piece is longer */

	assert_non_null(text);
	for (size_t i = 0; i < n; i++) {
		if (pick(5) == 0) {
			text[len++] = (char)(1 + pick(255));
			continue;
		}
		const char *piece = pieces[pick(sizeof(pieces) / sizeof(pieces[0]))];
		memcpy(text + len, piece, strlen(piece));
		len += strlen(piece);
	}
	text[len] = '\0';
	return text;
}

static uint64_t random_count(void)
{
	static const uint64_t edges[] = { 0, 1, 9, 10, 99, 4096, 999999999, 1000000000, INT64_MAX,
					  (uint64_t)INT64_MAX + 1, UINT64_MAX - 1, UINT64_MAX };
	uint64_t r = next_random();

	switch (pick(3)) {
	case 0:
		return edges[pick(sizeof(edges) / sizeof(edges[0]))];
	case 1:
		return r >> pick(64);
	default:
		return r;
	}
}

static double random_real(void)
{
	static const double edges[] = { 0.0, -0.0, 1.0, -1.0, 0.5, 0.9835671, 0.0000004, 1e-300, DBL_MIN,
					123456.7891, -2.5, 0.125, 0.0005, 0.9995, 9e15 - 1, 9e15, 1e16, 1.5e19,
					1e300, -1e300, DBL_MAX, INFINITY, -INFINITY, NAN };
	double unit = (double)(next_random() >> 11) / (double)(1ull << 53);

	switch (pick(4)) {
	case 0:
		return edges[pick(sizeof(edges) / sizeof(edges[0]))];
	case 1:
		return unit; /* a ratio */
	case 2:
		return unit * 1e6 - 1e5;
	default:
		return (double)(next_random() >> pick(64));
	}
}

/*
 * Sets a random value (or none, a time in five) in column c of row, and returns the json-c
 * object json_row would make of it: out_json_string for text, out_json_real for a ratio, a
 * real as its decimals, a count as an unsigned 64-bit integer; NULL (null) when unset.
 */
static struct json_object *set_random(struct out_row *row, size_t c)
{
	char buf[64];

	if (pick(5) == 0) {
		out_set_unknown(row, c);
		return NULL;
	}
	switch (columns[c].kind) {
	case OUT_TEXT: {
		char *text = random_text();
		struct json_object *value = out_json_string(text);

		out_set_text(row, c, text);
		free(text);
		return value;
	}
	case OUT_RATIO: {
		double value = random_real();

		out_set_real(row, c, value);
		return out_json_real(value);
	}
	case OUT_PERCENT:
	case OUT_FLOAT:
	case OUT_BYTE_RATE: {
		double value = random_real();

		out_set_real(row, c, value);
		snprintf(buf, sizeof(buf), "%.*f", decimals[c], value);
		return json_object_new_double_s(value, buf);
	}
	default: {
		uint64_t value = random_count();

		out_set_count(row, c, value);
		return json_object_new_uint64(value);
	}
	}
}

/* Sets every column of row, and adds to object, in this order, the keys JSON has of them. */
static void fill(struct out_row *row, struct json_object *object, const size_t *keys, size_t nkeys)
{
	struct json_object *values[J_COUNT_OF];

	for (size_t c = 0; c < J_COUNT_OF; c++)
		values[c] = set_random(row, c);
	for (size_t k = 0; k < nkeys; k++)
		json_object_object_add(object, columns[keys[k]].id, json_object_get(values[keys[k]]));
	for (size_t c = 0; c < J_COUNT_OF; c++)
		json_object_put(values[c]);
}

/* Appends a json-c value's text, as the output layer writes JSON (out_json_write), and a line feed. */
static void expect(FILE *expected, struct json_object *value)
{
	const char *text = json_object_to_json_string_ext(value, LINE_FLAGS);

	out_json_write(expected, text, strlen(text));
	fputc('\n', expected);
	json_object_put(value);
}

/* The first line where the two differ, with its number; the test fails there. */
static void assert_same_lines(const char *expected, const char *actual)
{
	size_t line = 1;

	while (*expected || *actual) {
		size_t a = strcspn(expected, "\n"), b = strcspn(actual, "\n");

		if (a != b || memcmp(expected, actual, a)) {
			fprintf(stderr, "line %zu differs\n", line);
			assert_string_equal(strndup(expected, a), strndup(actual, b));
		}
		expected += a + !!expected[a];
		actual += b + !!actual[b];
		line++;
	}
}

struct run {
	const char *columns;      /* -o */
	bool groups;              /* out_table_group, or one row a line */
	size_t head[J_COUNT_OF];  /* the keys of a group's line, in their order */
	size_t nhead;
	size_t keys[J_COUNT_OF];  /* the keys of a row, in their order */
	size_t nkeys;
};

static const char rows_key[] = "rows/\"x\"";

/* Writes rows and groups of random values as JSON lines, and the same objects with json-c; compares them. */
static char *check_run(const struct run *run, size_t nrows)
{
	struct out_options opts = { .format = OUT_JSON, .columns = run->columns };
	struct out_table *table = out_table_new(columns, J_COUNT_OF, &opts, rows_key);
	char *actual = NULL, *expected = NULL;
	size_t actual_len = 0, expected_len = 0;
	FILE *out = open_memstream(&actual, &actual_len), *want = open_memstream(&expected, &expected_len);

	assert_non_null(table);
	assert_non_null(out);
	assert_non_null(want);
	out_table_lines(table, out);
	for (size_t written = 0; written < nrows;) {
		struct json_object *line = NULL, *rows = NULL;
		size_t n = run->groups ? pick(41) : 1; /* a group of 0 rows too */

		if (run->groups) {
			line = json_object_new_object();
			rows = json_object_new_array();
			fill(out_table_group(table, "title"), line, run->head, run->nhead);
		}
		for (size_t i = 0; i < n; i++) {
			struct json_object *object = json_object_new_object();

			fill(out_row_add(table), object, run->keys, run->nkeys);
			if (rows)
				json_object_array_add(rows, object);
			else
				expect(want, object);
		}
		if (run->groups) {
			json_object_object_add(line, rows_key, rows);
			expect(want, line);
			assert_int_equal(out_table_group_end(table), 0);
		}
		written += n;
	}
	assert_int_equal(out_table_print(table, out), 0);
	out_table_free(table);
	fclose(out);
	fclose(want);
	assert_same_lines(expected, actual);
	free(actual);
	return expected;
}

static const struct run runs[] = {
	/* Rows alone: the OUT_GROUP columns are the rows' own, first; not the table's only. */
	{ NULL, false, { 0 }, 0,
	  { J_TIME, J_LABEL, J_NAME, J_COUNT, J_BYTES, J_USEC, J_SEC, J_MIB, J_PERCENT, J_PERCENT1, J_FLOAT,
	    J_FLOAT4, J_RATE, J_RATIO, J_RATIO1, J_EXTRA, J_PATH }, 17 },
	/* Groups: their columns on the group's line, the others in each row. */
	{ NULL, true, { J_TIME, J_LABEL }, 2,
	  { J_NAME, J_COUNT, J_BYTES, J_USEC, J_SEC, J_MIB, J_PERCENT, J_PERCENT1, J_FLOAT, J_FLOAT4, J_RATE,
	    J_RATIO, J_RATIO1, J_EXTRA, J_PATH }, 15 },
	/* Chosen columns, one twice (a key once, where it came first), no group column: "{" then the rows. */
	{ "ratio1,path,ratio1,count,user", true, { 0 }, 0, { J_RATIO1, J_PATH, J_COUNT }, 3 },
	{ "label,path,ratio1,LABEL,float4", true, { J_LABEL }, 1, { J_PATH, J_RATIO1, J_FLOAT4 }, 3 },
	{ "+name,time_ns", false, { 0 }, 0,
	  { J_TIME, J_LABEL, J_NAME, J_COUNT, J_BYTES, J_USEC, J_SEC, J_MIB, J_PERCENT, J_PERCENT1, J_FLOAT,
	    J_FLOAT4, J_RATE, J_RATIO, J_RATIO1, J_EXTRA, J_PATH }, 17 },
};

/* What json-c's text must have had for the comparison to have tested each escape. */
static void assert_covered(const char *expected, bool utf8)
{
	static const char *const escapes[] = {
		"\\\"", "\\\\x5c", "\\\\xff", "\\\\xc3", "\\b", "\\f", "\\n", "\\r", "\\t", "\\u0001", "\\u001b",
		"\\u001f", "\\u007f", "\\u0085", "\\u009b", "\\u200b", "\\u200f", "\\u202e", "\\u2066", "\\ufeff",
		"\\udb40\\udc41", "/", "null", "18446744073709551615", ":0,", "nan", "inf",
	};

	for (size_t i = 0; i < sizeof(escapes) / sizeof(escapes[0]); i++)
		if (!strstr(expected, escapes[i]))
			fail_msg("no %s in any line: the rows did not test it", escapes[i]);
	assert_null(strstr(expected, "\\/"));
	if (utf8) {
		assert_non_null(strstr(expected, "\xc3\xa9"));
		assert_non_null(strstr(expected, "\xf0\x9f\x98\x80"));
	} else {
		assert_non_null(strstr(expected, "\\u00e9"));
		assert_non_null(strstr(expected, "\\ud83d\\ude00"));
	}
}

static void check_runs(bool utf8)
{
	char *all = NULL;
	size_t all_len = 0;
	FILE *stream = open_memstream(&all, &all_len);

	assert_non_null(stream);
	for (size_t r = 0; r < sizeof(runs) / sizeof(runs[0]); r++) {
		char *expected = check_run(&runs[r], 3000);

		fputs(expected, stream);
		free(expected);
	}
	fclose(stream);
	assert_covered(all, utf8);
	free(all);
}

static void test_utf8_locale(void **state)
{
	(void)state;
	assert_non_null(setlocale(LC_CTYPE, "C.UTF-8"));
	check_runs(true);
}

/* Not UTF-8: out_json_write escapes every character beyond ASCII, after either writer. */
static void test_c_locale(void **state)
{
	(void)state;
	assert_non_null(setlocale(LC_CTYPE, "C"));
	check_runs(false);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_utf8_locale),
		cmocka_unit_test(test_c_locale),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
