/* SPDX-License-Identifier: GPL-2.0-or-later */
/* model/net.c: interfaces' byte and packet rates from /proc/net/dev. */
#include "model/net.h"

#include <string.h>

static const struct netdev_stats *netdev_find(const struct system_sample *s, const char *name)
{
	for (unsigned i = 0; (s->have & SYS_NETDEV) && i < s->netdev.count; i++)
		if (!strcmp(s->netdev.dev[i].name, name))
			return &s->netdev.dev[i];
	return NULL;
}

/*
 * An interface, or the total of the interfaces that are devices of their own (of all but
 * lo when none is): bytes before and after. As with disks, a total sums the interfaces in
 * both samples whose counters did not go back; one that appeared has an unknown first interval.
 */
static bool net_counters(const struct system_sample *then, const struct system_sample *now, const char *item,
			 bool packets, double before[2], double after[2])
{
	bool total = !strcmp(item, "total"), any_physical = false;
#define RX(d) (packets ? (d)->rx_packets : (d)->rx_bytes)
#define TX(d) (packets ? (d)->tx_packets : (d)->tx_bytes)

	before[0] = before[1] = after[0] = after[1] = 0;
	if (!(now->have & SYS_NETDEV))
		return false;
	if (!total) {
		const struct netdev_stats *b = netdev_find(now, item), *a = netdev_find(then, item);
		if (!b || (!a && (then->have & SYS_NETDEV)))
			return false;
		if (a && (RX(b) < RX(a) || TX(b) < TX(a)))
			return true; /* went back: 0 for this interval */
		before[0] = a ? (double)RX(a) : 0;
		before[1] = a ? (double)TX(a) : 0;
		after[0] = (double)RX(b);
		after[1] = (double)TX(b);
		return true;
	}
	for (unsigned i = 0; i < now->netdev.count; i++)
		any_physical |= netdev_is_physical(now->netdev.dev[i].name) == 1;
	for (unsigned i = 0; i < now->netdev.count; i++) {
		const struct netdev_stats *b = &now->netdev.dev[i], *a;
		if (any_physical ? netdev_is_physical(b->name) != 1 : !strcmp(b->name, "lo"))
			continue;
		a = netdev_find(then, b->name);
		if ((!a && (then->have & SYS_NETDEV)) || (a && (RX(b) < RX(a) || TX(b) < TX(a))))
			continue;
		before[0] += a ? (double)RX(a) : 0;
		before[1] += a ? (double)TX(a) : 0;
		after[0] += (double)RX(b);
		after[1] += (double)TX(b);
	}
	return true;
}
#undef RX
#undef TX

bool sample_net_rates(const struct system_sample *then, const struct system_sample *now, const char *item,
		      bool packets, double seconds, double *received, double *sent)
{
	double a[2], b[2];

	if (!net_counters(then, now, item, packets, a, b))
		return false;
	*received = seconds > 0 && b[0] >= a[0] ? (b[0] - a[0]) / seconds : 0;
	*sent = seconds > 0 && b[1] >= a[1] ? (b[1] - a[1]) / seconds : 0;
	return true;
}
