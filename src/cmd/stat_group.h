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
/* Memory used as dstat counts it: total less free, buffers and cache. */
double stat_mem_used(const struct meminfo *m);
/* A swap area's used and free bytes (item: "total" or its name); false when unknown. */
bool stat_swap_of(const struct system_sample *s, const char *item, double *used, double *free_bytes);
/* --top-bio from eBPF's block I/O per process, rather than /proc/PID/io. */
bool groups_top_bio_is_ebpf(void);

/* A cpu's (item: its number, or "total") time in the interval, in percent of it; false when unknown. */
struct cpu_shares {
	double user; /* user and nice */
	double system, idle, iowait, irq, softirq, steal;
};
bool stat_cpu_shares(const struct system_sample *then, const struct system_sample *now, const char *item,
		     struct cpu_shares *out);
/* A cpu group's title: "total cpu usage", or "cpu0 usage" for a cpu (--cpu and --cpu-adv). */
void stat_cpu_title(struct group *g);

/*
 * A disk's counters (item: its name, or "total": the sum of the disks counted in totals)
 * before and after; false when unknown. stat_disk_pair: one disk only.
 */
bool stat_disk_counters(const struct system_sample *then, const struct system_sample *now, const char *item,
			struct disk_stats *a, struct disk_stats *b);
bool stat_disk_pair(const struct system_sample *then, const struct system_sample *now, const char *item,
		    struct disk_stats *a, struct disk_stats *b);
/* One disk's iostat -x figures over the interval (disk_ext_compute); false for a total or when unknown. */
bool stat_disk_figures(const struct system_sample *then, const struct system_sample *now, const char *item,
		       double seconds, struct disk_ext *x);

/* An interface's (or "total"'s) bytes or packets per second received and sent; false when unknown. */
bool stat_net_rates(const struct system_sample *then, const struct system_sample *now, const char *item,
		    bool packets, double seconds, double *received, double *sent);

/* This process's counters at a sample: read when a sample is first computed, kept for the next interval. */
struct self_counters {
	uint64_t mono_ns;
	double run_ns, wait_ns, user_s, system_s, voluntary, involuntary;
};
/* Its counters at both ends of the interval (before the first line: zeros). */
void stat_self_between(const struct system_sample *then, const struct system_sample *now, bool since_boot,
		       struct self_counters *before, struct self_counters *after);

/*
 * The computations several groups share, each by the group's kind: iostat -x, pressure,
 * interrupts, the top plugins and cpu-use (a column per cpu).
 */
void stat_compute_cpu_use(struct group *g, const struct system_sample *then, const struct system_sample *now);
void stat_compute_disk_ext(struct group *g, const struct system_sample *then, const struct system_sample *now,
			   double seconds);
void stat_compute_int(struct group *g, const struct system_sample *then, const struct system_sample *now,
		      double seconds);
void stat_compute_psi(struct group *g, const struct system_sample *then, const struct system_sample *now,
		      double seconds);
void stat_compute_top(struct group *g, const struct system_sample *then, const struct system_sample *now,
		      double seconds);
void stat_compute_top_bio(struct group *g, const struct system_sample *then, const struct system_sample *now,
			  double seconds);
void stat_compute_top_int(struct group *g, const struct system_sample *then, const struct system_sample *now,
			  double seconds);

/* iostat -x's columns (dsk-ext): shared with the table's and the rows' views. */
extern const struct mon_column disk_ext_columns[];
#define DISK_EXT_COLUMNS 39

#endif
