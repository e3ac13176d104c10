/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * restamp.c: copies a flight recorder's store, frame by frame, into another, the stamps of the
 * frames from the FROM-th on (0 the first) moved by REAL seconds (UTC) and MONO seconds
 * (monotonic): a clock set or a restart between two frames, for tests/cli/record_gaps.sh. With
 * --repeat, the store's frames written TIMES over, each time STEP seconds later by both clocks:
 * a day of frames from a minute's, for bench/record-cost.sh.
 *
 *   restamp IN OUT FROM REAL [MONO]
 *   restamp --repeat TIMES STEP IN OUT
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

int main(int argc, char **argv)
{
	struct store_options options = { .compress = true };
	struct store_reader *reader;
	struct store_frame frame;
	struct store *out;
	long long from, real, mono;
	char why[512];
	unsigned n = 0;

	long long times = 1, step = 0;

	if (argc == 6 && !strcmp(argv[1], "--repeat")) {
		times = atoll(argv[2]);
		step = atoll(argv[3]) * 1000000000ll;
		argv += 3;
		argc = 3;
	} else if (argc < 5 || argc > 6) {
		fprintf(stderr, "usage: restamp IN OUT FROM REAL [MONO]\n       restamp --repeat TIMES STEP IN OUT\n");
		return 2;
	}
	from = argc > 3 ? atoll(argv[3]) : 0;
	real = argc > 4 ? atoll(argv[4]) * 1000000000ll : 0;
	mono = argc > 5 ? atoll(argv[5]) * 1000000000ll : 0;
	options.dir = argv[2];
	if (store_open(&out, &options, why, sizeof(why)) != 0) {
		fprintf(stderr, "restamp: %s\n", why);
		return 1;
	}
	for (long long k = 0; k < times; k++) {
		if (store_reader_open(&reader, argv[1], 0, UINT64_MAX, why, sizeof(why)) != 0) {
			fprintf(stderr, "restamp: %s\n", why);
			return 1;
		}
		while (store_reader_next(reader, &frame) == 1) {
			int64_t r = (int64_t)frame.real_ns + k * step + (n >= from ? real : 0),
				m = (int64_t)frame.mono_ns + k * step + (n >= from ? mono : 0);

			if (store_append(out, frame.kind, (uint64_t)r, (uint64_t)m, frame.data, frame.len, why,
					 sizeof(why)) != 0) {
				fprintf(stderr, "restamp: %s\n", why);
				return 1;
			}
			n++;
		}
		store_reader_close(reader);
	}
	store_close(out);
	printf("%u\n", n);
	return 0;
}
