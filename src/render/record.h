/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * record.h: typed records: what a command reports besides a table's rows (a JSON document, a JSON
 * line), rendered by the output layer.
 */
#ifndef IOLENS_RECORD_H
#define IOLENS_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/*
 * A command hands the output layer fields, each a key, a unit and a value or unknown;
 * the layer writes them. Nothing in src/cmd builds JSON itself: this file and out.h are
 * the only ways out, so every string is escaped once (out_json_string: valid UTF-8, names
 * read back exactly) and every real is written the way people read it (out_json_real).
 *
 * Keys name their unit, the same in every format of every command (iolens(1), OUTPUT):
 *   _ns          nanoseconds (times since the epoch, durations, latencies)
 *   _bytes       bytes (bytes_per_s: a rate)
 *   _ratio       a fraction, 0 to 1
 *   _percent     a percentage, 0 to 100
 *   anything else a count, a text or a flag
 * The unit setters check the key's suffix (out_rec_ns needs "_ns"): a wrong key is a
 * programming error, reported on stderr once and written anyway, so output never stops.
 *
 * Unknown is JSON null: every setter has a form that takes "known", and reals take NaN.
 */

struct out_record;
struct out_list;
struct out_table;

struct out_record *out_record_new(void);
void out_record_free(struct out_record *record);

void out_rec_text(struct out_record *r, const char *key, const char *text); /* NULL text: null */
void out_rec_bool(struct out_record *r, const char *key, bool value);
void out_rec_count(struct out_record *r, const char *key, uint64_t value);
void out_rec_count_if(struct out_record *r, const char *key, uint64_t value, bool known);
void out_rec_int(struct out_record *r, const char *key, int64_t value);
void out_rec_ns(struct out_record *r, const char *key, uint64_t value);
void out_rec_ns_if(struct out_record *r, const char *key, uint64_t value, bool known);
void out_rec_bytes(struct out_record *r, const char *key, uint64_t value);
void out_rec_bytes_if(struct out_record *r, const char *key, uint64_t value, bool known);
/* A real number (NaN or infinite: null); whole numbers as integers, else three decimals. */
void out_rec_real(struct out_record *r, const char *key, double value);
/* A real with exactly this many decimals (a column's figure, "12.50"). */
void out_rec_fixed(struct out_record *r, const char *key, double value, unsigned decimals);
void out_rec_null(struct out_record *r, const char *key);

/* A record or a list inside r, under key; r owns it. */
struct out_record *out_rec_object(struct out_record *r, const char *key);
struct out_list *out_rec_list(struct out_record *r, const char *key);
/*
 * The table's rows as a list under key, and its TOTAL row (if any) as a record under
 * total_key (or nothing when total_key is NULL); the rows are taken out of the table.
 */
void out_rec_table(struct out_record *r, const char *key, struct out_table *table, const char *total_key);

/* Elements of a list. */
struct out_record *out_list_object(struct out_list *list);
struct out_list *out_list_list(struct out_list *list);
void out_list_text(struct out_list *list, const char *text);
void out_list_count(struct out_list *list, uint64_t value);
void out_list_real(struct out_list *list, double value);
size_t out_list_length(const struct out_list *list);

enum out_record_style {
	OUT_RECORD_LINE,   /* one line, no spaces: a JSON line of a stream */
	OUT_RECORD_SPACED, /* one line with a space after each ':' and ',' */
	OUT_RECORD_PRETTY, /* indented over several lines, for a document people read */
};

/*
 * Writes the record and a line feed; the whole of it or, when the stream fails, an error:
 * 0 or -errno (EPIPE when the reader went away). The stream is not flushed.
 */
int out_record_write(const struct out_record *record, FILE *stream, enum out_record_style style);

#endif
