/* SPDX-License-Identifier: GPL-2.0-or-later */
/* top_latency_avg.c: iolens stat's group top-latency-avg (--top-latency-avg): "highest average". */
#include "cmd/stat_group.h"

enum { NAME, WAIT_PER_SLICE };
static const struct mon_column columns[] = {
	[NAME] = { "latency process", "name", "", MON_NAME, 13, 0 },
	[WAIT_PER_SLICE] = { "wait", "wait_per_slice", "ns_per_s", MON_FLOAT, 4, 100 },
};

static double measure(const struct top_process *p, double figures[TOP_FIGURES])
{
	double slices = p->now->slices > p->then->slices ? (double)(p->now->slices - p->then->slices) : 0;

	/* As dstat: the time per slice, divided by the interval again. */
	return figures[WAIT_PER_SLICE - 1] = slices ? rate(p->now->wait_ns, p->then->wait_ns, p->seconds) / slices : 0;
}

static const struct top_measure top = { .part = PROCS_SCHED, .measure = measure };

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	(void)since_boot;
	stat_compute_top(g, then, now, seconds, &top);
}

const struct stat_group group_top_latency_avg = {
	.rank = 49,
	.plugins = { "top-latency-avg" },
	.section = GROUP_DSTAT_PLUGIN,
	.plugin_option = true,
	.title = "highest average",
	.key = "top_latency_avg",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_PROC_SCHED,
	.subtitle = "latency process",
	.glued = 1u << 1,
	.top = true,
	.compute = compute,
};
