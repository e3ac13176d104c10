/* SPDX-License-Identifier: GPL-2.0-or-later */
/* io.c: iolens stat's group io (--io): "io/ITEM". */
#include "cmd/stat_group.h"

enum { READ, WRITE }; /* stat_compute_disk_requests' order */
static const struct mon_column columns[] = {
	[READ] = { "read", "read", "per_s", MON_FLOAT, 5, 1000 },
	[WRITE] = { "writ", "write", "per_s", MON_FLOAT, 5, 1000 },
};

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
	.compute = stat_compute_disk_requests,
};
