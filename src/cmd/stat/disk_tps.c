/* SPDX-License-Identifier: GPL-2.0-or-later */
/* disk_tps.c: iolens stat's group disk-tps (--disk-tps): "dsk/ITEM". */
#include "cmd/stat_group.h"

enum { READ, WRITE }; /* stat_compute_disk_requests' order */
static const struct mon_column columns[] = {
	[READ] = { "#read", "read", "per_s", MON_DECIMAL, 5, 1000 },
	[WRITE] = { "#writ", "write", "per_s", MON_DECIMAL, 5, 1000 },
};

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
	.compute = stat_compute_disk_requests,
};
