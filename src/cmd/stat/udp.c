/* SPDX-License-Identifier: GPL-2.0-or-later */
/* udp.c: iolens stat's group udp (--udp): "udp". */
#include "cmd/stat_group.h"

enum { LISTEN, ACTIVE };
static const struct mon_column columns[] = {
	[LISTEN] = { "lis", "listen", "", MON_DECIMAL, 4, 1000 },
	[ACTIVE] = { "act", "active", "", MON_DECIMAL, 4, 1000 },
};

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	(void)then;
	(void)seconds;
	(void)since_boot;
	set_same(g, LISTEN, (double)now->sockets.udp_listen);
	set_same(g, ACTIVE, (double)now->sockets.udp_active);
	if (!(now->have & SYS_UDP))
		all_unknown(g);
}

const struct stat_group group_udp = {
	.rank = 14,
	.plugins = { "udp" },
	.section = GROUP_DSTAT,
	.title = "udp",
	.key = "udp",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_UDP,
	.compute = compute,
};
