/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fs.c: iolens stat's group fs (--fs): "filesystem". */
#include <math.h>

#include "cmd/stat_group.h"

enum { FILES, INODES };
static const struct mon_column columns[] = {
	[FILES] = { "files", "files", "", MON_DECIMAL, 6, 1000 },
	[INODES] = { "inodes", "inodes", "", MON_DECIMAL, 6, 1000 },
};

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	(void)then;
	(void)seconds;
	(void)since_boot;
	set_same(g, FILES, (now->have & SYS_FSSTAT) ? known(now->fs.files_open) : NAN);
	set_same(g, INODES, (now->have & SYS_FSSTAT) ? known(now->fs.inodes_used) : NAN);
}

const struct stat_group group_fs = {
	.rank = 17,
	.plugins = { "fs" },
	.alias = "filesystem",
	.section = GROUP_DSTAT,
	.title = "filesystem",
	.key = "filesystem",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_FSSTAT,
	.compute = compute,
};
