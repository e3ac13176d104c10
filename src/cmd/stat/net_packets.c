/* SPDX-License-Identifier: GPL-2.0-or-later */
/* net_packets.c: iolens stat's group net-packets (--net-packets): "pkt/ITEM". */
#include "cmd/stat_group.h"
#include "model/net.h"

enum { RECV, SEND };
static const struct mon_column columns[] = {
	[RECV] = { "#recv", "recv", "packets_per_s", MON_DECIMAL, 5, 1000 },
	[SEND] = { "#send", "send", "packets_per_s", MON_DECIMAL, 5, 1000 },
};

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	double received, sent;

	(void)since_boot;
	if (!sample_net_rates(then, now, g->item, true, seconds, &received, &sent)) {
		all_unknown(g);
		return;
	}
	set_same(g, RECV, received);
	set_same(g, SEND, sent);
}

const struct stat_group group_net_packets = {
	.rank = 33,
	.plugins = { "net-packets" },
	.section = GROUP_DSTAT_PLUGIN,
	.plugin_option = true,
	.items = ITEMS_NET,
	.title = "pkt/%s",
	.key = "pkt_%s",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_NETDEV,
	.compute = compute,
	/* dstat computes the network only from its second sample: the first line shows 0. */
	.dstat_view = stat_dstat_zero_first,
};
