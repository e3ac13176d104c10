/* SPDX-License-Identifier: GPL-2.0-or-later */
/* disk_avgrq.c: iolens stat's group disk-avgrq (--disk-avgrq): "ITEM". */
#include "cmd/stat_group.h"
#include "model/disk.h"

/* dstat's disk-avgrq (sectors a request) and disk-svctm (ms a request), per disk. */
enum { AVGRQ };
static const struct mon_column columns[] = {
	[AVGRQ] = { "avgrq", "avgrq", "sectors", MON_FLOAT, 4, 10 },
};

/* dstat's disk-avgrq: sectors per request completed in the interval (0 with none). */
static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	struct disk_stats a, b;
	double ios, sectors;

	(void)seconds;
	(void)since_boot;
	if (!sample_disk_pair(then, now, g->item, &a, &b)) {
		all_unknown(g);
		return;
	}
	ios = (double)(b.rd_ios + b.wr_ios) - (double)(a.rd_ios + a.wr_ios);
	sectors = (double)(b.rd_sectors + b.wr_sectors) - (double)(a.rd_sectors + a.wr_sectors);
	set_same(g, AVGRQ, ios > 0 ? sectors / ios : 0);
}

const struct stat_group group_disk_avgrq = {
	.rank = 51,
	.plugins = { "disk-avgrq" },
	.section = GROUP_DSTAT_PLUGIN,
	.plugin_option = true,
	.items = ITEMS_EACH_DISK,
	.title = "%s",
	.key = "avgrq_%s",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_DISKSTATS,
	.compute = compute,
};
