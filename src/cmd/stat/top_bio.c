/* SPDX-License-Identifier: GPL-2.0-or-later */
/* top_bio.c: iolens stat's group top-bio (--top-bio): "most expensive". */
#include <math.h>

#include "cmd/stat_group.h"

enum { NAME, READ, WRITE, P99, P50, MAX, AVG };
static const struct mon_column columns[] = {
	[NAME] = { "block i/o process", "name", "", MON_NAME, 11, 0 },
	[READ] = { "read", "read", "bytes_per_s", MON_DECIMAL, 5, 1024 },
	[WRITE] = { "writ", "write", "bytes_per_s", MON_DECIMAL, 5, 1024 },
	[P99] = { "p99", "p99", "ns", MON_FLOAT, 4, 1000 },
	[P50] = { "p50", "p50", "ns", MON_FLOAT, 4, 1000 },
	[MAX] = { "max", "max", "ns", MON_FLOAT, 4, 1000 },
	[AVG] = { "avg", "avg", "ns", MON_FLOAT, 4, 1000 },
};

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	(void)since_boot;
	if (groups_top_bio_is_ebpf()) {
		stat_compute_top_bio(g, then, now, seconds);
	} else {
		stat_compute_top(g, then, now, seconds);
		for (unsigned c = P99; c < g->shown.ncolumns; c++)
			set_same(g, c, NAN); /* /proc/PID/io has no latency */
	}
}

const struct stat_group group_top_bio = {
	.rank = 40,
	.plugins = { "top-bio" },
	.section = GROUP_DSTAT_PLUGIN,
	.plugin_option = true,
	.title = "most expensive",
	.key = "top_bio",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_PROC_IO,
	.subtitle = "block i/o process",
	.glued = 1u << 1,
	.top = true,
	.compute = compute,
};
