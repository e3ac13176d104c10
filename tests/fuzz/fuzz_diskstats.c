/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_diskstats.c: libFuzzer target for the /proc/diskstats and /proc/devices parsers, and iostat
 * -x's figures between what two halves of the input parse to.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collect/diskstats.h"
#include "model/disk.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every figure is a finite number: counters going backwards or odd lines make 0, never NaN or infinity. */
static void compute_all(const struct diskstats *before, const struct diskstats *after)
{
	static const double intervals[] = {1.0, 0.0, -1.0, 1e-9, 1e300, NAN};
	unsigned i, j;

	for (i = 0; i < after->count; i++) {
		const struct disk_stats *b = &after->disk[i];
		const struct disk_stats *a = diskstats_find(before, b->name);

		if (!a)
			a = before->count ? &before->disk[i % before->count] : b;
		for (j = 0; j < sizeof(intervals) / sizeof(intervals[0]); j++) {
			struct disk_ext x;
			const double *v;

			disk_ext_compute(a, b, intervals[j], &x);
			for (v = &x.r_s; v <= &x.util; v++)
				if (!isfinite(*v) || *v < 0)
					abort();
			if (x.util > 100)
				abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct diskstats whole, first, second;
	size_t half = size / 2;

	/* The parser is given exactly size bytes: ASan catches any read past them. */
	if (diskstats_parse((const char *)data, size, &whole) == 0) {
		if (whole.count > size)
			abort();
		compute_all(&whole, &whole);
		diskstats_free(&whole);
	}
	if (diskstats_parse((const char *)data, half, &first) == 0) {
		if (diskstats_parse((const char *)data + half, size - half, &second) == 0) {
			compute_all(&first, &second);
			compute_all(&second, &first);
			diskstats_free(&second);
		}
		diskstats_free(&first);
	}
	/* The same bytes as /proc/devices: every driver name ends within its field. */
	{
		struct block_driver *drivers;
		unsigned n = diskstats_block_drivers((const char *)data, size, &drivers);
		if (n > size)
			abort();
		for (unsigned i = 0; i < n; i++)
			if (strnlen(drivers[i].name, sizeof(drivers[i].name)) == sizeof(drivers[i].name))
				abort();
		free(drivers);
	}
	return 0;
}
