/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cpu_adv.c: iolens stat's group cpu-adv (--cpu-adv): "ITEM cpu usage". */

#include "cmd/stat_group.h"
#include "model/cpu.h"

enum { USR, SYS, IDL, WAI, HIQ, SIQ, STL };
static const struct mon_column columns[] = {
	[USR] = { "usr", "usr", "pct", MON_PERCENT, 3, 34 },
	[SYS] = { "sys", "sys", "pct", MON_PERCENT, 3, 34 },
	[IDL] = { "idl", "idl", "pct", MON_PERCENT, 3, 34 },
	[WAI] = { "wai", "wai", "pct", MON_PERCENT, 3, 34 },
	[HIQ] = { "hiq", "hiq", "pct", MON_PERCENT, 3, 34 },
	[SIQ] = { "siq", "siq", "pct", MON_PERCENT, 3, 34 },
	[STL] = { "stl", "stl", "pct", MON_PERCENT, 3, 34 },
};

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	struct cpu_shares cpu;

	(void)seconds;
	(void)since_boot;
	if (!sample_cpu_shares(then, now, g->item, &cpu)) {
		all_unknown(g);
		return;
	}
	set_same(g, USR, cpu.user);
	set_same(g, SYS, cpu.system);
	set_same(g, IDL, cpu.idle);
	set_same(g, WAI, cpu.iowait);
	set_same(g, HIQ, cpu.irq);
	set_same(g, SIQ, cpu.softirq);
	set_same(g, STL, cpu.steal);
}

const struct stat_group group_cpu_adv = {
	.rank = 2,
	.plugins = { "cpu-adv" },
	.section = GROUP_DSTAT,
	.items = ITEMS_CPU,
	.title = "%s cpu usage",
	.key = "cpu_%s",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_PROCSTAT,
	.init = stat_cpu_title,
	.compute = compute,
};
