/* SPDX-License-Identifier: GPL-2.0-or-later */
/* top_childwait.c: iolens stat's group top-childwait (--top-childwait): "most waiting for". */
#include "cmd/stat_group.h"

enum { NAME, CHILDREN_CPU };
static const struct mon_column columns[] = {
	[NAME] = { "child process", "name", "", MON_NAME, 13, 0 },
	[CHILDREN_CPU] = { "cpu", "children_cpu", "pct", MON_PERCENT, 3, 34 },
};

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	(void)since_boot;
	stat_compute_top(g, then, now, seconds);
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
