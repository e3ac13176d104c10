/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stat_group.h: what a group of iolens stat (a file of src/cmd/stat/) is made with: its
 * descriptor (struct stat_group, cmd/stat.h), setting its columns, and the figures several
 * groups share (stat_groups.c).
 */
#ifndef IOLENS_CMD_STAT_GROUP_H
#define IOLENS_CMD_STAT_GROUP_H

#include <math.h>

#include "cmd/stat.h"
#include "common/util.h"

/* A column's value: as shown (table units) and raw (bytes, ns, counts: JSON and CSV). */
static inline void set(struct group *g, unsigned column, double shown, double raw)
{
	g->shown.values[column] = shown;
	g->shown.raw[column] = raw;
}

static inline void set_same(struct group *g, unsigned column, double value)
{
	set(g, column, value, value);
}

/* Every column unknown ('-', null). */
static inline void all_unknown(struct group *g)
{
	for (unsigned c = 0; c < g->shown.ncolumns; c++)
		set_same(g, c, NAN);
}

/* A counter's rate; one that went back (a wrap, a device replaced) gives 0, never a spike. */
static inline double rate(uint64_t now, uint64_t then, double seconds)
{
	return seconds > 0 && now >= then ? (double)(now - then) / seconds : 0;
}

/* A /proc figure, NaN where the kernel has none (PROCFS_UNKNOWN). */
static inline double known(uint64_t value)
{
	return value == PROCFS_UNKNOWN ? NAN : (double)value;
}

/* A title or key pattern with the item put in place of its one "%s" ("%%" is a '%'). */
void stat_fill(char *out, size_t size, const char *pattern, const char *item);
/* DSTAT_TIMEFMT: the time column's strftime format, as dstat's. */
const char *stat_time_format(void);

/* A cpu group's title: "total cpu usage", or "cpu0 usage" for a cpu (--cpu and --cpu-adv). */
void stat_cpu_title(struct group *g);

/* A disk's requests a second (--io, --disk-tps), or bytes (--disk): its columns are reads, then writes. */
void stat_compute_disk_requests(struct group *g, const struct system_sample *then, const struct system_sample *now,
				double seconds, bool since_boot);
void stat_compute_disk_bytes(struct group *g, const struct system_sample *then, const struct system_sample *now,
			     double seconds, bool since_boot);

/* This process's counters at a sample: read when a sample is first computed, kept for the next interval. */
struct self_counters {
	uint64_t mono_ns;
	double run_ns, wait_ns, user_s, system_s, voluntary, involuntary;
};
/* Its counters at both ends of the interval (before the first line: zeros). */
void stat_self_between(const struct system_sample *then, const struct system_sample *now, bool since_boot,
		       struct self_counters *before, struct self_counters *after);

/* One process over the interval, as a top group measures it. */
struct top_process {
	const struct proc_entry *now, *then; /* then: the same process a sample before, or zeros (it started since) */
	double seconds;
	unsigned ncpu; /* with top_measure.per_cpu: the cpus present */
	double cpu;    /* with top_measure.per_cpu: its share of all the cpus' time, in percent, as dstat's */
};
#define TOP_FIGURES 3
/* What a top group ranks processes by (dstat's top plugins). */
struct top_measure {
	unsigned part;    /* PROCS_*: the counters a process needs to be counted */
	bool per_cpu;     /* top_process.ncpu and .cpu wanted */
	bool pid_in_name; /* dstat's -adv name: cut to leave room for the pid beside it */
	/* The figure the process is ranked by; figures: the group's columns after the name, in order. */
	double (*measure)(const struct top_process *p, double figures[TOP_FIGURES]);
};
/* The process that did the most in the interval (or has the most): its name, then its figures. */
void stat_compute_top(struct group *g, const struct system_sample *then, const struct system_sample *now,
		      double seconds, const struct top_measure *m);
/* A share of all the cpus' time, in percent, of ticks (cpu_ticks, child_ticks) over the interval. */
double stat_top_cpu_share(const struct top_process *t, uint64_t ticks_now, uint64_t ticks_then);
/*
 * A top group's process (or interrupt, pid 0): its name as it is for JSON and CSV, the table's
 * as dstat shows it.
 */
void stat_top_name(struct group *g, int pid, const char *name, bool pid_in_name);

/* --human: -x's sizes with their unit on screen (groups_show_units). */
bool groups_human(void);
/* dstat's view of a group it computes only from its second sample (net): 0 on the first line. */
void stat_dstat_zero_first(const struct group *g, struct mon_group *out, bool since_boot);

#endif
