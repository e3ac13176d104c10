/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pcstat_classic.h: classic pcstat's outputs (github.com/tobert/pcstat), byte for byte: its JSON as
 * Go's encoding/json writes it, -terse's CSV, the boxed or -plain table and -histo's sparklines.
 * cmd/compat.c measures the files and picks the output; the writing is here.
 */
#ifndef IOLENS_PCSTAT_CLASSIC_H
#define IOLENS_PCSTAT_CLASSIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* A file as pcstat shows it. */
struct classic_row {
	char *name;            /* as shown: escaped by the caller for the tables, as it is for JSON */
	uint64_t size;
	uint64_t timestamp_ns; /* the time right before the cache was asked */
	struct timespec mtime;
	uint64_t pages, cached;
	unsigned char *status; /* one byte a page (nonzero: cached), for -pps and -histo; else NULL */
};

enum classic_table {
	CLASSIC_TABLE_ASCII,   /* pcstat's default: boxed with + - | */
	CLASSIC_TABLE_UNICODE, /* -unicode: boxed with box-drawing characters */
	CLASSIC_TABLE_PLAIN,   /* -plain: columns, no box */
};

/* -json: an array of objects, one a row; with pps each row's per-page status. */
void classic_write_json(FILE *out, const struct classic_row *rows, size_t count, bool pps);
/* -terse: CSV, its header line first unless header is false (-nohdr). */
void classic_write_terse(FILE *out, const struct classic_row *rows, size_t count, bool header);
/* The table, its header unless header is false (-nohdr). */
void classic_write_table(FILE *out, const struct classic_row *rows, size_t count, enum classic_table style,
			 bool header);
/* -histo: a sparkline a row, fitted to a terminal of columns (each row needs its status). */
void classic_write_histogram(FILE *out, const struct classic_row *rows, size_t count, long columns);

#endif
