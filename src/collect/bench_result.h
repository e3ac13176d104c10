/* SPDX-License-Identifier: GPL-2.0-or-later */
/* bench_result.h: bench's JSON read back (--compare, --show-capacity, the capacity store): its cases by name. */
#ifndef IOLENS_COLLECT_BENCH_RESULT_H
#define IOLENS_COLLECT_BENCH_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BENCH_RESULT_MAX_CASES 64
#define BENCH_RESULT_MAX_BYTES (16u << 20) /* more is no document bench wrote */

/* One point of a bench document, as --compare and the capacity store need it. */
struct bench_case {
	char name[48];       /* the point's "case" (--profile: "seq1m_q8t1_read"), else "MODE-RW-BS-qdQD" */
	uint64_t bs;
	unsigned qd;
	double bytes_per_s, iops;   /* the point's (the median run's with --repeat) */
	double lat_p50_ns, lat_p99_ns; /* NaN when the document has none */
	unsigned runs;       /* runs measured: 1 without --repeat */
	double runs_min, runs_max;  /* lowest and highest bytes_per_s of the runs (the point's own without --repeat) */
};

struct bench_result_doc {
	char rw[16];          /* the document's "rw" ("profile" for --profile) */
	char sweep[16];       /* its "sweep" */
	unsigned ncases;
	struct bench_case cases[BENCH_RESULT_MAX_CASES];
	/* Set when the document was saved as a disk's capacity (its "capacity" object). */
	bool has_capacity;
	char capacity_key[160], capacity_disk[64], capacity_source[16];
	double capacity_saved_s; /* seconds since the epoch; NaN when absent */
};

/*
 * Reads a bench --json document (text of len bytes, not NUL-terminated needed): 0, or -1
 * with why saying what is wrong ("not JSON at offset 12", "points[3]: no bytes_per_s").
 * Every field is checked: this is a parser of outside input.
 */
int bench_result_parse(const char *text, size_t len, struct bench_result_doc *out, char *why, size_t why_len);
/* The same from a file ("-": standard input): 0, or -1 with why (which names the file). */
int bench_result_load(const char *path, struct bench_result_doc *out, char *why, size_t why_len);

/* A case of a document by name, or NULL. */
const struct bench_case *bench_result_find(const struct bench_result_doc *doc, const char *name);

#endif
