/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_toml_key.c: libFuzzer target that feeds each input to the readers of the runtimes'
 * configuration: TOML's one setting (common/toml_key.h) in and out of a table, docker's
 * daemon.json, and the directory a setting names.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collect/container.h"
#include "common/toml_key.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A directory as taken: absolute, shorter than its buffer, no control character, no ".." part, no trailing '/'. */
static void check_dir(const char *value)
{
	char dir[64];
	size_t len;

	if (!container_config_dir(value, 1000, "/home/u", dir, sizeof(dir)))
		return;
	len = strnlen(dir, sizeof(dir));
	if (len == sizeof(dir) || dir[0] != '/' || (len > 1 && dir[len - 1] == '/'))
		abort();
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)dir[i] < 0x20 || dir[i] == 0x7f || dir[i] == '$' ||
		    (!strncmp(dir + i, "/..", 3) && (dir[i + 3] == '/' || dir[i + 3] == '\0')))
			abort();
}

/* One setting: the value a string of fewer than size bytes when found, empty else; the same each time. */
static void check_setting(const char *text, size_t len, const char *table, const char *key, size_t size)
{
	char value[32], again[32];
	enum setting said = toml_string(text, len, table, key, value, size);

	if (strnlen(value, size) == size || (said != SETTING_FOUND && value[0]) ||
	    toml_string(text, len, table, key, again, size) != said || strcmp(value, again))
		abort();
	if (said == SETTING_FOUND)
		check_dir(value);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	char value[32];
	enum setting said;

	/* The input has no NUL after it: ASan stops any reader that reads past size. */
	check_setting(text, size, "storage", "graphroot", sizeof(value));
	check_setting(text, size, "storage", "graphroot", 4);
	check_setting(text, size, NULL, "root", sizeof(value));
	check_setting(text, size, NULL, "data_root", 1);
	said = container_json_setting(text, size, "data-root", value, sizeof(value));
	if (strnlen(value, sizeof(value)) == sizeof(value) || (said != SETTING_FOUND && value[0]))
		abort();
	if (said == SETTING_FOUND)
		check_dir(value);
	/* The input itself as a setting's value */
	if (size < 256 && !memchr(data, '\0', size)) {
		char copy[256];

		memcpy(copy, data, size);
		copy[size] = '\0';
		check_dir(copy);
	}
	return 0;
}
