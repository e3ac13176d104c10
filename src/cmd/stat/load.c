/* SPDX-License-Identifier: GPL-2.0-or-later */
/* load.c: iolens stat's group load (--load): "load avg". */
#include "cmd/stat_group.h"

enum { LOAD_1M, LOAD_5M, LOAD_15M };
static const struct mon_column columns[] = {
	[LOAD_1M] = { "1m", "1m", "", MON_FLOAT, 4, 0.5 },
	[LOAD_5M] = { "5m", "5m", "", MON_FLOAT, 4, 0.5 },
	[LOAD_15M] = { "15m", "15m", "", MON_FLOAT, 4, 0.5 },
};

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	(void)then;
	(void)seconds;
	(void)since_boot;
	if (!(now->have & SYS_LOADAVG)) {
		all_unknown(g);
		return;
	}
	set_same(g, LOAD_1M, now->loadavg.load1);
	set_same(g, LOAD_5M, now->loadavg.load5);
	set_same(g, LOAD_15M, now->loadavg.load15);
}

const struct stat_group group_load = {
	.rank = 9,
	.plugins = { "load" },
	.section = GROUP_DSTAT,
	.letter = 'l',
	.title = "load avg",
	.key = "load",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_LOADAVG,
	.compute = compute,
};
