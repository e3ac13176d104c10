/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * capacity.h: a disk's measured capacity (bench --profile --save-capacity): the disk's stable
 * identity, where its result is kept, saved atomically, read back; the share of it a load uses.
 */
#ifndef IOLENS_COLLECT_CAPACITY_H
#define IOLENS_COLLECT_CAPACITY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "collect/bench_result.h"

#define CAPACITY_DEFAULT_DIR "/var/lib/iolens/capacity"
#define CAPACITY_DIR_ENV "IOLENS_CAPACITY_DIR"

/* A whole disk and what identifies it across reboots and renames. */
struct capacity_identity {
	char disk[64];    /* the kernel's name of the whole disk ("sda", "nvme0n1", "loop0") */
	char source[16];  /* "wwid", "serial" or "model" (model and size) */
	char key[160];    /* the file name without .json: "wwid-naa.5000...", "serial-S3Z...", "model-loop-8388608" */
};

/*
 * The identity of the whole disk under the block device devno (a partition's disk is its
 * parent), read from /sys through the sysroot: the first of /sys/block/DEV/wwid,
 * device/wwid, device/serial, serial that is not empty; else device/model (without one,
 * the kernel's name without its number: "loop", "vd") and the size in bytes. Characters
 * other than letters, digits, '.', '_' and '-' become '_'. 0, or -1 with why.
 */
int capacity_identity(dev_t devno, struct capacity_identity *out, char *why, size_t why_len);

/* Where capacities are kept: dir when given, else $IOLENS_CAPACITY_DIR, else CAPACITY_DEFAULT_DIR. */
const char *capacity_dir(const char *dir);
/* DIR/KEY.json into buf: false when it does not fit. */
bool capacity_path(const char *dir, const struct capacity_identity *id, char *buf, size_t len);

/*
 * Writes text (a bench --json document with its "capacity" object) as DIR/KEY.json,
 * atomically: a temporary file in DIR, synced, renamed over the old one, DIR synced. DIR
 * is made (0755) when missing. 0, or -1 with why.
 */
int capacity_save(const char *dir, const struct capacity_identity *id, const char *text, size_t len, char *why,
		  size_t why_len);

/*
 * The capacity saved for the disk under devno: 0 with out filled (and path, when not NULL,
 * set to the file read); 1 when none is saved (why says where it was looked for); -1 with
 * why when the disk has no identity or the file cannot be read or is not bench's.
 */
int capacity_load(const char *dir, dev_t devno, struct bench_result_doc *out, char *path, size_t path_len, char *why,
		  size_t why_len);

/*
 * Whether dir holds no saved capacity (no name ending .json, or no dir): asked of a directory
 * again only when it has changed (its mtime or ctime; one changed in the last second is read
 * again), so a loop over disks window after window (record --doctor) reads no disk's identity
 * while none is saved.
 */
bool capacity_none_saved(const char *dir);

/* A disk's load over an interval, by direction (0 reads, 1 writes), as iostat -x measures it. */
struct capacity_demand {
	double iops[2], bytes_per_s[2];
	double size[2]; /* the mean request size in bytes (0: no request) */
	double depth;   /* the mean number of requests in flight (aqu-sz) */
};

/*
 * The capacity of one direction at a request size and a queue depth, from the profile's cases
 * (rnd4k_q1t1, rnd4k_q32t1, seq1m_q1t1, seq1m_q8t1 of that direction): in each pair (small
 * random requests, large sequential ones) IOPS and bytes/s go linearly in log2(depth) from the
 * QD1 case to the deep one (held at their values below QD1 and beyond the deep case's depth);
 * then linearly in log2(size) from the small case's to the large one's (held below 4 KiB and
 * above 1 MiB). false when a case is missing or measured nothing.
 */
bool capacity_at(const struct bench_result_doc *capacity, bool write, double size, double depth, double *iops,
		 double *bytes_per_s);

/*
 * The share of the capacity a load uses, in percent: for each direction the larger of its
 * IOPS / the capacity's IOPS and its bytes/s / the capacity's bytes/s at its own request size
 * and the load's depth, the two directions added (each uses its part of the disk). NaN when a
 * direction with requests has no capacity (capacity_at false).
 */
double capacity_share(const struct bench_result_doc *capacity, const struct capacity_demand *load);

#endif
