/* SPDX-License-Identifier: GPL-2.0-or-later */
/* disk_tps.c: iolens stat's group disk-tps (--disk-tps): "dsk/ITEM". */
#include "cmd/stat_group.h"
#include "model/disk.h"

enum { READ, WRITE };
static const struct mon_column columns[] = {
	[READ] = { "#read", "read", "per_s", MON_DECIMAL, 5, 1000 },
	[WRITE] = { "#writ", "write", "per_s", MON_DECIMAL, 5, 1000 },
};

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	struct disk_stats a, b;

	(void)since_boot;
	if (!sample_disk_counters(then, now, g->item, &a, &b)) {
		all_unknown(g);
		return;
	}
	set_same(g, READ, rate(b.rd_ios, a.rd_ios, seconds));
	set_same(g, WRITE, rate(b.wr_ios, a.wr_ios, seconds));
}

const struct stat_group group_disk_tps = {
	.rank = 29,
	.plugins = { "disk-tps" },
	.section = GROUP_DSTAT_PLUGIN,
	.plugin_option = true,
	.items = ITEMS_DISK,
	.title = "dsk/%s",
	.key = "tps_%s",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_DISKSTATS,
	.compute = compute,
};
