/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vtrace.c: iolens stat's group vtrace (--vtrace): "vt/ITEM". */
#include "cmd/stat_group.h"

enum { OPS, UTIL, HANG };
static const struct mon_column columns[] = {
	[OPS] = { "op/s", "ops", "per_s", MON_FLOAT, 6, 1000 },
	[UTIL] = { "util", "util", "pct", MON_PERCENT, 4, 34 },
	[HANG] = { "hang", "hang", "", MON_DECIMAL, 4, 10 },
};

const struct stat_group group_vtrace = {
	.rank = 26,
	.plugins = { "vtrace" },
	.section = GROUP_IOLENS,
	.items = ITEMS_VTRACE,
	.title = "vt/%s",
	.key = "vtrace_%s",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.alone = true,
};
