/* SPDX-License-Identifier: GPL-2.0-or-later */
/* top_io_adv.c: iolens stat's group top-io-adv (--top-io-adv): "most expensive i/o process". */
#include "cmd/stat_group.h"

enum { NAME, READ, WRITE, CPU };
static const struct mon_column columns[] = {
	[NAME] = { "process", "name", "", MON_NAME, 26, 0 },
	[READ] = { "read", "read", "bytes_per_s", MON_DECIMAL, 5, 1024 },
	[WRITE] = { "write", "write", "bytes_per_s", MON_DECIMAL, 5, 1024 },
	[CPU] = { "cpu", "cpu", "pct", MON_FLOAT, 3, 34 },
};

static double measure(const struct top_process *p, double figures[TOP_FIGURES])
{
	figures[READ - 1] = rate(p->now->rchar, p->then->rchar, p->seconds);
	figures[WRITE - 1] = rate(p->now->wchar, p->then->wchar, p->seconds);
	figures[CPU - 1] = p->cpu;
	return figures[READ - 1] + figures[WRITE - 1];
}

static const struct top_measure top = {
	.part = PROCS_STAT | PROCS_IO,
	.per_cpu = true,
	.pid_in_name = true,
	.measure = measure,
};

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	(void)since_boot;
	stat_compute_top(g, then, now, seconds, &top);
}

const struct stat_group group_top_io_adv = {
	.rank = 45,
	.plugins = { "top-io-adv" },
	.section = GROUP_DSTAT_PLUGIN,
	.plugin_option = true,
	.title = "most expensive i/o process",
	.key = "top_io_adv",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_PROC_STAT | SYS_PROC_IO | SYS_PROCSTAT,
	.subtitle = "process              pid  read write cpu",
	.glued = 0xeu,
	.percent = 3,
	.top = true,
	.compute = compute,
};
