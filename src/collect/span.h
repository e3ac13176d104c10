/* SPDX-License-Identifier: GPL-2.0-or-later */
/* span.h: text as the kernel and doctor's snapshots write it, scanned without a NUL: lines, words, strict numbers. */
#ifndef IOLENS_COLLECT_SPAN_H
#define IOLENS_COLLECT_SPAN_H

#include <stdbool.h>
#include <string.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A piece of the text, [start, end). The texts come from files and fuzzers without a
 * terminating NUL, so nothing here calls a str* function on them.
 */
struct span {
	const char *start, *end;
};

/* The next line of [*cursor, end), without its newline; false when the text is used up. */
bool procfs_next_line(const char **cursor, const char *end, struct span *line);
/* The next word of a line (words are separated by spaces and tabs), taken off its front; false when none is left. */
bool procfs_next_word(struct span *line, struct span *word);
/* The line without its leading and trailing blanks. */
struct span procfs_trim(struct span line);
/* Whether item is one of the comma-separated items of list (a mount's options: "rw,prjquota"). */
bool span_lists(struct span list, const char *item);

static inline size_t span_length(struct span text)
{
	return (size_t)(text.end - text.start);
}
/* Inline, so that the length of a literal is known when compiling: parsers call them on every line. */
static inline bool span_equals(struct span text, const char *literal)
{
	size_t length;

	/* (the first byte first: a parser that tries its keys one after the other measures few) */
	if (!span_length(text) || *text.start != *literal)
		return !span_length(text) && !*literal;
	length = strlen(literal);
	return span_length(text) == length && memcmp(text.start, literal, length) == 0;
}

static inline bool span_starts_with(struct span text, const char *prefix)
{
	size_t length = strlen(prefix);

	return span_length(text) >= length && memcmp(text.start, prefix, length) == 0;
}

/* Digits only in that base (10 or 16), at least one, within 64 bits. */
bool procfs_parse_u64(struct span text, unsigned base, uint64_t *out);
/* An optional minus sign and decimal digits, within an int. */
bool procfs_parse_int(struct span text, int *out);
/* A number as the kernel prints fixed-point values ("%lu.%02lu"): digits, optionally a point and more digits. */
bool procfs_parse_fixed(struct span text, double *out);
/* The first word of the line as a decimal number. */
bool procfs_parse_first(struct span line, uint64_t *out);

/* Copies the text into a fixed-size name, cut to fit, always NUL-terminated. */
void procfs_copy_name(char *name, size_t size, struct span text);

#endif
