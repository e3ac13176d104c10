/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pcstat_classic.c: classic pcstat's outputs: Go's encoding/json (its escapes, floats and RFC 3339
 * times), -terse's CSV, the boxed and -plain tables, -histo's sparklines.
 */
#include "render/pcstat_classic.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

static double classic_percent(const struct classic_row *file)
{
	/* In pcstat's order: the share first, then times 100 (66.66666666666666, not ...67). */
	return file->pages ? (double)file->cached / (double)file->pages * 100.0 : NAN;
}

/* The digits Go prints for a float64: the fewest that read back to the same number. */
static void go_float(double value, bool g_format, char *out, size_t len)
{
	if (isnan(value)) {
		snprintf(out, len, "NaN");
		return;
	}
	if (g_format) {
		/* %g in Go: exponent form below 1e-4 or from 1e21 (shortest precision uses 6 for the choice). */
		int exponent = value == 0 ? 0 : (int)floor(log10(fabs(value)));
		if (value != 0 && (exponent < -4 || exponent >= 21)) {
			for (int precision = 0; precision <= 17; precision++) {
				snprintf(out, len, "%.*e", precision, value);
				if (strtod(out, NULL) == value)
					break;
			}
			/* C writes e-05 as Go does: two exponent digits at least. */
			return;
		}
	}
	for (int decimals = 0; decimals <= 20; decimals++) {
		snprintf(out, len, "%.*f", decimals, value);
		if (strtod(out, NULL) == value)
			return;
	}
}

/* RFC 3339 with nanoseconds, trailing zeros cut, in local time: Go's time.Time in JSON. */
static void go_time(int64_t seconds, long nanoseconds, char *out, size_t len)
{
	time_t t = (time_t)seconds;
	struct tm tm;
	char fraction[16] = "", zone[32];
	long offset;
	size_t used;

	localtime_r(&t, &tm);
	if (nanoseconds) {
		snprintf(fraction, sizeof(fraction), ".%09ld", nanoseconds);
		for (size_t n = strlen(fraction); fraction[n - 1] == '0'; n--)
			fraction[n - 1] = '\0';
	}
	offset = tm.tm_gmtoff / 60;
	if (offset == 0)
		snprintf(zone, sizeof(zone), "Z");
	else
		snprintf(zone, sizeof(zone), "%c%02ld:%02ld", offset < 0 ? '-' : '+', labs(offset) / 60,
			 labs(offset) % 60);
	used = strftime(out, len, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + used, len - used, "%s%s", fraction, zone);
}

/*
 * A JSON string as Go's encoding/json writes it; bytes that are not UTF-8 as \xNN, and what
 * char_hidden() names as \uXXXX, as out_json_write does (iolens(1)). Go writes U+2028 and
 * U+2029 that way too.
 */
static void go_json_string(FILE *out, const char *text)
{
	char *escaped = escape_text(text, ESCAPE_BACKSLASH);
	const char *p = escaped;

	fputc('"', out);
	while (*p) {
		uint32_t c;
		size_t len = utf8_decode(p, &c); /* never 0: escape_text made it UTF-8 */

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", (int)c);
		else if (c == '\n')
			fputs("\\n", out);
		else if (c == '\r')
			fputs("\\r", out);
		else if (c == '\t')
			fputs("\\t", out);
		else if (c == '<' || c == '>' || c == '&' || (char_hidden(c) && c <= 0xffff))
			fprintf(out, "\\u%04x", (unsigned)c);
		else if (char_hidden(c)) /* a tag: a UTF-16 surrogate pair */
			fprintf(out, "\\u%04x\\u%04x", 0xd800 + ((c - 0x10000) >> 10),
				0xdc00 + ((c - 0x10000) & 0x3ff));
		else
			fwrite(p, 1, len, out);
		p += len;
	}
	fputc('"', out);
	free(escaped);
}

void classic_write_json(FILE *out, const struct classic_row *rows, size_t count, bool pps)
{
	char number[64], when[64];

	fputc('[', out);
	for (size_t i = 0; i < count; i++) {
		const struct classic_row *file = &rows[i];
		double percent = classic_percent(file);

		fputs(i ? ",{\"filename\":" : "{\"filename\":", out);
		go_json_string(out, file->name);
		fprintf(out, ",\"size\":%llu", (unsigned long long)file->size);
		go_time((int64_t)(file->timestamp_ns / 1000000000u), (long)(file->timestamp_ns % 1000000000u), when,
			sizeof(when));
		fprintf(out, ",\"timestamp\":\"%s\"", when);
		go_time(file->mtime.tv_sec, file->mtime.tv_nsec, when, sizeof(when));
		fprintf(out, ",\"mtime\":\"%s\"", when);
		fprintf(out, ",\"pages\":%llu,\"cached\":%llu,\"uncached\":%llu", (unsigned long long)file->pages,
			(unsigned long long)file->cached, (unsigned long long)(file->pages - file->cached));
		/* An empty file has no percentage: pcstat's JSON fails on it (NaN); null says unknown. */
		if (isnan(percent)) {
			fputs(",\"percent\":null", out);
		} else {
			go_float(percent, false, number, sizeof(number));
			fprintf(out, ",\"percent\":%s", number);
		}
		if (pps && file->pages) {
			fputs(",\"status\":[", out);
			for (uint64_t page = 0; page < file->pages; page++)
				fputs(page ? (file->status[page] ? ",true" : ",false")
					   : (file->status[page] ? "true" : "false"),
				      out);
			fputs("]}", out);
		} else {
			fputs(",\"status\":null}", out);
		}
	}
	fputs("]\n", out);
}

void classic_write_terse(FILE *out, const struct classic_row *rows, size_t count, bool header)
{
	char number[64];

	if (header)
		fputs("name,size,timestamp,mtime,pages,cached,percent\n", out);
	for (size_t i = 0; i < count; i++) {
		const struct classic_row *file = &rows[i];

		go_float(classic_percent(file), true, number, sizeof(number));
		fprintf(out, "%s,%llu,%llu,%lld,%llu,%llu,%s\n", file->name, (unsigned long long)file->size,
			(unsigned long long)(file->timestamp_ns / 1000000000u), (long long)file->mtime.tv_sec,
			(unsigned long long)file->pages, (unsigned long long)file->cached, number);
	}
}

static size_t max_name_length(const struct classic_row *rows, size_t count)
{
	size_t longest = 5;

	for (size_t i = 0; i < count; i++)
		if (text_width(rows[i].name) > longest)
			longest = text_width(rows[i].name);
	return longest;
}

static void repeat(FILE *out, const char *text, size_t times)
{
	while (times--)
		fputs(text, out);
}

static void print_percent(FILE *out, double percent)
{
	if (isnan(percent))
		fputs("    NaN", out);
	else
		fprintf(out, "%7.3f", percent);
}

/* One of the boxed table's three rules: the name column's width, then Size, Pages, Cached and Percent's. */
static void print_rule(FILE *out, bool unicode, size_t width, const char *const corners[2][3])
{
	static const size_t columns[] = { 16, 12, 11, 9 };
	const char *const *c = corners[unicode], *h = unicode ? "─" : "-";

	fputs(c[0], out);
	repeat(out, h, width + 2);
	for (size_t i = 0; i < sizeof(columns) / sizeof(columns[0]); i++) {
		fputs(c[1], out);
		repeat(out, h, columns[i]);
	}
	fputs(c[2], out);
	fputc('\n', out);
}

/* The boxed table (-unicode with box-drawing characters), or -plain's columns. */
void classic_write_table(FILE *out, const struct classic_row *rows, size_t count, enum classic_table style,
			 bool header)
{
	/* { ASCII, unicode } corners: left, between columns, right (pcstat's ASCII header rule ends in '|'). */
	static const char *const top[2][3] = { { "+", "+", "+" }, { "┌", "┬", "┐" } };
	static const char *const middle[2][3] = { { "|", "+", "|" }, { "├", "┼", "┤" } };
	static const char *const bottom[2][3] = { { "+", "+", "+" }, { "└", "┴", "┘" } };
	const bool unicode = style == CLASSIC_TABLE_UNICODE, plain = style == CLASSIC_TABLE_PLAIN;
	const char *v = unicode ? "│" : "|";
	size_t width = max_name_length(rows, count);

	if (!plain)
		print_rule(out, unicode, width, top);
	if (header) {
		if (plain) {
			fputs("Name", out);
			repeat(out, " ", width - 4);
			fputs("  Size (bytes)    Pages       Cached     Percent\n", out);
		} else {
			fprintf(out, "%s Name", v);
			repeat(out, " ", width - 4);
			fprintf(out, " %s Size (bytes)   %s Pages      %s Cached    %s Percent %s\n", v, v, v, v, v);
			print_rule(out, unicode, width, middle);
		}
	}
	for (size_t i = 0; i < count; i++) {
		const struct classic_row *file = &rows[i];

		if (plain) {
			fputs(file->name, out);
			repeat(out, " ", width - text_width(file->name));
			fprintf(out, "  %-15llu %-11llu %-10llu ", (unsigned long long)file->size,
				(unsigned long long)file->pages, (unsigned long long)file->cached);
			print_percent(out, classic_percent(file));
			fputc('\n', out);
			continue;
		}
		fprintf(out, "%s %s", v, file->name);
		repeat(out, " ", width - text_width(file->name));
		fprintf(out, " %s %-15llu%s %-11llu%s %-10llu%s ", v, (unsigned long long)file->size, v,
			(unsigned long long)file->pages, v, (unsigned long long)file->cached, v);
		print_percent(out, classic_percent(file));
		fprintf(out, " %s\n", v);
	}
	if (!plain)
		print_rule(out, unicode, width, bottom);
}

/* pcstat's sparkline: a block a page when they fit, else an eighth-block level per bucket of pages. */
void classic_write_histogram(FILE *out, const struct classic_row *rows, size_t count, long columns)
{
	static const char *const levels[] = { "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };
	size_t width = max_name_length(rows, count);
	long buckets = (columns - (long)width) / 2 - 10;

	if (buckets < 1)
		buckets = 1;
	for (size_t i = 0; i < count; i++) {
		const struct classic_row *file = &rows[i];

		fputs(file->name, out);
		repeat(out, " ", width - text_width(file->name));
		fprintf(out, " %8llu ", (unsigned long long)file->pages);
		if ((uint64_t)buckets > file->pages) {
			for (uint64_t page = 0; page < file->pages; page++)
				fputs(file->status[page] ? levels[7] : levels[0], out);
		} else {
			uint64_t per_bucket = file->pages / (uint64_t)buckets, cached = 0;

			for (uint64_t page = 0; page < file->pages; page++) {
				cached += file->status[page] ? 1 : 0;
				if ((page + 1) % per_bucket)
					continue;
				double share = (double)cached / (double)per_bucket;
				fputs(!cached ? levels[0] : share < 0.16 ? levels[1] : share < 0.33 ? levels[2]
				      : share < 0.50 ? levels[3] : share < 0.66 ? levels[4] : share < 0.83 ? levels[5]
				      : share < 1.00 ? levels[6] : levels[7], out);
				cached = 0;
			}
		}
		fputc('\n', out);
	}
}
