/* SPDX-License-Identifier: GPL-2.0-or-later */
/* proc_count.c: iolens stat's group proc-count (--proc-count): "procs". */
#include <math.h>

#include "cmd/stat_group.h"

enum { TOTAL };
static const struct mon_column columns[] = {
	[TOTAL] = { "tota", "total", "", MON_DECIMAL, 4, 10 },
};

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	(void)then;
	(void)seconds;
	(void)since_boot;
	set_same(g, TOTAL, (now->have & SYS_PROC_COUNT) ? (double)now->proc_count : NAN);
}

const struct stat_group group_proc_count = {
	.rank = 32,
	.plugins = { "proc-count" },
	.section = GROUP_DSTAT_PLUGIN,
	.plugin_option = true,
	.title = "procs",
	.key = "proc_count",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_PROC_COUNT,
	.compute = compute,
};
