/* SPDX-License-Identifier: GPL-2.0-or-later */
/* socket.c: iolens stat's group socket (--socket): "sockets". */
#include "cmd/stat_group.h"

enum { TOTAL, TCP, UDP, RAW, FRAG };
static const struct mon_column columns[] = {
	[TOTAL] = { "tot", "total", "", MON_DECIMAL, 4, 1000 },
	[TCP] = { "tcp", "tcp", "", MON_DECIMAL, 4, 1000 },
	[UDP] = { "udp", "udp", "", MON_DECIMAL, 4, 1000 },
	[RAW] = { "raw", "raw", "", MON_DECIMAL, 4, 1000 },
	[FRAG] = { "frg", "frag", "", MON_DECIMAL, 4, 1000 },
};

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	(void)then;
	(void)seconds;
	(void)since_boot;
	set_same(g, TOTAL, known(now->sockets.used));
	set_same(g, TCP, known(now->sockets.tcp_inuse));
	set_same(g, UDP, known(now->sockets.udp_inuse));
	set_same(g, RAW, known(now->sockets.raw_inuse));
	set_same(g, FRAG, known(now->sockets.frag_inuse));
	if (!(now->have & SYS_SOCKETS))
		all_unknown(g);
}

const struct stat_group group_socket = {
	.rank = 16,
	.plugins = { "socket" },
	.section = GROUP_DSTAT,
	.title = "sockets",
	.key = "sockets",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_SOCKETS,
	.compute = compute,
};
