/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * out.h: the one output layer: rows of typed cells printed as a table (libsmartcols), JSON (json-c)
 * or CSV, or written as they come as the lines of a monitor.
 */
#ifndef IOLENS_OUT_H
#define IOLENS_OUT_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct json_object;

/*
 * Names in every format (iolens(1), NAMES IN OUTPUT): a byte that is not part of valid UTF-8
 * and a backslash are written as the four characters \xNN (so \x5c for a backslash), which
 * reads back to the exact bytes; tables, CSV and messages write what char_hidden() names
 * (controls, C1, bidirectional controls, invisible characters) that way too, byte by byte
 * (CSV keeps line feeds and tabs, quoted), JSON as \uXXXX (out_json_write). Tables also
 * escape what the terminal's locale cannot show (ESCAPE_TERMINAL). Output is always UTF-8.
 */
enum out_format {
	OUT_TABLE, /* aligned columns for people; text escaped for a terminal (ESCAPE_TERMINAL) */
	OUT_JSON,  /* one document; bytes, ns and counts as numbers; unknown as null */
	OUT_CSV,   /* RFC 4180, a header line of column ids; unknown as an empty field */
};

enum out_kind {
	OUT_TEXT,      /* a string, exact in JSON and CSV */
	OUT_COUNT,     /* a whole number */
	OUT_BYTES,     /* a whole number of bytes; human units in tables with -H */
	OUT_USEC,      /* nanoseconds: microseconds with two decimals in tables, ns elsewhere */
	OUT_SEC,       /* nanoseconds: seconds with two decimals in tables, ns elsewhere */
	OUT_PERCENT,   /* a percentage, three decimals unless the column says */
	OUT_FLOAT,     /* a real number, two decimals unless the column says */
	OUT_BYTE_RATE, /* bytes per second: whole in tables, human units with -H */
	OUT_RATIO,     /* a fraction, 0 to 1: a percentage with '%' in tables (two decimals unless the
			  column says), elsewhere the fraction as out_json_real writes it (0.983567, 1) */
	OUT_MIB,       /* a whole number of bytes: whole MiB in tables (rounded), bytes elsewhere */
	OUT_CLOCK,     /* nanoseconds since the epoch: the local time of day in tables (HH:MM:SS), ns elsewhere */
};

/* Where a column is printed: a figure for people only, or for programs only. */
enum out_where {
	OUT_EVERYWHERE = 0,
	OUT_TABLE_ONLY, /* tables only: a user's name beside the uid, a time of day */
	OUT_DATA_ONLY,  /* JSON and CSV only: figures a table leaves out for room */
	/*
	 * JSON and CSV only, a figure of the whole group of rows (out_table_group: an interval
	 * of a monitor): a key of the group's JSON line, a column of each of its CSV rows.
	 * JSON and CSV put these columns first. Outside groups, the row's own, as OUT_DATA_ONLY.
	 */
	OUT_GROUP,
};

struct out_column {
	const char *id;           /* what -o, --sort, JSON keys and the CSV header use */
	const char *header;       /* the table header */
	const char *header_human; /* the table header with -H, when it differs */
	enum out_kind kind;
	bool is_default;          /* shown when -o does not choose */
	const char *help;         /* one line for --help */
	/*
	 * In the TOTAL row, counts and bytes are sums (unknown when unknown in any row),
	 * text is unknown, and a percentage is 100 * numerator / denominator of the sums,
	 * named here by column ids, "cached/pages".
	 */
	const char *total_ratio;
	unsigned decimals; /* for OUT_PERCENT, OUT_FLOAT and OUT_RATIO; 0 means their default */
	/*
	 * Lines only (out_table_lines): the column's width in characters, its values
	 * right-aligned, or left-aligned when negative; text longer than that is cut. 0: a
	 * column of any length, which a table prints last, after two spaces (a path, as ps
	 * prints its COMMAND), wherever it stands in JSON and CSV. libsmartcols ignores it.
	 */
	int width;
	enum out_where where;
};

struct out_options {
	enum out_format format;
	const char *columns; /* -o: "a,b,c" chooses and orders; "+a,b" adds to the defaults */
	bool human;
	bool no_header;
	bool fit_numbers; /* out_table_lines: a number wider than its column loses decimals (a full screen) */
};

/* The options every command takes; values above 0x1000 so they never meet a short option. */
enum {
	OUT_OPT_JSON = 0x1000,
	OUT_OPT_CSV,
	OUT_OPT_NO_HEADER,
};
#define OUT_SHORT_OPTIONS "o:H"
#define OUT_LONG_OPTIONS \
	{ "json", no_argument, NULL, OUT_OPT_JSON }, \
	{ "csv", no_argument, NULL, OUT_OPT_CSV }, \
	{ "output", required_argument, NULL, 'o' }, \
	{ "human", no_argument, NULL, 'H' }, \
	{ "no-header", no_argument, NULL, OUT_OPT_NO_HEADER }

/* Takes one getopt result; true when it was an output option. */
bool out_parse_option(struct out_options *opts, int opt, const char *arg);
/* The lines --help shows for the options above, and the list of columns. */
void out_help_options(FILE *stream);
void out_help_columns(FILE *stream, const struct out_column *columns, size_t count);
/*
 * For a monitor whose columns options do not choose (cachestat, cachetop): "Fields", each
 * column's table header (- when tables leave it out), its JSON and CSV key (- when only
 * tables show it) and its help.
 */
void out_help_fields(FILE *stream, const struct out_column *columns, size_t count);

struct out_table;
struct out_row;

/*
 * A table of the given columns (the command's whole set; options choose which print).
 * rows_key names the array of rows in JSON. NULL with a message when -o names a
 * column that does not exist.
 */
struct out_table *out_table_new(const struct out_column *columns, size_t count,
				const struct out_options *opts, const char *rows_key);
void out_table_free(struct out_table *table);

/* A new row; every cell starts unknown ('-' in tables, null in JSON). */
struct out_row *out_row_add(struct out_table *table);
/*
 * Adds a TOTAL row (see out_column.total_ratio), with label in label_column: printed
 * last in tables and CSV, as its own object "total" in JSON.
 */
void out_table_total(struct out_table *table, size_t label_column, const char *label);
/* A TOTAL row the caller fills, for totals that are not sums (it replaces out_table_total). */
struct out_row *out_row_total(struct out_table *table);
/* Prints only the TOTAL row: rows are added up as they come and not kept. */
void out_table_summary_only(struct out_table *table, size_t label_column, const char *label);
/* Rows held, not yet printed. */
size_t out_table_rows(const struct out_table *table);
/* Column indexes are positions in the command's column array. */
void out_set_text(struct out_row *row, size_t column, const char *text);
void out_set_count(struct out_row *row, size_t column, uint64_t value);
/* The count when known is true; unknown otherwise. */
void out_set_count_if(struct out_row *row, size_t column, uint64_t value, bool known);
void out_set_percent(struct out_row *row, size_t column, double value);
/* For OUT_FLOAT, OUT_PERCENT and OUT_BYTE_RATE columns. */
void out_set_real(struct out_row *row, size_t column, double value);
void out_set_unknown(struct out_row *row, size_t column);
/* For OUT_RATIO: part / whole, unknown when whole is 0. */
void out_set_ratio(struct out_row *row, size_t column, uint64_t part, uint64_t whole);

/* Shows a column (at the end) if options did not already choose it. */
void out_show_column(struct out_table *table, size_t column);
/* True when the column is printed: a command can skip work for columns nobody asked for. */
bool out_column_shown(const struct out_table *table, size_t column);
/* Index of a column by id (case ignored), or -1. */
int out_column_index(const struct out_table *table, const char *id);

/*
 * Sorts rows by a column: text ascending, numbers descending (largest first), unknown
 * last; reverse flips the order. -1 when there is no such column.
 */
int out_table_sort(struct out_table *table, const char *id, bool reverse);

/*
 * Writes rows to stream as they come, so memory stays constant however many rows there
 * are. CSV and JSON write each row at once. A table holds its first 256 rows, prints them
 * sized to fit (as a whole table), then prints each later row at those widths: a wider
 * value widens only its own line. A table of up to 256 rows prints as without streaming.
 * A row is written when the next one is added or when the table is printed, so sorting
 * no longer applies.
 */
void out_table_stream(struct out_table *table, FILE *stream);

/*
 * Streaming: writes the last row added now, rather than when the next one comes. In lines
 * mode with no row pending, writes the header of a table or CSV now if it is not out yet
 * (a monitor shows it before its first interval).
 */
void out_table_flush(struct out_table *table);

/*
 * Lines: the rows of a monitor that prints as it samples (cachestat, cachetop), each written
 * as soon as it is complete (out_table_flush, or the next row), never held:
 *   table  each row on a line of its own, in the columns' fixed widths (out_column.width),
 *          one space apart; the header line once, before the first row
 *   CSV    the header line once, then the rows
 *   JSON   one object a line (JSON lines), without spaces
 * Instead of out_table_stream; sorting does not apply.
 */
void out_table_lines(struct out_table *table, FILE *stream);

/*
 * Lines in groups (the rows of one interval). Returns the group's row, whose OUT_GROUP
 * cells the caller sets before adding the group's rows; the rows added until
 * out_table_group_end belong to it.
 *   table  the title (when not NULL) and the header line, unless --no-header; the rows;
 *          an empty line at the end
 *   CSV    the header line once; each row with the group's cells first
 *   JSON   one line a group: its cells, then its rows as an array under rows_key (written
 *          row by row, so a group of 100,000 rows is never held)
 * The title is a line for people (escaped as table text). A group still open when the next
 * one starts is ended first.
 */
struct out_row *out_table_group(struct out_table *table, const char *title);
/* Ends the group: 0, or -errno when the stream failed. The stream is not flushed. */
int out_table_group_end(struct out_table *table);

/*
 * A real number for a JSON document as people read it: whole numbers as integers, others
 * with three decimals (six significant digits below 1), never 80.211844063706195.
 */
struct json_object *out_json_real(double value);

/*
 * A JSON string of text as the output layer writes every name: bytes that are not UTF-8 and
 * backslashes as \xNN (JSON escapes control characters itself), so the document is valid
 * UTF-8 and the name reads back exactly. Every string a command puts in JSON goes through it.
 * NULL for NULL (JSON null).
 */
struct json_object *out_json_string(const char *text);

/*
 * Writes len bytes of JSON text as json-c makes it, with the characters char_hidden() names
 * (C1 and bidirectional controls, invisible ones, DEL: json-c leaves them as they are) as
 * \uXXXX escapes, and every character beyond ASCII too in a locale that is not UTF-8: the
 * same strings to a parser, nothing a terminal acts on. Every JSON text out goes through it.
 */
void out_json_write(FILE *stream, const char *json, size_t len);

/* One CSV field (RFC 4180), escaped as out_format says, for a command that writes its own CSV. */
void out_csv_field(FILE *stream, const char *text);

/* A value added to the JSON document after the rows (the table takes ownership). */
void out_json_add(struct out_table *table, const char *key, struct json_object *value);
/* The same for a count and a text: what commands use (nothing in src/cmd knows json-c). */
void out_table_add_count(struct out_table *table, const char *key, uint64_t value);
void out_table_add_text(struct out_table *table, const char *key, const char *text);

/*
 * The rows as a JSON array, and the TOTAL row (or NULL) as an object, for a command
 * that builds its own JSON document around them; the rows are taken out of the table.
 */
struct json_object *out_table_take_json(struct out_table *table, struct json_object **total);

/* Prints the table in its format; 0 or -errno. */
int out_table_print(struct out_table *table, FILE *stream);

/*
 * A libsmartcols table a command built itself, in the library's own formats (fincore's, which
 * util-linux prints so): on stream, JSON through out_json_write, which escapes what
 * libsmartcols' JSON does not. 0 or -errno.
 */
struct libscols_table;
int out_scols_print(FILE *stream, struct libscols_table *table, bool json);

#endif
