/* SPDX-License-Identifier: GPL-2.0-or-later */
/* model/cpu.h: where a cpu's time went between two monitor samples. */
#ifndef IOLENS_MODEL_CPU_H
#define IOLENS_MODEL_CPU_H

#include <stdbool.h>

#include "collect/system.h"

/* A cpu's counters in a sample (item: its number, or "total"); NULL when the sample has none of it. */
const struct cpu_times *sample_cpu(const struct system_sample *s, const char *item);

/* A cpu's (or "total"'s) time in the interval, in percent of it, as dstat's cpu group. */
struct cpu_shares {
	double user; /* user and nice */
	double system, idle, iowait, irq, softirq, steal;
};
/* False when unknown; a `then` without /proc/stat (the first line) counts from zero: since boot. */
bool sample_cpu_shares(const struct system_sample *then, const struct system_sample *now, const char *item,
		       struct cpu_shares *out);

#endif
