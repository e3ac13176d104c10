/* SPDX-License-Identifier: GPL-2.0-or-later */
/* top_io.c: iolens stat's group top-io (--top-io): "most expensive". */
#include "cmd/stat_group.h"

enum { NAME, READ, WRITE };
static const struct mon_column columns[] = {
	[NAME] = { "i/o process", "name", "", MON_NAME, 11, 0 },
	[READ] = { "read", "read", "bytes_per_s", MON_DECIMAL, 5, 1024 },
	[WRITE] = { "writ", "write", "bytes_per_s", MON_DECIMAL, 5, 1024 },
};

static double measure(const struct top_process *p, double figures[TOP_FIGURES])
{
	figures[READ - 1] = rate(p->now->rchar, p->then->rchar, p->seconds);
	figures[WRITE - 1] = rate(p->now->wchar, p->then->wchar, p->seconds);
	return figures[READ - 1] + figures[WRITE - 1];
}

static const struct top_measure top = { .part = PROCS_IO, .measure = measure };

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	(void)since_boot;
	stat_compute_top(g, then, now, seconds, &top);
}

const struct stat_group group_top_io = {
	.rank = 39,
	.plugins = { "top-io" },
	.section = GROUP_DSTAT_PLUGIN,
	.plugin_option = true,
	.title = "most expensive",
	.key = "top_io",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_PROC_IO,
	.subtitle = "i/o process",
	.glued = 1u << 1,
	.top = true,
	.compute = compute,
};
