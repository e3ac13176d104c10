/* SPDX-License-Identifier: GPL-2.0-or-later */
/* io.c: iolens stat's group io (--io): "io/ITEM". */
#include "cmd/stat_group.h"
#include "model/disk.h"

enum { READ, WRITE };
static const struct mon_column columns[] = {
	[READ] = { "read", "read", "per_s", MON_FLOAT, 5, 1000 },
	[WRITE] = { "writ", "write", "per_s", MON_FLOAT, 5, 1000 },
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

const struct stat_group group_io = {
	.rank = 12,
	.plugins = { "io" },
	.section = GROUP_DSTAT,
	.letter = 'r',
	.items = ITEMS_DISK,
	.title = "io/%s",
	.key = "io_%s",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_DISKSTATS,
	.compute = compute,
};
