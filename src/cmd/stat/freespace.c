/* SPDX-License-Identifier: GPL-2.0-or-later */
/* freespace.c: iolens stat's group freespace (--freespace): "ITEM". */
#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>

#include "cmd/stat_group.h"

/* dstat's freespace: used and free bytes of a mount point (free: what others than root may use). */
enum { USED, FREE };
static const struct mon_column columns[] = {
	[USED] = { "used", "used", "bytes", MON_FLOAT, 5, 1024 },
	[FREE] = { "free", "free", "bytes", MON_FLOAT, 5, 1024 },
};

/* As dstat: "/" and the mount point's last name ("/" for the root, "/boot", "/unified"). */
static void init(struct group *g)
{
	const char *base = strrchr(g->item, '/');

	snprintf(g->shown.title, sizeof(g->shown.title), "/%.62s", base ? base + 1 : g->item);
}

/* dstat's freespace: bytes used (blocks less those available to users) and available, of the mount point. */
static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	struct statvfs vfs;

	(void)then;
	(void)now;
	(void)seconds;
	(void)since_boot;
	if (statvfs(g->item, &vfs) != 0) {
		all_unknown(g);
		return;
	}
	set_same(g, USED, ((double)vfs.f_blocks - (double)vfs.f_bavail) * (double)vfs.f_frsize);
	set_same(g, FREE, (double)vfs.f_bavail * (double)vfs.f_frsize);
}

const struct stat_group group_freespace = {
	.rank = 54,
	.plugins = { "freespace" },
	.section = GROUP_DSTAT_PLUGIN,
	.plugin_option = true,
	.items = ITEMS_MOUNTS,
	.title = "%s",
	.key = "freespace_%s",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.init = init,
	.compute = compute,
};
