/* SPDX-License-Identifier: GPL-2.0-or-later */
/* swap.c: iolens stat's group swap (--swap): "swp/ITEM". */
#include <string.h>

#include "cmd/stat_group.h"
#include "model/memory.h"

enum { USED, FREE };
static const struct mon_column columns[] = {
	[USED] = { "used", "used", "bytes", MON_BYTES, 5, 1024 },
	[FREE] = { "free", "free", "bytes", MON_BYTES, 5, 1024 },
};

#define TITLE "swp/%s"

/* As dstat: "swp/sda2" for /dev/sda2, "swp/vg0-swap" for /dev/mapper/vg0-swap. */
static void init(struct group *g)
{
	const char *name = g->item;

	if (!strncmp(name, "/dev/mapper/", 12))
		name += 12;
	else if (!strncmp(name, "/dev/", 5))
		name += 5;
	stat_fill(g->shown.title, sizeof(g->shown.title), TITLE, name);
}

/* dstat's swap plugin keeps the name "swap" whatever -S lists. */
static void dstat_view(const struct group *g, struct mon_group *out, bool since_boot)
{
	(void)g;
	(void)since_boot;
	snprintf(out->title, sizeof(out->title), "swap");
}

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	double used, free_bytes;
	(void)then;
	(void)seconds;
	(void)since_boot;
	if (!sample_swap(now, g->item, &used, &free_bytes)) {
		all_unknown(g);
		return;
	}
	set_same(g, USED, used);
	set_same(g, FREE, free_bytes);
}

const struct stat_group group_swap = {
	.rank = 8,
	.plugins = { "swap", "swap-old" },
	.section = GROUP_DSTAT,
	.letter = 's',
	.items = ITEMS_SWAP,
	.title = TITLE,
	.key = "swap_%s",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_SWAPS,
	.init = init,
	.compute = compute,
	.dstat_view = dstat_view,
};
