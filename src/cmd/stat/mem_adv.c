/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mem_adv.c: iolens stat's group mem-adv (--mem-adv): "advanced memory usage". */
#include "cmd/stat_group.h"
#include "model/memory.h"

enum { TOTAL, USED, FREE, BUFF, CACH, DIRTY, SHMEM, RECLAIMABLE };
static const struct mon_column columns[] = {
	[TOTAL] = { "total", "total", "bytes", MON_FLOAT, 5, 1024 },
	[USED] = { "used", "used", "bytes", MON_FLOAT, 5, 1024 },
	[FREE] = { "free", "free", "bytes", MON_FLOAT, 5, 1024 },
	[BUFF] = { "buff", "buff", "bytes", MON_FLOAT, 5, 1024 },
	[CACH] = { "cach", "cach", "bytes", MON_FLOAT, 5, 1024 },
	[DIRTY] = { "dirty", "dirty", "bytes", MON_FLOAT, 5, 1024 },
	[SHMEM] = { "shmem", "shmem", "bytes", MON_FLOAT, 5, 1024 },
	[RECLAIMABLE] = { "recl", "reclaimable", "bytes", MON_FLOAT, 5, 1024 },
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
	set_same(g, TOTAL, known(m->mem_total));
	set_same(g, USED, mem_used(m));
	set_same(g, FREE, known(m->mem_free));
	set_same(g, BUFF, known(m->buffers));
	set_same(g, CACH, known(m->cached));
	set_same(g, DIRTY, known(m->dirty));
	set_same(g, SHMEM, known(m->shmem));
	set_same(g, RECLAIMABLE, known(m->sreclaimable));
}

const struct stat_group group_mem_adv = {
	.rank = 34,
	.plugins = { "mem-adv" },
	.section = GROUP_DSTAT,
	.plugin_option = true,
	.title = "advanced memory usage",
	.key = "memory_adv",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_MEMINFO,
	.compute = compute,
};
