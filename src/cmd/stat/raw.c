/* SPDX-License-Identifier: GPL-2.0-or-later */
/* raw.c: iolens stat's group raw (--raw): "raw". */
#include <math.h>

#include "cmd/stat_group.h"

enum { RAW };
static const struct mon_column columns[] = {
	[RAW] = { "raw", "raw", "", MON_DECIMAL, 4, 1000 },
};

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	(void)then;
	(void)seconds;
	(void)since_boot;
	set_same(g, RAW, (now->have & SYS_RAW) ? (double)now->sockets.raw : NAN);
}

const struct stat_group group_raw = {
	.rank = 22,
	.plugins = { "raw" },
	.section = GROUP_DSTAT,
	.title = "raw",
	.key = "raw",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_RAW,
	.compute = compute,
};
