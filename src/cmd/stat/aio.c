/* SPDX-License-Identifier: GPL-2.0-or-later */
/* aio.c: iolens stat's group aio (--aio): "async". */
#include <math.h>

#include "cmd/stat_group.h"

enum { REQUESTS };
static const struct mon_column columns[] = {
	[REQUESTS] = { "#aio", "requests", "", MON_DECIMAL, 5, 1000 },
};

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	(void)then;
	(void)seconds;
	(void)since_boot;
	set_same(g, REQUESTS, (now->have & SYS_FSSTAT) ? known(now->fs.aio_nr) : NAN);
}

const struct stat_group group_aio = {
	.rank = 18,
	.plugins = { "aio" },
	.section = GROUP_DSTAT,
	.title = "async",
	.key = "aio",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_FSSTAT,
	.compute = compute,
};
