/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sweep.c: what iolens bench computes apart from the I/O: block-size lists, durations, the knee,
 * the latency target, the SVG chart.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "workload/bench.h"
#include "common/util.h"

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

int bench_svg(FILE *out, unsigned count, enum bench_svg_kind kind,
	      void (*point)(unsigned index, void *context, struct bench_svg_value *out), void *context, int knee)
{
	static const char *const by[] = { "block size", "queue depth", "mode" };
	struct bench_svg_value *values = xcalloc(count ? count : 1, sizeof(*values));
	double max_mb = 0, max_iops = 0, low = 0, high = 0, mb_step, iops_step, mb_top, iops_top;
	const double plot_w = WIDTH - LEFT - RIGHT, plot_h = HEIGHT - TOP - BOTTOM;
	char label[32];

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
	/* Lines: x on a log2 axis. Bars: a slot per point, its two bars side by side. */
#define X(i) (kind == BENCH_SVG_MODES ? LEFT + ((double)(i) + 0.5) * plot_w / count : \
	      LEFT + (high > low ? (log2((double)values[i].x) - low) / (high - low) * plot_w : plot_w / 2))
#define Y(v, top) (TOP + plot_h - (v) / (top) * plot_h)
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		     "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		     "font-family=\"sans-serif\" font-size=\"12\">\n"
		     "<title>iolens bench: MB/s and IOPS by %s</title>\n"
		     "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
		     "<text x=\"%d\" y=\"24\" font-size=\"15\" text-anchor=\"middle\">MB/s and IOPS by %s</text>\n",
		WIDTH, HEIGHT, WIDTH, HEIGHT, by[kind], WIDTH / 2, by[kind]);
	for (double v = 0; v <= mb_top * 1.0001; v += mb_step) {
		double y = Y(v, mb_top);

		fprintf(out, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>\n"
			     "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" fill=\"#1f77b4\">%g</text>\n",
			LEFT, y, WIDTH - RIGHT, y, LEFT - 6, y + 4, v);
	}
	for (double v = 0; v <= iops_top * 1.0001; v += iops_step)
		fprintf(out, "<text x=\"%d\" y=\"%.1f\" fill=\"#d62728\">%g</text>\n", WIDTH - RIGHT + 6,
			Y(v, iops_top) + 4, v);
	fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"#444\"/>\n"
		     "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(-90 %d %d)\" "
		     "fill=\"#1f77b4\">MB/s</text>\n"
		     "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" transform=\"rotate(90 %d %d)\" "
		     "fill=\"#d62728\">IOPS</text>\n"
		     "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
		LEFT, TOP, plot_w, plot_h, 24, TOP + (int)plot_h / 2, 24, TOP + (int)plot_h / 2, WIDTH - 20,
		TOP + (int)plot_h / 2, WIDTH - 20, TOP + (int)plot_h / 2, LEFT + (int)plot_w / 2, HEIGHT - 20,
		by[kind]);
	for (unsigned i = 0; i < count; i++) {
		x_label(&values[i], kind, label, sizeof(label));
		fprintf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", X(i),
			TOP + (int)plot_h + 18, label);
	}
	if (kind == BENCH_SVG_MODES) {
		double bar_w = plot_w / count / 3;

		for (unsigned i = 0; i < count; i++) {
			double mb_y = Y(values[i].mb_per_s, mb_top), iops_y = Y(values[i].iops, iops_top);

			x_label(&values[i], kind, label, sizeof(label));
			fprintf(out, "<rect class=\"mb_per_s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
				     "fill=\"#1f77b4\"><title>%s: %.1f MB/s</title></rect>\n"
				     "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" fill=\"#1f77b4\">%.1f</text>\n"
				     "<rect class=\"iops\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
				     "fill=\"#d62728\"><title>%s: %.0f IOPS</title></rect>\n"
				     "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
				     "fill=\"#d62728\">%.0f</text>\n",
				X(i) - bar_w, mb_y, bar_w, TOP + plot_h - mb_y, label, values[i].mb_per_s,
				X(i) - bar_w / 2, mb_y - 4, values[i].mb_per_s, X(i), iops_y, bar_w,
				TOP + plot_h - iops_y, label, values[i].iops, X(i) + bar_w / 2, iops_y - 4,
				values[i].iops);
		}
		fprintf(out, "<text x=\"%d\" y=\"%d\" fill=\"#1f77b4\">\u25a0 MB/s</text>\n"
			     "<text x=\"%d\" y=\"%d\" fill=\"#d62728\">\u25a0 IOPS</text>\n</svg>\n",
			LEFT + 10, TOP + 16, LEFT + 90, TOP + 16);
		free(values);
		return ferror(out) ? -1 : 0;
	}
	if (knee >= 0 && (unsigned)knee < count) {
		x_label(&values[knee], kind, label, sizeof(label));
		fprintf(out, "<line class=\"knee\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#2ca02c\" "
			     "stroke-dasharray=\"6 4\" stroke-width=\"2\"/>\n"
			     "<text class=\"knee\" x=\"%.1f\" y=\"%d\" fill=\"#2ca02c\" text-anchor=\"middle\">knee: "
			     "%s</text>\n",
			X(knee), TOP, X(knee), TOP + plot_h, X(knee), TOP - 6, label);
	}
	fputs("<polyline class=\"mb_per_s\" fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"", out);
	for (unsigned i = 0; i < count; i++)
		fprintf(out, "%s%.1f,%.1f", i ? " " : "", X(i), Y(values[i].mb_per_s, mb_top));
	fputs("\"/>\n<polyline class=\"iops\" fill=\"none\" stroke=\"#d62728\" stroke-width=\"2\" "
	      "stroke-dasharray=\"4 3\" points=\"", out);
	for (unsigned i = 0; i < count; i++)
		fprintf(out, "%s%.1f,%.1f", i ? " " : "", X(i), Y(values[i].iops, iops_top));
	fputs("\"/>\n", out);
	for (unsigned i = 0; i < count; i++)
		fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"#1f77b4\"><title>%.1f "
			     "MB/s</title></circle>\n"
			     "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"#d62728\"><title>%.0f "
			     "IOPS</title></circle>\n",
			X(i), Y(values[i].mb_per_s, mb_top), values[i].mb_per_s, X(i), Y(values[i].iops, iops_top),
			values[i].iops);
	fprintf(out, "<text x=\"%d\" y=\"%d\" fill=\"#1f77b4\">— MB/s</text>\n"
		     "<text x=\"%d\" y=\"%d\" fill=\"#d62728\">- - IOPS</text>\n</svg>\n",
		LEFT + 10, TOP + 16, LEFT + 90, TOP + 16);
#undef X
#undef Y
	free(values);
	return ferror(out) ? -1 : 0;
}
