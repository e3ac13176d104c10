/* SPDX-License-Identifier: GPL-2.0-or-later */
/* model/cpu.c: a cpu's time in percent of an interval, from /proc/stat's jiffies. */
#include "model/cpu.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

const struct cpu_times *sample_cpu(const struct system_sample *s, const char *item)
{
	char *end;
	long n;

	if (!(s->have & SYS_PROCSTAT))
		return NULL;
	if (!strcmp(item, "total"))
		return &s->procstat.total;
	n = strtol(item, &end, 10);
	if (*end || n < 0 || (unsigned long)n >= s->procstat.ncpu || !s->procstat.cpu_present[n])
		return NULL;
	return &s->procstat.cpu[n];
}

/* Jiffies between two samples; a column the kernel does not have (old kernels: steal) counts 0. */
static double tick_delta(uint64_t now, uint64_t then)
{
	if (now == PROCFS_UNKNOWN)
		return 0;
	if (then == PROCFS_UNKNOWN)
		then = 0;
	return now >= then ? (double)(now - then) : 0;
}

bool sample_cpu_shares(const struct system_sample *then, const struct system_sample *now, const char *item,
		       struct cpu_shares *out)
{
	static const struct cpu_times zero;
	const struct cpu_times *b = sample_cpu(now, item);
	const struct cpu_times *a = then->have & SYS_PROCSTAT ? sample_cpu(then, item) : &zero;
	double d[7], total = 0, *share[7] = { &out->user, &out->system, &out->idle, &out->iowait, &out->irq,
					     &out->softirq, &out->steal };

	if (!a || !b)
		return false;
	/* user is user + nice, as dstat's */
	d[0] = tick_delta(b->user, a->user) + tick_delta(b->nice, a->nice);
	d[1] = tick_delta(b->system, a->system);
	d[2] = tick_delta(b->idle, a->idle);
	d[3] = tick_delta(b->iowait, a->iowait);
	d[4] = tick_delta(b->irq, a->irq);
	d[5] = tick_delta(b->softirq, a->softirq);
	d[6] = tick_delta(b->steal, a->steal);
	for (int i = 0; i < 7; i++) {
		if (d[i] < 0)
			d[i] = 0; /* idle and iowait can go back on some kernels (NO_HZ accounting) */
		total += d[i];
	}
	for (int i = 0; i < 7; i++)
		*share[i] = total > 0 ? 100 * d[i] / total : 0;
	return true;
}
