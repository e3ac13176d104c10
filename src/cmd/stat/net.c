/* SPDX-License-Identifier: GPL-2.0-or-later */
/* net.c: iolens stat's group net (--net): "net/ITEM". */
#include "cmd/stat_group.h"
#include "model/net.h"

enum { RECV, SEND };
static const struct mon_column columns[] = {
	[RECV] = { "recv", "recv", "bytes_per_s", MON_BYTES, 5, 1024 },
	[SEND] = { "send", "send", "bytes_per_s", MON_BYTES, 5, 1024 },
};
/* dstat's --bits: the same in bits, powers of 1000. */
static const struct mon_column bits_columns[] = {
	[RECV] = { "recv", "recv", "bytes_per_s", MON_BITS, 5, 1000 },
	[SEND] = { "send", "send", "bytes_per_s", MON_BITS, 5, 1000 },
};

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	double received, sent;

	(void)since_boot;
	if (!sample_net_rates(then, now, g->item, false, seconds, &received, &sent)) {
		all_unknown(g);
		return;
	}
	set_same(g, RECV, received);
	set_same(g, SEND, sent);
}

const struct stat_group group_net = {
	.rank = 4,
	.plugins = { "net" },
	.section = GROUP_DSTAT,
	.letter = 'n',
	.items = ITEMS_NET,
	.title = "net/%s",
	.key = "net_%s",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.bits_columns = bits_columns,
	.needs = SYS_NETDEV,
	.compute = compute,
	/* dstat computes the network only from its second sample: the first line shows 0. */
	.dstat_view = stat_dstat_zero_first,
};
