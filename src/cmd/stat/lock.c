/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lock.c: iolens stat's group lock (--lock): "file locks". */
#include "cmd/stat_group.h"

enum { POSIX, FLOCK, READ, WRITE };
static const struct mon_column columns[] = {
	[POSIX] = { "pos", "posix", "", MON_FLOAT, 3, 10 },
	[FLOCK] = { "lck", "flock", "", MON_FLOAT, 3, 10 },
	[READ] = { "rea", "read", "", MON_FLOAT, 3, 10 },
	[WRITE] = { "wri", "write", "", MON_FLOAT, 3, 10 },
};

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	(void)then;
	(void)seconds;
	(void)since_boot;
	set_same(g, POSIX, (double)now->locks.posix);
	set_same(g, FLOCK, (double)now->locks.flock);
	set_same(g, READ, (double)now->locks.read);
	set_same(g, WRITE, (double)now->locks.write);
	if (!(now->have & SYS_LOCKS))
		all_unknown(g);
}

const struct stat_group group_lock = {
	.rank = 20,
	.plugins = { "lock" },
	.section = GROUP_DSTAT,
	.title = "file locks",
	.key = "locks",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_LOCKS,
	.compute = compute,
};
