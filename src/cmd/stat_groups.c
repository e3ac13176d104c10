/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stat_groups.c: iolens stat's column groups: dstat's plugins, iostat -x, pressure and the page
 * cache, from two samples.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <vtrace.h>

#include "cmd/stat_group.h"
#include "collect/capacity.h"
#include "collect/mounts.h"
#include "common/util.h"
#include "model/disk.h"

#define P MON_PERCENT
#define D MON_DECIMAL
#define B MON_BYTES
#define F MON_FLOAT
#define S MON_TEXT

/* iostat -x, in iostat's units on screen; bytes and ns in JSON and CSV. */
const struct mon_column disk_ext_columns[DISK_EXT_COLUMNS] = {
	{ "r/s", "r", "per_s", F, 6, 1000 },          { "w/s", "w", "per_s", F, 6, 1000 },
	{ "rkB/s", "read", "bytes_per_s", F, 6, 1000 }, { "wkB/s", "write", "bytes_per_s", F, 6, 1000 },
	{ "rrqm/s", "rrqm", "per_s", F, 6, 1000 },    { "wrqm/s", "wrqm", "per_s", F, 6, 1000 },
	{ "r_awt", "r_await", "ns", F, 6, 1000 },     { "w_awt", "w_await", "ns", F, 6, 1000 },
	{ "aqu-sz", "aqu_sz", "", F, 6, 1000 },       { "rareq", "rareq_sz", "bytes", F, 6, 1000 },
	{ "wareq", "wareq_sz", "bytes", F, 6, 1000 }, { "%util", "util", "pct", F, 6, 34 },
	/* The rest of iostat -x's columns (sysstat 12): JSON and CSV only, the table keeps the 12 above. */
	{ "%rrqm", "rrqm", "pct", F, 6, 34 },         { "%wrqm", "wrqm", "pct", F, 6, 34 },
	{ "d/s", "d", "per_s", F, 6, 1000 },          { "dkB/s", "discard", "bytes_per_s", F, 6, 1000 },
	{ "drqm/s", "drqm", "per_s", F, 6, 1000 },    { "%drqm", "drqm", "pct", F, 6, 34 },
	{ "d_awt", "d_await", "ns", F, 6, 1000 },     { "dareq", "dareq_sz", "bytes", F, 6, 1000 },
	{ "f/s", "f", "per_s", F, 6, 1000 },          { "f_awt", "f_await", "ns", F, 6, 1000 },
	/*
	 * Latency percentiles of the requests completed in the interval (eBPF, whole disks): start
	 * to completion (await's span), then the device's part (issue to completion) and the queue's
	 * (start to issue). A percentile is interpolated within its log-linear bucket; max is the upper bound
	 * of the highest bucket with a request.
	 */
	{ "r_p50", "r_p50", "ns", F, 6, 1000 },       { "r_p99", "r_p99", "ns", F, 6, 1000 },
	{ "r_max", "r_max", "ns", F, 6, 1000 },       { "w_p50", "w_p50", "ns", F, 6, 1000 },
	{ "w_p99", "w_p99", "ns", F, 6, 1000 },       { "w_max", "w_max", "ns", F, 6, 1000 },
	{ "r_d50", "r_dev_p50", "ns", F, 6, 1000 },   { "r_d99", "r_dev_p99", "ns", F, 6, 1000 },
	{ "w_d50", "w_dev_p50", "ns", F, 6, 1000 },   { "w_d99", "w_dev_p99", "ns", F, 6, 1000 },
	{ "r_q50", "r_queue_p50", "ns", F, 6, 1000 }, { "r_q99", "r_queue_p99", "ns", F, 6, 1000 },
	{ "w_q50", "w_queue_p50", "ns", F, 6, 1000 }, { "w_q99", "w_queue_p99", "ns", F, 6, 1000 },
	/* The requests the percentiles are of: read and written, completed in the interval. */
	{ "r_lat", "r_lat_count", "", F, 6, 1000 },   { "w_lat", "w_lat_count", "", F, 6, 1000 },
	/* The share of the disk's saved capacity its load used (bench --profile --save-capacity). */
	{ "%cap", "cap", "pct", F, 6, 34 },
};
#define EXT_TABLE 12
#define EXT_LATENCY 22 /* the first latency column */
/* The table's latency columns where eBPF times requests: r_p50 r_p99 r_max w_p50 w_p99 w_max, after iostat's 12. */
#define EXT_TABLE_LATENCY 6
#define EXT_CAPACITY 38 /* %cap */

#define TOP_BIO_TABLE 3 /* the table's columns: dstat's name, read, writ (latency: iolens biotop) */

/* The groups: one a file of src/cmd/stat/, listed by the Makefile (stat_groups.h). */
#define STAT_GROUP_EXTERN(name) extern const struct stat_group group_##name;
stat_groups(STAT_GROUP_EXTERN)
#undef STAT_GROUP_EXTERN
#define STAT_GROUP_ENTRY(name) [G_##name] = &group_##name,
static const struct stat_group *const kinds[G_KINDS] = { stat_groups(STAT_GROUP_ENTRY) };
#undef STAT_GROUP_ENTRY

const struct stat_group *group_kind_of(enum group_kind kind)
{
	return kinds[kind];
}

enum group_kind group_kind_find(const struct stat_group *group)
{
	for (unsigned k = 0; k < G_KINDS; k++)
		if (kinds[k] == group)
			return (enum group_kind)k;
	return G_KINDS;
}

static int by_rank(const void *a, const void *b)
{
	unsigned x = (*(const struct stat_group *const *)a)->rank, y = (*(const struct stat_group *const *)b)->rank;

	return (x > y) - (x < y);
}

const struct stat_group *const *groups_by_rank(void)
{
	static const struct stat_group *ranked[G_KINDS];

	if (!ranked[0]) {
		memcpy(ranked, kinds, sizeof(kinds));
		qsort(ranked, G_KINDS, sizeof(ranked[0]), by_rank);
	}
	return ranked;
}

bool group_is_top(enum group_kind kind)
{
	return kinds[kind]->top;
}

static bool show_bits, show_human;

/* iostat's --human: -x's sizes scaled with their unit (B, k, M, G) on screen, not in KiB. */
static struct mon_column ext_human_cols[sizeof(disk_ext_columns) / sizeof(disk_ext_columns[0])];

void groups_show_units(bool bits, bool human)
{
	static const struct { unsigned column; const char *nick; } sizes[] = {
		{ 2, "rB/s" }, { 3, "wB/s" }, { 9, "rareq" }, { 10, "wareq" }, { 15, "dB/s" }, { 19, "dareq" },
	};

	show_bits = bits;
	show_human = human;
	memcpy(ext_human_cols, disk_ext_columns, sizeof(disk_ext_columns));
	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		ext_human_cols[sizes[i].column].nick = sizes[i].nick;
		ext_human_cols[sizes[i].column].type = B;
		ext_human_cols[sizes[i].column].scale = 1024;
	}
}

/* DSTAT_TIMEFMT: the time column's strftime format, as dstat's; the column as wide as the time it makes. */
const char *stat_time_format(void)
{
	const char *format = getenv("DSTAT_TIMEFMT");

	return format && *format ? format : "%d-%m %H:%M:%S";
}

static bool top_bio_by_ebpf;

void groups_top_bio_by_ebpf(bool ebpf)
{
	top_bio_by_ebpf = ebpf;
}

bool groups_top_bio_is_ebpf(void)
{
	return top_bio_by_ebpf;
}

static bool disk_latency_by_ebpf;

void groups_disk_latency_by_ebpf(bool ebpf)
{
	disk_latency_by_ebpf = ebpf;
}

unsigned group_needs(enum group_kind kind)
{
	if (kind == G_top_bio && top_bio_by_ebpf)
		return SYS_BIO | SYS_UPTIME;
	if (kind == G_disk_ext && disk_latency_by_ebpf)
		return kinds[kind]->needs | SYS_BIO_DISKS | SYS_UPTIME;
	return kinds[kind]->needs | SYS_UPTIME;
}

/* A title or key pattern with the item put in place of its one "%s" ("%%" is a '%'). */
void stat_cpu_title(struct group *g)
{
	if (!strcmp(g->item, "total"))
		snprintf(g->shown.title, sizeof(g->shown.title), "total cpu usage");
	else
		stat_fill(g->shown.title, sizeof(g->shown.title), "cpu%s usage", g->item);
}

void stat_fill(char *out, size_t size, const char *pattern, const char *item)
{
	size_t used = 0;

	for (const char *p = pattern; *p && used + 1 < size; p++) {
		if (p[0] == '%' && p[1] == 's') {
			used += (size_t)snprintf(out + used, size - used, "%s", item);
			if (used >= size)
				used = size - 1;
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			out[used++] = '%';
			p++;
		} else {
			out[used++] = *p;
		}
	}
	out[used] = '\0';
}

void group_init(struct group *g, enum group_kind kind, const char *item)
{
	memset(g, 0, sizeof(*g));
	g->kind = kind;
	snprintf(g->item, sizeof(g->item), "%s", item ? item : "");
	stat_fill(g->shown.title, sizeof(g->shown.title), kinds[kind]->title, g->item);
	stat_fill(g->shown.key, sizeof(g->shown.key), kinds[kind]->key, g->item);
	for (char *p = g->shown.key; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
			*p = '_';
	g->shown.columns = kinds[kind]->columns;
	g->shown.ncolumns = kinds[kind]->ncolumns;
	g->shown.subtitle = kinds[kind]->subtitle;
	g->shown.glued = kinds[kind]->glued;
	g->shown.after_column = kinds[kind]->percent;
	g->shown.after = kinds[kind]->percent ? "%" : NULL;
	if (show_bits && kinds[kind]->bits_columns)
		g->shown.columns = kinds[kind]->bits_columns;
	if (show_human && kind == G_disk_ext)
		g->shown.columns = ext_human_cols;
	if (kinds[kind]->init)
		kinds[kind]->init(g);
}

/* A size in KiB: KiB on screen (bytes with --human), bytes in JSON and CSV. */
static void set_kib(struct group *g, unsigned column, double kib)
{
	set(g, column, show_human ? kib * 1024 : kib, kib * 1024);
}

/*
 * A disk's histogram of the requests completed between two samples (of one kind and operation):
 * false when it cannot be known (no eBPF, the first line's "since boot", a partition).
 */
static bool latency_between(const struct system_sample *then, const struct system_sample *now,
			    const struct disk_stats *disk, unsigned kind, unsigned op, uint64_t *out)
{
	const struct bio_disk *a, *b;

	if (!(then->have & SYS_BIO_DISKS) || !(now->have & SYS_BIO_DISKS))
		return false;
	a = bio_disks_find(&then->bio_disks, disk->major, disk->minor);
	b = bio_disks_find(&now->bio_disks, disk->major, disk->minor);
	for (unsigned bucket = 0; bucket < LOG_LINEAR_BUCKETS; bucket++) {
		uint64_t before = a ? a->histogram[kind][op][bucket] : 0,
			 after = b ? b->histogram[kind][op][bucket] : 0;
		out[bucket] = after > before ? after - before : 0;
	}
	return true;
}

/* The latency columns of -x: ms on screen, ns in JSON and CSV; 0 when no request completed, as await. */
static void compute_disk_latency(struct group *g, const struct system_sample *then, const struct system_sample *now,
				 const struct disk_stats *disk, bool partition)
{
	static const struct { unsigned kind, op; bool max; } columns[] = {
		{ BIO_LAT_TOTAL, BIO_LAT_READ, true }, { BIO_LAT_TOTAL, BIO_LAT_WRITE, true },
		{ BIO_LAT_DEVICE, BIO_LAT_READ, false }, { BIO_LAT_DEVICE, BIO_LAT_WRITE, false },
		{ BIO_LAT_QUEUE, BIO_LAT_READ, false }, { BIO_LAT_QUEUE, BIO_LAT_WRITE, false },
	};
	static uint64_t histogram[LOG_LINEAR_BUCKETS];
	double count[BIO_LAT_WRITE + 1] = { NAN, NAN }; /* of the total spans: the requests completed */
	unsigned column = EXT_LATENCY;

	for (unsigned i = 0; i < sizeof(columns) / sizeof(columns[0]); i++) {
		unsigned width = columns[i].max ? 3 : 2;
		double value[3] = { NAN, NAN, NAN };

		if (!partition && latency_between(then, now, disk, columns[i].kind, columns[i].op, histogram)) {
			unsigned top = LOG_LINEAR_BUCKETS;
			while (top > 0 && !histogram[top - 1])
				top--;
			value[0] = (double)vtrace_histogram_quantile(histogram, 0.5);
			value[1] = (double)vtrace_histogram_quantile(histogram, 0.99);
			value[2] = top ? (double)vtrace_histogram_upper(top - 1) : 0;
			if (columns[i].kind == BIO_LAT_TOTAL)
				count[columns[i].op] = (double)bio_histogram_count(histogram);
		}
		for (unsigned v = 0; v < width; v++, column++)
			set(g, column, value[v] / 1e6, value[v]);
	}
	for (unsigned op = BIO_LAT_READ; op <= BIO_LAT_WRITE; op++, column++)
		set_same(g, column, count[op]);
}

static const char *capacity_directory;

void groups_capacity_dir(const char *dir)
{
	capacity_directory = dir;
}

bool groups_capacity_dir_given(void)
{
	return capacity_directory != NULL;
}

static const char *capacity_off;
static bool verbose;

void groups_verbose(bool on)
{
	verbose = on;
}

/* Whether %cap was asked for: a --capacity-dir given, or $IOLENS_CAPACITY_DIR set. */
static bool capacity_asked(void)
{
	const char *env = getenv(CAPACITY_DIR_ENV);

	return capacity_directory || (env && *env);
}

/* No capacity is looked for: said with --verbose only (%cap was not asked for: no --capacity-dir). */
void groups_capacity_off(const char *why)
{
	capacity_off = why;
	if (verbose)
		warn_msg("%%cap is '-': %s", why);
}

/* The capacities saved for the disks seen, each looked up once (NULL: none, or not readable). */
static struct {
	unsigned major, minor;
	struct bench_result_doc *capacity;
} capacities[64];
static unsigned ncapacities;

static const struct bench_result_doc *capacity_of(const struct disk_stats *disk)
{
	static bool said;
	struct bench_result_doc *doc;
	char why[512];
	int rc;

	if (capacity_off)
		return NULL;
	for (unsigned i = 0; i < ncapacities; i++)
		if (capacities[i].major == disk->major && capacities[i].minor == disk->minor)
			return capacities[i].capacity;
	if (ncapacities == sizeof(capacities) / sizeof(capacities[0]))
		return NULL;
	doc = calloc(1, sizeof(*doc));
	rc = doc ? capacity_load(capacity_dir(capacity_directory), makedev(disk->major, disk->minor), doc, NULL, 0, why,
				 sizeof(why))
		 : -1;
	if (rc != 0) {
		/*
		 * A disk without a capacity is the usual case: said only when %cap was asked for, once a
		 * run, of the first such disk; with --verbose, of each, with the file looked for.
		 */
		if (verbose)
			warn_msg("%%cap of %s is '-': %s", printable_name(disk->name), doc ? why : strerror(ENOMEM));
		else if (!said && capacity_asked())
			warn_msg(rc > 0
				     ? "%%cap of %s is '-': no capacity saved (iolens bench --profile --save-capacity)"
				     : "%%cap of %s is '-': its capacity cannot be read (--verbose says why)",
				 printable_name(disk->name));
		said = true;
		free(doc);
		doc = NULL;
	}
	capacities[ncapacities].major = disk->major;
	capacities[ncapacities].minor = disk->minor;
	capacities[ncapacities++].capacity = doc;
	return doc;
}

/* %cap: the interval's load as a share of the disk's capacity at its request sizes and queue depth. */
static void compute_disk_capacity(struct group *g, const struct disk_stats *disk, const struct disk_ext *x)
{
	const struct bench_result_doc *capacity = capacity_of(disk);
	struct capacity_demand load = {
		.iops = { x->r_s, x->w_s },
		.bytes_per_s = { x->rkb_s * 1024, x->wkb_s * 1024 },
		.size = { x->rareq_sz * 1024, x->wareq_sz * 1024 },
		.depth = x->aqu_sz,
	};

	g->has_capacity = capacity != NULL;
	set_same(g, EXT_CAPACITY, capacity ? capacity_share(capacity, &load) : NAN);
}

void stat_compute_disk_ext(struct group *g, const struct system_sample *then, const struct system_sample *now,
			     double seconds)
{
	struct disk_stats a, b;
	struct disk_ext x;

	if (!strcmp(g->item, "total") || !sample_disk_pair(then, now, g->item, &a, &b)) {
		all_unknown(g);
		return;
	}
	if (!a.nfields)
		a.nfields = b.nfields; /* the first line: zeros, with the fields the kernel has */
	disk_ext_compute(&a, &b, seconds, &x);
	set_same(g, 0, x.r_s);
	set_same(g, 1, x.w_s);
	set_kib(g, 2, x.rkb_s);
	set_kib(g, 3, x.wkb_s);
	set_same(g, 4, x.rrqm_s);
	set_same(g, 5, x.wrqm_s);
	set(g, 6, x.r_await, x.r_await * 1e6);
	set(g, 7, x.w_await, x.w_await * 1e6);
	set_same(g, 8, x.aqu_sz);
	set_kib(g, 9, x.rareq_sz);
	set_kib(g, 10, x.wareq_sz);
	set_same(g, 11, x.util);
	set_same(g, 12, x.rrqm_pct);
	set_same(g, 13, x.wrqm_pct);
	/* Discards and flushes: unknown (null) when the kernel's diskstats lines have no such fields. */
	if (x.has_discards) {
		set_same(g, 14, x.d_s);
		set_kib(g, 15, x.dkb_s);
		set_same(g, 16, x.drqm_s);
		set_same(g, 17, x.drqm_pct);
		set(g, 18, x.d_await, x.d_await * 1e6);
		set_kib(g, 19, x.dareq_sz);
	} else {
		for (unsigned c = 14; c < 20; c++)
			set_same(g, c, NAN);
	}
	if (x.has_flushes) {
		set_same(g, 20, x.f_s);
		set(g, 21, x.f_await, x.f_await * 1e6);
	} else {
		set_same(g, 20, NAN);
		set_same(g, 21, NAN);
	}
	const struct disk_stats *d = diskstats_find(&now->disks, g->item);
	compute_disk_latency(g, then, now, &b, d && now->disks.kind[d - now->disks.disk].partition);
	compute_disk_capacity(g, &b, &x);
}

/*
 * dsk-ext's table: iostat -x's 12 columns in iostat's order, then (where eBPF times requests)
 * the latency percentiles of reads and writes, and %cap with a capacity; top-bio's: its first
 * TOP_BIO_TABLE. JSON and CSV have every column.
 */
/* dstat's -g: "paging" is swap traffic alone (pswpin and pswpout), labelled in and out. */
static const struct mon_column dstat_page_cols[] = {
	{ "in", "swap_in", "bytes_per_s", D, 5, 1024 }, { "out", "swap_out", "bytes_per_s", D, 5, 1024 },
};

void group_dstat_view(const struct group *g, const struct group *before, struct mon_group *out, bool since_boot)
{
	/* One plugin's items (-C 0,1,total; -D total,vda; -N; -S; its disk and net plugins) are one dstat group. */
	out->joined = before && before->kind == g->kind && g->kind != G_vtrace && g->kind != G_disk_ext &&
		      g->kind != G_int && !group_is_top(g->kind);
	switch (g->kind) {
	case G_page:
		snprintf(out->title, sizeof(out->title), "paging");
		out->columns = dstat_page_cols;
		out->ncolumns = 2;
		for (unsigned c = 0; c < 2; c++) {
			out->values[c] = g->shown.values[c + 2];
			out->raw[c] = g->shown.raw[c + 2];
		}
		break;
	case G_swap:
		/* dstat's swap plugin keeps the name "swap" whatever -S lists. */
		snprintf(out->title, sizeof(out->title), "swap");
		break;
	case G_net:
	case G_net_packets:
		/* dstat computes the network only from its second sample: the first line shows 0. */
		if (since_boot)
			for (unsigned c = 0; c < out->ncolumns; c++)
				out->values[c] = out->raw[c] = 0;
		break;
	default:
		break;
	}
}

void group_table_view(const struct group *g, struct mon_group *out)
{
	static struct mon_column columns[2][EXT_TABLE + EXT_TABLE_LATENCY + 1];
	const struct mon_column *all = g->shown.columns;
	struct mon_column *table = columns[all == ext_human_cols];
	unsigned n = 0;

	if (g->kind == G_top_bio && g->shown.ncolumns > TOP_BIO_TABLE)
		out->ncolumns = TOP_BIO_TABLE;
	if (g->kind != G_disk_ext)
		return;
	for (unsigned c = 0; c < EXT_TABLE; c++, n++) {
		table[n] = all[c];
		out->values[n] = g->shown.values[c];
	}
	for (unsigned c = EXT_LATENCY; disk_latency_by_ebpf && c < EXT_LATENCY + EXT_TABLE_LATENCY; c++, n++) {
		table[n] = all[c];
		out->values[n] = g->shown.values[c];
	}
	if (g->has_capacity) {
		table[n] = all[EXT_CAPACITY];
		out->values[n++] = g->shown.values[EXT_CAPACITY];
	}
	out->columns = table;
	out->ncolumns = n;
}

/*
 * -x on screen: iostat -x's layout, one row per disk. The columns in iostat's order (sysstat 12)
 * with its widths, then the latency percentiles (eBPF) and %cap; each with a rank: where the
 * width is short, the columns of the lowest ranks are kept, whole ranks at a time.
 */
enum { ROW_PLAIN, ROW_SIZE, ROW_LATENCY, ROW_CAPACITY };
static const struct ext_row_column {
	const char *nick, *human_nick;
	unsigned index; /* in disk_ext_columns */
	int width;
	unsigned rank;
	unsigned what;
} ext_row_cols[] = {
	{ "r/s", NULL, 0, 8, 0, ROW_PLAIN },          { "rkB/s", "rB/s", 2, 9, 1, ROW_SIZE },
	{ "rrqm/s", NULL, 4, 8, 7, ROW_PLAIN },       { "%rrqm", NULL, 12, 6, 8, ROW_PLAIN },
	{ "r_await", NULL, 6, 7, 2, ROW_PLAIN },      { "rareq-sz", NULL, 9, 8, 6, ROW_SIZE },
	{ "w/s", NULL, 1, 7, 0, ROW_PLAIN },          { "wkB/s", "wB/s", 3, 9, 1, ROW_SIZE },
	{ "wrqm/s", NULL, 5, 8, 7, ROW_PLAIN },       { "%wrqm", NULL, 13, 6, 8, ROW_PLAIN },
	{ "w_await", NULL, 7, 7, 2, ROW_PLAIN },      { "wareq-sz", NULL, 10, 8, 6, ROW_SIZE },
	{ "d/s", NULL, 14, 7, 12, ROW_PLAIN },        { "dkB/s", "dB/s", 15, 9, 12, ROW_SIZE },
	{ "drqm/s", NULL, 16, 8, 13, ROW_PLAIN },     { "%drqm", NULL, 17, 6, 13, ROW_PLAIN },
	{ "d_await", NULL, 18, 7, 12, ROW_PLAIN },    { "dareq-sz", NULL, 19, 8, 12, ROW_SIZE },
	{ "f/s", NULL, 20, 7, 11, ROW_PLAIN },        { "f_await", NULL, 21, 7, 11, ROW_PLAIN },
	{ "aqu-sz", NULL, 8, 7, 3, ROW_PLAIN },       { "%util", NULL, 11, 6, 0, ROW_PLAIN },
	{ "r_p50", NULL, 22, 7, 9, ROW_LATENCY },     { "r_p99", NULL, 23, 7, 4, ROW_LATENCY },
	{ "r_max", NULL, 24, 7, 10, ROW_LATENCY },    { "w_p50", NULL, 25, 7, 9, ROW_LATENCY },
	{ "w_p99", NULL, 26, 7, 4, ROW_LATENCY },     { "w_max", NULL, 27, 7, 10, ROW_LATENCY },
	{ "%cap", NULL, EXT_CAPACITY, 6, 5, ROW_CAPACITY },
};
#define EXT_ROW_COLUMNS (sizeof(ext_row_cols) / sizeof(ext_row_cols[0]))
#define EXT_ROW_RANKS 14

unsigned groups_ext_rows_layout(const struct group *const *disks, unsigned ndisks, unsigned width,
				unsigned device_width, unsigned *columns, bool *cut)
{
	bool available[EXT_ROW_COLUMNS], capacity = false, kept[EXT_ROW_RANKS] = { false };
	unsigned used = device_width, n = 0, last = 0;

	for (unsigned d = 0; d < ndisks; d++)
		capacity |= disks[d]->has_capacity;
	for (unsigned c = 0; c < EXT_ROW_COLUMNS; c++) {
		available[c] = ext_row_cols[c].what == ROW_LATENCY ? disk_latency_by_ebpf
			       : ext_row_cols[c].what == ROW_CAPACITY ? capacity : true;
		if (available[c] && ext_row_cols[c].rank > last)
			last = ext_row_cols[c].rank;
	}
	*cut = false;
	for (unsigned rank = 0; rank <= last; rank++) {
		unsigned add = 0;

		for (unsigned c = 0; c < EXT_ROW_COLUMNS; c++)
			if (available[c] && ext_row_cols[c].rank == rank)
				add += 1 + (unsigned)ext_row_cols[c].width;
		/* Room for " >" after the header, when some rank is left out. */
		if (rank && width && used + add + (rank < last ? 2 : 0) > width) {
			*cut = true;
			break;
		}
		used += add;
		kept[rank] = true;
	}
	for (unsigned c = 0; c < EXT_ROW_COLUMNS; c++)
		if (available[c] && kept[ext_row_cols[c].rank])
			columns[n++] = c;
	return n;
}

int groups_ext_row_width(unsigned column)
{
	return ext_row_cols[column].width;
}

const char *groups_ext_row_nick(unsigned column)
{
	const struct ext_row_column *c = &ext_row_cols[column];

	return show_human && c->human_nick ? c->human_nick : c->nick;
}

/*
 * A value of a disk's row, as iostat prints it: two decimals (fewer when that is too wide for
 * the column, none with --integer); with --human a size in k, M, G ... (powers of 1024, one
 * decimal, as iostat -h); '-' when unknown.
 */
void groups_ext_row_value(const struct group *g, unsigned column, bool integer, char *buf, size_t size)
{
	const struct ext_row_column *c = &ext_row_cols[column];
	double value = g->shown.values[c->index];

	if (isnan(value) || value < 0) {
		snprintf(buf, size, "-");
		return;
	}
	if (show_human && c->what == ROW_SIZE) {
		static const char units[] = "kMGTPE";
		double scaled = g->shown.raw[c->index] / 1024;
		unsigned unit = 0;

		while (scaled >= 1024 && unit + 1 < sizeof(units) - 1)
			scaled /= 1024, unit++;
		snprintf(buf, size, "%.*f%c", integer ? 0 : 1, scaled, units[unit]);
		return;
	}
	for (int decimals = integer ? 0 : 2; decimals >= 0; decimals--)
		if (snprintf(buf, size, "%.*f", decimals, value) <= c->width)
			return;
}


unsigned groups_freespace_mounts(char (*mounts)[256], unsigned max)
{
	/* dstat_freespace.py's filters: by type, then by source. */
	static const char *const types[] = { "binfmt_misc", "devpts", "iso9660",   "none",   "proc",
					     "sysfs",       "usbfs",  "cgroup",    "tmpfs",  "devtmpfs",
					     "debugfs",     "mqueue", "systemd-1", "rootfs", "autofs" };
	static const char *const sources[] = { "devpts", "none", "proc", "sunrpc", "usbfs", "securityfs", "hugetlbfs",
					       "configfs", "selinuxfs", "pstore", "nfsd" };
	struct mounts table;
	unsigned n = 0;

	if (mounts_read(&table) != 0)
		return 0;
	for (size_t m = 0; m < table.count && n < max; m++) {
		const struct mount *mount = &table.list[m];
		struct statvfs vfs;
		bool skip = false;

		for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
			skip |= !strcmp(mount->type, types[i]);
		for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++)
			skip |= !strcmp(mount->source, sources[i]);
		/* (A path longer than a group's item, as a container's overlay, is left out rather than cut.) */
		if (skip || strlen(mount->dir) >= sizeof(((struct group *)0)->item) || statvfs(mount->dir, &vfs) != 0 ||
		    !vfs.f_bsize)
			continue;
		snprintf(mounts[n++], 256, "%s", mount->dir);
	}
	mounts_free(&table);
	return n;
}

static const struct self_counters *self_at(const struct system_sample *s)
{
	static struct self_counters ring[4];
	static unsigned next;
	static const struct self_counters zero;
	struct self_counters *c;
	struct rusage ru;
	char text[256];
	unsigned long long run = 0, wait = 0;
	FILE *f;

	if (!s || !s->mono_ns)
		return &zero;
	for (unsigned i = 0; i < 4; i++)
		if (ring[i].mono_ns == s->mono_ns)
			return &ring[i];
	c = &ring[next++ % 4];
	memset(c, 0, sizeof(*c));
	c->mono_ns = s->mono_ns;
	f = fopen("/proc/self/schedstat", "re");
	if (f && fgets(text, sizeof(text), f) && sscanf(text, "%llu %llu", &run, &wait) == 2) {
		c->run_ns = (double)run;
		c->wait_ns = (double)wait;
	}
	if (f)
		fclose(f);
	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		c->user_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
		c->system_s = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
		c->voluntary = (double)ru.ru_nvcsw;
		c->involuntary = (double)ru.ru_nivcsw;
	}
	return c;
}

void stat_self_between(const struct system_sample *then, const struct system_sample *now, bool since_boot,
		       struct self_counters *before, struct self_counters *after)
{
	*after = *self_at(now);
	*before = since_boot ? *self_at(NULL) : *self_at(then);
}

/*
 * The name dstat shows of a process: the second field of /proc/PID/stat split at white space,
 * less its first and last characters (a comm with a space loses what follows the space, and the
 * character before it), then what follows its last '/' (its getnamebypid falls back to this:
 * "kworker/u4:2" is "u4:2").
 */
static void dstat_name(const char *comm, char *out, size_t size)
{
	const char *space = strpbrk(comm, " \t\n\v\f\r"), *slash;
	size_t n = space ? (size_t)(space - comm) : strlen(comm);

	if (space && n)
		n--; /* "(tmux: server)" splits to "(tmux:": [1:-1] is "tmux" */
	for (slash = comm + n; slash > comm && slash[-1] != '/'; slash--)
		;
	n -= (size_t)(slash - comm);
	snprintf(out, size, "%.*s", (int)n, slash);
}

/*
 * A top plugin's process (or interrupt): its name as it is, for JSON and CSV; the table's as dstat
 * shows it (the monitor escapes it).
 */
void stat_top_name(struct group *g, int pid, const char *name, bool pid_in_name)
{
	g->pid = pid;
	snprintf(g->name, sizeof(g->name), "%s", name);
	if (!pid)
		snprintf(g->shown.text, sizeof(g->shown.text), "%s", name);
	else
		dstat_name(name, g->shown.text, sizeof(g->shown.text));
	if (pid && pid_in_name) {
		/*
		 * dstat's '%-*s%-5s': the name cut to 26 less the pid's digits (escaped as the monitor
		 * shows it), then the pid in at least 5.
		 */
		char *shown = escape_text(g->shown.text, ESCAPE_TERMINAL), digits[16];
		int room = 26 - (snprintf(digits, sizeof(digits), "%d", pid) > 5 ? (int)strlen(digits) : 5);
		size_t columns, end = text_fit(shown, (size_t)room, &columns);

		shown[end] = '\0';
		snprintf(g->shown.text, sizeof(g->shown.text), "%s%*s%-5s", shown, room - (int)columns, "", digits);
		free(shown);
	}
	g->shown.csv_text = g->name;
	g->shown.blank = false;
}

/* The counters of a process before: the same process in the earlier sample, or zero (it started since). */
static const struct proc_entry *proc_before(const struct system_sample *then, const struct proc_entry *p, unsigned part)
{
	static const struct proc_entry zero;
	const struct proc_entry *found = proc_table_find(&then->procs, p);

	return found && (found->have & part) ? found : &zero;
}

static long clock_ticks(void)
{
	static long ticks;

	if (!ticks)
		ticks = sysconf(_SC_CLK_TCK) > 0 ? sysconf(_SC_CLK_TCK) : 100;
	return ticks;
}

double stat_top_cpu_share(const struct top_process *t, uint64_t ticks_now, uint64_t ticks_then)
{
	return t->ncpu ? 100.0 * rate(ticks_now, ticks_then, t->seconds) / (double)clock_ticks() / t->ncpu : 0;
}

void stat_compute_top(struct group *g, const struct system_sample *then, const struct system_sample *now,
		      double seconds, const struct top_measure *m)
{
	unsigned needs =
	    group_needs(g->kind) & (SYS_PROC_STAT | SYS_PROC_IO | SYS_PROC_SCHED | SYS_PROC_OOM | SYS_PROCSTAT);
	struct top_process t = { .seconds = seconds };
	double best = 0, figures[TOP_FIGURES] = { 0 };
	const struct proc_entry *chosen = NULL;

	/* No process at all (a recorded tree without /proc/PID): unknown, not 0. */
	if ((now->have & needs) != needs || !now->procs.count) {
		stat_top_name(g, 0, "", false);
		all_unknown(g);
		return;
	}
	for (unsigned c = 0; m->per_cpu && c < now->procstat.ncpu; c++)
		t.ncpu += now->procstat.cpu_present[c];
	for (unsigned i = 0; i < now->procs.count; i++) {
		double value, its[TOP_FIGURES] = { 0 };

		t.now = &now->procs.proc[i];
		if ((t.now->have & m->part) != m->part)
			continue;
		t.then = proc_before(then, t.now, m->part);
		t.cpu = m->per_cpu ? stat_top_cpu_share(&t, t.now->cpu_ticks, t.then->cpu_ticks) : 0;
		value = m->measure(&t, its);
		if (value > best) {
			best = value;
			chosen = t.now;
			memcpy(figures, its, sizeof(figures));
		}
	}
	/* Nothing did anything: no name, zeros in JSON; the table blank, as dstat. */
	stat_top_name(g, chosen ? chosen->pid : 0, chosen ? chosen->name : "", m->pid_in_name);
	g->shown.blank = !chosen;
	set_same(g, 0, NAN);
	for (unsigned c = 1; c < g->shown.ncolumns && c <= TOP_FIGURES; c++)
		set_same(g, c, figures[c - 1]);
}






void group_compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		   double seconds, bool since_boot)
{
	if (kinds[g->kind]->compute)
		kinds[g->kind]->compute(g, then, now, seconds, since_boot);
}
