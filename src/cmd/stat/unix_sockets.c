/* SPDX-License-Identifier: GPL-2.0-or-later */
/* unix_sockets.c: iolens stat's group unix (--unix): "unix sockets". */
#include "cmd/stat_group.h"

enum { DATAGRAM, STREAM, LISTEN, ACTIVE };
static const struct mon_column columns[] = {
	[DATAGRAM] = { "dgm", "datagram", "", MON_DECIMAL, 4, 1000 },
	[STREAM] = { "str", "stream", "", MON_DECIMAL, 4, 1000 },
	[LISTEN] = { "lis", "listen", "", MON_DECIMAL, 4, 1000 },
	[ACTIVE] = { "act", "active", "", MON_DECIMAL, 4, 1000 },
};

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	(void)then;
	(void)seconds;
	(void)since_boot;
	set_same(g, DATAGRAM, (double)now->sockets.unix_datagram);
	set_same(g, STREAM, (double)now->sockets.unix_stream);
	set_same(g, LISTEN, (double)now->sockets.unix_listen);
	set_same(g, ACTIVE, (double)now->sockets.unix_active);
	if (!(now->have & SYS_UNIX))
		all_unknown(g);
}

const struct stat_group group_unix_sockets = {
	.rank = 15,
	.plugins = { "unix" },
	.section = GROUP_DSTAT,
	.title = "unix sockets",
	.key = "unix",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_UNIX,
	.compute = compute,
};
