/* SPDX-License-Identifier: GPL-2.0-or-later */
/* diskstats.c: export's diskstats collector: each disk's /proc/diskstats counters, iolens_disk_*. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>

#include "cmd/export.h"

/*
 * Each disk's counters, from /proc/diskstats as read for this scrape
 * (once: disklatency names its disks from it too).
 */
static void disk_metrics(struct prom *p, struct exporter *e)
{
	static const struct {
		const char *name, *help;
		enum prom_type type;
		size_t offset;
		double scale;       /* to base units: sectors to bytes, ms to seconds */
		unsigned nfields;   /* the fields the kernel must print for it */
	} fields[] = {
#define F(n, h, t, f, s, k) { n, h, t, offsetof(struct disk_stats, f), s, k }
		F("iolens_disk_reads_completed", "Reads completed (as /proc/diskstats).", PROM_COUNTER, rd_ios, 1, 11),
		F("iolens_disk_reads_merged", "Reads merged with an adjacent one.", PROM_COUNTER, rd_merges, 1, 11),
		F("iolens_disk_read_bytes", "Bytes read.", PROM_COUNTER, rd_sectors, 512, 11),
		F("iolens_disk_read_time_seconds", "Time spent by reads, summed over them.", PROM_COUNTER, rd_ticks,
		  1e-3, 11),
		F("iolens_disk_writes_completed", "Writes completed.", PROM_COUNTER, wr_ios, 1, 11),
		F("iolens_disk_writes_merged", "Writes merged with an adjacent one.", PROM_COUNTER, wr_merges, 1, 11),
		F("iolens_disk_written_bytes", "Bytes written.", PROM_COUNTER, wr_sectors, 512, 11),
		F("iolens_disk_write_time_seconds", "Time spent by writes, summed over them.", PROM_COUNTER, wr_ticks,
		  1e-3, 11),
		F("iolens_disk_io_now", "Requests in flight.", PROM_GAUGE, in_flight, 1, 11),
		F("iolens_disk_io_time_seconds", "Time with requests in flight (%util is its rate).", PROM_COUNTER,
		  io_ticks, 1e-3, 11),
		F("iolens_disk_io_time_weighted_seconds", "Time in flight summed over requests (aqu-sz is its rate).",
		  PROM_COUNTER, time_in_queue, 1e-3, 11),
		F("iolens_disk_discards_completed", "Discards completed.", PROM_COUNTER, dc_ios, 1, 15),
		F("iolens_disk_discards_merged", "Discards merged.", PROM_COUNTER, dc_merges, 1, 15),
		F("iolens_disk_discarded_bytes", "Bytes discarded.", PROM_COUNTER, dc_sectors, 512, 15),
		F("iolens_disk_discard_time_seconds", "Time spent by discards.", PROM_COUNTER, dc_ticks, 1e-3, 15),
		F("iolens_disk_flushes_completed", "Flushes completed.", PROM_COUNTER, fl_ios, 1, 17),
		F("iolens_disk_flush_time_seconds", "Time spent by flushes.", PROM_COUNTER, fl_ticks, 1e-3, 17),
#undef F
	};
	const struct diskstats *stats = export_disks(e);

	for (size_t f = 0; stats && f < sizeof(fields) / sizeof(fields[0]); f++) {
		char name[96];
		bool any = false;

		snprintf(name, sizeof(name), "%s%s", fields[f].name, fields[f].type == PROM_COUNTER ? "_total" : "");
		for (unsigned i = 0; i < stats->count; i++) {
			const struct disk_stats *d = &stats->disk[i];
			uint64_t raw = *(const uint64_t *)((const char *)d + fields[f].offset);

			if (d->nfields < fields[f].nfields || !export_device_wanted(e, d->name))
				continue;
			if (!any)
				prom_family(p, fields[f].name, fields[f].type, fields[f].help);
			any = true;
			if (fields[f].scale == 1)
				prom_u64(p, name, raw, "device", d->name, NULL);
			else if (fields[f].scale < 1)
				/* divided, not multiplied by 0.001: 440.304, not 440.30400000000003 */
				prom_real(p, name, (double)raw / round(1 / fields[f].scale), "device", d->name, NULL);
			else
				prom_real(p, name, (double)raw * fields[f].scale, "device", d->name, NULL);
		}
	}
}

const struct export_collector collector_diskstats = {
	.name = "diskstats",
	.help = "iolens_disk_*: each disk's /proc/diskstats counters, everything iostat -x is derived from",
	.rank = 10,
	.render = disk_metrics,
};
