/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench.h: what iolens bench computes apart from the I/O: block-size lists, durations, the knee,
 * the latency target, the SVG chart.
 */
#ifndef IOLENS_BENCH_H
#define IOLENS_BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define BENCH_MAX_POINTS 32

/*
 * Block sizes as --bs takes them: one size ("4k"), a list ("4k,64k,1m"; put in increasing
 * order, each once), or a range swept doubling ("4k-1m": 4k, 8k ... 1m; the last is the
 * upper bound even when not a doubling). Each from 512 bytes to 64 MiB. The count (at
 * most max), or -EINVAL.
 */
int bench_parse_sizes(const char *text, uint64_t *out, unsigned max);

/* A time as --latency-target takes it: "500us", "2ms", "0.1s", "1500ns"; a bare number is ms. 0 or -EINVAL. */
int bench_parse_duration(const char *text, uint64_t *ns);

/*
 * The knee of a sweep: index of the smallest point reaching fraction of the peak, and the
 * peak's index. A knee below the peak is confirmed by the plateau up to it. A knee that is the
 * peak itself is not confirmed (why) when it is the last point (throughput may still have been
 * rising when the sweep ended: KNEE_LAST), or when the peak may be noise (KNEE_NOISE): the spread
 * of its runs ((highest - lowest) / median, spread(i), NAN for a single run; spread may be NULL)
 * is wider than the knee's margin, 1 - fraction; or, for a single run, no larger point comes
 * within fraction of it.
 */
enum bench_knee_why { KNEE_CONFIRMED, KNEE_LAST, KNEE_NOISE };
struct bench_knee {
	int index, peak; /* -1 when there are no points */
	bool unconfirmed;
	enum bench_knee_why why;
};
/* value(i) is the throughput of point i, the points in increasing order of what was swept. */
struct bench_knee bench_find_knee(unsigned count, double (*value)(unsigned index, void *context),
				  double (*spread)(unsigned index, void *context), void *context, double fraction);

/* The deepest point (the last in sweep order) whose p99 is within limit_ns: its index, or -1. */
int bench_latency_target(unsigned count, uint64_t (*p99)(unsigned index, void *context), void *context,
			 uint64_t limit_ns);

/* One point of the chart: x is the block size in bytes, or the queue depth; label names a mode. */
struct bench_svg_value {
	uint64_t x;
	const char *label;
	double mb_per_s, iops;
};
enum bench_svg_kind {
	BENCH_SVG_BS,    /* lines against the block size, on a log2 axis */
	BENCH_SVG_QD,    /* lines against the queue depth, on a log2 axis */
	BENCH_SVG_MODES, /* bars, a pair (MB/s, IOPS) for each point, named by its label (--compare-cache) */
};
/*
 * An SVG chart of MB/s (left axis) and IOPS (right axis), laid out here and written to out by
 * render/svg.c: lines against x with the knee (index, or -1) marked, or bars by mode. 0, or -1
 * with errno set when writing failed.
 */
int bench_svg(FILE *out, unsigned count, enum bench_svg_kind kind,
	      void (*point)(unsigned index, void *context, struct bench_svg_value *out), void *context, int knee);

#endif
