/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * biotop.c: iolens biotop: block I/O per process (or per cgroup) and disk, with its latency
 * percentiles, as bcc's biotop (full screen on a tty).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cache_mode.h"
#include "cmd/command.h"
#include "cmd/recorded.h"
#include "cmd/top_screen.h"
#include "collect/bio.h"
#include "collect/memcg.h"
#include "common/signals.h"
#include "common/util.h"
#include "render/out.h"

enum { OPT_AT = 0x3100, OPT_RECORD_DIR };
enum sort_key { SORT_PID, SORT_NAME, SORT_IO, SORT_BYTES, SORT_AVG, SORT_P50, SORT_P99, SORT_MAX, SORT_COUNT };
static const char *const sort_names[SORT_COUNT] = { "pid", "comm", "io", "bytes", "avg", "p50", "p99", "max" };

enum column {
	C_TIME_NS, C_INTERVAL_NS, C_UNATTRIBUTED, C_UNSEEN, C_MECHANISM, /* the interval's own */
	C_PID, C_COMM, C_CGROUP, C_CGROUP_ID,     /* the row's name: a process, or a cgroup with -C */
	C_CONTAINER,                              /* its container: CONTAINER_COLUMNS of them */
	C_OP = C_CONTAINER + CONTAINER_COLUMNS, C_MAJOR, C_MINOR, C_DISK, C_IO, C_BYTES, C_AVG, C_P50, C_P99, C_MAX,
	C_COUNT
};

static const struct out_column all_columns[C_COUNT] = {
	[C_TIME_NS] = { "time_ns", "TIME", NULL, OUT_CLOCK, true,
			"when the interval's counts were read (Unix time): all that completed before it is in them",
			.where = OUT_GROUP },
	[C_INTERVAL_NS] = { "interval_ns", "INTERVAL", NULL, OUT_SEC, true, "the time the rows cover, measured",
			    .where = OUT_GROUP },
	[C_UNATTRIBUTED] = { "unattributed_bytes", "UNATTRIBUTED", NULL, OUT_BYTES, true,
			     "bytes completed and charged to no process since the start: forgotten (more than 8192), "
			     "or started unseen",
			     .where = OUT_GROUP },
	[C_UNSEEN] = { "unseen_completions", "UNSEEN", NULL, OUT_COUNT, true,
		       "requests since the start whose completion the kernel ran no eBPF program for: charged as their "
		       "address was used again",
		       .where = OUT_GROUP },
	[C_MECHANISM] = { "mechanism", "MECHANISM", NULL, OUT_TEXT, true,
			  "the tracepoint requests' processes are seen at: block_io_start or "
			  "block_getrq", .where = OUT_GROUP },
	[C_PID] = { "pid", "PID", NULL, OUT_COUNT, false, "process id (the submitter's)", .width = -8 },
	[C_COMM] = { "comm", "COMM", NULL, OUT_TEXT, false, "its name", .width = -16 },
	[C_CGROUP] = { "cgroup", "CGROUP", NULL, OUT_TEXT, false, "cgroup v2 path (or \"cgroup ID\" when not found)" },
	[C_CGROUP_ID] = { "cgroup_id", "CGROUP_ID", NULL, OUT_COUNT, true, "cgroup v2 id: its directory's inode",
			  .where = OUT_DATA_ONLY },
	CONTAINER_OUT_COLUMNS(C_CONTAINER),
	[C_OP] = { "op", "D", NULL, OUT_TEXT, true, "R read, W write", .width = 1 },
	[C_MAJOR] = { "major", "MAJ", NULL, OUT_COUNT, true, "the disk: major", .width = 4 },
	[C_MINOR] = { "minor", "MIN", NULL, OUT_COUNT, true, "... minor", .width = 4 },
	[C_DISK] = { "disk", "DISK", NULL, OUT_TEXT, true, "its name", .width = -8 },
	[C_IO] = { "requests", "I/O", NULL, OUT_COUNT, true, "requests completed whole in the interval", .width = 7 },
	[C_BYTES] = { "bytes", "BYTES", NULL, OUT_BYTES, true, "bytes completed in the interval", .width = 11 },
	[C_AVG] = { "avg_ns", "AVG_us", NULL, OUT_USEC, true,
		    "latency, start to completion: average (exact)", .width = 10 },
	[C_P50] = { "p50_ns", "P50_us", NULL, OUT_USEC, true,
		    "... median (interpolated in its bucket, within 25 %)", .width = 10 },
	[C_P99] = { "p99_ns", "P99_us", NULL, OUT_USEC, true, "... 99th percentile (likewise)", .width = 10 },
	[C_MAX] = { "max_ns", "MAX_us", NULL, OUT_USEC, true, "... longest", .width = 10 },
};

struct row {
	pid_t pid;
	uint64_t cgroup;
	char name[512]; /* comm, or the cgroup's path */
	const struct container *container; /* or NULL (until container_cache_trim) */
	char op;        /* 'R', 'W'; 0: both (a recorded window's) */
	unsigned major, minor;
	char disk[40];
	uint64_t requests, bytes;
	struct bio_latency_figures latency;
};

/* Cgroup ids named: a walk of the cgroup2 mount for each id not seen before (found or not). */
struct cgroup_name {
	uint64_t id;
	char path[512];
};

struct biotop {
	struct cache_options o;
	bool by_cgroup;
	int sort; /* enum sort_key: an int, for top_screen_wait's keys to move */
	bool reverse;
	pid_t pid;
	unsigned long long max_rows;
	struct bio_table before; /* the counts at the start of the interval */
	struct row *rows;
	size_t nrows, rows_capacity;
	uint64_t interval_ns, unattributed, unseen;
	uint64_t read_real_ns; /* CLOCK_REALTIME as the counts were read */
	struct cgroup_name *names;
	size_t nnames;
	bool cgroup2_mounted;
	struct out_column columns[C_COUNT];
	char note[256]; /* the full screen's second line: "" for none */
	const char *recorded; /* --at: the mechanism the recorded window was counted with; NULL live */
};

/* --help: a screen; --help-all: the whole list below. */
static const char brief_help[] =
	"Usage:\n"
	" iolens biotop [options] [interval [count]]\n"
	"\n"
	"Block I/O per process (or per cgroup) and disk each interval (seconds, default\n"
	"1), as bcc's biotop shows it, with its requests' latency from start to\n"
	"completion: average, p50, p99 and max. Each request is charged to the process\n"
	"that submitted it (writeback to the kernel's flush threads), counted by eBPF\n"
	"on the block tracepoints (root). On a terminal a full screen (keys: < > sort\n"
	"column, r reverse, q quit); piped, plain rows.\n"
	"\n"
	"Options:\n"
	"  -C, --cgroup           per cgroup instead of per process\n"
	"  -s, --sort COLUMN      pid, comm, io, bytes (default), avg, p50, p99, max\n"
	"  -r, --reverse          ascending order\n"
	"  -p, --pid PID          only this process\n"
	"  -n, --rows N           at most N rows each interval\n"
	"      --json, --csv      JSON lines or CSV\n"
	"      --at TIME          what iolens record --doctor kept at TIME (03:00, -2h)\n"
	"  -h, --help             this help; --help-all: every option and field\n"
	"\n"
	"Examples:\n"
	"  iolens biotop                     full screen, every second\n"
	"  iolens biotop -s p99 1 10         the slowest first, ten times\n";

static _Noreturn void usage(bool all)
{
	if (!all)
		help_brief("biotop", brief_help);
	printf("Usage:\n"
	       " %s [options] [interval [count]]\n"
	       "\n"
	       "Block I/O per process (or per cgroup) and operation, each interval (seconds, default 1),\n"
	       "as bcc's biotop shows it, with the latency of the requests: average, p50, p99 and max,\n"
	       "from their start to their completion. Each request is charged to the process that\n"
	       "submitted it (writeback to the kernel's flush threads, read-ahead to the reader), counted\n"
	       "by eBPF on the block tracepoints (root; Linux 6.1). On a terminal a full screen refreshed\n"
	       "each interval; keys: < and > change the sort column, r reverses the order, q quits.\n"
	       "Piped, plain rows. Without eBPF it says why and exits 1.\n"
	       "\n",
	       program_name);
	out_help_fields(stdout, all_columns, C_COUNT);
	printf("\n"
	       "Options:\n"
	       "  -C, --cgroup           per cgroup (cgroup v2) instead of per process\n"
	       "  -s, --sort COLUMN      pid, comm, io, bytes (default), avg, p50, p99, max\n"
	       "  -r, --reverse          ascending order (default: descending)\n"
	       "  -p, --pid PID          only this process\n"
	       "  -n, --rows N           at most N rows each interval\n"
	       "      --json             JSON lines, one object per interval\n"
	       "      --csv              comma-separated values: JSON's keys, units and values\n"
	       "      --no-header        leave out the header lines\n"
	       "      --at TIME          the window iolens record --doctor kept at TIME (03:00, yesterday\n"
	       "                         03:00, -2h, @EPOCH), once: requests, bytes, p50 and p99 of reads\n"
	       "                         and writes together (D, AVG and MAX are not kept)\n"
	       "      --record-dir DIR   the store --at reads (default: iolens record's)\n"
	       "  -v, --verbose          what each warning means, and its fix\n"
	       "  -h, --help             a screen of help; --help-all: all of this\n"
	       "  -V, --version          show the version\n"
	       "\n"
	       "Examples:\n"
	       "  %s                     full screen, every second\n"
	       "  %s -C 5                per cgroup, every 5 seconds\n"
	       "  %s -s p99 1 10         the slowest first, ten times\n"
	       "  %s --json 1 3 | jq .   three JSON lines\n",
	       program_name, program_name, program_name, program_name);
	exit(EXIT_OK);
}

/* The kernel's name of a disk (vda, loop0), from /sys/dev/block; "MAJ:MIN" when it has none. */
static void disk_name(unsigned major, unsigned minor, char *out, size_t len)
{
	char link[64], target[PATH_MAX];
	ssize_t n;
	const char *slash;

	snprintf(link, sizeof(link), "/sys/dev/block/%u:%u", major, minor);
	n = readlink(link, target, sizeof(target) - 1);
	if (n <= 0) {
		snprintf(out, len, "%u:%u", major, minor);
		return;
	}
	target[n] = '\0';
	slash = strrchr(target, '/');
	snprintf(out, len, "%.32s", slash ? slash + 1 : target);
}

static const char *cgroup_path(struct biotop *t, uint64_t id)
{
	struct cgroup_name *name;

	for (size_t i = 0; i < t->nnames; i++)
		if (t->names[i].id == id)
			return t->names[i].path;
	t->names = xrealloc(t->names, (t->nnames + 1) * sizeof(*t->names));
	name = &t->names[t->nnames++];
	name->id = id;
	if (!t->cgroup2_mounted || !memcg_path_of_id(memcg_v2_mount(), id, name->path, sizeof(name->path)))
		snprintf(name->path, sizeof(name->path), "cgroup %llu", (unsigned long long)id);
	return name->path;
}

static void add_row(struct biotop *t, const struct row *row)
{
	if (t->nrows == t->rows_capacity) {
		t->rows_capacity = t->rows_capacity ? 2 * t->rows_capacity : 256;
		t->rows = xrealloc(t->rows, t->rows_capacity * sizeof(*t->rows));
	}
	t->rows[t->nrows++] = *row;
}

/* The interval's rows: what each process (or cgroup) did on each disk since the counts before, a row per operation. */
static int gather(struct biotop *t)
{
	struct bio_table now;
	int rc;

	t->read_real_ns = realtime_ns();
	rc = t->by_cgroup ? bio_read_cgroups(&now) : bio_read(&now);
	container_cache_trim();

	t->nrows = 0;
	if (rc) {
		bio_table_free(&now);
		return rc;
	}
	for (unsigned i = 0; i < now.count; i++) {
		const struct bio_process *p = &now.process[i], *a = bio_table_find(&t->before, p);

		if (t->pid && p->pid != t->pid)
			continue;
		for (unsigned op = 0; op < BIO_SMALL_OPS; op++) {
			struct row row = { .pid = p->pid, .cgroup = p->cgroup, .op = op == BIO_READ ? 'R' : 'W' };

			row.requests = p->requests[op] - (a ? a->requests[op] : 0);
			row.bytes = p->bytes[op] - (a ? a->bytes[op] : 0);
			if (!row.requests && !row.bytes)
				continue;
			bio_latency_figures(&p->latency[op], a ? &a->latency[op] : NULL, &row.latency);
			row.major = p->disk_major;
			row.minor = p->disk_minor;
			disk_name(p->disk_major, p->disk_minor, row.disk, sizeof(row.disk));
			snprintf(row.name, sizeof(row.name), "%s", t->by_cgroup ? cgroup_path(t, p->cgroup) : p->name);
			/*
			 * A cgroup by the path found for it (not walked for again); a process by
			 * its cgroup then, or now.
			 */
			if (t->by_cgroup)
				row.container =
				    row.name[0] == '/' ? container_of_path(2, "", row.name, strlen(row.name)) : NULL;
			else
				row.container = container_of_process(p->pid, p->cgroup, 0);
			add_row(t, &row);
		}
	}
	t->unattributed = now.unattributed_bytes;
	t->unseen = now.unseen_completions;
	bio_table_free(&t->before);
	t->before = now;
	return 0;
}

static const struct biotop *sorting;

static int compare_u64(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

static int compare_rows(const void *a_, const void *b_)
{
	const struct row *a = a_, *b = b_;
	int order = 0;

	switch (sorting->sort) {
	case SORT_PID:
		order = sorting->by_cgroup ? compare_u64(a->cgroup, b->cgroup)
					   : compare_u64((uint64_t)a->pid, (uint64_t)b->pid);
		break;
	case SORT_NAME: order = -strcmp(a->name, b->name); break; /* A first, descending as the rest */
	case SORT_IO: order = compare_u64(a->requests, b->requests); break;
	case SORT_BYTES: order = compare_u64(a->bytes, b->bytes); break;
	case SORT_AVG: order = compare_u64(a->latency.average_ns, b->latency.average_ns); break;
	case SORT_P50: order = compare_u64(a->latency.p50_ns, b->latency.p50_ns); break;
	case SORT_P99: order = compare_u64(a->latency.p99_ns, b->latency.p99_ns); break;
	case SORT_MAX: order = compare_u64(a->latency.max_ns, b->latency.max_ns); break;
	default: break;
	}
	if (!order) /* a stable order between equals: by pid (cgroup), then disk, then operation */
		order = a->pid != b->pid ? compare_u64((uint64_t)b->pid, (uint64_t)a->pid)
		      : a->cgroup != b->cgroup ? compare_u64(b->cgroup, a->cgroup)
		      : a->major != b->major || a->minor != b->minor
			? compare_u64((uint64_t)b->major << 32 | b->minor, (uint64_t)a->major << 32 | a->minor)
		      : (b->op > a->op) - (b->op < a->op);
	return sorting->reverse ? order : -order;
}

static void sort_rows(struct biotop *t)
{
	sorting = t;
	if (t->nrows > 1)
		qsort(t->rows, t->nrows, sizeof(*t->rows), compare_rows);
}

static void put_row(const struct biotop *t, struct out_table *table, const struct row *row)
{
	struct out_row *out = out_row_add(table);

	if (t->by_cgroup) {
		out_set_text(out, C_CGROUP, row->name);
		out_set_count(out, C_CGROUP_ID, row->cgroup);
	} else {
		out_set_count(out, C_PID, (uint64_t)row->pid);
		out_set_text(out, C_COMM, row->name);
		out_set_count(out, C_CGROUP_ID, row->cgroup);
	}
	container_columns_set(out, C_CONTAINER, row->container);
	if (row->op)
		out_set_text(out, C_OP, row->op == 'R' ? "R" : "W");
	out_set_count_if(out, C_MAJOR, row->major, row->major || row->minor);
	out_set_count_if(out, C_MINOR, row->minor, row->major || row->minor);
	if (row->major || row->minor)
		out_set_text(out, C_DISK, row->disk);
	out_set_count(out, C_IO, row->requests);
	out_set_count(out, C_BYTES, row->bytes);
	/* No request completed whole (only parts of one): its latency is not known yet. */
	if (row->latency.requests) {
		out_set_count_if(out, C_AVG, row->latency.average_ns, row->op);
		out_set_count(out, C_P50, row->latency.p50_ns);
		out_set_count(out, C_P99, row->latency.p99_ns);
		out_set_count_if(out, C_MAX, row->latency.max_ns, row->op);
	}
}

/* The header line: "HH:MM:SS loadavg: ... / Sort: BYTES / Order: descending", as bcc's. */
static void write_interval(const void *context, struct out_table *table, size_t max)
{
	const struct biotop *t = context;
	char title[256], clock[16];
	time_t read = (time_t)(t->read_real_ns / 1000000000ull);
	struct out_row *group;
	size_t n = t->max_rows && t->max_rows < t->nrows ? (size_t)t->max_rows : t->nrows;

	strftime(clock, sizeof(clock), "%H:%M:%S", localtime(&read));
	snprintf(title, sizeof(title), "%s %s / Sort: %s / Order: %s", clock,
		 t->by_cgroup ? "per cgroup" : "per process", sort_names[t->sort],
		 t->reverse ? "ascending" : "descending");
	group = out_table_group(table, title);
	out_set_count(group, C_TIME_NS, t->read_real_ns);
	out_set_count(group, C_INTERVAL_NS, t->interval_ns);
	out_set_count_if(group, C_UNATTRIBUTED, t->unattributed, !t->recorded);
	out_set_count_if(group, C_UNSEEN, t->unseen, !t->recorded);
	out_set_text(group, C_MECHANISM, t->recorded ? t->recorded : bio_mechanism_name(bio_mechanism()));
	for (size_t i = 0; i < n && i < max; i++)
		put_row(t, table, &t->rows[i]);
	out_table_group_end(table);
}

/*
 * The full screen in a terminal narrower than the rows (121 columns): first the room the values
 * rarely use, then COMM cut (with '+'), then CONTAINER, MAJ and MIN left out (said on the second
 * line: DISK names the disk), then narrower still: at 80 columns every figure is there. A figure
 * longer than its column loses decimals; a line still too wide ends in '>' at the edge. Piped rows
 * are never narrowed.
 */
static const struct top_narrow narrow_steps[] = {
	{ C_AVG, 9 }, { C_P50, 9 }, { C_P99, 9 }, { C_MAX, 9 }, { C_BYTES, 10 }, { C_IO, 6 }, { C_PID, -7 },
	{ C_MAJOR, 3 }, { C_MINOR, 3 }, { C_COMM, -12 }, { C_CONTAINER, 0 }, { C_MAJOR, 0 }, { C_MINOR, 0 },
	{ C_AVG, 8 }, { C_P50, 8 }, { C_P99, 8 }, { C_MAX, 8 }, { C_BYTES, 9 }, { C_DISK, -7 }, { C_COMM, -9 },
	{ C_COMM, -7 },
};

static void draw(const struct biotop *t)
{
	top_screen_draw(write_interval, t, t->columns, C_COUNT, t->note[0] ? t->note : NULL, narrow_steps,
			sizeof(narrow_steps) / sizeof(narrow_steps[0]));
}

/* The keys changed the order: the rows sorted again, and drawn. */
static void redraw(void *context)
{
	struct biotop *t = context;

	sort_rows(t);
	draw(t);
}

/*
 * A recorded process's row on a disk, reads and writes together, from a window recorded before
 * their own figures were kept: R or W where its requests were all one, the latencies of both.
 */
static void add_recorded_both(struct biotop *t, const struct snap_bio_proc *p, struct row *row)
{
	row->requests = p->requests;
	row->bytes = p->bytes;
	if (p->ops_known && p->read_requests == p->requests)
		row->op = 'R';
	else if (p->ops_known && !p->read_requests)
		row->op = 'W';
	if (p->p50_ns > 0) {
		row->latency.requests = p->requests;
		row->latency.p50_ns = (uint64_t)p->p50_ns;
		row->latency.p99_ns = (uint64_t)p->p99_ns;
	}
	add_row(t, row);
}

/*
 * --at: the rows of the window iolens record --doctor kept at TIME (its processes' reads and
 * writes on each disk, as live), printed once as an interval's. 0 or EXIT_FAIL.
 */
static int show_recorded(struct biotop *t, const char *dir, const char *when)
{
	struct doctor_snapshot snap;
	uint64_t start, end;
	struct out_table *out;
	int rc = recorded_snapshot_at(dir, when, &snap, &start, &end);

	if (rc)
		return rc;
	for (size_t i = 0; i < snap.nbio_procs; i++) {
		const struct snap_bio_proc *p = &snap.bio_procs[i];
		struct row row = { .pid = p->pid, .major = p->disk_major, .minor = p->disk_minor };

		if (t->pid && p->pid != t->pid)
			continue;
		snprintf(row.name, sizeof(row.name), "%s", p->comm);
		disk_name(p->disk_major, p->disk_minor, row.disk, sizeof(row.disk));
		if (!p->op_figures_known) {
			add_recorded_both(t, p, &row);
			continue;
		}
		for (int k = 0; k < 2; k++) { /* a row for its reads, one for its writes, as live */
			const struct snap_bio_op *o = &p->op[k];

			row.op = k ? 'W' : 'R';
			row.requests = k ? p->write_requests : p->read_requests;
			row.bytes = k ? p->write_bytes : p->read_bytes;
			row.latency = (struct bio_latency_figures){ 0 };
			if (o->max_ns > 0)
				row.latency = (struct bio_latency_figures){ row.requests, (uint64_t)o->avg_ns,
									    (uint64_t)o->p50_ns, (uint64_t)o->p99_ns,
									    (uint64_t)o->max_ns };
			if (row.requests || row.bytes)
				add_row(t, &row);
		}
	}
	t->read_real_ns = end;
	t->interval_ns = end - start;
	t->recorded = snap.bio_known && snap.bio_mechanism[0] ? snap.bio_mechanism : "-";
	sort_rows(t);
	t->columns[C_PID].is_default = t->columns[C_COMM].is_default = true;
	t->columns[C_CGROUP].is_default = false;
	out = out_table_new(t->columns, C_COUNT, &t->o.out, "processes");
	if (!out) {
		doctor_snapshot_free(&snap);
		return EXIT_USAGE;
	}
	out_table_lines(out, stdout);
	write_interval(t, out, SIZE_MAX);
	out_table_free(out);
	doctor_snapshot_free(&snap);
	return fflush(stdout) || ferror(stdout) ? output_failed() : EXIT_OK;
}

static enum sort_key parse_sort(const char *text)
{
	for (int i = 0; i < SORT_COUNT; i++)
		if (!strcasecmp(text, sort_names[i]))
			return (enum sort_key)i;
	if (!strcasecmp(text, "cgroup") || !strcasecmp(text, "name"))
		return SORT_NAME;
	if (!strcasecmp(text, "kbytes") || !strcasecmp(text, "requests"))
		return !strcasecmp(text, "kbytes") ? SORT_BYTES : SORT_IO;
	usage_error("--sort: '%s' is not pid, comm, io, bytes, avg, p50, p99 or max", text);
}

static const struct option long_options[] = {
	COMMON_LONG_OPTIONS,
	{ "verbose", no_argument, NULL, 'v' },
	{ "cgroup", no_argument, NULL, 'C' },
	{ "sort", required_argument, NULL, 's' },
	{ "reverse", no_argument, NULL, 'r' },
	{ "pid", required_argument, NULL, 'p' },
	{ "rows", required_argument, NULL, 'n' },
	{ "json", no_argument, NULL, OUT_OPT_JSON },
	{ "csv", no_argument, NULL, OUT_OPT_CSV },
	{ "no-header", no_argument, NULL, OUT_OPT_NO_HEADER },
	{ "at", required_argument, NULL, OPT_AT },
	{ "record-dir", required_argument, NULL, OPT_RECORD_DIR },
	{ 0 }
};

int cmd_biotop(int argc, char **argv)
{
	struct biotop t = { .o = { .interval = 1 }, .sort = SORT_BYTES };
	const char *at = NULL, *record_dir = NULL;
	struct out_table *out = NULL;
	unsigned long long printed = 0;
	uint64_t deadline, previous_ns;
	const char *why = NULL;
	bool screen;
	int opt, rc = EXIT_OK;

	while ((opt = next_option(argc, argv, "Cs:rp:n:hvV", long_options, NULL)) != -1) {
		switch (opt) {
		case 'C':
			t.by_cgroup = true;
			break;
		case 's':
			t.sort = parse_sort(optarg);
			break;
		case 'r':
			t.reverse = true;
			break;
		case 'p':
			t.pid = top_option_pid(optarg);
			break;
		case 'n':
			t.max_rows = top_option_rows(optarg);
			break;
		case 'v':
			warn_verbose = true;
			break;
		case OPT_AT:
			at = optarg;
			break;
		case OPT_RECORD_DIR:
			record_dir = optarg;
			break;
		default:
			if (!out_parse_option(&t.o.out, opt, optarg))
				command_option_rest(opt, usage);
		}
	}
	cache_parse_interval_count(argc, argv, optind, &t.o, true);
	if (t.pid && t.by_cgroup)
		usage_error("--pid and --cgroup: a cgroup's rows are not of one process");
	if (at) {
		if (t.by_cgroup || optind < argc)
			usage_error("--at shows the window recorded at TIME: no --cgroup, interval or count");
		memcpy(t.columns, all_columns, sizeof(t.columns));
		rc = show_recorded(&t, record_dir, at);
		free(t.rows);
		return rc;
	}
	/* Without eBPF there is no latency and no submitter to charge: said, not estimated. */
	if (bio_start(t.by_cgroup ? BIO_WANT_CGROUPS : BIO_WANT_PROCESSES, &why) != 0) {
		warn_msg("block I/O per %s needs eBPF: %s", t.by_cgroup ? "cgroup" : "process", why);
		return EXIT_FAIL;
	}
	/* Said once, and on the full screen's second line unless a missing cgroup2 takes it. */
	if (bio_mechanism_less_exact(bio_mechanism())) {
		snprintf(t.note, sizeof(t.note), "%s", bio_mechanism_less_exact(bio_mechanism()));
		warn_msg("%s", t.note);
	}
	if (t.by_cgroup) {
		t.cgroup2_mounted = memcg_v2_mounted();
		if (!t.cgroup2_mounted) {
			snprintf(t.note, sizeof(t.note), "cgroup v2 is not mounted: cgroups are shown by id");
			warn_msg("%s", t.note);
		}
	}
	stop_on_signals();
	memcpy(t.columns, all_columns, sizeof(t.columns));
	t.columns[C_PID].is_default = t.columns[C_COMM].is_default = !t.by_cgroup;
	t.columns[C_CGROUP].is_default = t.by_cgroup;
	container_columns_show(t.columns, C_CONTAINER, true);
	screen = t.o.out.format == OUT_TABLE && isatty(STDOUT_FILENO) && isatty(STDIN_FILENO) && getenv("TERM");
	if (screen)
		screen = top_screen_open();
	if (!screen) {
		out = out_table_new(t.columns, C_COUNT, &t.o.out, t.by_cgroup ? "cgroups" : "processes");
		if (!out) {
			bio_stop();
			return EXIT_USAGE;
		}
		out_table_lines(out, stdout);
	}
	/* The counts at the start: the first interval's rows are what happened after it. */
	if ((rc = t.by_cgroup ? bio_read_cgroups(&t.before) : bio_read(&t.before)) != 0) {
		warn_msg("reading the counts: %s", strerror(-rc));
		rc = EXIT_FAIL;
		goto cleanup;
	}
	rc = EXIT_OK;
	previous_ns = deadline = monotonic_ns();
	while (!stop_signal && (!t.o.count || printed < t.o.count)) {
		uint64_t now;
		int read_rc;

		deadline += (uint64_t)(t.o.interval * 1e9);
		if (screen) {
			if (!top_screen_wait(deadline, &t.sort, SORT_COUNT, &t.reverse, redraw, &t))
				break;
		} else {
			sleep_until_ns(deadline, &stop_signal);
			if (stop_signal)
				break;
		}
		read_rc = gather(&t);
		now = monotonic_ns();
		if (read_rc) {
			warn_msg("reading the counts: %s", strerror(-read_rc));
			rc = EXIT_FAIL;
			break;
		}
		t.interval_ns = now - previous_ns;
		sort_rows(&t);
		if (screen) {
			draw(&t);
		} else {
			write_interval(&t, out, SIZE_MAX);
			if (fflush(stdout) != 0 || ferror(stdout)) {
				rc = output_failed();
				break;
			}
		}
		previous_ns = now;
		printed++;
		if (deadline + 1000000 < now)
			deadline = now;
	}
cleanup:
	if (screen)
		top_screen_close();
	out_table_free(out);
	bio_stop();
	bio_table_free(&t.before);
	free(t.rows);
	free(t.names);
	container_cache_free();
	return rc;
}
