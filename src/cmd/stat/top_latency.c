/* SPDX-License-Identifier: GPL-2.0-or-later */
/* top_latency.c: iolens stat's group top-latency (--top-latency): "highest total". */
#include "cmd/stat_group.h"

/* Waits and run times: ns per second (per time slice for the averages), scaled as dstat scales them, without a unit. */
enum { NAME, WAIT };
static const struct mon_column columns[] = {
	[NAME] = { "latency process", "name", "", MON_NAME, 13, 0 },
	[WAIT] = { "wait", "wait", "ns_per_s", MON_DECIMAL, 4, 100 },
};

static double measure(const struct top_process *p, double figures[TOP_FIGURES])
{
	return figures[WAIT - 1] = rate(p->now->wait_ns, p->then->wait_ns, p->seconds);
}

static const struct top_measure top = { .part = PROCS_SCHED, .measure = measure };

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	(void)since_boot;
	stat_compute_top(g, then, now, seconds, &top);
}

const struct stat_group group_top_latency = {
	.rank = 41,
	.plugins = { "top-latency" },
	.section = GROUP_DSTAT_PLUGIN,
	.plugin_option = true,
	.title = "highest total",
	.key = "top_latency",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_PROC_SCHED,
	.subtitle = "latency process",
	.glued = 1u << 1,
	.top = true,
	.compute = compute,
};
