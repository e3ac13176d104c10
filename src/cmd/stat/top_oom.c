/* SPDX-License-Identifier: GPL-2.0-or-later */
/* top_oom.c: iolens stat's group top-oom (--top-oom): "out of memory". */
#include "cmd/stat_group.h"

enum { NAME, SCORE };
static const struct mon_column columns[] = {
	[NAME] = { "kill score", "name", "", MON_NAME, 14, 0 },
	[SCORE] = { "scor", "score", "", MON_FLOAT, 4, 1000 },
};

static double measure(const struct top_process *p, double figures[TOP_FIGURES])
{
	return figures[SCORE - 1] = (double)p->now->oom_score;
}

static const struct top_measure top = { .part = PROCS_OOM, .measure = measure };

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	(void)since_boot;
	stat_compute_top(g, then, now, seconds, &top);
}

const struct stat_group group_top_oom = {
	.rank = 42,
	.plugins = { "top-oom" },
	.section = GROUP_DSTAT_PLUGIN,
	.plugin_option = true,
	.title = "out of memory",
	.key = "top_oom",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_PROC_OOM,
	.subtitle = "kill score",
	.glued = 1u << 1,
	.top = true,
	.compute = compute,
};
