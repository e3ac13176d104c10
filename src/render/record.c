/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * record.c: typed records kept as json-c values and written as JSON; with table.c, the only writer
 * of JSON (json-c reads the runtimes' files and bench results elsewhere).
 */
#include "render/record.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "render/out.h"

/* A record is a json-c object, a list a json-c array: the casts below are the whole of it. */
static struct json_object *obj(struct out_record *r)
{
	return (struct json_object *)r;
}

static struct json_object *arr(struct out_list *l)
{
	return (struct json_object *)l;
}

struct out_record *out_record_new(void)
{
	return (struct out_record *)json_object_new_object();
}

void out_record_free(struct out_record *record)
{
	json_object_put(obj(record));
}

static void put(struct out_record *r, const char *key, struct json_object *value)
{
	json_object_object_add(obj(r), key, value);
}

/* The unit a key names (record.h): a key that does not say it is a bug, told once. */
static void check_unit(const char *key, const char *suffix, const char *alone)
{
	static bool told;
	size_t k = strlen(key), s = strlen(suffix);

	if ((k > s && strcmp(key + k - s, suffix) == 0) || (alone && strcmp(key, alone) == 0))
		return;
	if (!told)
		fprintf(stderr, "iolens: internal: output field '%s' does not end in '%s'\n", key, suffix);
	told = true;
}

void out_rec_text(struct out_record *r, const char *key, const char *text)
{
	put(r, key, out_json_string(text));
}

void out_rec_bool(struct out_record *r, const char *key, bool value)
{
	put(r, key, json_object_new_boolean(value));
}

void out_rec_count(struct out_record *r, const char *key, uint64_t value)
{
	put(r, key, json_object_new_uint64(value));
}

void out_rec_count_if(struct out_record *r, const char *key, uint64_t value, bool known)
{
	put(r, key, known ? json_object_new_uint64(value) : NULL);
}

void out_rec_int(struct out_record *r, const char *key, int64_t value)
{
	put(r, key, json_object_new_int64(value));
}

void out_rec_ns(struct out_record *r, const char *key, uint64_t value)
{
	out_rec_ns_if(r, key, value, true);
}

void out_rec_ns_if(struct out_record *r, const char *key, uint64_t value, bool known)
{
	check_unit(key, "_ns", NULL);
	out_rec_count_if(r, key, value, known);
}

void out_rec_bytes(struct out_record *r, const char *key, uint64_t value)
{
	out_rec_bytes_if(r, key, value, true);
}

void out_rec_bytes_if(struct out_record *r, const char *key, uint64_t value, bool known)
{
	check_unit(key, "_bytes", "bytes");
	out_rec_count_if(r, key, value, known);
}

void out_rec_real(struct out_record *r, const char *key, double value)
{
	put(r, key, isfinite(value) ? out_json_real(value) : NULL);
}

void out_rec_fixed(struct out_record *r, const char *key, double value, unsigned decimals)
{
	char buf[64];

	if (!isfinite(value)) {
		put(r, key, NULL);
		return;
	}
	snprintf(buf, sizeof(buf), "%.*f", (int)decimals, value);
	put(r, key, json_object_new_double_s(value, buf));
}

void out_rec_null(struct out_record *r, const char *key)
{
	put(r, key, NULL);
}

struct out_record *out_rec_object(struct out_record *r, const char *key)
{
	struct json_object *child = json_object_new_object();

	put(r, key, child);
	return (struct out_record *)child;
}

struct out_list *out_rec_list(struct out_record *r, const char *key)
{
	struct json_object *child = json_object_new_array();

	put(r, key, child);
	return (struct out_list *)child;
}

void out_rec_table(struct out_record *r, const char *key, struct out_table *table, const char *total_key)
{
	struct json_object *total = NULL;
	struct json_object *rows = out_table_take_json(table, &total);

	put(r, key, rows);
	if (total_key)
		put(r, total_key, total);
	else
		json_object_put(total);
}

struct out_record *out_list_object(struct out_list *list)
{
	struct json_object *child = json_object_new_object();

	json_object_array_add(arr(list), child);
	return (struct out_record *)child;
}

struct out_list *out_list_list(struct out_list *list)
{
	struct json_object *child = json_object_new_array();

	json_object_array_add(arr(list), child);
	return (struct out_list *)child;
}

void out_list_text(struct out_list *list, const char *text)
{
	json_object_array_add(arr(list), out_json_string(text));
}

void out_list_count(struct out_list *list, uint64_t value)
{
	json_object_array_add(arr(list), json_object_new_uint64(value));
}

void out_list_real(struct out_list *list, double value)
{
	json_object_array_add(arr(list), isfinite(value) ? out_json_real(value) : NULL);
}

size_t out_list_length(const struct out_list *list)
{
	return json_object_array_length((struct json_object *)list);
}

int out_record_write(const struct out_record *record, FILE *stream, enum out_record_style style)
{
	static const int flags[] = {
		[OUT_RECORD_LINE] = JSON_C_TO_STRING_PLAIN,
		[OUT_RECORD_SPACED] = JSON_C_TO_STRING_SPACED,
		[OUT_RECORD_PRETTY] = JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED,
	};
	const char *text = json_object_to_json_string_ext((struct json_object *)record,
							  flags[style] | JSON_C_TO_STRING_NOSLASHESCAPE);

	out_json_write(stream, text, strlen(text));
	if (fputc('\n', stream) == EOF || ferror(stream))
		return errno ? -errno : -EIO;
	return 0;
}
