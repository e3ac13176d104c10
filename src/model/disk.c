/* SPDX-License-Identifier: GPL-2.0-or-later */
/* model/disk.c: iostat -x's figures of a device from two samples, and the disk counters stat's groups sum. */
#include "model/disk.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* A 64-bit count (requests, merges, sectors): how far it moved, 0 when it went backwards. */
static uint64_t count_delta(uint64_t before, uint64_t after)
{
	return after >= before ? after - before : 0;
}

/*
 * A millisecond counter, 32 bits in the kernel. A drop of more than half the range is the
 * wrap (sysstat's unsigned int subtraction takes it so); a smaller drop, or any drop on a
 * device that was reset, gives 0.
 */
static uint64_t ms_delta(uint64_t before, uint64_t after, bool reset)
{
	uint32_t wrapped;

	if (after >= before)
		return after - before;
	if (reset || before > UINT32_MAX)
		return 0;
	wrapped = (uint32_t)after - (uint32_t)before;
	return wrapped < UINT32_C(0x80000000) ? wrapped : 0;
}

static double per(double amount, double count)
{
	return count > 0 ? amount / count : 0.0;
}

static double merged_pct(uint64_t merges, uint64_t requests, bool requests_went_back)
{
	return requests_went_back ? 0.0 : per((double)merges, (double)merges + (double)requests) * 100;
}

void disk_ext_compute(const struct disk_stats *before, const struct disk_stats *after, double seconds,
		      struct disk_ext *out)
{
	uint64_t rd_ios = count_delta(before->rd_ios, after->rd_ios);
	uint64_t wr_ios = count_delta(before->wr_ios, after->wr_ios);
	uint64_t dc_ios = count_delta(before->dc_ios, after->dc_ios);
	uint64_t fl_ios = count_delta(before->fl_ios, after->fl_ios);
	uint64_t rd_merges = count_delta(before->rd_merges, after->rd_merges);
	uint64_t wr_merges = count_delta(before->wr_merges, after->wr_merges);
	uint64_t dc_merges = count_delta(before->dc_merges, after->dc_merges);
	uint64_t rd_sectors = count_delta(before->rd_sectors, after->rd_sectors);
	uint64_t wr_sectors = count_delta(before->wr_sectors, after->wr_sectors);
	uint64_t dc_sectors = count_delta(before->dc_sectors, after->dc_sectors);
	/* Counts that all start again from 0 when a device is removed and added back. */
	bool reset = after->rd_ios < before->rd_ios || after->wr_ios < before->wr_ios ||
		     after->dc_ios < before->dc_ios || after->fl_ios < before->fl_ios;
	uint64_t rd_ticks = ms_delta(before->rd_ticks, after->rd_ticks, reset);
	uint64_t wr_ticks = ms_delta(before->wr_ticks, after->wr_ticks, reset);
	uint64_t dc_ticks = ms_delta(before->dc_ticks, after->dc_ticks, reset);
	uint64_t fl_ticks = ms_delta(before->fl_ticks, after->fl_ticks, reset);
	uint64_t io_ticks = ms_delta(before->io_ticks, after->io_ticks, reset);
	uint64_t time_in_queue = ms_delta(before->time_in_queue, after->time_in_queue, reset);
	/* NaN, infinite or not above 0: no rate can be made of it. */
	double time = isfinite(seconds) && seconds > 0 ? seconds : 0;

	*out = (struct disk_ext){0};
	out->has_discards = before->nfields >= 15 && after->nfields >= 15;
	out->has_flushes = before->nfields >= 17 && after->nfields >= 17;

	/* S_VALUE(): the delta per second; sectors are 512 bytes, so KiB are sectors / 2. */
	out->r_s = per((double)rd_ios, time);
	out->w_s = per((double)wr_ios, time);
	out->d_s = per((double)dc_ios, time);
	out->f_s = per((double)fl_ios, time);
	out->rkb_s = per((double)rd_sectors, time) / 2;
	out->wkb_s = per((double)wr_sectors, time) / 2;
	out->dkb_s = per((double)dc_sectors, time) / 2;
	out->rrqm_s = per((double)rd_merges, time);
	out->wrqm_s = per((double)wr_merges, time);
	out->drqm_s = per((double)dc_merges, time);

	/* %rrqm: merges / (merges + requests) * 100; 0 when there were neither, or the requests went backwards. */
	out->rrqm_pct = merged_pct(rd_merges, rd_ios, after->rd_ios < before->rd_ios);
	out->wrqm_pct = merged_pct(wr_merges, wr_ios, after->wr_ios < before->wr_ios);
	out->drqm_pct = merged_pct(dc_merges, dc_ios, after->dc_ios < before->dc_ios);

	/* r_await: ms spent by the requests completed in the interval, per request. */
	out->r_await = per((double)rd_ticks, (double)rd_ios);
	out->w_await = per((double)wr_ticks, (double)wr_ios);
	out->d_await = per((double)dc_ticks, (double)dc_ios);
	out->f_await = per((double)fl_ticks, (double)fl_ios);

	/* rareq-sz: sectors per request, in KiB. */
	out->rareq_sz = per((double)rd_sectors, (double)rd_ios) / 2;
	out->wareq_sz = per((double)wr_sectors, (double)wr_ios) / 2;
	out->dareq_sz = per((double)dc_sectors, (double)dc_ios) / 2;

	/* aqu-sz: weighted ms per second / 1000; %util: busy ms per second / 10, at most 100. */
	out->aqu_sz = per((double)time_in_queue, time) / 1000;
	out->util = per((double)io_ticks, time) / 10;
	if (out->util > 100)
		out->util = 100;
}

/* A device's counters before and after; false when either sample lacks it (or then has no disks at all: zeros). */
bool sample_disk_pair(const struct system_sample *then, const struct system_sample *now, const char *name,
		      struct disk_stats *a, struct disk_stats *b)
{
	const struct disk_stats *d = diskstats_find(&now->disks, name), *d0;

	memset(a, 0, sizeof(*a));
	if (!d)
		return false;
	*b = *d;
	if (!(then->have & SYS_DISKSTATS))
		return true; /* the average since boot */
	d0 = diskstats_find(&then->disks, name);
	if (d0)
		*a = *d0;
	return d0 != NULL;
}

/*
 * The counters of an item, before and after: one device, or the sum over the devices
 * counted in totals. A total sums only the devices in both samples whose counters did not
 * go back, so a device attached or replaced meanwhile makes neither a spike nor a dip.
 * False when the item cannot be known (not there; no sysfs to tell what a total counts).
 */
bool sample_disk_counters(const struct system_sample *then, const struct system_sample *now, const char *item,
			  struct disk_stats *a, struct disk_stats *b)
{
	bool any_sysfs = false;

	memset(a, 0, sizeof(*a));
	memset(b, 0, sizeof(*b));
	if (!(now->have & SYS_DISKSTATS))
		return false;
	if (strcmp(item, "total"))
		return sample_disk_pair(then, now, item, a, b);
	for (unsigned i = 0; i < now->disks.count; i++) {
		struct disk_stats x, y;
		any_sysfs |= now->disks.kind[i].in_sysfs;
		if (!now->disks.kind[i].in_total || !sample_disk_pair(then, now, now->disks.disk[i].name, &x, &y))
			continue;
		if (y.rd_ios < x.rd_ios || y.wr_ios < x.wr_ios || y.rd_sectors < x.rd_sectors ||
		    y.wr_sectors < x.wr_sectors)
			continue;
		a->rd_ios += x.rd_ios;
		a->wr_ios += x.wr_ios;
		a->rd_sectors += x.rd_sectors;
		a->wr_sectors += x.wr_sectors;
		b->rd_ios += y.rd_ios;
		b->wr_ios += y.wr_ios;
		b->rd_sectors += y.rd_sectors;
		b->wr_sectors += y.wr_sectors;
	}
	return any_sysfs || !now->disks.count;
}

/* dstat's disk-util, disk-wait and disk-avgqu, and doctor: iostat -x's figures of one disk. */
bool sample_disk_ext(const struct system_sample *then, const struct system_sample *now, const char *item,
		     double seconds, struct disk_ext *x)
{
	struct disk_stats a, b;

	if (!strcmp(item, "total") || !sample_disk_pair(then, now, item, &a, &b))
		return false;
	disk_ext_compute(&a, &b, seconds, x);
	return true;
}
