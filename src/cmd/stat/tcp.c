/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tcp.c: iolens stat's group tcp (--tcp): "tcp sockets". */
#include "cmd/stat_group.h"

enum { LISTEN, ESTABLISHED, SYN, TIME_WAIT, CLOSING };
static const struct mon_column columns[] = {
	[LISTEN] = { "lis", "listen", "", MON_DECIMAL, 4, 1000 },
	[ESTABLISHED] = { "act", "established", "", MON_DECIMAL, 4, 1000 },
	[SYN] = { "syn", "syn", "", MON_DECIMAL, 4, 1000 },
	[TIME_WAIT] = { "tim", "time_wait", "", MON_DECIMAL, 4, 1000 },
	[CLOSING] = { "clo", "closing", "", MON_DECIMAL, 4, 1000 },
};

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	(void)then;
	(void)seconds;
	(void)since_boot;
	set_same(g, LISTEN, (double)now->sockets.tcp_listen);
	set_same(g, ESTABLISHED, (double)now->sockets.tcp_established);
	set_same(g, SYN, (double)now->sockets.tcp_syn);
	set_same(g, TIME_WAIT, (double)now->sockets.tcp_time_wait);
	set_same(g, CLOSING, (double)now->sockets.tcp_close);
	if (!(now->have & SYS_TCP))
		all_unknown(g);
}

const struct stat_group group_tcp = {
	.rank = 13,
	.plugins = { "tcp" },
	.section = GROUP_DSTAT,
	.title = "tcp sockets",
	.key = "tcp",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_TCP,
	.compute = compute,
};
