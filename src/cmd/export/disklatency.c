/* SPDX-License-Identifier: GPL-2.0-or-later */
/* disklatency.c: export's disklatency collector: each disk's latency histograms by op, from bio.bpf.c. */
#include <stdio.h>

#include "cmd/export.h"
#include "collect/bio.h"

/* Latencies are counted from here on: with --once, none have been yet, and nothing is loaded. */
static void disk_latency_start(struct exporter *e)
{
	const char *why;

	if (e->once)
		return;
	if (bio_start(BIO_WANT_DISKS, &why) == 0) /* the histograms per disk only: no 8.2 MiB of processes */
		e->disk_latency = true;
	else /* ebpf_why's text lives until its next call */
		snprintf(e->bio_why, sizeof(e->bio_why), "%s", why);
}

/*
 * iolens_disk_{request,device,queue}_duration_seconds: each whole disk's requests by op, from
 * bio.bpf.c's histograms since the exporter started (a disk appears with its first request).
 */
static void disk_latency_metrics(struct prom *p, struct exporter *e)
{
	static const struct {
		const char *name, *help;
	} kinds[BIO_LAT_KINDS] = {
		[BIO_LAT_TOTAL] = { "iolens_disk_request_duration_seconds",
				    "Requests from their start in the block layer to their completion "
				    "(block_rq_complete, before diskstats accounts them), by eBPF." },
		[BIO_LAT_DEVICE] = { "iolens_disk_device_duration_seconds",
				     "Requests from their issue to the driver to their completion: the device's "
				     "time." },
		[BIO_LAT_QUEUE] = { "iolens_disk_queue_duration_seconds",
				    "Requests from their start to their issue: time queued in the block layer and its "
				    "scheduler." },
	};
	static const char *const ops[BIO_LAT_OPS] = { "read", "write", "discard", "flush" };
	const struct diskstats *stats;
	struct bio_disks disks;

	/* Its disks named from this scrape's /proc/diskstats, read only when eBPF has counted. */
	if (!e->disk_latency || !(stats = export_disks(e)) || bio_read_disks(&disks) != 0)
		return;
	for (unsigned kind = 0; kind < BIO_LAT_KINDS; kind++) {
		bool any = false;

		for (unsigned i = 0; i < stats->count; i++) {
			const struct disk_stats *d = &stats->disk[i];
			const struct bio_disk *disk = bio_disks_find(&disks, d->major, d->minor);

			if (!disk || !export_device_wanted(e, d->name))
				continue;
			for (unsigned op = 0; op < BIO_LAT_OPS; op++) {
				const char *const pairs[] = { "device", d->name, "op", ops[op], NULL };
				uint64_t count = bio_histogram_count(disk->histogram[kind][op]);

				if (!count) /* an op the disk has not done: no series, as for vtrace's */
					continue;
				if (!any)
					prom_family(p, kinds[kind].name, PROM_HISTOGRAM, kinds[kind].help);
				any = true;
				prom_latency_histogram(p, kinds[kind].name, pairs, disk->histogram[kind][op], count,
						       (double)disk->sum_ns[kind][op] / 1e9);
			}
		}
	}
	bio_disks_free(&disks);
}

const struct export_collector collector_disklatency = {
	.name = "disklatency",
	.help = "iolens_disk_*_duration_seconds: each disk's request, device and queue time by op (eBPF)",
	.rank = 20,
	.start = disk_latency_start,
	.render = disk_latency_metrics,
};
