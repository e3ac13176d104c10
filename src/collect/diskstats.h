/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * diskstats.h: block device counters from /proc/diskstats and how devices stack (sysfs);
 * iostat -x's figures from two samples are model/disk.h's.
 */
#ifndef IOLENS_DISKSTATS_H
#define IOLENS_DISKSTATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One line of /proc/diskstats: the kernel's fields, in its units (sectors of 512 bytes, ms). */
struct disk_stats {
	unsigned major, minor;
	char name[64];
	unsigned nfields;          /* fields after the name: 11 (before 4.18), 15 (discards), 17 (flushes) */
	uint64_t rd_ios, rd_merges, rd_sectors, rd_ticks;
	uint64_t wr_ios, wr_merges, wr_sectors, wr_ticks;
	uint64_t in_flight, io_ticks, time_in_queue;
	uint64_t dc_ios, dc_merges, dc_sectors, dc_ticks; /* 0 when nfields < 15 */
	uint64_t fl_ios, fl_ticks;                        /* 0 when nfields < 17 */
};

/* What sysfs says of a device, to count each I/O once in a total. */
struct disk_kind {
	bool partition;    /* /sys/class/block/NAME/partition exists */
	bool stacked;      /* it has slaves (device-mapper, md), or is a loop device (/sys/block/NAME/loop) */
	bool has_holders;  /* another device (dm, md) is stacked on it */
	bool removable;
	bool in_total;     /* counted in "total": a whole device that is not stacked on another one */
	bool in_sysfs;     /* /sys/class/block/NAME was there: without it the flags above are unknown (all false) */
	char whole
	    [64]; /* a partition's disk (sysfs has /sys/class/block/DISK/NAME), "" when unknown or not a partition */
};

struct diskstats {
	unsigned count;
	struct disk_stats *disk;
	struct disk_kind *kind; /* same index as disk; filled by diskstats_read (parsing alone leaves it zero) */
	unsigned skipped;       /* lines that were not a device line (fewer than 11 numbers, ...): passed over */
};

/*
 * Reads at most len bytes (no NUL needed). out is overwritten (diskstats_free it before
 * reusing it); kind[] is allocated zeroed. Lines that are not a device line are skipped and
 * counted in out->skipped; -EINVAL (with out empty) only when there were lines and not one
 * was a device line. nfields is 11, 15 or 17: more fields are ignored, a partial group of
 * discard or flush fields counts as absent (its counters 0).
 */
int diskstats_parse(const char *text, size_t len, struct diskstats *out);
/*
 * Parses /proc/diskstats under the sysroot, and fills kind[] from /sys under it. A name
 * with '/' (cciss/c0d0) is looked up as sysfs spells it (cciss!c0d0). Whether a device is a
 * partition is remembered between calls; how devices stack (slaves, holders, loop) is looked
 * at again when the set of devices changes, and on every call for dm, md and bcache devices,
 * whose slaves can change while they exist (a dm table loaded).
 * 0, or -errno when the file cannot be read (out empty), or -EINVAL as diskstats_parse.
 */
int diskstats_read(struct diskstats *out);
void diskstats_free(struct diskstats *stats);
/* A copy of from, its own (diskstats_free it). */
void diskstats_copy(struct diskstats *to, const struct diskstats *from);
/* Forgets what was learnt of the devices (sysfs, /proc/devices): a recorder's frames each hold it. */
void diskstats_forget(void);
/* The device of that name, or NULL ('!' and '/' match each other, as sysfs and diskstats spell them). */
const struct disk_stats *diskstats_find(const struct diskstats *stats, const char *name);
/* The block drivers of /proc/devices text, by major ("loop", "virtblk"): their count; *out to free. */
struct block_driver {
	unsigned major;
	char name[24];
};
unsigned diskstats_block_drivers(const char *text, size_t len, struct block_driver **out);

#endif
