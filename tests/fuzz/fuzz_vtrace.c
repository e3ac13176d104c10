/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz_vtrace.c: libFuzzer target for libvtrace's segment reader (and the /proc/PID/stat parser it uses). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <vtrace.h>

#include "proc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct vtrace_stats stats[VTRACE_MAX_OPS + 1];
	struct vtrace_reader *reader;
	const char *why = NULL;
	uint64_t now, start_time;

	vtrace_parse_stat_start_time((const char *)data, size, &start_time);
	if (vtrace_reader_open_memory(data, size, &reader, &why) != 0) {
		if (!why)
			abort(); /* a refusal always says why */
		return 0;
	}
	const struct vtrace_info *info = vtrace_reader_info(reader);
	if (info->op_count == 0 || info->op_count > VTRACE_MAX_OPS || strlen(info->service) == 0)
		abort();
	for (unsigned op = 0; op < info->op_count; op++)
		if (!vtrace_reader_op_name(reader, op) || strlen(vtrace_reader_op_name(reader, op)) >= 56)
			abort();
	if (vtrace_reader_sample(reader, stats, &now, &why) == 0) {
		for (unsigned op = 0; op <= info->op_count; op++)
			vtrace_histogram_quantile(stats[op].histogram, 0.99);
	}
	vtrace_reader_close(reader);
	return 0;
}
