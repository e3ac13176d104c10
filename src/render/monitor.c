/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * monitor.c: draws monitor lines the way dstat does: centred dashed titles, '|' between groups (':'
 * between items of one), values scaled to fit.
 */
#include "render/monitor.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "common/util.h"

/* dstat's default theme (for a dark terminal). */
#define C_RESET "\033[0;0m"
#define C_TITLE "\033[0;34m"              /* darkblue */
#define C_SUBTITLE "\033[1;34m\033[4m"    /* blue, underlined */
#define C_FRAME "\033[0;34m"              /* darkblue */
#define C_ERROR "\033[1;37m\033[41m"      /* white on red */
#define C_TEXT_LO "\033[0;37m"            /* gray */
#define C_TEXT_HI "\033[1;30m"            /* darkgray */
#define C_UNIT "\033[1;30m"               /* darkgray */
#define C_DONE_LO "\033[1;37m"            /* white */
#define C_DONE_HI "\033[0;37m"            /* gray */

static const char *const colors_lo[] = { "\033[1;31m", "\033[1;33m", "\033[1;32m", "\033[1;34m",
					 "\033[1;36m", "\033[1;37m", "\033[0;31m", "\033[0;32m" };
static const char *const colors_hi[] = { "\033[0;31m", "\033[0;33m", "\033[0;32m", "\033[0;34m",
					 "\033[0;36m", "\033[0;37m", "\033[1;31m", "\033[1;32m" };
/* dstat's --bw theme: darker colours, black text, for a light background. */
#define C_BW_SUBTITLE "\033[0;36m\033[4m" /* darkcyan, underlined */
#define C_BLACK "\033[0;30m"
#define C_DARKGRAY "\033[1;30m"
#define BW(m, final, dark) ((m)->light ? ((final) ? C_BLACK : C_DARKGRAY) : (dark))
static const char *const bw_lo[] = { "\033[0;31m", "\033[0;35m", "\033[0;32m", "\033[0;34m",
				     "\033[0;36m", "\033[0;30m", "\033[1;31m", "\033[1;32m" };
static const char *const bw_hi[] = { "\033[1;31m", "\033[1;35m", "\033[1;32m", "\033[1;34m",
				     "\033[1;36m", "\033[1;30m", "\033[0;31m", "\033[0;32m" };

int monitor_group_width(const struct mon_group *g)
{
	int width = 0;

	for (unsigned i = 0; i < g->ncolumns; i++)
		width += g->columns[i].width + (i && !(g->glued >> i & 1) ? 1 : 0) +
			 (g->after && i && i == g->after_column ? (int)strlen(g->after) : 0);
	return width;
}

static void put(const struct monitor *m, const char *color, const char *text)
{
	if (m->color && color)
		fputs(color, m->out);
	fputs(text, m->out);
}

/*
 * A whole, non-negative number in buf, without printf: a monitor formats every value of
 * every line, and printf's floating point is most of what a sample costs. Its length.
 */
static int whole_text(double rounded, char *buf, size_t size)
{
	char digits[24];
	int n = 0, len;
	uint64_t v;

	if (!(rounded < 1e19))
		return snprintf(buf, size, "%.0f", rounded);
	v = (uint64_t)rounded;
	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < (int)sizeof(digits));
	if ((size_t)n >= size)
		return snprintf(buf, size, "%.0f", rounded);
	for (len = 0; len < n; len++)
		buf[len] = digits[n - 1 - len];
	buf[len] = '\0';
	return len;
}

/* dstat's dchg: the rounded value, divided by base until it fits. */
static int scale_decimal(double value, int width, double base, char *buf, size_t size)
{
	int unit = 0;

	for (;;) {
		int len = whole_text(rint(value), buf, size);
		if (len <= width || unit >= 8)
			return unit;
		value /= base;
		unit++;
	}
}

/* dstat's fchg: as many decimals as fit, after dividing by base until the integer part fits. */
static int scale_float(double value, int width, double base, char *buf, size_t size)
{
	static const double powers[] = { 1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9 };
	int unit = 0;

	for (;;) {
		int len;
		if (value == 0) {
			snprintf(buf, size, "0");
			return unit;
		}
		/* As dstat: the integer part of the value rounded to width decimals (9.7 -> 9, not 10). */
		len = whole_text(trunc(rint(value * powers[width < 9 ? width : 9]) / powers[width < 9 ? width : 9]),
				 buf, size);
		if (len <= width || unit >= 8) {
			/* The most decimals that fit ("9.97" rounds up to "10.0" in 3: none then, "10"). */
			for (int decimals = width - len - 1; decimals > 0; decimals--) {
				len = snprintf(buf, size, "%.*f", decimals, value);
				if (len <= width)
					return unit;
			}
			whole_text(rint(value), buf, size);
			return unit;
		}
		value /= base;
		unit++;
	}
}

void monitor_format(double value, enum mon_type type, int width, double scale, bool integer, bool floats,
		    char *buf, int *unit_index)
{
	double base = scale == 1024 ? 1024 : 1000;

	if (type == MON_FLOAT && !integer)
		*unit_index = scale_float(value, width, base, buf, (size_t)width + 16);
	else if (floats && type != MON_TEXT && type != MON_NAME)
		*unit_index = scale_float(value, width, base, buf, (size_t)width + 16);
	else
		*unit_index = scale_decimal(value, width, base, buf, (size_t)width + 16);
}

/* One value, right-aligned in its width, with its unit letter when the column scales by 1000 or 1024. */
static void print_value(const struct monitor *m, const struct mon_column *col, double value, const char *text,
			bool final)
{
	static const char decimal_units[] = " kMGTPEZY", byte_units[] = "BkMGTPEZY", bit_units[] = "bkMGTPEZY";
	bool has_unit = (col->scale == 1000 || col->scale == 1024) && col->width >= 4;
	int width = col->width - has_unit, unit = 0;
	const char *const *colors = m->light ? (final ? bw_lo : bw_hi) : final ? colors_lo : colors_hi;
	const char *color;
	char buf[80];

	if (col->type == MON_TEXT || col->type == MON_NAME) {
		/* A name escaped as in any table (iolens(1), NAMES IN OUTPUT), cut to the column. */
		char *shown = escape_text(text, ESCAPE_TERMINAL);
		size_t columns, end = text_fit(shown, (size_t)col->width, &columns);

		shown[end] = '\0';
		if (m->color)
			fputs(BW(m, final, final ? C_TEXT_LO : C_TEXT_HI), m->out);
		fprintf(m->out, "%s%*s", shown, col->width - (int)columns, "");
		free(shown);
		return;
	}
	if (isnan(value) || value < 0) {
		snprintf(buf, sizeof(buf), "%*s%s", width, "-", has_unit ? " " : "");
		put(m, C_ERROR, buf);
		put(m, C_RESET, "");
		return;
	}
	if (col->type == MON_BITS)
		value *= 8;
	monitor_format(value, col->type, width, col->scale, m->integer, m->floats, buf, &unit);
	if (!strcmp(buf, "0"))
		color = BW(m, final, C_UNIT);
	else if (col->scale <= 0)
		color = BW(m, final, final ? C_TEXT_LO : C_TEXT_HI);
	else if (col->type == MON_PERCENT && rint(value) >= 100)
		color = BW(m, final, final ? C_DONE_LO : C_DONE_HI);
	else if (col->scale != 1000 && col->scale != 1024)
		color = colors[(unsigned long)(value / col->scale) % 8];
	else
		color = colors[unit % 8];
	if (m->color)
		fputs(color, m->out);
	fprintf(m->out, "%*s", width, buf);
	if (has_unit) {
		if (rint(value) != 0 && strcmp(buf, "0")) {
			const char *units = col->type == MON_BITS ? bit_units
					    : col->type == MON_BYTES || col->scale == 1024 ? byte_units : decimal_units;
			char letter[2] = { units[unit < 9 ? unit : 8], '\0' };
			put(m, BW(m, final, C_UNIT), letter);
		} else {
			fputc(' ', m->out);
		}
	}
}

/*
 * A title centred over width columns, its spaces turned to dashes, as dstat draws them. The
 * item in it (a disk, an interface) is a name: escaped as in any table.
 */
static void centred_title(const struct monitor *m, const char *title, int width)
{
	char *shown = escape_text(title, ESCAPE_TERMINAL), *line;
	size_t columns, len = text_fit(shown, width > 0 ? (size_t)width : 0, &columns);
	int left = (width - (int)columns) / 2 + ((width - (int)columns) & width & 1); /* Python's str.center */
	size_t used = 0;

	line = xcalloc((size_t)(width > 0 ? width : 0) + len + 1, 1);
	for (int i = 0; i < left; i++)
		line[used++] = '-';
	for (size_t i = 0; i < len; i++)
		line[used++] = shown[i] == ' ' ? '-' : shown[i];
	for (int i = left + (int)columns; i < width; i++)
		line[used++] = '-';
	put(m, C_TITLE, line);
	free(line);
	free(shown);
}

void monitor_header(const struct monitor *m, const struct mon_group *groups, unsigned ngroups)
{
	for (unsigned g = 0; g < ngroups; g++) {
		if (g)
			put(m, C_FRAME, " ");
		centred_title(m, groups[g].title, monitor_group_width(&groups[g]));
	}
	if (m->more)
		put(m, C_TITLE, ">");
	put(m, C_RESET, "\n");
	for (unsigned g = 0; g < ngroups; g++) {
		if (groups[g].subtitle) {
			/* dstat's one-variable plugins: the nick centred (str.center) over the group's width. */
			int width = monitor_group_width(&groups[g]), len = (int)strlen(groups[g].subtitle);
			int margin = width - (len < width ? len : width);
			char buf[128];

			if (len > width)
				len = width;
			snprintf(buf, sizeof(buf), "%*s%.*s%*s", margin / 2 + (margin & width & 1), "", len,
				 groups[g].subtitle, margin - margin / 2 - (margin & width & 1), "");
			put(m, m->light ? C_BW_SUBTITLE : C_SUBTITLE, buf);
			put(m, C_RESET, "");
		}
		for (unsigned c = 0; !groups[g].subtitle && c < groups[g].ncolumns; c++) {
			const struct mon_column *col = &groups[g].columns[c];
			char buf[80];
			int len = (int)strlen(col->nick) < col->width ? (int)strlen(col->nick) : col->width;
			int margin = col->width - len;
			/* Python's str.center, as dstat uses it: the odd space goes left when the width is odd. */
			int left = margin / 2 + (margin & col->width & 1);

			snprintf(buf, sizeof(buf), "%*s%.*s%*s", left, "", len, col->nick, col->width - len - left, "");
			if (c)
				fputc(' ', m->out);
			put(m, m->light ? C_BW_SUBTITLE : C_SUBTITLE, buf);
			put(m, C_RESET, "");
		}
		if (g + 1 < ngroups)
			put(m, C_FRAME, groups[g + 1].joined ? ":" : "|");
	}
	if (m->more)
		put(m, C_TITLE, ">");
	put(m, C_RESET, "\n");
}

void monitor_line(const struct monitor *m, const struct mon_group *groups, unsigned ngroups, bool final)
{
	for (unsigned g = 0; g < ngroups; g++) {
		if (groups[g].blank)
			fprintf(m->out, "%*s", monitor_group_width(&groups[g]), "");
		for (unsigned c = 0; !groups[g].blank && c < groups[g].ncolumns; c++) {
			const struct mon_column *col = &groups[g].columns[c];

			if (c && !(groups[g].glued >> c & 1))
				fputc(' ', m->out);
			print_value(m, col, groups[g].values[c], groups[g].text, final);
			if (groups[g].after && c && c == groups[g].after_column)
				put(m, BW(m, final, C_UNIT), groups[g].after);
		}
		if (g + 1 < ngroups)
			put(m, C_FRAME, groups[g + 1].joined ? ":" : "|");
	}
	if (m->more)
		put(m, C_FRAME, ">");
	put(m, C_RESET, "");
}

/* "usr" + "pct" -> "usr_pct"; a column without a unit is its key alone. */
static void column_name(const struct mon_group *g, const struct mon_column *col, char *buf, size_t size)
{
	snprintf(buf, size, "%s_%s%s%s", g->key, col->key, col->unit && *col->unit ? "_" : "",
		 col->unit ? col->unit : "");
}

/* A line is built whole in memory (built_open's stream), then written in one go (built_write). */
struct built {
	char *text;
	size_t len;
	FILE *stream;
};

static FILE *built_open(struct built *b)
{
	b->text = NULL;
	b->len = 0;
	return b->stream = open_memstream(&b->text, &b->len);
}

static int built_write(FILE *out, struct built *b)
{
	int rc = 0;

	fclose(b->stream);
	if (fwrite(b->text, 1, b->len, out) != b->len || fflush(out) != 0)
		rc = -errno;
	free(b->text);
	return rc;
}

int monitor_csv_header(FILE *out, const struct mon_group *groups, unsigned ngroups)
{
	struct built line;
	char name[160];
	FILE *buffer = built_open(&line);

	if (!buffer)
		return -errno;
	fputs("time_ns,since_boot", buffer);
	for (unsigned g = 0; g < ngroups; g++)
		for (unsigned c = 0; c < groups[g].ncolumns; c++) {
			if (groups[g].columns[c].type == MON_TEXT)
				continue; /* the time of day: time_ns says it */
			column_name(&groups[g], &groups[g].columns[c], name, sizeof(name));
			fprintf(buffer, ",%s", name);
		}
	fputc('\n', buffer);
	return built_write(out, &line);
}

int monitor_csv_line(FILE *out, const struct mon_group *groups, unsigned ngroups, unsigned long long time_ns,
		     bool since_boot)
{
	struct built line;
	FILE *buffer = built_open(&line);

	if (!buffer)
		return -errno;
	fprintf(buffer, "%llu,%d", time_ns, since_boot ? 1 : 0);
	for (unsigned g = 0; g < ngroups; g++)
		for (unsigned c = 0; c < groups[g].ncolumns; c++) {
			double value = groups[g].raw[c];
			if (groups[g].columns[c].type == MON_TEXT)
				continue;
			if (groups[g].columns[c].type == MON_NAME) {
				/* Escaped as CSV writes names (out_csv_field), always quoted, a quote doubled. */
				const char *text = groups[g].csv_text ? groups[g].csv_text : groups[g].text;
				char *escaped =
				    escape_text(text, ESCAPE_CONTROL | ESCAPE_KEEP_BREAKS | ESCAPE_BACKSLASH);

				fputs(",\"", buffer);
				for (const char *p = escaped; *p; p++) {
					if (*p == '"')
						fputc('"', buffer);
					fputc(*p, buffer);
				}
				fputc('"', buffer);
				free(escaped);
				continue;
			}
			fputc(',', buffer);
			if (!isnan(value))
				fprintf(buffer, value == rint(value) && fabs(value) < 1e15 ? "%.0f"
						: fabs(value) >= 1 ? "%.3f" : "%.6g", value);
		}
	fputc('\n', buffer);
	return built_write(out, &line);
}

/* Whether a group is one of several items of a plugin (dstat names its CSV columns "item:nick" then). */
static bool one_of_items(const struct mon_group *groups, unsigned ngroups, unsigned g)
{
	return groups[g].joined || (g + 1 < ngroups && groups[g + 1].joined);
}

int monitor_csv_dstat_header(FILE *out, const struct mon_group *groups, unsigned ngroups)
{
	struct built line;
	FILE *buffer = built_open(&line);

	if (!buffer)
		return -errno;
	/* dstat's csvtitle: the title quoted, then a comma for each other column. */
	for (unsigned g = 0; g < ngroups; g++) {
		fprintf(buffer, "%s\"%s\"", g ? "," : "", groups[g].title);
		for (unsigned c = 1; c < groups[g].ncolumns; c++)
			fputc(',', buffer);
	}
	fputc('\n', buffer);
	/* dstat's csvsubtitle: each column's nick quoted, "item:nick" when the plugin has several items. */
	for (unsigned g = 0; g < ngroups; g++)
		for (unsigned c = 0; c < groups[g].ncolumns; c++)
			fprintf(buffer, "%s\"%s%s%s\"", g || c ? "," : "",
				one_of_items(groups, ngroups, g) ? groups[g].title : "",
				one_of_items(groups, ngroups, g) ? ":" : "", groups[g].columns[c].nick);
	fputc('\n', buffer);
	return built_write(out, &line);
}

int monitor_csv_dstat_line(FILE *out, const struct mon_group *groups, unsigned ngroups)
{
	struct built line;
	FILE *buffer = built_open(&line);

	if (!buffer)
		return -errno;
	for (unsigned g = 0; g < ngroups; g++)
		for (unsigned c = 0; c < groups[g].ncolumns; c++) {
			double value = groups[g].values[c];
			enum mon_type type = groups[g].columns[c].type;

			if (g || c)
				fputc(',', buffer);
			if (type == MON_TEXT || type == MON_NAME)
				fputs(type == MON_NAME && groups[g].csv_text ? groups[g].csv_text : groups[g].text,
				      buffer);
			else if (!isnan(value))
				/* dstat's printcsv: three decimals, or none for a whole number. */
				fprintf(buffer, value != rint(value) ? "%.3f" : "%.0f", value);
		}
	fputc('\n', buffer);
	return built_write(out, &line);
}
