/* SPDX-License-Identifier: GPL-2.0-or-later */
/* top_cputime.c: iolens stat's group top-cputime (--top-cputime): "highest total". */
#include "cmd/stat_group.h"

enum { NAME, RUN };
static const struct mon_column columns[] = {
	[NAME] = { "cputime process", "name", "", MON_NAME, 13, 0 },
	[RUN] = { "run", "run", "ns_per_s", MON_DECIMAL, 4, 100 },
};

static double measure(const struct top_process *p, double figures[TOP_FIGURES])
{
	return figures[RUN - 1] = rate(p->now->run_ns, p->then->run_ns, p->seconds);
}

static const struct top_measure top = { .part = PROCS_SCHED, .measure = measure };

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	(void)since_boot;
	stat_compute_top(g, then, now, seconds, &top);
}

const struct stat_group group_top_cputime = {
	.rank = 47,
	.plugins = { "top-cputime" },
	.section = GROUP_DSTAT_PLUGIN,
	.plugin_option = true,
	.title = "highest total",
	.key = "top_cputime",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_PROC_SCHED,
	.subtitle = "cputime process",
	.glued = 1u << 1,
	.top = true,
	.compute = compute,
};
