/* SPDX-License-Identifier: GPL-2.0-or-later */
/* self_ctxt.c: iolens stat's group dstat-ctxt (--dstat-ctxt): "contxt sw". */
#include "cmd/stat_group.h"

enum { VOLUNTARY, INVOLUNTARY, TOTAL };
static const struct mon_column columns[] = {
	[VOLUNTARY] = { "voluntary", "voluntary", "per_s", MON_DECIMAL, 3, 100 },
	[INVOLUNTARY] = { "involuntary", "involuntary", "per_s", MON_DECIMAL, 3, 100 },
	[TOTAL] = { "total", "total", "per_s", MON_DECIMAL, 3, 100 },
};

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	struct self_counters a, b;
	double per = seconds > 0 ? 1 / seconds : 0;

	stat_self_between(then, now, since_boot, &a, &b);
	set_same(g, VOLUNTARY, (b.voluntary - a.voluntary) * per);
	set_same(g, INVOLUNTARY, (b.involuntary - a.involuntary) * per);
	set_same(g, TOTAL, (b.voluntary + b.involuntary - a.voluntary - a.involuntary) * per);
}

const struct stat_group group_self_ctxt = {
	.rank = 58,
	.plugins = { "dstat-ctxt" },
	.section = GROUP_DSTAT_PLUGIN,
	.plugin_option = true,
	.title = "contxt sw",
	.key = "self_ctxt",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.compute = compute,
};
