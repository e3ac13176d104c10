/* SPDX-License-Identifier: GPL-2.0-or-later */
/* top_childwait.c: iolens stat's group top-childwait (--top-childwait): "most waiting for". */
#include "cmd/stat_group.h"

enum { NAME, CHILDREN_CPU };
static const struct mon_column columns[] = {
	[NAME] = { "child process", "name", "", MON_NAME, 13, 0 },
	[CHILDREN_CPU] = { "cpu", "children_cpu", "pct", MON_PERCENT, 3, 34 },
};

static double measure(const struct top_process *p, double figures[TOP_FIGURES])
{
	return figures[CHILDREN_CPU - 1] = stat_top_cpu_share(p, p->now->child_ticks, p->then->child_ticks);
}

static const struct top_measure top = { .part = PROCS_STAT, .per_cpu = true, .measure = measure };

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	(void)since_boot;
	stat_compute_top(g, then, now, seconds, &top);
}

const struct stat_group group_top_childwait = {
	.rank = 50,
	.plugins = { "top-childwait" },
	.section = GROUP_DSTAT_PLUGIN,
	.plugin_option = true,
	.title = "most waiting for",
	.key = "top_childwait",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_PROC_STAT | SYS_PROCSTAT,
	.subtitle = "child process",
	.glued = 1u << 1,
	.top = true,
	.compute = compute,
};
