/* SPDX-License-Identifier: GPL-2.0-or-later */
/* export.h: iolens export's collectors: what one is (struct export_collector) and the exporter's state it reads. */
#ifndef IOLENS_CMD_EXPORT_H
#define IOLENS_CMD_EXPORT_H

#include <regex.h>
#include <stdbool.h>

#include "cmd/cache_mode.h"
#include "collect/diskstats.h"
#include "collect/filesystems.h"
#include "collect/segments.h"
#include "model/cache.h"
#include "render/prom.h"

/* What the collectors share: set up by cmd_export and the collectors' start, read at every scrape. */
struct exporter {
	const bool *enabled;          /* by index in export_collector_list */
	bool once;                    /* --once: one exposition, nothing counted before it */
	struct cache_mode cache;      /* eBPF, or /proc/vmstat estimates */
	char cache_why[512];          /* why not eBPF for the page cache ("": it is, or not asked) */
	bool disk_latency;            /* bio.bpf.c counts the disks' latencies */
	char bio_why[512];            /* why not, when asked */
	struct segment_set vtrace;    /* touched by the one thread that serves requests */
	unsigned long long scrapes;
	struct cache_estimate estimate; /* without eBPF: pgpgin's misses less O_DIRECT holders' reads */
	regex_t device_include, device_exclude, mount_points_exclude;
	bool has_device_include, has_device_exclude;
	struct fs_watch filesystems;  /* mounts whose probe has not returned */
	struct http_server *server;   /* serving (not with --once) */
	int disks_read;               /* this scrape's /proc/diskstats: 0 not yet read, 1 read, -1 failed */
	struct diskstats disks;
};

/*
 * A collector: one file of src/cmd/export/, NAME.c, defining `const struct export_collector
 * collector_NAME` (the Makefile lists the folder's files in build/gen/export_collectors.h).
 */
struct export_collector {
	const char *name;   /* --collector.NAME, --no-collector.NAME: NAME, the file's name */
	const char *help;   /* what it publishes, one line */
	bool off_by_default; /* on only when --collector.NAME asks for it */
	int rank;           /* its place in the exposition: lower first */
	/* Once, when it is on, before the first scrape (NULL: nothing to start). */
	void (*start)(struct exporter *e);
	/* Its families, at every scrape, when it is on. */
	void (*render)(struct prom *p, struct exporter *e);
};

/* Every collector, by name (the files' order); NULL-ended. */
extern const struct export_collector *const export_collector_list[];

/* Whether the disk NAME passes --collector.diskstats.device-include and -exclude. */
bool export_device_wanted(const struct exporter *e, const char *name);
/* This scrape's /proc/diskstats, read at its first use (NULL: it could not be read). */
const struct diskstats *export_disks(struct exporter *e);

#endif
