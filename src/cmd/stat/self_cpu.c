/* SPDX-License-Identifier: GPL-2.0-or-later */
/* self_cpu.c: iolens stat's group dstat-cpu (--dstat-cpu): "dstat cpu". */
#include <unistd.h>

#include "cmd/stat_group.h"

enum { USR, SYS, TOTAL };
static const struct mon_column columns[] = {
	[USR] = { "usr", "usr", "pct", MON_PERCENT, 3, 100 },
	[SYS] = { "sys", "sys", "pct", MON_PERCENT, 3, 100 },
	[TOTAL] = { "tot", "total", "pct", MON_PERCENT, 3, 100 },
};

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	struct self_counters a, b;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	double per = (seconds > 0 ? 1 / seconds : 0) * 100 / (double)(cpus > 0 ? cpus : 1);

	stat_self_between(then, now, since_boot, &a, &b);
	set_same(g, USR, (b.user_s - a.user_s) * per);
	set_same(g, SYS, (b.system_s - a.system_s) * per);
	set_same(g, TOTAL, (b.user_s + b.system_s - a.user_s - a.system_s) * per);
}

const struct stat_group group_self_cpu = {
	.rank = 57,
	.plugins = { "dstat-cpu" },
	.section = GROUP_DSTAT_PLUGIN,
	.plugin_option = true,
	.title = "dstat cpu",
	.key = "self_cpu",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.compute = compute,
};
