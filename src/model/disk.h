/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * model/disk.h: a disk's figures from two samples: iostat -x's (disk_ext_compute), and the
 * counters of a disk or of the total between two monitor samples, as stat and doctor use them.
 */
#ifndef IOLENS_MODEL_DISK_H
#define IOLENS_MODEL_DISK_H

#include <stdbool.h>

#include "collect/diskstats.h"
#include "collect/system.h"

/*
 * iostat -x's figures between two samples of one device, computed as sysstat's
 * compute_ext_disk_stats and write_ext_stat do (iostat 12): rates per second over the
 * measured interval, awaits in ms, sizes in KiB, aqu-sz from the weighted time, %util
 * from io_ticks (capped at 100 as iostat does). A counter that went backwards gives 0.
 */
struct disk_ext {
	double r_s, w_s, d_s, f_s;                /* completed requests per second */
	double rkb_s, wkb_s, dkb_s;               /* KiB per second */
	double rrqm_s, wrqm_s, drqm_s;            /* merged requests per second */
	double rrqm_pct, wrqm_pct, drqm_pct;      /* merges in percent of requests */
	double r_await, w_await, d_await, f_await; /* ms per request, 0 without requests */
	double rareq_sz, wareq_sz, dareq_sz;      /* KiB per request */
	double aqu_sz;                            /* average queue length */
	double util;                              /* percent of the interval with I/O in flight */
	/* both samples have the fields (nfields >= 15, 17): else the d_ and f_ figures are 0 for unknown */
	bool has_discards, has_flushes;
};

/*
 * seconds: the measured time between the samples; when it is not above 0 the rates are 0.
 * The millisecond counters (ticks, io_ticks, time_in_queue) are 32 bits in the kernel
 * (printed with %u): a drop of more than 2^31 is their wrap and counts forward, as in
 * sysstat's unsigned int arithmetic, unless the request counts fell too (the device was
 * removed and added again). Any other drop gives 0 for the figures that use that counter.
 * Unlike the comment above says, iostat 12 does not cap %util (sysstat declined to: issue
 * 412, pull 405): where it prints 100.4 this gives 100.
 */
void disk_ext_compute(const struct disk_stats *before, const struct disk_stats *after, double seconds,
		      struct disk_ext *out);

/*
 * A device's counters before and after (item: its name); false when either sample lacks it.
 * A `then` without disks (the first line, since boot) gives zeros before and true.
 */
bool sample_disk_pair(const struct system_sample *then, const struct system_sample *now, const char *item,
		      struct disk_stats *a, struct disk_stats *b);
/*
 * The counters of an item, before and after: one device, or "total", the sum of the request
 * and sector counts over the devices counted in totals (disk_kind.in_total). A total sums only
 * the devices in both samples whose counters did not go back, so a device attached or replaced
 * meanwhile makes neither a spike nor a dip. False when the item cannot be known (not there; no
 * sysfs to tell what a total counts).
 */
bool sample_disk_counters(const struct system_sample *then, const struct system_sample *now, const char *item,
			  struct disk_stats *a, struct disk_stats *b);
/* One disk's iostat -x figures over the interval (disk_ext_compute); false for "total" or when unknown. */
bool sample_disk_ext(const struct system_sample *then, const struct system_sample *now, const char *item,
		     double seconds, struct disk_ext *x);

#endif
