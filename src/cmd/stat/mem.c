/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mem.c: iolens stat's group mem (--mem): "memory usage". */
#include "cmd/stat_group.h"
#include "model/memory.h"

enum { USED, FREE, BUFF, CACH };
static const struct mon_column columns[] = {
	[USED] = { "used", "used", "bytes", MON_FLOAT, 5, 1024 },
	[FREE] = { "free", "free", "bytes", MON_FLOAT, 5, 1024 },
	[BUFF] = { "buff", "buff", "bytes", MON_FLOAT, 5, 1024 },
	[CACH] = { "cach", "cach", "bytes", MON_FLOAT, 5, 1024 },
};

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	const struct meminfo *m = &now->meminfo;
	(void)then;
	(void)seconds;
	(void)since_boot;
	if (!(now->have & SYS_MEMINFO) || m->mem_total == PROCFS_UNKNOWN) {
		all_unknown(g);
		return;
	}
	set_same(g, USED, mem_used(m));
	set_same(g, FREE, known(m->mem_free));
	set_same(g, BUFF, known(m->buffers));
	set_same(g, CACH, known(m->cached));
}

const struct stat_group group_mem = {
	.rank = 7,
	.plugins = { "mem" },
	.section = GROUP_DSTAT,
	.letter = 'm',
	.title = "memory usage",
	.key = "memory",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_MEMINFO,
	.compute = compute,
};
