/* SPDX-License-Identifier: GPL-2.0-or-later */
/* zones.c: iolens stat's group zones (--zones): "zones memory". */
#include <math.h>

#include "cmd/stat_group.h"

enum { DMA32_FREE, DMA32_HIGH, NORMAL_FREE, NORMAL_HIGH };
static const struct mon_column columns[] = {
	[DMA32_FREE] = { "d32F", "dma32_free", "pages", MON_DECIMAL, 5, 1000 },
	[DMA32_HIGH] = { "d32H", "dma32_high", "pages", MON_DECIMAL, 5, 1000 },
	[NORMAL_FREE] = { "normF", "normal_free", "pages", MON_DECIMAL, 5, 1000 },
	[NORMAL_HIGH] = { "normH", "normal_high", "pages", MON_DECIMAL, 5, 1000 },
};

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	const struct zones *z = &now->zones;
	bool have = now->have & SYS_ZONES;
	(void)then;
	(void)seconds;
	(void)since_boot;
	set_same(g, DMA32_FREE, have && z->has_dma32 ? (double)z->dma32_free : NAN);
	set_same(g, DMA32_HIGH, have && z->has_dma32 ? (double)z->dma32_high : NAN);
	set_same(g, NORMAL_FREE, have && z->has_normal ? (double)z->normal_free : NAN);
	set_same(g, NORMAL_HIGH, have && z->has_normal ? (double)z->normal_high : NAN);
}

const struct stat_group group_zones = {
	.rank = 36,
	.plugins = { "zones" },
	.section = GROUP_DSTAT,
	.plugin_option = true,
	.title = "zones memory",
	.key = "zones",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_ZONES,
	.compute = compute,
};
