/* SPDX-License-Identifier: GPL-2.0-or-later */
/* disk.c: iolens stat's group disk (--disk): "dsk/ITEM". */
#include "cmd/stat_group.h"

enum { READ, WRITE }; /* stat_compute_disk_bytes' order */
static const struct mon_column columns[] = {
	[READ] = { "read", "read", "bytes_per_s", MON_BYTES, 5, 1024 },
	[WRITE] = { "writ", "write", "bytes_per_s", MON_BYTES, 5, 1024 },
};
/* dstat's --bits: the same in bits, powers of 1000. */
static const struct mon_column bits_columns[] = {
	[READ] = { "read", "read", "bytes_per_s", MON_BITS, 5, 1000 },
	[WRITE] = { "writ", "write", "bytes_per_s", MON_BITS, 5, 1000 },
};

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
	.compute = stat_compute_disk_bytes,
};
