/* SPDX-License-Identifier: GPL-2.0-or-later */
/* top_int.c: iolens stat's group top-int (--top-int): "most frequent". */
#include "cmd/stat_group.h"

enum { NAME, RATE };
static const struct mon_column columns[] = {
	[NAME] = { "interrupt", "name", "", MON_NAME, 15, 0 },
	[RATE] = { "int/s", "rate", "per_s", MON_DECIMAL, 5, 1000 },
};

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	(void)since_boot;
	stat_compute_top_int(g, then, now, seconds);
}

const struct stat_group group_top_int = {
	.rank = 43,
	.plugins = { "top-int" },
	.section = GROUP_DSTAT_PLUGIN,
	.plugin_option = true,
	.title = "most frequent",
	.key = "top_int",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_INTERRUPTS,
	.subtitle = "interrupt",
	.glued = 1u << 1,
	.top = true,
	.compute = compute,
};
