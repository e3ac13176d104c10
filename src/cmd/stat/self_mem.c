/* SPDX-License-Identifier: GPL-2.0-or-later */
/* self_mem.c: iolens stat's group dstat-mem (--dstat-mem): "dstat memory usage". */
#include <stdio.h>

#include "cmd/stat_group.h"

enum { VIRTUAL, RESIDENT, SHARED, DATA };
static const struct mon_column columns[] = {
	[VIRTUAL] = { "virtual", "virtual", "bytes", MON_DECIMAL, 5, 1024 },
	[RESIDENT] = { "resident", "resident", "bytes", MON_DECIMAL, 5, 1024 },
	[SHARED] = { "shared", "shared", "bytes", MON_DECIMAL, 5, 1024 },
	[DATA] = { "data", "data", "bytes", MON_DECIMAL, 5, 1024 },
};

/* statm's size, resident, shared and data: in KiB on screen, as dstat's; bytes in JSON and CSV. */
static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	static const struct { unsigned column, field; } fields[] = {
		{ VIRTUAL, 0 }, { RESIDENT, 1 }, { SHARED, 2 }, { DATA, 5 },
	};
	unsigned long long pages[6] = { 0 };
	char text[256];
	FILE *f = fopen("/proc/self/statm", "re");

	(void)then;
	(void)now;
	(void)seconds;
	(void)since_boot;
	if (!f || !fgets(text, sizeof(text), f) ||
	    sscanf(text, "%llu %llu %llu %llu %llu %llu", &pages[0], &pages[1], &pages[2], &pages[3], &pages[4],
		   &pages[5]) != 6) {
		all_unknown(g);
	} else {
		for (unsigned i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
			double bytes = (double)pages[fields[i].field] * (double)page_size();
			set(g, fields[i].column, bytes / 1024, bytes);
		}
	}
	if (f)
		fclose(f);
}

const struct stat_group group_self_mem = {
	.rank = 59,
	.plugins = { "dstat-mem" },
	.section = GROUP_DSTAT_PLUGIN,
	.plugin_option = true,
	.title = "dstat memory usage",
	.key = "self_mem",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.compute = compute,
};
