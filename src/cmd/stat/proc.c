/* SPDX-License-Identifier: GPL-2.0-or-later */
/* proc.c: iolens stat's group proc (--proc): "procs". */
#include "cmd/stat_group.h"

enum { RUN, BLK, NEW };
static const struct mon_column columns[] = {
	[RUN] = { "run", "run", "", MON_FLOAT, 3, 10 },
	[BLK] = { "blk", "blk", "", MON_FLOAT, 3, 10 },
	[NEW] = { "new", "new", "per_s", MON_FLOAT, 3, 10 },
};

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	(void)since_boot;
	if (!(now->have & SYS_PROCSTAT)) {
		all_unknown(g);
		return;
	}
	/* As dstat and vmstat: the reader itself is running while it reads; it does not count. */
	set_same(g, RUN, now->procstat.procs_running ? (double)(now->procstat.procs_running - 1) : 0);
	set_same(g, BLK, (double)now->procstat.procs_blocked);
	set_same(g, NEW, rate(now->procstat.processes, then->procstat.processes, seconds));
}

const struct stat_group group_proc = {
	.rank = 10,
	.plugins = { "proc" },
	.section = GROUP_DSTAT,
	.letter = 'p',
	.title = "procs",
	.key = "procs",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_PROCSTAT,
	.compute = compute,
};
