/* SPDX-License-Identifier: GPL-2.0-or-later */
/* top_mem.c: iolens stat's group top-mem (--top-mem): "most expensive". */
#include "cmd/stat_group.h"

enum { NAME, RSS };
static const struct mon_column columns[] = {
	[NAME] = { "memory process", "name", "", MON_NAME, 12, 0 },
	[RSS] = { "rss", "rss", "bytes", MON_FLOAT, 5, 1024 },
};

static double measure(const struct top_process *p, double figures[TOP_FIGURES])
{
	return figures[RSS - 1] = (double)p->now->rss_pages * (double)page_size();
}

static const struct top_measure top = { .part = PROCS_STAT, .measure = measure };

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	(void)since_boot;
	stat_compute_top(g, then, now, seconds, &top);
}

const struct stat_group group_top_mem = {
	.rank = 38,
	.plugins = { "top-mem" },
	.section = GROUP_DSTAT_PLUGIN,
	.plugin_option = true,
	.title = "most expensive",
	.key = "top_mem",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_PROC_STAT,
	.subtitle = "memory process",
	.glued = 1u << 1,
	.top = true,
	.compute = compute,
};
