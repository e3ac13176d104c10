/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz_size.c: libFuzzer target for the size and range parsers behind --range and friends. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	uint64_t value, offset, length;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	parse_size(text, &value);
	parse_u64(text, &value);
	if (parse_range(text, &offset, &length) == 0 && !strchr(text, ':') && length != 0)
		abort(); /* no LENGTH means to the end */
	free(text);
	return 0;
}
