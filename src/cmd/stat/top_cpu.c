/* SPDX-License-Identifier: GPL-2.0-or-later */
/* top_cpu.c: iolens stat's group top-cpu (--top-cpu): "most expensive". */
#include "cmd/stat_group.h"

/*
 * dstat's top plugins (dstat_top_*.py): one subtitle over the group (kinds[].subtitle), the
 * name cut to what leaves the figures dstat's width, the first figure right after it (glued),
 * in dstat's types, widths and scales.
 */
enum { NAME, CPU };
static const struct mon_column columns[] = {
	[NAME] = { "cpu process", "name", "", MON_NAME, 13, 0 },
	[CPU] = { "cpu", "cpu", "pct", MON_FLOAT, 3, 34 },
};

static double measure(const struct top_process *p, double figures[TOP_FIGURES])
{
	figures[0] = p->cpu;
	return p->cpu;
}

static const struct top_measure top = { .part = PROCS_STAT, .per_cpu = true, .measure = measure };

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	(void)since_boot;
	stat_compute_top(g, then, now, seconds, &top);
}

const struct stat_group group_top_cpu = {
	.rank = 37,
	.plugins = { "top-cpu" },
	.section = GROUP_DSTAT_PLUGIN,
	.plugin_option = true,
	.title = "most expensive",
	.key = "top_cpu",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_PROC_STAT | SYS_PROCSTAT,
	.subtitle = "cpu process",
	.glued = 1u << 1,
	.top = true,
	.compute = compute,
};
