/* SPDX-License-Identifier: GPL-2.0-or-later */
/* disk_ext.c: iolens stat's group disk-ext (--disk-ext): "dsk-ext/ITEM". */
#include "cmd/stat_group.h"
#include "model/disk.h"

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	(void)since_boot;
	stat_compute_disk_ext(g, then, now, seconds);
}

const struct stat_group group_disk_ext = {
	.rank = 23,
	.plugins = { "disk-ext" },
	.section = GROUP_IOLENS,
	.letter = 'x',
	.items = ITEMS_EACH_DISK,
	.title = "dsk-ext/%s",
	.key = "dskext_%s",
	.columns = disk_ext_columns,
	.ncolumns = DISK_EXT_COLUMNS,
	.needs = SYS_DISKSTATS,
	.compute = compute,
};
