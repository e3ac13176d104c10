/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz_fdinfo.c: libFuzzer target for the /proc/PID/fdinfo/N parser. */
#include <stdint.h>
#include <stdlib.h>

#include "collect/fdinfo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fdinfo info;

	/* Only a parse that found both pos and flags may succeed: it never reads past size. */
	fdinfo_parse((const char *)data, size, &info);
	return 0;
}
