/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sys.c: iolens stat's group sys (--sys): "system". */
#include "cmd/stat_group.h"

enum { INT, CSW };
static const struct mon_column columns[] = {
	[INT] = { "int", "int", "per_s", MON_DECIMAL, 5, 1000 },
	[CSW] = { "csw", "csw", "per_s", MON_DECIMAL, 5, 1000 },
};

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	(void)since_boot;
	if (!(now->have & SYS_PROCSTAT)) {
		all_unknown(g);
		return;
	}
	set_same(g, INT, rate(now->procstat.intr, then->procstat.intr, seconds));
	set_same(g, CSW, rate(now->procstat.ctxt, then->procstat.ctxt, seconds));
}

const struct stat_group group_sys = {
	.rank = 6,
	.plugins = { "sys" },
	.section = GROUP_DSTAT,
	.letter = 'y',
	.title = "system",
	.key = "system",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_PROCSTAT,
	.compute = compute,
};
