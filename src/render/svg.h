/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * svg.h: a chart of two series against one x (bench's MB/s and IOPS) written as SVG. What to draw,
 * and where, is the caller's (workload/sweep.c lays it out); the elements, their look and the
 * escaping of their texts are here.
 */
#ifndef IOLENS_SVG_H
#define IOLENS_SVG_H

#include <stdio.h>

/* A line of an axis: its value, and its height in the picture. */
struct svg_tick {
	double value, y;
};

/* A point of both series: its place across the picture and each series' value and height. */
struct svg_point {
	const char *label; /* under the x axis, and a bar's name: escaped here */
	double x;
	double left, right;     /* the values: the left axis's series, the right one's */
	double left_y, right_y; /* their heights in the picture */
};

/* One series: its name ("MB/s"), the class of its elements ("mb_per_s"), its colour, its decimals. */
struct svg_series {
	const char *name, *class_name, *colour;
	int decimals;
};

enum svg_chart_style {
	SVG_CHART_LINES, /* a polyline a series, a dot a point, the knee marked */
	SVG_CHART_BARS,  /* a pair of bars a point, each with its value above it */
};

struct svg_chart {
	int width, height;                 /* the picture */
	int left, right, top, bottom;      /* the margins around the plot */
	const char *by;                    /* what x is ("block size"): in the title and under the axis */
	enum svg_chart_style style;
	struct svg_series series[2];       /* on the left axis, on the right one */
	const struct svg_tick *ticks[2];   /* each axis's lines, from 0 up */
	unsigned nticks[2];
	const struct svg_point *points;
	unsigned count;
	double bar_width;                  /* SVG_CHART_BARS */
	int knee;                          /* SVG_CHART_LINES: the point marked, or -1 */
};

/* Writes the chart to out: 0, or -1 when writing failed (ferror). */
int svg_chart_write(FILE *out, const struct svg_chart *chart);

#endif
