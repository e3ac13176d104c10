/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * json_dl.c: json-c, opened with dlopen the first time one of its functions is called (dl.h),
 * not linked, so that a start-up that prints no JSON (a table, CSV) does not load it.
 *
 * The functions iolens uses are defined here under json-c's own names, each calling the
 * library's through a pointer; json-c's header still gives their types (a definition that
 * differs from it does not compile) and its constants. A json-c function used anywhere new
 * must be added to JSON_FUNCTIONS, or the link says which one is missing.
 */
#include <json-c/json.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/dl.h"
#include "common/util.h"

/* X(return type, name, parameters, arguments) */
#define JSON_FUNCTIONS(X)                                                                                    \
	X(int, json_object_array_add, (struct json_object *obj, struct json_object *val), (obj, val))        \
	X(struct json_object *, json_object_array_get_idx, (const struct json_object *obj, size_t idx), (obj, idx)) \
	X(size_t, json_object_array_length, (const struct json_object *obj), (obj))                            \
	X(double, json_object_get_double, (const struct json_object *obj), (obj))                              \
	X(const char *, json_object_get_string, (struct json_object *obj), (obj))                              \
	X(int, json_object_get_string_len, (const struct json_object *obj), (obj))                             \
	X(int, json_object_is_type, (const struct json_object *obj, enum json_type type), (obj, type))        \
	X(struct json_object *, json_object_new_array, (void), ())                                             \
	X(struct json_object *, json_object_new_array_ext, (int initial_size), (initial_size))                 \
	X(struct json_object *, json_object_new_boolean, (json_bool b), (b))                                   \
	X(struct json_object *, json_object_new_double_s, (double d, const char *ds), (d, ds))                \
	X(struct json_object *, json_object_new_int64, (int64_t i), (i))                                       \
	X(struct json_object *, json_object_new_object, (void), ())                                            \
	X(struct json_object *, json_object_new_string, (const char *s), (s))                                  \
	X(struct json_object *, json_object_new_uint64, (uint64_t i), (i))                                     \
	X(int, json_object_object_add, (struct json_object *obj, const char *key, struct json_object *val),   \
	  (obj, key, val))                                                                                     \
	X(json_bool, json_object_object_get_ex,                                                                \
	  (const struct json_object *obj, const char *key, struct json_object **value), (obj, key, value))   \
	X(int, json_object_put, (struct json_object *obj), (obj))                                              \
	X(const char *, json_object_to_json_string_ext, (struct json_object *obj, int flags), (obj, flags))   \
	X(const char *, json_tokener_error_desc, (enum json_tokener_error jerr), (jerr))                       \
	X(void, json_tokener_free, (struct json_tokener *tok), (tok))                                          \
	X(enum json_tokener_error, json_tokener_get_error, (struct json_tokener *tok), (tok))                  \
	X(size_t, json_tokener_get_parse_end, (struct json_tokener *tok), (tok))                               \
	X(struct json_tokener *, json_tokener_new, (void), ())                                                 \
	X(struct json_tokener *, json_tokener_new_ex, (int depth), (depth))                                    \
	X(struct json_object *, json_tokener_parse_ex, (struct json_tokener *tok, const char *str, int len),  \
	  (tok, str, len))

#define JSON_POINTER(type, name, params, args) static DLSYM_POINTER(name);
JSON_FUNCTIONS(JSON_POINTER)

static void *libjson;
static pthread_once_t json_once = PTHREAD_ONCE_INIT;

#define JSON_ARG(type, name, params, args) DLSYM_ARG(name),

static void json_open(void)
{
	char why[256];

	if (dl_open_many(&libjson, JSONC_SONAME, why, sizeof(why), JSON_FUNCTIONS(JSON_ARG) NULL) != 0) {
		fprintf(stderr, "%s needs %s\n", program_name, why); /* as export says it */
		exit(EXIT_FAIL);
	}
}

#define JSON_DEFINE(type, name, params, args)                   \
	type name params                                        \
	{                                                       \
		pthread_once(&json_once, json_open);            \
		return sym_##name args;                         \
	}
JSON_FUNCTIONS(JSON_DEFINE)
