/* SPDX-License-Identifier: GPL-2.0-or-later */
/* disk.c: iolens stat's group disk (--disk): "dsk/ITEM". */
#include "cmd/stat_group.h"
#include "model/disk.h"

enum { READ, WRITE };
static const struct mon_column columns[] = {
	[READ] = { "read", "read", "bytes_per_s", MON_BYTES, 5, 1024 },
	[WRITE] = { "writ", "write", "bytes_per_s", MON_BYTES, 5, 1024 },
};
/* dstat's --bits: the same in bits, powers of 1000. */
static const struct mon_column bits_columns[] = {
	[READ] = { "read", "read", "bytes_per_s", MON_BITS, 5, 1000 },
	[WRITE] = { "writ", "write", "bytes_per_s", MON_BITS, 5, 1000 },
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
	set_same(g, READ, rate(b.rd_sectors * 512, a.rd_sectors * 512, seconds));
	set_same(g, WRITE, rate(b.wr_sectors * 512, a.wr_sectors * 512, seconds));
}

const struct stat_group group_disk = {
	.rank = 3,
	.plugins = { "disk" },
	.section = GROUP_DSTAT,
	.letter = 'd',
	.items = ITEMS_DISK,
	.title = "dsk/%s",
	.key = "dsk_%s",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.bits_columns = bits_columns,
	.needs = SYS_DISKSTATS,
	.compute = compute,
};
