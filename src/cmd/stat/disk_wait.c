/* SPDX-License-Identifier: GPL-2.0-or-later */
/* disk_wait.c: iolens stat's group disk-wait (--disk-wait): "ITEM". */
#include "cmd/stat_group.h"
#include "model/disk.h"

enum { R_AWAIT, W_AWAIT };
static const struct mon_column columns[] = {
	[R_AWAIT] = { "rawa", "r_await", "ns", MON_FLOAT, 4, 1 },
	[W_AWAIT] = { "wawa", "w_await", "ns", MON_FLOAT, 4, 1 },
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
	set(g, R_AWAIT, x.r_await, x.r_await * 1e6);
	set(g, W_AWAIT, x.w_await, x.w_await * 1e6);
}

const struct stat_group group_disk_wait = {
	.rank = 30,
	.plugins = { "disk-wait" },
	.section = GROUP_DSTAT_PLUGIN,
	.plugin_option = true,
	.items = ITEMS_EACH_DISK,
	.title = "%s",
	.key = "wait_%s",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_DISKSTATS,
	.compute = compute,
};
