/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_escape.c: libFuzzer target for the escape every name from outside goes through (file,
 * process, cgroup, service names): escape_text with each set of flags, the JSON writer, and the
 * terminal's widths.
 */
#include <json-c/json.h>
#include <locale.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "render/out.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const unsigned flag_sets[] = {
	0,
	ESCAPE_BACKSLASH,
	ESCAPE_TERMINAL,
	ESCAPE_CONTROL | ESCAPE_KEEP_BREAKS | ESCAPE_BACKSLASH,
	ESCAPE_CONTROL | ESCAPE_LOCALE | ESCAPE_BACKSLASH_X,
};

/* The documented way back (iolens(1), NAMES IN OUTPUT): each \xNN is the byte NN. */
static char *unescape(const char *text)
{
	static const char hex[] = "0123456789abcdef";
	char *out = malloc(strlen(text) + 1), *o = out;

	if (!out)
		abort();
	for (const char *p = text; *p;) {
		const char *high, *low;

		if (p[0] == '\\' && p[1] == 'x' && p[2] && (high = strchr(hex, p[2])) && p[3] &&
		    (low = strchr(hex, p[3]))) {
			*o++ = (char)((high - hex) << 4 | (low - hex));
			p += 4;
		} else {
			*o++ = *p++;
		}
	}
	*o = '\0';
	return out;
}

/* The escaped text: valid UTF-8; with ESCAPE_CONTROL nothing hidden in it; read back exactly. */
static void check_escape(const char *text, unsigned flags)
{
	char *out = escape_text(text, flags), *back;
	size_t width, bytes;

	for (const char *p = out; *p;) {
		uint32_t c;
		size_t len = utf8_decode(p, &c);

		if (!len)
			abort(); /* not UTF-8 */
		if ((flags & ESCAPE_CONTROL) && char_hidden(c) &&
		    !((flags & ESCAPE_KEEP_BREAKS) && (c == '\n' || c == '\t')))
			abort(); /* a control, an override or an invisible character left as it is */
		p += len;
	}
	if (flags & (ESCAPE_BACKSLASH | ESCAPE_BACKSLASH_X)) {
		back = unescape(out);
		if (strcmp(back, text))
			abort(); /* the name does not read back */
		free(back);
	}
	/* Never more than asked, never half a character. */
	bytes = text_fit(out, 7, &width);
	if (width > 7 || bytes > strlen(out) || (out[bytes] && (out[bytes] & 0xc0) == 0x80))
		abort();
	free(out);
}

/* The name as JSON writes it (out_json_string, json-c): nothing hidden left, and the same string back. */
static void check_json(const char *text)
{
	struct json_object *value = out_json_string(text), *parsed;
	const char *json = json_object_to_json_string_ext(value, JSON_C_TO_STRING_PLAIN);
	char *out = NULL, *escaped = escape_text(text, ESCAPE_BACKSLASH);
	size_t len = 0;
	FILE *stream = open_memstream(&out, &len);

	if (!stream)
		abort();
	out_json_write(stream, json, strlen(json));
	fclose(stream);
	for (size_t i = 0; i < len;) {
		uint32_t c;
		size_t n = utf8_decode(out + i, &c);

		if (!n || char_hidden(c))
			abort();
		i += n;
	}
	parsed = json_tokener_parse(out);
	if (!parsed || !json_object_is_type(parsed, json_type_string) ||
	    strcmp(json_object_get_string(parsed), escaped))
		abort(); /* \uXXXX is the same string to a parser */
	json_object_put(parsed);
	json_object_put(value);
	free(escaped);
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int locale_set;
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	if (!locale_set++)
		setlocale(LC_CTYPE, "C.UTF-8"); /* as iolens, from a UTF-8 environment */
	memcpy(text, data, size);
	text[size] = '\0';
	for (size_t i = 0; i < sizeof(flag_sets) / sizeof(flag_sets[0]); i++)
		check_escape(text, flag_sets[i]);
	check_json(text);
	free(text);
	return 0;
}
