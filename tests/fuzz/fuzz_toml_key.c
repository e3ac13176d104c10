/* fuzz_toml_key.c: libFuzzer target that feeds each input to the reader of one TOML setting (common/toml_key.h), in a table and in the root table. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/toml_key.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* One setting: the value a string of fewer than size bytes when found, empty else; the same each time. */
static void check_setting(const char *text, size_t len, const char *table, const char *key, size_t size)
{
	char value[32], again[32];
	enum setting said = toml_string(text, len, table, key, value, size);

	if (strnlen(value, size) == size || (said != SETTING_FOUND && value[0]) ||
	    toml_string(text, len, table, key, again, size) != said || strcmp(value, again))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;

	/* The input has no NUL after it: ASan stops any reader that reads past size. */
	check_setting(text, size, "storage", "graphroot", 32);
	check_setting(text, size, "storage", "graphroot", 4);
	check_setting(text, size, NULL, "root", 32);
	check_setting(text, size, NULL, "data_root", 1);
	return 0;
}
