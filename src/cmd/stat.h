/* SPDX-License-Identifier: GPL-2.0-or-later */
/* stat.h: what iolens stat's options and its column groups share: the groups a run shows, and how each computes. */
#ifndef IOLENS_CMD_STAT_H
#define IOLENS_CMD_STAT_H

#include <stdbool.h>

#include "collect/system.h"
#include "render/monitor.h"

/* The kinds of groups: one per dstat plugin, and iolens's own. */
enum group_kind {
	G_TIME,
	G_CPU,
	G_CPU_ADV,
	G_DISK,
	G_NET,
	G_PAGE,
	G_SYS,
	G_MEM,
	G_SWAP,
	G_LOAD,
	G_PROC,
	G_INT,
	G_IO,
	G_TCP,
	G_UDP,
	G_UNIX,
	G_SOCKET,
	G_FS,
	G_AIO,
	G_VM,
	G_LOCK,
	G_IPC,
	G_RAW,
	G_DISK_EXT,
	G_PSI,
	G_CACHE,
	G_VTRACE,
	G_EPOCH,
	G_DISK_UTIL,  /* dstat's plugins from here on */
	G_DISK_TPS,
	G_DISK_WAIT,
	G_DISK_AVGQU,
	G_PROC_COUNT,
	G_NET_PACKETS,
	G_MEM_ADV,
	G_VM_ADV,
	G_ZONES,
	G_TOP_CPU,    /* dstat's top plugins: the process (or interrupt) that did the most */
	G_TOP_MEM,
	G_TOP_IO,
	G_TOP_BIO,
	G_TOP_LATENCY,
	G_TOP_OOM,
	G_TOP_INT,
	G_TOP_CPU_ADV,     /* dstat's top plugins with the pid and more figures */
	G_TOP_IO_ADV,
	G_TOP_BIO_ADV,
	G_TOP_CPUTIME,     /* the process that ran the most (schedstat), and the longest per time slice */
	G_TOP_CPUTIME_AVG,
	G_TOP_LATENCY_AVG, /* the process that waited the longest per time slice */
	G_TOP_CHILDWAIT,   /* the process whose ended children used the most cpu */
	G_DISK_AVGRQ,      /* dstat's disk-avgrq and disk-svctm: per disk */
	G_DISK_SVCTM,
	G_CPU_USE,         /* dstat's cpu-use: each cpu's busy share */
	G_FREESPACE,       /* dstat's freespace: per mount point */
	G_SNOOZE,          /* dstat's snooze: the seconds between two samples */
	G_SELF,            /* dstat's dstat, dstat-cpu, dstat-ctxt, dstat-mem: the monitor's own cost */
	G_SELF_CPU,
	G_SELF_CTXT,
	G_SELF_MEM,
	G_KINDS
};

/* One group on the line: a kind, and the item it is about ("total", "vda", "0", "eth0", a service). */
struct group {
	enum group_kind kind;
	char item[64];
	struct mon_group shown; /* title, key, columns, and this sample's values */
	int pid;                /* top plugins: the process shown (0: none) */
	char name[64];          /* top plugins: its name (or the interrupt's) as the kernel has it, for JSON and CSV */
	bool has_capacity;      /* dsk-ext: a capacity is saved for its disk (the table shows %cap) */
};

/* Whether a kind is one of dstat's top plugins: a name (shown.text), then figures. */
bool group_is_top(enum group_kind kind);

/* --bits (disk and net in bits) and --human (-x's sizes scaled, not in KiB): before any group_init. */
void groups_show_units(bool bits, bool human);

/*
 * --top-bio from eBPF's block I/O per process (SYS_BIO, bio_start done) rather than
 * /proc/PID/io's read_bytes and write_bytes. Before group_needs.
 */
void groups_top_bio_by_ebpf(bool ebpf);
/* -x's latency percentiles from eBPF's histograms per disk (SYS_BIO_DISKS, bio_start done); else unknown. Before group_needs. */
void groups_disk_latency_by_ebpf(bool ebpf);

/* --verbose: the capacities' messages with the file looked for, of each disk. */
void groups_verbose(bool on);

/* --capacity-dir: where -x looks for the disks' capacities (NULL: capacity_dir's default). */
void groups_capacity_dir(const char *dir);
bool groups_capacity_dir_given(void);
/* No capacity looked up (a recording, a tree under --sysroot): %cap null, why said once. */
void groups_capacity_off(const char *why);

/* dstat's freespace: the mount points it shows (its filters), at most max, in mounts' order. */
unsigned groups_freespace_mounts(char (*mounts)[256], unsigned max);

/* The sources (SYS_* flags) a kind needs. */
unsigned group_needs(enum group_kind kind);

/*
 * The columns the table shows of a group (out: a copy of g->shown, changed in place): all but
 * for dsk-ext, whose table has iostat -x's first 12 and, where eBPF times requests, the read and
 * write latency percentiles (and %cap with a capacity), and top-bio, its first few; JSON and CSV
 * have them all.
 */
void group_table_view(const struct group *g, struct mon_group *out);
/*
 * Through the dstat link: what dstat prints where iolens stat differs (-g's "paging" in and out,
 * "swap", ':' between one plugin's items, 0 for the network on the first line). before: the
 * group on its left (NULL: the first).
 */
void group_dstat_view(const struct group *g, const struct group *before, struct mon_group *out, bool since_boot);

/*
 * -x on screen, as iostat -x prints it: one row per disk (dsk-ext groups), a column each of
 * iostat's, then the latency percentiles (where eBPF times requests) and %cap (where a disk has a
 * capacity). groups_ext_rows_layout puts in columns (room for 40) those that fit width characters
 * (0: all) after a device column of device_width, in their order, and says whether some were
 * left out; the others name and fill a column of it.
 */
unsigned groups_ext_rows_layout(const struct group *const *disks, unsigned ndisks, unsigned width,
				unsigned device_width, unsigned *columns, bool *cut);
int groups_ext_row_width(unsigned column);
const char *groups_ext_row_nick(unsigned column);
void groups_ext_row_value(const struct group *g, unsigned column, bool integer, char *buf, size_t size);

/* Sets up the title, key and columns of a group for its kind and item. */
void group_init(struct group *g, enum group_kind kind, const char *item);

/*
 * Computes a group's values between two samples, seconds apart (for the first line:
 * `then` zeroed, and seconds the uptime: the average since boot). Values that cannot be
 * known are NaN.
 */
void group_compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		   double seconds, bool since_boot);

#endif
