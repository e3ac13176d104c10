/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disk_ext.c: iolens stat's group disk-ext (-x, --disk-ext): "dsk-ext/ITEM", iostat -x's figures
 * of each disk, with the latency percentiles of its requests (eBPF) and %cap (a capacity saved by
 * bench); its table view and -x's rows on screen, laid out as iostat prints them.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include <vtrace.h>

#include "cmd/stat_group.h"
#include "collect/capacity.h"
#include "common/util.h"
#include "model/disk.h"

enum {
	R_S, W_S, RKB_S, WKB_S, RRQM_S, WRQM_S, R_AWAIT, W_AWAIT, AQU_SZ, RAREQ_SZ, WAREQ_SZ, UTIL, RRQM_PCT,
	WRQM_PCT, D_S, DKB_S, DRQM_S, DRQM_PCT, D_AWAIT, DAREQ_SZ, F_S, F_AWAIT, R_P50, R_P99, R_MAX, W_P50,
	W_P99, W_MAX, R_DEV_P50, R_DEV_P99, W_DEV_P50, W_DEV_P99, R_QUEUE_P50, R_QUEUE_P99, W_QUEUE_P50,
	W_QUEUE_P99, R_LAT_COUNT, W_LAT_COUNT, CAP, NCOLUMNS
};
/* iostat -x, in iostat's units on screen; bytes and ns in JSON and CSV. */
static const struct mon_column columns[NCOLUMNS] = {
	[R_S] = { "r/s", "r", "per_s", MON_FLOAT, 6, 1000 },
	[W_S] = { "w/s", "w", "per_s", MON_FLOAT, 6, 1000 },
	[RKB_S] = { "rkB/s", "read", "bytes_per_s", MON_FLOAT, 6, 1000 },
	[WKB_S] = { "wkB/s", "write", "bytes_per_s", MON_FLOAT, 6, 1000 },
	[RRQM_S] = { "rrqm/s", "rrqm", "per_s", MON_FLOAT, 6, 1000 },
	[WRQM_S] = { "wrqm/s", "wrqm", "per_s", MON_FLOAT, 6, 1000 },
	[R_AWAIT] = { "r_awt", "r_await", "ns", MON_FLOAT, 6, 1000 },
	[W_AWAIT] = { "w_awt", "w_await", "ns", MON_FLOAT, 6, 1000 },
	[AQU_SZ] = { "aqu-sz", "aqu_sz", "", MON_FLOAT, 6, 1000 },
	[RAREQ_SZ] = { "rareq", "rareq_sz", "bytes", MON_FLOAT, 6, 1000 },
	[WAREQ_SZ] = { "wareq", "wareq_sz", "bytes", MON_FLOAT, 6, 1000 },
	[UTIL] = { "%util", "util", "pct", MON_FLOAT, 6, 34 },
	/* The rest of iostat -x's columns (sysstat 12): JSON and CSV only, the table keeps the 12 above. */
	[RRQM_PCT] = { "%rrqm", "rrqm", "pct", MON_FLOAT, 6, 34 },
	[WRQM_PCT] = { "%wrqm", "wrqm", "pct", MON_FLOAT, 6, 34 },
	[D_S] = { "d/s", "d", "per_s", MON_FLOAT, 6, 1000 },
	[DKB_S] = { "dkB/s", "discard", "bytes_per_s", MON_FLOAT, 6, 1000 },
	[DRQM_S] = { "drqm/s", "drqm", "per_s", MON_FLOAT, 6, 1000 },
	[DRQM_PCT] = { "%drqm", "drqm", "pct", MON_FLOAT, 6, 34 },
	[D_AWAIT] = { "d_awt", "d_await", "ns", MON_FLOAT, 6, 1000 },
	[DAREQ_SZ] = { "dareq", "dareq_sz", "bytes", MON_FLOAT, 6, 1000 },
	[F_S] = { "f/s", "f", "per_s", MON_FLOAT, 6, 1000 },
	[F_AWAIT] = { "f_awt", "f_await", "ns", MON_FLOAT, 6, 1000 },
	/*
	 * Latency percentiles of the requests completed in the interval (eBPF, whole disks): start
	 * to completion (await's span), then the device's part (issue to completion) and the queue's
	 * (start to issue). A percentile is interpolated within its log-linear bucket; max is the upper bound
	 * of the highest bucket with a request.
	 */
	[R_P50] = { "r_p50", "r_p50", "ns", MON_FLOAT, 6, 1000 },
	[R_P99] = { "r_p99", "r_p99", "ns", MON_FLOAT, 6, 1000 },
	[R_MAX] = { "r_max", "r_max", "ns", MON_FLOAT, 6, 1000 },
	[W_P50] = { "w_p50", "w_p50", "ns", MON_FLOAT, 6, 1000 },
	[W_P99] = { "w_p99", "w_p99", "ns", MON_FLOAT, 6, 1000 },
	[W_MAX] = { "w_max", "w_max", "ns", MON_FLOAT, 6, 1000 },
	[R_DEV_P50] = { "r_d50", "r_dev_p50", "ns", MON_FLOAT, 6, 1000 },
	[R_DEV_P99] = { "r_d99", "r_dev_p99", "ns", MON_FLOAT, 6, 1000 },
	[W_DEV_P50] = { "w_d50", "w_dev_p50", "ns", MON_FLOAT, 6, 1000 },
	[W_DEV_P99] = { "w_d99", "w_dev_p99", "ns", MON_FLOAT, 6, 1000 },
	[R_QUEUE_P50] = { "r_q50", "r_queue_p50", "ns", MON_FLOAT, 6, 1000 },
	[R_QUEUE_P99] = { "r_q99", "r_queue_p99", "ns", MON_FLOAT, 6, 1000 },
	[W_QUEUE_P50] = { "w_q50", "w_queue_p50", "ns", MON_FLOAT, 6, 1000 },
	[W_QUEUE_P99] = { "w_q99", "w_queue_p99", "ns", MON_FLOAT, 6, 1000 },
	/* The requests the percentiles are of: read and written, completed in the interval. */
	[R_LAT_COUNT] = { "r_lat", "r_lat_count", "", MON_FLOAT, 6, 1000 },
	[W_LAT_COUNT] = { "w_lat", "w_lat_count", "", MON_FLOAT, 6, 1000 },
	/* The share of the disk's saved capacity its load used (bench --profile --save-capacity). */
	[CAP] = { "%cap", "cap", "pct", MON_FLOAT, 6, 34 },
};
#define TABLE_IOSTAT (UTIL + 1) /* the table's first columns: iostat -x's 12 */
/* The table's latency columns where eBPF times requests: r_p50 r_p99 r_max w_p50 w_p99 w_max, after iostat's 12. */
#define TABLE_LATENCY (W_MAX - R_P50 + 1)

/* iostat's --human: -x's sizes scaled with their unit (B, k, M, G) on screen, not in KiB. */
static struct mon_column human_columns[NCOLUMNS];

static void init(struct group *g)
{
	static const struct { unsigned column; const char *nick; } sizes[] = {
		{ RKB_S, "rB/s" }, { WKB_S, "wB/s" }, { RAREQ_SZ, "rareq" }, { WAREQ_SZ, "wareq" }, { DKB_S, "dB/s" },
		{ DAREQ_SZ, "dareq" },
	};

	if (!groups_human())
		return;
	if (!human_columns[0].nick) {
		memcpy(human_columns, columns, sizeof(columns));
		for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			human_columns[sizes[i].column].nick = sizes[i].nick;
			human_columns[sizes[i].column].type = MON_BYTES;
			human_columns[sizes[i].column].scale = 1024;
		}
	}
	g->shown.columns = human_columns;
}

static bool latency_by_ebpf;

void groups_disk_latency_by_ebpf(bool ebpf)
{
	latency_by_ebpf = ebpf;
}

extern const struct stat_group group_disk_ext;

static unsigned needs_now(void)
{
	return group_disk_ext.needs | (latency_by_ebpf ? SYS_BIO_DISKS : 0);
}

/* A size in KiB: KiB on screen (bytes with --human), bytes in JSON and CSV. */
static void set_kib(struct group *g, unsigned column, double kib)
{
	set(g, column, groups_human() ? kib * 1024 : kib, kib * 1024);
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
	static const struct { unsigned kind, op; bool max; } spans[] = {
		{ BIO_LAT_TOTAL, BIO_LAT_READ, true }, { BIO_LAT_TOTAL, BIO_LAT_WRITE, true },
		{ BIO_LAT_DEVICE, BIO_LAT_READ, false }, { BIO_LAT_DEVICE, BIO_LAT_WRITE, false },
		{ BIO_LAT_QUEUE, BIO_LAT_READ, false }, { BIO_LAT_QUEUE, BIO_LAT_WRITE, false },
	};
	static uint64_t histogram[LOG_LINEAR_BUCKETS];
	double count[BIO_LAT_WRITE + 1] = { NAN, NAN }; /* of the total spans: the requests completed */
	unsigned column = R_P50; /* then each span's, then the counts: the columns' order */

	for (unsigned i = 0; i < sizeof(spans) / sizeof(spans[0]); i++) {
		unsigned width = spans[i].max ? 3 : 2;
		double value[3] = { NAN, NAN, NAN };

		if (!partition && latency_between(then, now, disk, spans[i].kind, spans[i].op, histogram)) {
			unsigned top = LOG_LINEAR_BUCKETS;
			while (top > 0 && !histogram[top - 1])
				top--;
			value[0] = (double)vtrace_histogram_quantile(histogram, 0.5);
			value[1] = (double)vtrace_histogram_quantile(histogram, 0.99);
			value[2] = top ? (double)vtrace_histogram_upper(top - 1) : 0;
			if (spans[i].kind == BIO_LAT_TOTAL)
				count[spans[i].op] = (double)bio_histogram_count(histogram);
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
	set_same(g, CAP, capacity ? capacity_share(capacity, &load) : NAN);
}

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	struct disk_stats a, b;
	struct disk_ext x;

	(void)since_boot;
	if (!strcmp(g->item, "total") || !sample_disk_pair(then, now, g->item, &a, &b)) {
		all_unknown(g);
		return;
	}
	if (!a.nfields)
		a.nfields = b.nfields; /* the first line: zeros, with the fields the kernel has */
	disk_ext_compute(&a, &b, seconds, &x);
	set_same(g, R_S, x.r_s);
	set_same(g, W_S, x.w_s);
	set_kib(g, RKB_S, x.rkb_s);
	set_kib(g, WKB_S, x.wkb_s);
	set_same(g, RRQM_S, x.rrqm_s);
	set_same(g, WRQM_S, x.wrqm_s);
	set(g, R_AWAIT, x.r_await, x.r_await * 1e6);
	set(g, W_AWAIT, x.w_await, x.w_await * 1e6);
	set_same(g, AQU_SZ, x.aqu_sz);
	set_kib(g, RAREQ_SZ, x.rareq_sz);
	set_kib(g, WAREQ_SZ, x.wareq_sz);
	set_same(g, UTIL, x.util);
	set_same(g, RRQM_PCT, x.rrqm_pct);
	set_same(g, WRQM_PCT, x.wrqm_pct);
	/* Discards and flushes: unknown (null) when the kernel's diskstats lines have no such fields. */
	if (x.has_discards) {
		set_same(g, D_S, x.d_s);
		set_kib(g, DKB_S, x.dkb_s);
		set_same(g, DRQM_S, x.drqm_s);
		set_same(g, DRQM_PCT, x.drqm_pct);
		set(g, D_AWAIT, x.d_await, x.d_await * 1e6);
		set_kib(g, DAREQ_SZ, x.dareq_sz);
	} else {
		for (unsigned c = D_S; c <= DAREQ_SZ; c++)
			set_same(g, c, NAN);
	}
	if (x.has_flushes) {
		set_same(g, F_S, x.f_s);
		set(g, F_AWAIT, x.f_await, x.f_await * 1e6);
	} else {
		set_same(g, F_S, NAN);
		set_same(g, F_AWAIT, NAN);
	}
	const struct disk_stats *d = diskstats_find(&now->disks, g->item);
	compute_disk_latency(g, then, now, &b, d && now->disks.kind[d - now->disks.disk].partition);
	compute_disk_capacity(g, &b, &x);
}

/*
 * The table: iostat -x's 12 columns in iostat's order, then (where eBPF times requests) the
 * latency percentiles of reads and writes, and %cap with a capacity. JSON and CSV have every column.
 */
static void table_view(const struct group *g, struct mon_group *out)
{
	static struct mon_column shown[2][TABLE_IOSTAT + TABLE_LATENCY + 1];
	const struct mon_column *all = g->shown.columns;
	struct mon_column *table = shown[all == human_columns];
	unsigned n = 0;

	for (unsigned c = 0; c < TABLE_IOSTAT; c++, n++) {
		table[n] = all[c];
		out->values[n] = g->shown.values[c];
	}
	for (unsigned c = R_P50; latency_by_ebpf && c < R_P50 + TABLE_LATENCY; c++, n++) {
		table[n] = all[c];
		out->values[n] = g->shown.values[c];
	}
	if (g->has_capacity) {
		table[n] = all[CAP];
		out->values[n++] = g->shown.values[CAP];
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
	unsigned index; /* in columns[] */
	int width;
	unsigned rank;
	unsigned what;
} ext_row_cols[] = {
	{ "r/s", NULL, R_S, 8, 0, ROW_PLAIN },          { "rkB/s", "rB/s", RKB_S, 9, 1, ROW_SIZE },
	{ "rrqm/s", NULL, RRQM_S, 8, 7, ROW_PLAIN },       { "%rrqm", NULL, RRQM_PCT, 6, 8, ROW_PLAIN },
	{ "r_await", NULL, R_AWAIT, 7, 2, ROW_PLAIN },      { "rareq-sz", NULL, RAREQ_SZ, 8, 6, ROW_SIZE },
	{ "w/s", NULL, W_S, 7, 0, ROW_PLAIN },          { "wkB/s", "wB/s", WKB_S, 9, 1, ROW_SIZE },
	{ "wrqm/s", NULL, WRQM_S, 8, 7, ROW_PLAIN },       { "%wrqm", NULL, WRQM_PCT, 6, 8, ROW_PLAIN },
	{ "w_await", NULL, W_AWAIT, 7, 2, ROW_PLAIN },      { "wareq-sz", NULL, WAREQ_SZ, 8, 6, ROW_SIZE },
	{ "d/s", NULL, D_S, 7, 12, ROW_PLAIN },        { "dkB/s", "dB/s", DKB_S, 9, 12, ROW_SIZE },
	{ "drqm/s", NULL, DRQM_S, 8, 13, ROW_PLAIN },     { "%drqm", NULL, DRQM_PCT, 6, 13, ROW_PLAIN },
	{ "d_await", NULL, D_AWAIT, 7, 12, ROW_PLAIN },    { "dareq-sz", NULL, DAREQ_SZ, 8, 12, ROW_SIZE },
	{ "f/s", NULL, F_S, 7, 11, ROW_PLAIN },        { "f_await", NULL, F_AWAIT, 7, 11, ROW_PLAIN },
	{ "aqu-sz", NULL, AQU_SZ, 7, 3, ROW_PLAIN },       { "%util", NULL, UTIL, 6, 0, ROW_PLAIN },
	{ "r_p50", NULL, R_P50, 7, 9, ROW_LATENCY },     { "r_p99", NULL, R_P99, 7, 4, ROW_LATENCY },
	{ "r_max", NULL, R_MAX, 7, 10, ROW_LATENCY },    { "w_p50", NULL, W_P50, 7, 9, ROW_LATENCY },
	{ "w_p99", NULL, W_P99, 7, 4, ROW_LATENCY },     { "w_max", NULL, W_MAX, 7, 10, ROW_LATENCY },
	{ "%cap", NULL, CAP, 6, 5, ROW_CAPACITY },
};
#define EXT_ROW_COLUMNS (sizeof(ext_row_cols) / sizeof(ext_row_cols[0]))
#define EXT_ROW_RANKS 14

unsigned groups_ext_rows_layout(const struct group *const *disks, unsigned ndisks, unsigned width,
				unsigned device_width, unsigned *shown, bool *cut)
{
	bool available[EXT_ROW_COLUMNS], capacity = false, kept[EXT_ROW_RANKS] = { false };
	unsigned used = device_width, n = 0, last = 0;

	for (unsigned d = 0; d < ndisks; d++)
		capacity |= disks[d]->has_capacity;
	for (unsigned c = 0; c < EXT_ROW_COLUMNS; c++) {
		available[c] = ext_row_cols[c].what == ROW_LATENCY ? latency_by_ebpf
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
			shown[n++] = c;
	return n;
}

int groups_ext_row_width(unsigned column)
{
	return ext_row_cols[column].width;
}

const char *groups_ext_row_nick(unsigned column)
{
	const struct ext_row_column *c = &ext_row_cols[column];

	return groups_human() && c->human_nick ? c->human_nick : c->nick;
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
	if (groups_human() && c->what == ROW_SIZE) {
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

const struct stat_group group_disk_ext = {
	.rank = 23,
	.plugins = { "disk-ext" },
	.section = GROUP_IOLENS,
	.letter = 'x',
	.items = ITEMS_EACH_DISK,
	.title = "dsk-ext/%s",
	.key = "dskext_%s",
	.columns = columns,
	.ncolumns = NCOLUMNS,
	.needs = SYS_DISKSTATS,
	.needs_now = needs_now,
	.alone = true,
	.init = init,
	.compute = compute,
	.table_view = table_view,
};
