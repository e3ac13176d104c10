/* SPDX-License-Identifier: GPL-2.0-or-later */
/* disk_svctm.c: iolens stat's group disk-svctm (--disk-svctm): "ITEM". */
#include "cmd/stat_group.h"
#include "model/disk.h"

enum { SVCTM };
static const struct mon_column columns[] = {
	[SVCTM] = { "svctm", "svctm", "ms", MON_FLOAT, 4, 1 },
};

/* dstat's disk-svctm: busy ms per request completed in the interval (0 with none). */
static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	struct disk_stats a, b;
	double ios;

	(void)seconds;
	(void)since_boot;
	if (!sample_disk_pair(then, now, g->item, &a, &b)) {
		all_unknown(g);
		return;
	}
	ios = (double)(b.rd_ios + b.wr_ios) - (double)(a.rd_ios + a.wr_ios);
	set_same(g, SVCTM, ios > 0 ? ((double)b.io_ticks - (double)a.io_ticks) / ios : 0);
}

const struct stat_group group_disk_svctm = {
	.rank = 52,
	.plugins = { "disk-svctm" },
	.section = GROUP_DSTAT_PLUGIN,
	.plugin_option = true,
	.items = ITEMS_EACH_DISK,
	.title = "%s",
	.key = "svctm_%s",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_DISKSTATS,
	.compute = compute,
};
