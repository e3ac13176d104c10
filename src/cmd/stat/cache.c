/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cache.c: iolens stat's group cache (--cache): "page cache". */
#include <math.h>

#include "cmd/stat_group.h"

/* Pages added to and removed from the page cache come from the kernel's tracepoints (eBPF). */
enum { CACHED, DIRTY, WRITEBACK, ADDED, REMOVED };
static const struct mon_column columns[] = {
	[CACHED] = { "cach", "cached", "bytes", MON_FLOAT, 5, 1024 },
	[DIRTY] = { "dirt", "dirty", "bytes", MON_FLOAT, 5, 1024 },
	[WRITEBACK] = { "wb", "writeback", "bytes", MON_FLOAT, 5, 1024 },
	[ADDED] = { "add", "added", "pages_per_s", MON_DECIMAL, 5, 1000 },
	[REMOVED] = { "rem", "removed", "pages_per_s", MON_DECIMAL, 5, 1000 },
};

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	const struct meminfo *m = &now->meminfo;
	(void)since_boot;
	if (!(now->have & SYS_MEMINFO) || !(now->have & SYS_VMSTAT)) {
		all_unknown(g);
		return;
	}
	set_same(g, CACHED, known(m->cached));
	set_same(g, DIRTY, known(m->dirty));
	set_same(g, WRITEBACK, known(m->writeback));
	/* Added and removed pages: counted by eBPF from the start of the run, so not since boot. */
	if ((now->have & SYS_CACHE_EVENTS) && (then->have & SYS_CACHE_EVENTS)) {
		set_same(g, ADDED, rate(now->cache_added, then->cache_added, seconds));
		set_same(g, REMOVED, rate(now->cache_removed, then->cache_removed, seconds));
	} else {
		set_same(g, ADDED, NAN);
		set_same(g, REMOVED, NAN);
	}
}

const struct stat_group group_cache = {
	.rank = 25,
	.plugins = { "cache" },
	.section = GROUP_IOLENS,
	.title = "page cache",
	.key = "cache",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_MEMINFO | SYS_VMSTAT | SYS_CACHE_EVENTS,
	.compute = compute,
};
