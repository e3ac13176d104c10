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

/* DSTAT_TIMEFMT: the column as wide as the time it makes. */
static void init(struct group *g)
{
	static struct mon_column column;
	char text[sizeof(g->shown.text)];
	time_t now = time(NULL);
	struct tm tm;
	size_t width;

	if (!strcmp(stat_time_format(), "%d-%m %H:%M:%S"))
		return;
	localtime_r(&now, &tm);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral" /* the user's format, as dstat's DSTAT_TIMEFMT */
	width = strftime(text, sizeof(text), stat_time_format(), &tm);
#pragma GCC diagnostic pop
	column = columns[TIME];
	column.width = width ? (int)width : 1;
	g->shown.columns = &column;
}

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
	.init = init,
	.compute = compute,
};
