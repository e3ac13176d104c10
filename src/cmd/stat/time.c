/* SPDX-License-Identifier: GPL-2.0-or-later */
/* time.c: iolens stat's group time (--time): "system". */
#include <string.h>
#include <time.h>

#include "cmd/stat_group.h"

/* { nick, key, unit, type, width, scale } */
enum { TIME };
static const struct mon_column columns[] = {
	[TIME] = { "time", "time", "", MON_TEXT, 14, 0 },
};

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	time_t t = (time_t)(now->real_ns / 1000000000ull);
	struct tm tm;
	(void)then;
	(void)seconds;
	(void)since_boot;
	localtime_r(&t, &tm);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	if (!strftime(g->shown.text, sizeof(g->shown.text), stat_time_format(), &tm))
		g->shown.text[0] = '\0'; /* longer than a column can be: blank, as strftime leaves it */
#pragma GCC diagnostic pop
	set_same(g, TIME, (double)now->real_ns);
}

const struct stat_group group_time = {
	.rank = 0,
	.plugins = { "time" },
	.section = GROUP_DSTAT,
	.letter = 't',
	.title = "system",
	.key = "time",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.compute = compute,
};
