/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz_procmaps.c: libFuzzer target for the /proc/PID/maps and smaps line parser. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collect/procmaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = malloc(size + 1);
	struct procmaps_entry entry;

	if (!line)
		return 0;
	memcpy(line, data, size);
	line[size] = '\0';
	if (procmaps_parse_line(line, &entry)) {
		/* What it returns points into the line, and the fields are in range. */
		if (entry.path < line || entry.path > line + size || entry.major > 0xfff || entry.minor > 0xfffff ||
		    strlen(entry.perms) != 4)
			abort();
	}
	free(line);
	return 0;
}
