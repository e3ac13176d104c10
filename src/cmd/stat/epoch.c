/* SPDX-License-Identifier: GPL-2.0-or-later */
/* epoch.c: iolens stat's group epoch (--epoch): "epoch". */
#include <stdio.h>

#include "cmd/stat_group.h"

/* dstat's -T: seconds since the epoch, ten digits (JSON and CSV have time_ns). */
enum { EPOCH };
static const struct mon_column columns[] = {
	[EPOCH] = { "epoch", "epoch", "", MON_TEXT, 10, 0 },
};

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	(void)then;
	(void)seconds;
	(void)since_boot;
	snprintf(g->shown.text, sizeof(g->shown.text), "%llu", (unsigned long long)(now->real_ns / 1000000000ull));
	set_same(g, EPOCH, (double)now->real_ns);
}

const struct stat_group group_epoch = {
	.rank = 27,
	.plugins = { "epoch" },
	.section = GROUP_DSTAT,
	.letter = 'T',
	.title = "epoch",
	.key = "epoch",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.compute = compute,
};
