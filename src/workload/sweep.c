/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sweep.c: what iolens bench computes apart from the I/O: block-size lists, durations, the knee,
 * the latency target, the SVG chart's layout (render/svg.c writes it).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "workload/bench.h"
#include "common/util.h"
#include "render/svg.h"

#define MIN_BS 512ull
#define MAX_BS (64ull << 20)

static int one_size(const char *text, size_t length, uint64_t *out)
{
	char buf[64];

	if (!length || length >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, text, length);
	buf[length] = '\0';
	if (parse_size(buf, out) != 0 || *out < MIN_BS || *out > MAX_BS)
		return -EINVAL;
	return 0;
}

int bench_parse_sizes(const char *text, uint64_t *out, unsigned max)
{
	const char *dash = strchr(text, '-');
	unsigned count = 0;

	if (dash && !strchr(text, ',')) {
		uint64_t low, high;

		if (one_size(text, (size_t)(dash - text), &low) || one_size(dash + 1, strlen(dash + 1), &high) ||
		    low > high)
			return -EINVAL;
		for (uint64_t bs = low; bs < high; bs *= 2) {
			if (count == max)
				return -EINVAL;
			out[count++] = bs;
		}
		if (count == max)
			return -EINVAL;
		out[count++] = high;
		return (int)count;
	}
	for (const char *p = text;; ) {
		const char *comma = strchr(p, ',');
		size_t length = comma ? (size_t)(comma - p) : strlen(p);
		uint64_t size;
		unsigned at;

		if (one_size(p, length, &size))
			return -EINVAL;
		/* Kept in increasing order, each once: a sweep's knee is the smallest size that does. */
		for (at = 0; at < count && out[at] < size; at++)
			;
		if (at == count || out[at] != size) {
			if (count == max)
				return -EINVAL;
			memmove(out + at + 1, out + at, (count - at) * sizeof(*out));
			out[at] = size;
			count++;
		}
		if (!comma)
			break;
		p = comma + 1;
	}
	return (int)count;
}

int bench_parse_duration(const char *text, uint64_t *ns)
{
	static const struct {
		const char *suffix;
		double scale;
	} units[] = { { "ns", 1 }, { "us", 1e3 }, { "µs", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "", 1e6 } };
	char *end;
	double value;

	errno = 0;
	value = strtod(text, &end);
	if (errno || end == text || !(value >= 0) || !isfinite(value))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(end, units[i].suffix)) {
			double result = value * units[i].scale;

			if (result > 1e15)
				return -EINVAL;
			*ns = (uint64_t)(result + 0.5);
			return 0;
		}
	}
	return -EINVAL;
}

struct bench_knee bench_find_knee(unsigned count, double (*value)(unsigned index, void *context),
				  double (*spread)(unsigned index, void *context), void *context, double fraction)
{
	struct bench_knee knee = { .index = -1, .peak = -1, .why = KNEE_CONFIRMED };
	double peak = 0;

	for (unsigned i = 0; i < count; i++) {
		if (knee.peak < 0 || value(i, context) > peak) {
			peak = value(i, context);
			knee.peak = (int)i;
		}
	}
	for (unsigned i = 0; i < count && knee.peak >= 0; i++) {
		if (value(i, context) >= fraction * peak) {
			knee.index = (int)i;
			break;
		}
	}
	if (knee.index < 0 || count < 2 || knee.index != knee.peak)
		return knee; /* none, one point, or a plateau from the knee to the peak */
	if ((unsigned)knee.index + 1 == count) {
		knee.why = KNEE_LAST;
	} else {
		double runs = spread ? spread(knee.peak, context) : NAN;
		bool alone = true;

		for (unsigned i = (unsigned)knee.peak + 1; i < count && alone; i++)
			alone = value(i, context) < fraction * peak;
		/*
		 * The runs' spread wider than the knee's margin, or (one run) a peak that no larger
		 * point comes near.
		 */
		if (isnan(runs) ? alone : runs > 1 - fraction)
			knee.why = KNEE_NOISE;
	}
	knee.unconfirmed = knee.why != KNEE_CONFIRMED;
	return knee;
}

int bench_latency_target(unsigned count, uint64_t (*p99)(unsigned index, void *context), void *context,
			 uint64_t limit_ns)
{
	int best = -1;

	for (unsigned i = 0; i < count; i++)
		if (p99(i, context) <= limit_ns)
			best = (int)i;
	return best;
}

/* ---- The chart ----------------------------------------------------------------------- */

enum { WIDTH = 760, HEIGHT = 440, LEFT = 80, RIGHT = 90, TOP = 50, BOTTOM = 70 };

static void x_label(const struct bench_svg_value *v, enum bench_svg_kind kind, char *buf, size_t len)
{
	if (kind == BENCH_SVG_MODES)
		snprintf(buf, len, "%s", v->label ? v->label : "?");
	else if (kind == BENCH_SVG_QD)
		snprintf(buf, len, "%llu", (unsigned long long)v->x);
	else
		bench_size_label(v->x, buf, len);
}

/* A round step for an axis from 0 to top with about five lines. */
static double axis_step(double top)
{
	double raw = top / 5, magnitude, step;

	if (!(raw > 0))
		return 1;
	magnitude = pow(10, floor(log10(raw)));
	step = magnitude;
	if (raw > 5 * magnitude)
		step = 10 * magnitude;
	else if (raw > 2 * magnitude)
		step = 5 * magnitude;
	else if (raw > magnitude)
		step = 2 * magnitude;
	return step;
}

/* An axis's lines from 0 to top by step, at their heights in the plot: their count. */
static unsigned axis_ticks(double top, double step, struct svg_tick *ticks, unsigned max)
{
	const double plot_h = HEIGHT - TOP - BOTTOM;
	unsigned n = 0;

	for (double v = 0; v <= top * 1.0001 && n < max; v += step)
		ticks[n++] = (struct svg_tick){ .value = v, .y = TOP + plot_h - v / top * plot_h };
	return n;
}

int bench_svg(FILE *out, unsigned count, enum bench_svg_kind kind,
	      void (*point)(unsigned index, void *context, struct bench_svg_value *out), void *context, int knee)
{
	static const char *const by[] = { "block size", "queue depth", "mode" };
	struct bench_svg_value *values = xcalloc(count ? count : 1, sizeof(*values));
	struct svg_point *points = xcalloc(count ? count : 1, sizeof(*points));
	char (*labels)[32] = xcalloc(count ? count : 1, sizeof(*labels));
	struct svg_tick ticks[2][16];
	double max_mb = 0, max_iops = 0, low = 0, high = 0, mb_step, iops_step, mb_top, iops_top;
	const double plot_w = WIDTH - LEFT - RIGHT, plot_h = HEIGHT - TOP - BOTTOM;
	struct svg_chart chart = {
		.width = WIDTH, .height = HEIGHT, .left = LEFT, .right = RIGHT, .top = TOP, .bottom = BOTTOM,
		.by = by[kind], .style = kind == BENCH_SVG_MODES ? SVG_CHART_BARS : SVG_CHART_LINES,
		.series = { { "MB/s", "mb_per_s", "#1f77b4", 1 }, { "IOPS", "iops", "#d62728", 0 } },
		.ticks = { ticks[0], ticks[1] }, .points = points, .count = count, .knee = knee,
		.bar_width = count ? plot_w / count / 3 : 0,
	};
	int rc;

	for (unsigned i = 0; i < count; i++) {
		point(i, context, &values[i]);
		if (values[i].mb_per_s > max_mb)
			max_mb = values[i].mb_per_s;
		if (values[i].iops > max_iops)
			max_iops = values[i].iops;
		if (!i || log2((double)values[i].x) < low)
			low = log2((double)values[i].x);
		if (!i || log2((double)values[i].x) > high)
			high = log2((double)values[i].x);
	}
	mb_step = axis_step(max_mb * 1.05);
	iops_step = axis_step(max_iops * 1.05);
	mb_top = mb_step * ceil(max_mb * 1.05 / mb_step);
	iops_top = iops_step * ceil(max_iops * 1.05 / iops_step);
	if (!(mb_top > 0))
		mb_top = 1;
	if (!(iops_top > 0))
		iops_top = 1;
	chart.nticks[0] = axis_ticks(mb_top, mb_step, ticks[0], 16);
	chart.nticks[1] = axis_ticks(iops_top, iops_step, ticks[1], 16);
	/* Lines: x on a log2 axis. Bars: a slot per point, its two bars side by side. */
	for (unsigned i = 0; i < count; i++) {
		x_label(&values[i], kind, labels[i], sizeof(labels[i]));
		double share = high > low ? (log2((double)values[i].x) - low) / (high - low) : 0.5;

		points[i] = (struct svg_point){
			.label = labels[i],
			.x = kind == BENCH_SVG_MODES ? LEFT + ((double)i + 0.5) * plot_w / count
			   : high > low ? LEFT + share * plot_w : LEFT + plot_w / 2,
			.left = values[i].mb_per_s,
			.right = values[i].iops,
			.left_y = TOP + plot_h - values[i].mb_per_s / mb_top * plot_h,
			.right_y = TOP + plot_h - values[i].iops / iops_top * plot_h,
		};
	}
	rc = svg_chart_write(out, &chart);
	free(labels);
	free(points);
	free(values);
	return rc;
}
