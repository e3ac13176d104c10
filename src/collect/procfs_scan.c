/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * procfs_scan.c: what every procfs*.c shares: bounded line, word and number scanning, and the files
 * kept open between samples.
 */
#include "collect/procfs.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "collect/procfs_internal.h"
#include "collect/sysroot.h"
#include "common/util.h"

/* ---- scanning ---------------------------------------------------------------------- */

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

bool procfs_next_line(const char **cursor, const char *end, struct span *line)
{
	const char *newline;

	if (*cursor >= end)
		return false;
	newline = memchr(*cursor, '\n', (size_t)(end - *cursor));
	line->start = *cursor;
	line->end = newline ? newline : end;
	*cursor = newline ? newline + 1 : end;
	return true;
}

bool procfs_next_word(struct span *line, struct span *word)
{
	const char *p = line->start;

	while (p < line->end && is_blank(*p))
		p++;
	if (p == line->end) {
		line->start = p;
		return false;
	}
	word->start = p;
	while (p < line->end && !is_blank(*p))
		p++;
	word->end = p;
	line->start = p;
	return true;
}

bool span_lists(struct span list, const char *item)
{
	while (list.start < list.end) {
		const char *comma = memchr(list.start, ',', span_length(list));
		struct span one = { list.start, comma ? comma : list.end };

		if (span_equals(one, item))
			return true;
		list.start = one.end + (comma != NULL);
	}
	return false;
}

struct span procfs_trim(struct span line)
{
	while (line.start < line.end && is_blank(*line.start))
		line.start++;
	while (line.end > line.start && (is_blank(line.end[-1]) || line.end[-1] == '\r'))
		line.end--;
	return line;
}

static int digit_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return 99;
}

bool procfs_parse_u64(struct span text, unsigned base, uint64_t *out)
{
	uint64_t value = 0;
	const char *p;

	if (text.start >= text.end)
		return false;
	for (p = text.start; p < text.end; p++) {
		unsigned digit = (unsigned)digit_value(*p);

		if (digit >= base || value > (UINT64_MAX - digit) / base)
			return false;
		value = value * base + digit;
	}
	*out = value;
	return true;
}

bool procfs_parse_int(struct span text, int *out)
{
	bool negative = text.start < text.end && *text.start == '-';
	uint64_t magnitude;

	if (negative)
		text.start++;
	if (!procfs_parse_u64(text, 10, &magnitude) || magnitude > (uint64_t)INT_MAX + negative)
		return false;
	*out = negative ? (int)(-(int64_t)magnitude) : (int)magnitude;
	return true;
}

bool procfs_parse_fixed(struct span text, double *out)
{
	const char *point = memchr(text.start, '.', span_length(text));
	struct span whole = {text.start, point ? point : text.end};
	uint64_t integer, fraction = 0, scale = 1;

	if (!procfs_parse_u64(whole, 10, &integer))
		return false;
	if (point) {
		struct span decimals = {point + 1, text.end};

		/* 18 digits keep the scale within 64 bits; the kernel prints two. */
		if (span_length(decimals) > 18 || !procfs_parse_u64(decimals, 10, &fraction))
			return false;
		for (size_t i = 0; i < span_length(decimals); i++)
			scale *= 10;
	}
	*out = (double)integer + (double)fraction / (double)scale;
	return true;
}

bool procfs_parse_first(struct span line, uint64_t *out)
{
	struct span word;

	return procfs_next_word(&line, &word) && procfs_parse_u64(word, 10, out);
}

void procfs_copy_name(char *name, size_t size, struct span text)
{
	size_t length = span_length(text);

	if (length >= size)
		length = size - 1;
	memcpy(name, text.start, length);
	name[length] = '\0';
}

/* ---- hot files --------------------------------------------------------------------- */

/* Every file a reader keeps open, so that a change of root or procfs_close reaches them all. */
static struct sysroot_file **hot_files;
static unsigned hot_count;
static char *hot_root; /* the root they were opened under */

void procfs_close(void)
{
	for (unsigned i = 0; i < hot_count; i++)
		sysroot_file_close(hot_files[i]);
	free(hot_files);
	free(hot_root);
	hot_files = NULL;
	hot_count = 0;
	hot_root = NULL;
}

int procfs_read_hot(struct sysroot_file *file, const char **text, size_t *len)
{
	const char *root = sysroot_get();

	/* An fd opened under another root would go on reading the old tree. */
	if (!hot_root || strcmp(hot_root, root) != 0) {
		procfs_close();
		hot_root = xstrdup(root);
	}
	if (file->fd < 0) {
		unsigned i = 0;

		while (i < hot_count && hot_files[i] != file)
			i++;
		if (i == hot_count) {
			hot_files = xrealloc(hot_files, (hot_count + 1) * sizeof(*hot_files));
			hot_files[hot_count++] = file;
		}
	}
	return sysroot_file_read(file, text, len);
}
