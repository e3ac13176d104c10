/* SPDX-License-Identifier: GPL-2.0-or-later */
/* self.c: iolens stat's group dstat (--dstat): "dstat". */
#include "cmd/stat_group.h"

/* dstat's own cost, here iolens stat's: dstat (schedstat), dstat-cpu, dstat-ctxt (getrusage), dstat-mem (statm). */
enum { CPUTIME, LATENCY };
static const struct mon_column columns[] = {
	[CPUTIME] = { "cputime", "cputime", "ns_per_s", MON_DECIMAL, 5, 1000 },
	[LATENCY] = { "latency", "latency", "ns_per_s", MON_DECIMAL, 5, 1000 },
};

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	struct self_counters a, b;
	double per = seconds > 0 ? 1 / seconds : 0;

	stat_self_between(then, now, since_boot, &a, &b);
	set_same(g, CPUTIME, (b.run_ns - a.run_ns) * per);
	set_same(g, LATENCY, (b.wait_ns - a.wait_ns) * per);
}

const struct stat_group group_self = {
	.rank = 56,
	.plugins = { "dstat" },
	.section = GROUP_DSTAT_PLUGIN,
	.plugin_option = true,
	.title = "dstat",
	.key = "self",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.compute = compute,
};
