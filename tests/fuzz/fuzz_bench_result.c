/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_bench_result.c: libFuzzer target for bench's JSON reader (--compare, --show-capacity):
 * whatever parses compares with itself as no difference.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "workload/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct bench_result_doc doc;
	char why[512] = "";

	if (bench_result_parse((const char *)data, size, &doc, why, sizeof(why)) != 0) {
		if (!why[0] || doc.ncases)
			abort(); /* a refusal says why, and leaves no cases */
		return 0;
	}
	if (!doc.ncases || doc.ncases > BENCH_RESULT_MAX_CASES)
		abort();
	for (unsigned i = 0; i < doc.ncases; i++) {
		const struct bench_case *c = &doc.cases[i];
		double change;

		/* Every case is found by its name, lies within its runs, and equals itself. */
		if (bench_result_find(&doc, c->name) != c || !c->name[0] || c->runs < 1 || c->runs_min > c->runs_max ||
		    bench_case_compare(c, c, 0, &change) != 0 || (c->bytes_per_s > 0 && change != 0))
			abort();
	}
	return 0;
}
