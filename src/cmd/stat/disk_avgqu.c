/* SPDX-License-Identifier: GPL-2.0-or-later */
/* disk_avgqu.c: iolens stat's group disk-avgqu (--disk-avgqu): "ITEM". */
#include "cmd/stat_group.h"
#include "model/disk.h"

enum { AVGQU };
static const struct mon_column columns[] = {
	[AVGQU] = { "avgq", "avgqu", "", MON_FLOAT, 4, 10 },
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
	set_same(g, AVGQU, x.aqu_sz);
}

const struct stat_group group_disk_avgqu = {
	.rank = 31,
	.plugins = { "disk-avgqu" },
	.section = GROUP_DSTAT_PLUGIN,
	.plugin_option = true,
	.items = ITEMS_EACH_DISK,
	.title = "%s",
	.key = "avgqu_%s",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_DISKSTATS,
	.compute = compute,
};
