/* SPDX-License-Identifier: GPL-2.0-or-later */
/* disk_util.c: iolens stat's group disk-util (--disk-util): "ITEM". */
#include "cmd/stat_group.h"
#include "model/disk.h"

/* dstat's plugins in /usr/share/dstat, with their nicks cut to their widths as dstat shows them. */
enum { UTIL };
static const struct mon_column columns[] = {
	[UTIL] = { "util", "util", "pct", MON_FLOAT, 4, 34 },
};

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	struct disk_ext x;

	(void)since_boot;
	if (!sample_disk_ext(then, now, g->item, seconds, &x)) {
		all_unknown(g);
		return;
	}
	set_same(g, UTIL, x.util);
}

const struct stat_group group_disk_util = {
	.rank = 28,
	.plugins = { "disk-util" },
	.section = GROUP_DSTAT_PLUGIN,
	.plugin_option = true,
	.items = ITEMS_EACH_DISK,
	.title = "%s",
	.key = "util_%s",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_DISKSTATS,
	.compute = compute,
};
