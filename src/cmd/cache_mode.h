/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cache_mode.h: what cachestat, cachetop, biotop and export share: options, the counting mode
 * (eBPF or /proc), a process's container.
 */
#ifndef IOLENS_CMD_CACHE_MODE_H
#define IOLENS_CMD_CACHE_MODE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect/cachestat.h"
#include "collect/container.h"
#include "collect/procfs.h"
#include "render/out.h"

struct cache_options {
	double interval;         /* seconds */
	unsigned long long count; /* 0: until Ctrl-C */
	struct out_options out;  /* --json, --csv, --no-header */
	bool timestamp;
};

struct cache_mode {
	bool bpf;        /* counting with eBPF; else estimating from /proc */
	bool evictions_unknown; /* /proc mode on a kernel without pgsteal_file (before 5.8) */
	bool refaults_unknown;  /* /proc mode without workingset_refault_file */
	const char *why; /* why not eBPF */
	const char *mechanism; /* with eBPF: how reads and faults are seen (cachestat_mechanism) */
};

/* [interval [count]] from argv[first...]; with_count false: [interval] only. Exits 2 on bad input. */
void cache_parse_interval_count(int argc, char **argv, int first, struct cache_options *o, bool with_count);
/* --pid PID and --rows N of cachetop and biotop: the number, or exit 2 saying what is wrong. */
pid_t top_option_pid(const char *text);
unsigned long long top_option_rows(const char *text);
/*
 * Starts eBPF, or says once on stderr "no eBPF (why): estimating from SOURCE", and with -v the
 * detail (what the estimates cannot tell). A NULL source: nothing said (the caller says it).
 */
void cache_mode_start(const struct cachestat_options *bpf_options, struct cache_mode *mode, const char *source,
		      const char *detail);
/* The fallback without trying eBPF (a recording has no kernel to trace), said as cache_mode_start says it. */
void cache_mode_fallback(struct cache_mode *mode, const char *why, const char *source, const char *detail);
/*
 * The columns of a row's container (cachetop, biotop), CONTAINER_COLUMNS in a row from C: for
 * people its label ("web (3f2a9c1b0d4e)"); for programs its id, name, Kubernetes pod and
 * namespace, and whose it is (the uid of a rootless one's user, 0 for root's runtimes). All
 * unknown for a row in no container.
 */
#define CONTAINER_COLUMNS 6
#define CONTAINER_OUT_COLUMNS(C) \
	[C] = { "container", "CONTAINER", NULL, OUT_TEXT, false, "its container: NAME (ID), or ID" }, \
	[C + 1] = { "container_id", "CONTAINER_ID", NULL, OUT_TEXT, false, "... its whole id", \
		    .where = OUT_DATA_ONLY }, \
	[C + 2] = { "container_name", "CONTAINER_NAME", NULL, OUT_TEXT, false, "... its name (in its pod)", \
		    .where = OUT_DATA_ONLY }, \
	[C + 3] = { "pod", "POD", NULL, OUT_TEXT, false, "... its Kubernetes pod", .where = OUT_DATA_ONLY }, \
	[C + 4] = { "namespace", "NAMESPACE", NULL, OUT_TEXT, false, "... and namespace", .where = OUT_DATA_ONLY }, \
	[C + 5] = { "container_uid", "CONTAINER_UID", NULL, OUT_COUNT, false, \
		    "... whose: a rootless one's user, 0 root's", \
		    .where = OUT_DATA_ONLY }
/* Shows the container columns from first (is_default) or not. */
void container_columns_show(struct out_column *columns, size_t first, bool shown);
/* Sets the container columns from first of a row: c NULL for none (all unknown). */
void container_columns_set(struct out_row *row, size_t first, const struct container *c);

#endif
