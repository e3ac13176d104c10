/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_memcg.c: libFuzzer target that feeds each input to the parsers of collect/memcg.h
 * (/proc/PID/cgroup, memory.stat, limits).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collect/memcg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	char v2[64], v1[64];
	uint64_t value;

	/* The input has no NUL after it: ASan stops any parser that reads past size. */
	if (memcg_cgroup_parse(text, size, v2, sizeof(v2), v1, sizeof(v1)) == 0) {
		/* Paths end inside their buffers, start with '/' when found, and hold no newline. */
		if (!memchr(v2, '\0', sizeof(v2)) || !memchr(v1, '\0', sizeof(v1)))
			abort();
		if ((v2[0] && v2[0] != '/') || (v1[0] && v1[0] != '/') || strchr(v2, '\n') || strchr(v1, '\n'))
			abort();
	}
	memcg_stat_value(text, size, "workingset_refault_file", &value);
	memcg_stat_value(text, size, "max", &value);
	if (memcg_limit_parse(text, size, &value) == 0 && value != MEMCG_UNLIMITED && value >= (1ull << 62))
		abort();
	return 0;
}
