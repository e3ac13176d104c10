/* SPDX-License-Identifier: GPL-2.0-or-later */
/* snooze.c: iolens stat's group snooze (--snooze): "snooze". */
#include <math.h>

#include "cmd/stat_group.h"

/* dstat's snooze: the seconds from the sample before. */
enum { SNOOZE };
static const struct mon_column columns[] = {
	[SNOOZE] = { "snooze", "snooze", "s", MON_FLOAT, 6, 0 },
};

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	(void)then;
	(void)now;
	/* As dstat: the first line has no sample before it ('-'). */
	set_same(g, SNOOZE, since_boot ? NAN : seconds);
}

const struct stat_group group_snooze = {
	.rank = 55,
	.plugins = { "snooze" },
	.section = GROUP_DSTAT_PLUGIN,
	.plugin_option = true,
	.title = "snooze",
	.key = "snooze",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.compute = compute,
};
