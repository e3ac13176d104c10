/* SPDX-License-Identifier: GPL-2.0-or-later */
/* stat.h: what iolens stat's options and its column groups share: the groups a run shows, and how each computes. */
#ifndef IOLENS_CMD_STAT_H
#define IOLENS_CMD_STAT_H

#include <stdbool.h>

#include "collect/system.h"
#include "render/monitor.h"
#include "stat_groups.h"

/*
 * The kinds of groups: one per file of src/cmd/stat/ (G_<file>), each file one struct stat_group
 * named group_<file> (see src/cmd/stat_group.h). stat_groups.h is made by the Makefile from
 * the folder's files; the enum is in their names' order, the groups' own order is their rank.
 */
#define STAT_GROUP_KIND(name) G_##name,
enum group_kind { stat_groups(STAT_GROUP_KIND) G_KINDS };
#undef STAT_GROUP_KIND

struct group;

/* Where --list shows a group's plugin names. */
enum group_section {
	GROUP_DSTAT,        /* "internal": dstat's own plugins */
	GROUP_DSTAT_PLUGIN, /* "dstat's external plugins": those of /usr/share/dstat */
	GROUP_IOLENS,       /* "iolens": iolens's groups */
};

/* What a group is of: the groups it makes (build_groups in stat.c). */
enum group_items {
	ITEMS_ONE,      /* one group, of the machine */
	ITEMS_CPU,      /* "total", or a group per cpu (-C, -f) */
	ITEMS_DISK,     /* "total", or a group per disk (-D, -f) */
	ITEMS_EACH_DISK, /* a group per disk, never a total (-D, else every disk with I/O) */
	ITEMS_NET,      /* "total", or a group per interface (-N, -f) */
	ITEMS_SWAP,     /* "total", or a group per swap area (-S, -f) */
	ITEMS_IRQS,     /* one group, a column per interrupt (-I) */
	ITEMS_CPUS,     /* one group, a column per cpu (-C, else all) */
	ITEMS_MOUNTS,   /* a group per mount point, as dstat's freespace filters them */
	ITEMS_VTRACE,   /* a group per libvtrace service */
};

/* A group, all it is: its names and options, its columns, what it reads and how it computes. */
struct stat_group {
	/*
	 * Its place among the groups: dstat's, then iolens's, then dstat's plugins. Where two
	 * groups' --NAME options begin alike, an abbreviation of both is the one ranked first
	 * (when both are plugin_option), as getopt_long finds it in the table made in this order.
	 */
	unsigned rank;
	const char *plugins[3]; /* its names (-M NAME, --NAME, --list), the first its own */
	const char *alias;      /* one more name for -M and --NAME, not listed (dstat's --filesystem) */
	enum group_section section;
	char letter;            /* its short option (0: none), also its first name's long option */
	/*
	 * --NAME is one of dstat's plugin options (--top-cpu, --mem-adv): those have one value
	 * for getopt_long, so an abbreviation of several is the first; others have their own.
	 */
	bool plugin_option;
	enum group_items items;
	const char *title, *key;                  /* patterns with the item put for "%s" ("%%": '%') */
	const struct mon_column *columns;         /* NULL: group_init makes them (a column per item) */
	unsigned ncolumns;
	const struct mon_column *bits_columns;    /* --bits: these instead (disk, net) */
	unsigned needs;                           /* SYS_* flags: the sources it reads */
	const char *subtitle;                     /* dstat's one-variable plugins: one subtitle over it */
	unsigned glued;                           /* the columns right after the one before (mon_group's) */
	unsigned percent;                         /* the column a '%' follows (0: none) */
	bool top;                                 /* one of dstat's top plugins: a name, then figures */
	/* What its item changes (a title, a column per cpu), after group_init set it up (NULL: nothing). */
	void (*init)(struct group *g);
	/* Sets its item's columns (NULL: computed elsewhere, vtrace by stat.c). */
	void (*compute)(struct group *g, const struct system_sample *then, const struct system_sample *now,
			double seconds, bool since_boot);
	/* The sources it reads when the run's options change them (NULL: needs). */
	unsigned (*needs_now)(void);
	/* The columns the table keeps (out: a copy of g->shown, changed in place; NULL: all). */
	void (*table_view)(const struct group *g, struct mon_group *out);
	/* Through the dstat link: what dstat prints where iolens stat differs (NULL: the same). */
	void (*dstat_view)(const struct group *g, struct mon_group *out, bool since_boot);
	bool alone; /* never one dstat group with the same kind's items beside it (no ':' between) */
};

/* A kind's group; the groups by rank (G_KINDS of them). */
const struct stat_group *group_kind_of(enum group_kind kind);
const struct stat_group *const *groups_by_rank(void);
/* The kind of a group (G_KINDS for none). */
enum group_kind group_kind_find(const struct stat_group *group);

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
/*
 * -x's latency percentiles from eBPF's histograms per disk (SYS_BIO_DISKS, bio_start done); else
 * unknown. Before group_needs.
 */
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
 * The columns the table shows of a group (out: a copy of g->shown, changed in place): all, or
 * those its table_view keeps (dsk-ext: iostat -x's 12, the latency and %cap; top-bio: dstat's);
 * JSON and CSV have them all.
 */
void group_table_view(const struct group *g, struct mon_group *out);
/*
 * Through the dstat link: what dstat prints where iolens stat differs: ':' between one plugin's
 * items (but for groups alone), and the group's dstat_view (-g's "paging", "swap", the network's
 * first line). before: the group on its left (NULL: the first).
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
