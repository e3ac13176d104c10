/* SPDX-License-Identifier: GPL-2.0-or-later */
/* report.h: a report for people outside tables (doctor's): lines and paragraphs, their names escaped. */
#ifndef IOLENS_REPORT_H
#define IOLENS_REPORT_H

#include <stddef.h>
#include <stdio.h>

/* A line of a paragraph: "LABEL: TEXT", or TEXT alone when label is NULL. */
struct out_report_line {
	const char *label;
	const char *text;
};

/*
 * A line of the report, fmt with its arguments as given: the caller escapes the names among them
 * (printable_name), which a line may put anywhere.
 */
void out_report_printf(FILE *stream, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * A paragraph: "HEAD: TITLE", then each line under it, indented by two spaces; the title and the
 * lines' texts are names (files, services, mounts), escaped here.
 */
void out_report_paragraph(FILE *stream, const char *head, const char *title, const struct out_report_line *lines,
			  size_t count);
/* Whether all of the report was written: 0, or -EIO. */
int out_report_end(FILE *stream);

#endif
