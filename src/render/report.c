/* SPDX-License-Identifier: GPL-2.0-or-later */
/* report.c: a report for people outside tables: lines, and paragraphs of escaped names. */
#include "render/report.h"

#include <errno.h>
#include <stdarg.h>

#include "common/util.h"

void out_report_printf(FILE *stream, const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	vfprintf(stream, fmt, args);
	va_end(args);
}

void out_report_paragraph(FILE *stream, const char *head, const char *title, const struct out_report_line *lines,
			  size_t count)
{
	fprintf(stream, "%s: ", head);
	fprintf(stream, "%s\n", printable_name(title));
	for (size_t i = 0; i < count; i++) {
		if (lines[i].label)
			fprintf(stream, "  %s: ", lines[i].label);
		else
			fputs("  ", stream);
		fprintf(stream, "%s\n", printable_name(lines[i].text));
	}
}

int out_report_end(FILE *stream)
{
	return ferror(stream) ? -EIO : 0;
}
