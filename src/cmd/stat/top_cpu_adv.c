/* SPDX-License-Identifier: GPL-2.0-or-later */
/* top_cpu_adv.c: iolens stat's group top-cpu-adv (--top-cpu-adv): "most expensive cpu process". */
#include "cmd/stat_group.h"

/* The -adv plugins: the name and the pid (dstat's %-5s) in 26, then the figures, '%' after the cpu's. */
enum { NAME, CPU, READ, WRITE };
static const struct mon_column columns[] = {
	[NAME] = { "process", "name", "", MON_NAME, 26, 0 },
	[CPU] = { "cpu", "cpu", "pct", MON_FLOAT, 3, 34 },
	[READ] = { "read", "read", "bytes_per_s", MON_DECIMAL, 5, 1024 },
	[WRITE] = { "write", "write", "bytes_per_s", MON_DECIMAL, 5, 1024 },
};

static double measure(const struct top_process *p, double figures[TOP_FIGURES])
{
	figures[CPU - 1] = p->cpu;
	figures[READ - 1] = rate(p->now->rchar, p->then->rchar, p->seconds);
	figures[WRITE - 1] = rate(p->now->wchar, p->then->wchar, p->seconds);
	return p->cpu;
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

const struct stat_group group_top_cpu_adv = {
	.rank = 44,
	.plugins = { "top-cpu-adv" },
	.section = GROUP_DSTAT_PLUGIN,
	.plugin_option = true,
	.title = "most expensive cpu process",
	.key = "top_cpu_adv",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_PROC_STAT | SYS_PROC_IO | SYS_PROCSTAT,
	.subtitle = "process              pid  cpu read write",
	.glued = 0xeu,
	.percent = 1,
	.top = true,
	.compute = compute,
};
