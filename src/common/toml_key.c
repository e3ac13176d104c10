/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * toml_key.c: one string setting of a TOML file: every line followed as TOML writes it (so that a
 * string, an array or a comment is never taken for a table or a key), only the setting's value
 * kept.
 */
#include "common/toml_key.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define DEPTH_MAX 32     /* arrays and inline tables in one another */
#define KEY_PART_MAX 256 /* a quoted key's bytes compared (a longer one is none of ours) */

/*
 * How a key (a table's, then its own parts after it) stands to the setting's, its state:
 * ELSEWHERE; or the number of its parts that are the setting's first ones (0: the root table;
 * want_count: the setting itself); or below (want_count + 1) when it has the setting's parts and
 * more (the setting would be a table).
 */
#define ELSEWHERE (-1)

struct reader {
	const char *at, *end;
	const char *want[2]; /* the setting's key: table and key, or key alone */
	int want_count, below;
	char *value;
	size_t size;
	unsigned found;
	bool table_seen; /* [table] once: twice is no TOML */
	bool bad;
};

static bool fail(struct reader *r)
{
	r->bad = true;
	return false;
}

static int peek(const struct reader *r, size_t ahead)
{
	return (size_t)(r->end - r->at) > ahead ? (unsigned char)r->at[ahead] : -1;
}

static void skip_blank(struct reader *r)
{
	while (r->at < r->end && (*r->at == ' ' || *r->at == '\t'))
		r->at++;
}

/* A newline (LF or CRLF), taken. */
static bool newline(struct reader *r)
{
	if (peek(r, 0) == '\n') {
		r->at++;
		return true;
	}
	if (peek(r, 0) == '\r' && peek(r, 1) == '\n') {
		r->at += 2;
		return true;
	}
	return false;
}

/* A comment to the end of its line (the newline left). */
static void skip_comment(struct reader *r)
{
	if (peek(r, 0) != '#')
		return;
	while (r->at < r->end && *r->at != '\n' && !(*r->at == '\r' && peek(r, 1) == '\n'))
		r->at++;
}

/* Blank space, comments and newlines, as between an array's values. */
static void skip_space(struct reader *r)
{
	for (;;) {
		skip_blank(r);
		skip_comment(r);
		if (!newline(r))
			return;
	}
}

/* The end of a line after a header or a key's value: blank space, a comment, then a newline or the end. */
static bool end_of_line(struct reader *r)
{
	skip_blank(r);
	skip_comment(r);
	return r->at == r->end || newline(r) || fail(r);
}

/* ---- Strings -------------------------------------------------------------------------------------- */

/* Where a string's bytes go: out (NULL: nowhere) of size, len of them so far; too long or a NUL: unusable. */
struct sink {
	char *out;
	size_t size, len;
	bool unusable;
};

static void put(struct sink *s, const char *bytes, size_t count)
{
	if (!s->out)
		return;
	if (memchr(bytes, '\0', count) || count >= s->size - s->len) {
		s->unusable = true;
		return;
	}
	memcpy(s->out + s->len, bytes, count);
	s->len += count;
	s->out[s->len] = '\0';
}

static void put_code_point(struct sink *s, uint32_t c)
{
	char utf8[4];
	size_t n;

	if (c < 0x80) {
		utf8[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		utf8[0] = (char)(0xc0 | c >> 6);
		utf8[1] = (char)(0x80 | (c & 0x3f));
		n = 2;
	} else if (c < 0x10000) {
		utf8[0] = (char)(0xe0 | c >> 12);
		utf8[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		utf8[2] = (char)(0x80 | (c & 0x3f));
		n = 3;
	} else {
		utf8[0] = (char)(0xf0 | c >> 18);
		utf8[1] = (char)(0x80 | ((c >> 12) & 0x3f));
		utf8[2] = (char)(0x80 | ((c >> 6) & 0x3f));
		utf8[3] = (char)(0x80 | (c & 0x3f));
		n = 4;
	}
	put(s, utf8, n);
}

/* A byte a string may hold as it is: not a control character but tab (and newlines, multi-line). */
static bool plain_byte(int c)
{
	return c == '\t' || (c >= 0x20 && c != 0x7f);
}

/* An escape of a basic string, after its backslash: \b \t \n \f \r \e \" \\ \xHH \uHHHH \UHHHHHHHH. */
static bool escape(struct reader *r, struct sink *s)
{
	static const char from[] = "btnfre\"\\", to[] = "\b\t\n\f\r\x1b\"\\";
	const char *simple;
	int c = peek(r, 0), digits;
	uint32_t code = 0;

	if (c > 0 && (simple = strchr(from, c))) {
		put(s, &to[simple - from], 1);
		r->at++;
		return true;
	}
	digits = c == 'x' ? 2 : c == 'u' ? 4 : c == 'U' ? 8 : 0;
	if (!digits)
		return fail(r);
	r->at++;
	for (int i = 0; i < digits; i++) {
		int h = peek(r, 0);

		if (h >= '0' && h <= '9')
			code = code << 4 | (uint32_t)(h - '0');
		else if ((h | 0x20) >= 'a' && (h | 0x20) <= 'f')
			code = code << 4 | (uint32_t)((h | 0x20) - 'a' + 10);
		else
			return fail(r);
		r->at++;
	}
	if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff))
		return fail(r);
	put_code_point(s, code);
	return true;
}

/*
 * After a backslash in a multi-line basic string: blank space to the end of the line, then every
 * newline and blank after it, skipped (none of it the string's).
 */
static bool line_ending_backslash(struct reader *r)
{
	const char *back = r->at;

	skip_blank(r);
	if (!newline(r)) {
		r->at = back;
		return false;
	}
	do
		skip_blank(r);
	while (newline(r));
	return true;
}

/*
 * A string of any kind at r->at, its bytes (escapes undone) into s: "basic", 'literal', and their
 * multi-line kinds (not allowed for keys), whose newline right after the opening is not theirs.
 */
static bool string(struct reader *r, struct sink *s, bool multi_line_allowed)
{
	char quote = *r->at;
	bool basic = quote == '"', multi = peek(r, 1) == quote && peek(r, 2) == quote;

	if (multi && !multi_line_allowed)
		return fail(r);
	r->at += multi ? 3 : 1;
	if (multi)
		newline(r);
	for (;;) {
		int c = peek(r, 0);

		if (c == quote && !multi) {
			r->at++;
			return true;
		}
		if (c == quote) { /* three end it, after up to two of the string's own */
			size_t run = 1;

			while (run < 6 && peek(r, run) == quote)
				run++;
			if (run == 6)
				return fail(r);
			put(s, r->at, run >= 3 ? run - 3 : run);
			r->at += run;
			if (run >= 3)
				return true;
		} else if (basic && c == '\\') {
			r->at++;
			if (!multi || !line_ending_backslash(r)) {
				if (!escape(r, s))
					return false;
			}
		} else if (multi && (c == '\n' || c == '\r')) {
			if (!newline(r))
				return fail(r);
			put(s, "\n", 1);
		} else if (plain_byte(c)) {
			put(s, r->at, 1);
			r->at++;
		} else { /* the end, a newline in a one-line string, a control character */
			return fail(r);
		}
	}
}

/* ---- Keys and values ------------------------------------------------------------------------------ */

/* The state of a key after one more part. */
static int step(const struct reader *r, int state, const char *part, size_t len)
{
	if (state == ELSEWHERE)
		return ELSEWHERE;
	if (state >= r->want_count)
		return r->below;
	return len == strlen(r->want[state]) && !memcmp(part, r->want[state], len) ? state + 1 : ELSEWHERE;
}

static bool bare_key_byte(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

/* A dotted key (bare and quoted parts) from state: the state it leads to; ELSEWHERE with r->bad set when it is none. */
static int key(struct reader *r, int state)
{
	for (;;) {
		int c;

		skip_blank(r);
		c = peek(r, 0);
		if (c == '"' || c == '\'') {
			char part[KEY_PART_MAX];
			struct sink s = { .out = part, .size = sizeof(part) };

			part[0] = '\0';
			if (!string(r, &s, false))
				return ELSEWHERE;
			state =
			    s.unusable ? (state < r->want_count ? ELSEWHERE : r->below) : step(r, state, part, s.len);
		} else if (bare_key_byte(c)) {
			const char *part = r->at;

			while (bare_key_byte(peek(r, 0)))
				r->at++;
			state = step(r, state, part, (size_t)(r->at - part));
		} else {
			fail(r);
			return ELSEWHERE;
		}
		skip_blank(r);
		if (peek(r, 0) != '.')
			return state;
		r->at++;
	}
}

static bool value(struct reader *r, int state, unsigned depth);

/* "key = value" from state (the table's, or an inline table's). */
static bool key_value(struct reader *r, int state, unsigned depth)
{
	state = key(r, state);
	if (r->bad)
		return false;
	if (peek(r, 0) != '=')
		return fail(r);
	r->at++;
	skip_blank(r);
	return value(r, state, depth);
}

/*
 * [ value, ... ], an array (keys in it are none of the setting's), or { key = value, ... }, an
 * inline table (keys from state); newlines and comments anywhere between, a comma after the last
 * allowed (TOML 1.1 allows them in inline tables too).
 */
static bool sequence(struct reader *r, int state, unsigned depth)
{
	char close = *r->at == '[' ? ']' : '}';

	r->at++;
	for (;;) {
		skip_space(r);
		if (peek(r, 0) == close)
			break;
		if (!(close == ']' ? value(r, ELSEWHERE, depth + 1) : key_value(r, state, depth + 1)))
			return false;
		skip_space(r);
		if (peek(r, 0) == ',')
			r->at++;
		else if (peek(r, 0) != close)
			return fail(r);
	}
	r->at++;
	return true;
}

static bool scalar_byte(int c)
{
	return bare_key_byte(c) || c == '+' || c == '.' || c == ':';
}

/* A number, a boolean or a date: a run of their characters ("1979-05-27 07:32:00" has a space in it). */
static bool scalar(struct reader *r)
{
	const char *start = r->at;

	while (scalar_byte(peek(r, 0)))
		r->at++;
	if (r->at - start == 10 && start[4] == '-' && start[7] == '-' && peek(r, 0) == ' ' && peek(r, 1) >= '0' &&
	    peek(r, 1) <= '9') {
		r->at++;
		while (scalar_byte(peek(r, 0)))
			r->at++;
	}
	return r->at > start || fail(r);
}

/* A key's value, the setting's taken when state says it is the setting. */
static bool value(struct reader *r, int state, unsigned depth)
{
	int c = peek(r, 0);

	if (depth > DEPTH_MAX || state == r->below)
		return fail(r); /* too deep; the setting a table */
	if (state == r->want_count) { /* the setting: a string, once */
		struct sink s = { .out = r->value, .size = r->size };

		if ((c != '"' && c != '\'') || ++r->found > 1)
			return fail(r);
		r->value[0] = '\0';
		if (!string(r, &s, true))
			return false;
		return !s.unusable || fail(r);
	}
	if (state > 0) /* a table above the setting: an inline table, or no table at all */
		return c == '{' ? sequence(r, state, depth) : fail(r);
	if (c == '"' || c == '\'') {
		struct sink nowhere = { 0 };

		return string(r, &nowhere, true);
	}
	if (c == '[' || c == '{')
		return sequence(r, ELSEWHERE, depth);
	return scalar(r);
}

/* [table] or [[array of tables]]: the state of the keys under it. */
static int header(struct reader *r)
{
	bool array_of_tables = peek(r, 1) == '[';
	int state;

	r->at += array_of_tables ? 2 : 1;
	state = key(r, 0);
	if (r->bad)
		return ELSEWHERE;
	if (peek(r, 0) != ']' || (array_of_tables && peek(r, 1) != ']')) {
		fail(r);
		return ELSEWHERE;
	}
	r->at += array_of_tables ? 2 : 1;
	if (!end_of_line(r))
		return ELSEWHERE;
	if (state == ELSEWHERE)
		return ELSEWHERE;
	/* The setting or a table above it made an array, or the setting a table: no string there. */
	if (array_of_tables || state >= r->want_count) {
		fail(r);
		return ELSEWHERE;
	}
	if (state == r->want_count - 1 && state > 0) {
		if (r->table_seen) {
			fail(r);
			return ELSEWHERE;
		}
		r->table_seen = true;
	}
	return state;
}

enum setting toml_string(const char *text, size_t len, const char *table, const char *key_name, char *value_out,
			 size_t size)
{
	struct reader r = { .at = text, .end = text + len, .value = value_out, .size = size };
	int table_state = 0;

	if (size)
		value_out[0] = '\0';
	if (!size || !key_name)
		return SETTING_BAD;
	if (table)
		r.want[r.want_count++] = table;
	r.want[r.want_count++] = key_name;
	r.below = r.want_count + 1;
	if (memchr(text, '\0', len))
		return SETTING_BAD;
	while (!r.bad && r.at < r.end) {
		skip_blank(&r);
		skip_comment(&r);
		if (r.at == r.end || newline(&r))
			continue;
		if (*r.at == '[')
			table_state = header(&r);
		else if (key_value(&r, table_state, 0))
			end_of_line(&r);
	}
	if (r.bad) {
		value_out[0] = '\0';
		return SETTING_BAD;
	}
	return r.found ? SETTING_FOUND : SETTING_ABSENT;
}
