/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vstat.c: iolens vstat: per-operation rates, latency and %util of servers instrumented with libvtrace. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/command.h"
#include "collect/segments.h"
#include "common/key_map.h"
#include "common/signals.h"
#include "common/util.h"
#include "render/out.h"
#include "render/record.h"

enum {
	COL_TIME,
	COL_SERVICE,
	COL_PID,
	COL_UID,
	COL_USER,
	COL_OP,
	COL_NAME,
	COL_NUMBER,
	COL_INFLIGHT,
	COL_COMPLETIONS,
	COL_OPS_PER_S,
	COL_SVCTM,
	COL_P50,
	COL_P99,
	COL_MAX,
	COL_UTIL,
	COL_ERRORS,
	COL_ERRORS_PER_S,
	COL_BYTES,
	COL_BYTES_PER_S,
	COL_STATE,
	COL_HANG,
	COL_COUNT
};

static const struct out_column columns[COL_COUNT] = {
	[COL_TIME] = { "time_ns", "Time (ns)", NULL, OUT_COUNT, false, "when the sample was taken (Unix time, ns)" },
	[COL_SERVICE] = { "service", "Service", NULL, OUT_TEXT, false, "the service's name" },
	[COL_PID] = { "pid", "PID", NULL, OUT_COUNT, false, "the service's process" },
	[COL_UID] = { "uid", "UID", NULL, OUT_COUNT, false, "the user the segment belongs to (its owner)" },
	[COL_USER] = { "user", "user", NULL, OUT_TEXT, false, "that user's name (its number when it has none)" },
	[COL_OP] = { "op", "op", NULL, OUT_TEXT, true, "the operation: NAME(NUMBER), or TOTAL" },
	[COL_NAME] = { "name", "name", NULL, OUT_TEXT, false, "the operation's name alone" },
	[COL_NUMBER] = { "number", "number", NULL, OUT_COUNT, false, "the operation's number, when it has one" },
	[COL_INFLIGHT] = { "inflight", "inflt", NULL, OUT_COUNT, true,
			   "requests in flight at the end of the interval" },
	[COL_COMPLETIONS] = { "completions", "ops", NULL, OUT_COUNT, false, "requests completed in the interval" },
	[COL_OPS_PER_S] = { "ops_per_s", "op/s", NULL, OUT_FLOAT, true, "requests completed per second" },
	[COL_SVCTM] = { "svctm_ns", "svctm/us", NULL, OUT_USEC, true, "mean service time" },
	[COL_P50] = { "p50_ns", "p50/us", NULL, OUT_USEC, true, "median service time (within 1.6 %)" },
	[COL_P99] = { "p99_ns", "p99/us", NULL, OUT_USEC, true, "99th percentile of service time (within 1.6 %)" },
	[COL_MAX] = { "max_ns", "max/us", NULL, OUT_USEC, true, "longest service time (within 1 %)" },
	[COL_UTIL] = { "util", "%util", NULL, OUT_PERCENT, true,
		       "share of the interval with a request in flight (never above 100)", NULL, 2 },
	[COL_ERRORS] = { "errors", "errors", NULL, OUT_COUNT, false, "requests that failed in the interval" },
	[COL_ERRORS_PER_S] = { "errors_per_s", "err/s", NULL, OUT_FLOAT, true, "failed requests per second" },
	[COL_BYTES] = { "bytes", "bytes", NULL, OUT_BYTES, false, "bytes moved in the interval" },
	[COL_BYTES_PER_S] = { "bytes_per_s", "B/s", NULL, OUT_BYTE_RATE, true, "bytes moved per second" },
	[COL_STATE] = { "state", "state", NULL, OUT_TEXT, true, "HANG when the oldest request in flight is too old" },
	[COL_HANG] = { "hang_ns", "hang/s", NULL, OUT_SEC, true, "with HANG: how long the oldest request has waited" },
};

/* What JSON and CSV show when -o does not choose: everything a program may want. */
static const char json_columns[] = "op,name,number,inflight,completions,ops_per_s,svctm_ns,p50_ns,p99_ns,max_ns,"
				   "util,errors,errors_per_s,bytes,bytes_per_s,state,hang_ns";
static const char csv_columns[] =
    "time_ns,service,pid,uid,user,op,inflight,completions,ops_per_s,svctm_ns,p50_ns,p99_ns,"
    "max_ns,util,errors,errors_per_s,bytes,bytes_per_s,state,hang_ns";

enum target_kind { TARGET_ALL, TARGET_PATH, TARGET_PID, TARGET_SERVICE };

struct vstat {
	struct out_options output;
	struct out_table *csv;    /* CSV: one table for the whole run, written as it goes */
	bool show_idle;           /* -a */
	bool show_stale;
	uint64_t hang_after_ns;
	const char *directory;
	const char *procfs;
	enum target_kind target_kind;
	const char *target;
	long target_pid;
	struct segment **segments;
	size_t nsegments;
	struct key_map paths;       /* path -> its segment */
	struct key_map files;       /* (dev, ino) -> its segment (a file found by two paths is shown once) */
	struct segment_dir *dir;    /* the directory, looked at round after round */
	struct segment_round round; /* the pass under way over the segments */
	/* gone: a new one of theirs is a restart */
	struct departed { char service[64]; uid_t uid; pid_t pid; } *departed;
	struct told { dev_t dev; ino_t ino; int error; } *told; /* problems said: each file's once a run */
	size_t ntold;
	size_t ndeparted;
	bool failed;
	bool reported_gone;
	bool quiet;               /* problems are not said (a file that may not be the target's) */
	bool scanning;            /* a file a scan found is opened: its problems are said, and fail only a file named */
	bool cleaning;            /* --clean: half-made segments are its business */
	int last_error;           /* of the last problem */
};

/* Files whose problem vstat remembers having said. */
#define TOLD_MAX 4096

/* A segment still not ready after this many seconds was left half made. */
#define HALF_MADE_AGE SEGMENT_MADE_SECONDS

/* --help: a screen; --help-all: the whole list below. */
static const char brief_help[] =
	"Usage:\n"
	" iolens vstat [options] [TARGET] [interval [count]]\n"
	"\n"
	"What servers instrumented with libvtrace are doing, op by op: requests per\n"
	"second, service time and its percentiles, %util, errors, bytes, and requests\n"
	"that hang. TARGET is a service name or a segment path; with none, every\n"
	"service found. The first report covers the time since each server started,\n"
	"the next ones each interval.\n"
	"\n"
	"Options:\n"
	"  -a, --all              show operations idle in the interval too\n"
	"      --hang-after SECONDS  flag a request in flight this long as HANG\n"
	"                         (default 1)\n"
	"  -p, --pid PID          the segments of process PID\n"
	"      --clean            remove the segments of dead processes\n"
	"  -o, --output LIST      columns to show; +LIST adds to the defaults\n"
	"      --json, --csv      JSON or CSV instead of the table\n"
	"  -h, --help             this help; --help-all: every option and column\n"
	"\n"
	"Examples:\n"
	"  iolens vstat                        every service, since each started\n"
	"  iolens vstat fuse-passthrough 1 10  one service, every second, ten times\n";

static _Noreturn void usage(bool all)
{
	if (!all)
		help_brief("vstat", brief_help);
	printf("Usage:\n"
	       " %s [options] [TARGET] [interval [count]]\n"
	       "\n"
	       "Show what servers instrumented with libvtrace are doing, operation by operation:\n"
	       "requests per second, service time and its percentiles, %%util, errors, bytes,\n"
	       "and requests that hang. TARGET is a service name or a segment (a path, such as\n"
	       "/dev/shm/vtrace.NAME.PID or /proc/PID/fd/N); a process goes with -p. With none,\n"
	       "every service found is shown, as iostat shows every disk. A number alone is the\n"
	       "interval, as in iostat.\n"
	       "\n"
	       "A segment is shown as its service's only when it is proven to be: a live process\n"
	       "of the file owner's user has it open for writing, and its name, its header and\n"
	       "that process agree on the pid. Others are said apart, with the reason, not shown.\n"
	       "\n"
	       "The first report covers the time since each segment was created; the next ones\n"
	       "cover each interval (seconds, decimals allowed). Without an interval, one report.\n"
	       "\n"
	       "Options:\n"
	       "  -a, --all              show operations idle in the interval too\n"
	       "      --hang-after SECONDS  flag an operation whose oldest request in flight is\n"
	       "                         older than this as HANG (default 1)\n"
	       "  -p, --pid PID          the segments of process PID (also those it has open, and\n"
	       "                         those in its own /dev/shm: a container's)\n"
	       "      --dir DIR          where segments are (default $VTRACE_DIR, or /dev/shm)\n"
	       "      --stale            show the segments of dead processes in full, not as one line\n"
	       "      --clean            remove the segments of dead processes, and say which\n"
	       "  -h, --help             a screen of help; --help-all: all of this\n"
	       "  -V, --version          show the version\n"
	       "\n",
	       program_name);
	out_help_options(stdout);
	putchar('\n');
	out_help_columns(stdout, columns, COL_COUNT);
	printf("\n"
	       "In tables times are in microseconds (hang in seconds); in JSON and CSV, nanoseconds.\n"
	       "JSON is one object per report, one per line; CSV adds time_ns, service and pid.\n"
	       "\n"
	       "Examples:\n"
	       "  %s                        every service, since each started\n"
	       "  %s 1                      every service, every second\n"
	       "  %s fuse-passthrough 1 10  one service, every second, ten times\n"
	       "  %s -p 4242 1              the servers of process 4242, every second\n"
	       "  %s /proc/4242/fd/7 2      virtiofsd vstat's form: a segment open in a process\n"
	       "  %s --json -a 1            JSON lines, idle operations included\n"
	       "  %s --clean                remove what dead servers left in /dev/shm\n",
	       program_name, program_name, program_name, program_name, program_name, program_name, program_name);
	exit(EXIT_OK);
}

static void report_problem(const struct segment_problem *p, void *context)
{
	struct vstat *vs = context;
	struct stat st;

	vs->last_error = p->error;
	/*
	 * A file that a scan found, and that is not a segment (anyone may drop files named
	 * vtrace.* in /dev/shm), is said but fails the run only when the user named it; so are
	 * a user's segments not read for the limits each user has (time, room). A segment shown
	 * that cannot be read any more fails it.
	 */
	bool limit = p->error == -ETIME || p->error == -EMFILE;
	bool fails = vs->target_kind == TARGET_PATH || (!vs->scanning && !limit);

	/* A segment being created shows at the next scan; one left half made is said (--clean removes it). */
	if (p->error == -EAGAIN && vs->target_kind != TARGET_PATH) {
		if (vs->quiet || vs->cleaning || lstat(p->path, &st) != 0 || time(NULL) - st.st_mtime < HALF_MADE_AGE)
			return;
		warn_msg("%s: left half made %llu s ago (--clean removes it once nobody holds it)",
			 printable_name(p->path), (unsigned long long)(time(NULL) - st.st_mtime));
		vs->failed |= fails;
		return;
	}
	if (vs->quiet)
		return;
	vs->failed |= fails;
	/* Said once for a file, not at every report (at most TOLD_MAX files remembered). */
	if (lstat(p->path, &st) == 0) {
		for (size_t i = 0; i < vs->ntold; i++)
			if (vs->told[i].dev == st.st_dev && vs->told[i].ino == st.st_ino &&
			    vs->told[i].error == p->error)
				return;
		if (vs->ntold < TOLD_MAX) {
			vs->told = xrealloc(vs->told, (vs->ntold + 1) * sizeof(*vs->told));
			vs->told[vs->ntold++] = (struct told){ st.st_dev, st.st_ino, p->error };
		}
	}
	if (p->why)
		warn_msg("%s: %s", printable_name(p->path), p->why);
	else
		warn_errno(printable_name(p->path), -p->error);
}

/* ---- Which segments ----------------------------------------------------------- */

/* A segment's file, as the key of vs->files. */
struct file_key {
	dev_t dev;
	ino_t ino;
};

static struct segment *find_segment(const struct vstat *vs, const char *path)
{
	return name_map_get(&vs->paths, path);
}

/* The same file, found by another path (its directory and a process's open files). */
static bool known_file(const struct vstat *vs, const struct segment *segment)
{
	struct file_key key = { segment->dev, segment->ino };
	const struct segment *other = key_map_get(&vs->files, &key, sizeof(key));

	return other && other != segment;
}

static bool wanted(const struct vstat *vs, const struct segment *segment)
{
	switch (vs->target_kind) {
	case TARGET_PID:
		return segment->pid == vs->target_pid;
	case TARGET_SERVICE:
		return !strcmp(segment->info->service, vs->target);
	default:
		return true;
	}
}

static void add_segment(struct vstat *vs, struct segment *segment)
{
	struct file_key key = { segment->dev, segment->ino };

	vs->segments = xrealloc(vs->segments, (vs->nsegments + 1) * sizeof(*vs->segments));
	vs->segments[vs->nsegments++] = segment;
	name_map_put(&vs->paths, segment->path, segment);
	key_map_put(&vs->files, &key, sizeof(key), segment);
}

/* Closes a segment (taken out of vs->segments by the caller). */
static void drop_segment(struct vstat *vs, struct segment *segment)
{
	struct file_key key = { segment->dev, segment->ino };

	if (name_map_get(&vs->paths, segment->path) == segment)
		name_map_remove(&vs->paths, segment->path);
	if (key_map_get(&vs->files, &key, sizeof(key)) == segment)
		key_map_remove(&vs->files, &key, sizeof(key));
	segment_free(segment);
}

/*
 * vtrace.SERVICE.PID[.XXXXXXXX]: a named target reads only the files of its name, and says
 * nothing of bad ones beside. A pid's may have another name (a writer in another pid
 * namespace numbers itself otherwise): opened too, quietly. 0: not read, 1: read, 2: quietly.
 */
static int name_may_match(const struct vstat *vs, const char *path)
{
	const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char prefix[64];
	size_t len;

	switch (vs->target_kind) {
	case TARGET_PID:
		for (const char *dot = strchr(name, '.'); dot; dot = strchr(dot + 1, '.')) {
			len = (size_t)snprintf(prefix, sizeof(prefix), ".%ld", vs->target_pid);
			if (!strncmp(dot, prefix, len) && (!dot[len] || (dot[len] == '.' && strlen(dot + len) == 9)))
				return 1;
		}
		return 2;
	case TARGET_SERVICE:
		len = strlen(vs->target);
		return !strncmp(name, "vtrace.", 7) && !strncmp(name + 7, vs->target, len) && name[7 + len] == '.' &&
		       name[8 + len] >= '0' && name[8 + len] <= '9';
	default:
		return 1;
	}
}

/* A server of a service that was seen before is a restart of it: said, and its numbers start anew. */
/* At most this many servers gone are remembered: the oldest are forgotten (each service and user once). */
#define DEPARTED_MAX 256

static bool same_server(const struct departed *d, const struct segment *segment)
{
	return d->uid == segment->info->uid && !strcmp(d->service, segment->info->service);
}

static void note_departed(struct vstat *vs, const struct segment *segment)
{
	size_t i = 0;

	while (i < vs->ndeparted && !same_server(&vs->departed[i], segment))
		i++;
	if (i == vs->ndeparted && vs->ndeparted == DEPARTED_MAX)
		i = 0; /* the oldest: forgotten */
	if (i < vs->ndeparted) { /* moved to the end, the newest */
		memmove(&vs->departed[i], &vs->departed[i + 1], (vs->ndeparted - i - 1) * sizeof(*vs->departed));
		vs->ndeparted--;
	}
	vs->departed = xrealloc(vs->departed, (vs->ndeparted + 1) * sizeof(*vs->departed));
	snprintf(vs->departed[vs->ndeparted].service, sizeof(vs->departed[0].service), "%s", segment->info->service);
	vs->departed[vs->ndeparted].uid = segment->info->uid;
	vs->departed[vs->ndeparted++].pid = segment->pid;
}

static void note_arrived(struct vstat *vs, struct segment *segment)
{
	for (size_t i = vs->ndeparted; i-- > 0;)
		if (same_server(&vs->departed[i], segment)) { /* another user's server of that name is not a restart */
			segment->restarted_from = vs->departed[i].pid;
			warn_msg("%s: restarted: pid %d is gone, pid %d took its place (user %s)",
				 segment->info->service, (int)vs->departed[i].pid, (int)segment->pid,
				 segment_user_name(segment->info->uid));
			memmove(&vs->departed[i], &vs->departed[i + 1],
				(vs->ndeparted - i - 1) * sizeof(*vs->departed));
			vs->ndeparted--;
			return;
		}
}

/* Said once: a segment that is not shown, and why. */
static void tell_not_shown(struct vstat *vs, struct segment *segment)
{
	if (segment->told || vs->quiet)
		return;
	segment->told = true;
	if (segment->state == SEGMENT_UNTRUSTED)
		warn_msg("%s: not shown: untrusted (user %s, uid %u): %s", printable_name(segment->path),
			 segment_user_name(segment->info->uid), segment->info->uid,
			 segment->why);
	else if (segment->state == SEGMENT_UNKNOWN)
		warn_msg("%s: cannot tell whose it is: %s", printable_name(segment->path), segment->why);
}

/* A segment shown as its service's: proven, or dead (said so), or the very file asked for. */
static bool listed(const struct vstat *vs, const struct segment *segment)
{
	return segment->state == SEGMENT_LIVE || segment->state == SEGMENT_STALE || vs->target_kind == TARGET_PATH;
}

static bool shown_in_full(const struct vstat *vs, const struct segment *segment)
{
	return listed(vs, segment) && (segment->state != SEGMENT_STALE || vs->show_stale);
}

/* A file the scan found: kept when known, opened when new, refused with a message when bad. */
static enum segment_found open_found(struct vstat *vs, const char *path, pid_t holder)
{
	struct segment *segment = find_segment(vs, path);
	int match = holder ? 1 : name_may_match(vs, path);
	bool quiet = vs->quiet;

	if (!match)
		return SEGMENT_NOT;
	if (segment && !segment_removed(segment)) {
		segment->seen = true;
		segment_rejudge(segment, &vs->round);
		return SEGMENT_KEPT;
	}
	if (segment) /* another file at its path now: the one held goes (unseen), this one is opened */
		name_map_remove(&vs->paths, path);
	vs->quiet = quiet || match == 2;
	vs->scanning = true;
	segment = segment_open(path, holder ? SEGMENT_FOLLOW : 0, holder, &vs->round, report_problem, vs);
	vs->scanning = false;
	vs->quiet = quiet;
	if (!segment)
		return segment_open_verdict(&vs->round);
	if (!wanted(vs, segment) || known_file(vs, segment)) {
		segment_free(segment);
		return SEGMENT_NOT;
	}
	segment->seen = true;
	add_segment(vs, segment);
	if (segment->state != SEGMENT_LIVE)
		tell_not_shown(vs, segment);
	/* Said in a line, not sampled: what it held (its room among its user's) is not kept. */
	if ((segment->state == SEGMENT_STALE || segment->state == SEGMENT_UNTRUSTED) && !shown_in_full(vs, segment))
		segment_release(segment);
	return SEGMENT_KEPT;
}

static enum segment_found found(const char *path, void *context)
{
	return open_found(context, path, 0);
}

static void found_in_process(const char *path, pid_t holder, void *context)
{
	open_found(context, path, holder);
}

static void tell_skipped(uid_t uid, size_t files, void *context)
{
	struct vstat *vs = context;

	warn_msg("%s: %zu file%s of user %s (uid %u) not looked at: their time share is spent",
		 printable_name(vs->directory), files, files == 1 ? "" : "s", segment_user_name(uid),
		 (unsigned)uid);
}

static int by_path(const void *a, const void *b)
{
	return strcmp((*(struct segment *const *)a)->path, (*(struct segment *const *)b)->path);
}

/* Finds the segments again: new services appear, closed ones go. */
static void rescan(struct vstat *vs)
{
	size_t kept = 0;
	int rc;

	if (vs->target_kind == TARGET_PATH) {
		if (vs->nsegments && segment_removed(vs->segments[0])) {
			warn_msg("%s: the service closed its segment", printable_name(vs->segments[0]->path));
			drop_segment(vs, vs->segments[0]);
			vs->nsegments = 0;
			vs->reported_gone = true;
		}
		return;
	}
	for (size_t i = 0; i < vs->nsegments; i++)
		vs->segments[i]->seen = false;
	if (!vs->dir)
		vs->dir = segment_dir_new(vs->directory);
	rc = segment_dir_scan(vs->dir, &vs->round, found, vs);
	if (rc) {
		warn_errno(printable_name(vs->directory), -rc);
		vs->failed = true;
	}
	if (!vs->quiet)
		segment_round_skipped(&vs->round, tell_skipped, vs);
	if (vs->target_kind == TARGET_PID)
		segment_scan_process(&vs->round, (pid_t)vs->target_pid, found_in_process, vs);
	for (size_t i = 0; i < vs->nsegments; i++) {
		struct segment *segment = vs->segments[i];

		if (segment->seen) {
			vs->segments[kept++] = segment;
			continue;
		}
		if (segment->state == SEGMENT_LIVE)
			note_departed(vs, segment);
		drop_segment(vs, segment);
	}
	vs->nsegments = kept;
	/* In path order, whatever order the directory gave. */
	if (vs->nsegments)
		qsort(vs->segments, vs->nsegments, sizeof(*vs->segments), by_path);
	/* After the departures: a server that replaced another between two scans is its restart. */
	for (size_t i = 0; i < vs->nsegments; i++)
		if (vs->segments[i]->state == SEGMENT_LIVE && !vs->segments[i]->arrived) {
			vs->segments[i]->arrived = true;
			note_arrived(vs, vs->segments[i]);
		}
}

/* ---- One report --------------------------------------------------------------- */

static uint64_t delta(uint64_t now, uint64_t then)
{
	return now > then ? now - then : 0; /* a counter that goes back gives 0, never garbage */
}

/* Maximum in the interval: exact when it set a new record, else the midpoint of its highest bucket. */
static uint64_t interval_max(const uint64_t *histogram, const struct vtrace_stats *now, const struct vtrace_stats *then)
{
	for (unsigned b = VTRACE_HISTOGRAM_BUCKETS; b-- > 0;)
		if (histogram[b]) {
			uint64_t low = vtrace_histogram_lower(b), high = vtrace_histogram_upper(b);
			if (now->max_ns > then->max_ns && vtrace_histogram_bucket(now->max_ns) == b)
				return now->max_ns;
			return low + (high - low) / 2;
		}
	return 0;
}

struct op_report {
	uint64_t inflight, completions, errors, bytes, service_ns, busy_ns, hang_ns, oldest_age_ns;
	bool hang;
	uint64_t p50, p99, max;
};

static void compute(const struct vstat *vs, const struct vtrace_stats *now, const struct vtrace_stats *then,
		    uint64_t now_ns, struct op_report *r, uint64_t *histogram)
{
	*r = (struct op_report){0};
	r->inflight = delta(now->begins, now->completions);
	r->completions = delta(now->completions, then->completions);
	r->errors = delta(now->errors, then->errors);
	r->bytes = delta(now->bytes, then->bytes);
	r->service_ns = delta(now->service_ns, then->service_ns);
	r->busy_ns = delta(now->busy_ns, then->busy_ns);
	for (unsigned b = 0; b < VTRACE_HISTOGRAM_BUCKETS; b++)
		histogram[b] = delta(now->histogram[b], then->histogram[b]);
	r->max = interval_max(histogram, now, then);
	/* A value interpolated in a bucket may pass the exact maximum that shares it. */
	r->p50 = vtrace_histogram_quantile(histogram, 0.50);
	r->p99 = vtrace_histogram_quantile(histogram, 0.99);
	if (r->p50 > r->max)
		r->p50 = r->max;
	if (r->p99 > r->max)
		r->p99 = r->max;
	/* One request: its time is known exactly, and no percentile may read otherwise; nor may a
	 * maximum taken from a bucket's middle read below the exact mean. */
	if (r->completions == 1)
		r->p50 = r->p99 = r->max = r->service_ns;
	else if (r->completions && r->max < r->service_ns / r->completions)
		r->max = r->service_ns / r->completions;
	if (now->oldest_ns && r->inflight) {
		r->oldest_age_ns = delta(now_ns, now->oldest_ns);
		r->hang = r->oldest_age_ns > vs->hang_after_ns;
		r->hang_ns = r->oldest_age_ns;
	}
}

static void fill_row(struct out_row *row, const struct op_report *r, double seconds)
{
	double util = seconds > 0 ? 100.0 * (double)r->busy_ns / (seconds * 1e9) : 0;

	out_set_count(row, COL_INFLIGHT, r->inflight);
	out_set_count(row, COL_COMPLETIONS, r->completions);
	out_set_real(row, COL_OPS_PER_S, seconds > 0 ? (double)r->completions / seconds : 0);
	if (r->completions) {
		out_set_count(row, COL_SVCTM, r->service_ns / r->completions);
		out_set_count(row, COL_P50, r->p50);
		out_set_count(row, COL_P99, r->p99);
		out_set_count(row, COL_MAX, r->max);
	}
	/* Busy time is kept in ticks of 65 us: an interval's edges can round it past 100. */
	out_set_real(row, COL_UTIL, util > 100 ? 100 : util);
	out_set_count(row, COL_ERRORS, r->errors);
	out_set_real(row, COL_ERRORS_PER_S, seconds > 0 ? (double)r->errors / seconds : 0);
	out_set_count(row, COL_BYTES, r->bytes);
	out_set_real(row, COL_BYTES_PER_S, seconds > 0 ? (double)r->bytes / seconds : 0);
	out_set_text(row, COL_STATE, r->hang ? "HANG" : "");
	if (r->hang)
		out_set_count(row, COL_HANG, r->hang_ns);
}

static void fill_identity(struct out_row *row, const struct segment *segment, uint64_t time_ns)
{
	out_set_count(row, COL_TIME, time_ns);
	out_set_text(row, COL_SERVICE, segment->info->service);
	out_set_count(row, COL_PID, (uint64_t)segment->pid);
	out_set_count(row, COL_UID, segment->info->uid);
	out_set_text(row, COL_USER, segment_user_name(segment->info->uid));
}

/*
 * Counters that no server writes (more errors than completions ...): every figure of the op
 * unknown, and the reason said once (why NULL: the total of such ops).
 */
static void unknown_row(struct vstat *vs, struct out_row *row, struct segment *segment, const char *op, const char *why)
{
	for (unsigned c = COL_INFLIGHT; c < COL_COUNT; c++)
		out_set_unknown(row, c);
	out_set_text(row, COL_STATE, "?");
	if (why && !segment->told && !vs->quiet) {
		segment->told = true;
		warn_msg("%s (pid %d, user %s): %s: %s: shown as unknown",
			 segment->info->service, (int)segment->pid, segment_user_name(segment->info->uid), op,
			 why);
	}
}

/* The rows of one segment's report, into table (a new one, or the run's CSV table). */
static void segment_rows(struct vstat *vs, struct segment *segment, struct out_table *table, uint64_t time_ns)
{
	static const struct vtrace_stats zero;
	static uint64_t histogram[VTRACE_HISTOGRAM_BUCKETS];
	const unsigned ops = segment->info->op_count;
	uint64_t then_ns = segment->has_previous ? segment->previous_ns : segment->info->created_ns;
	double seconds = (double)delta(segment->current_ns, then_ns) / 1e9;
	struct op_report r;
	struct out_row *row;
	bool any_impossible = false;
	char label[96];

	for (unsigned op = 0; op < ops; op++) {
		const struct vtrace_stats *then = segment->has_previous ? &segment->previous[op] : &zero;
		const char *name = vtrace_reader_op_name(segment->reader, op);
		int32_t number = vtrace_reader_op_number(segment->reader, op);

		const char *impossible = segment_impossible(segment, op);

		compute(vs, &segment->current[op], then, segment_age_at(segment), &r, histogram);
		if (!vs->show_idle && !r.completions && !r.inflight && !impossible)
			continue;
		row = out_row_add(table);
		fill_identity(row, segment, time_ns);
		if (number >= 0)
			snprintf(label, sizeof(label), "%s(%d)", name, (int)number);
		else
			snprintf(label, sizeof(label), "%s", name);
		out_set_text(row, COL_OP, label);
		out_set_text(row, COL_NAME, name);
		if (number >= 0)
			out_set_count(row, COL_NUMBER, (uint64_t)number);
		if (impossible)
			unknown_row(vs, row, segment, label, impossible);
		else
			fill_row(row, &r, seconds);
		any_impossible |= impossible != NULL;
	}
	compute(vs, &segment->current[ops], segment->has_previous ? &segment->previous[ops] : &zero,
		segment_age_at(segment), &r, histogram);
	/* In CSV the TOTAL is a row like the others; elsewhere it is the table's TOTAL row. */
	row = table == vs->csv ? out_row_add(table) : out_row_total(table);
	fill_identity(row, segment, time_ns);
	out_set_text(row, COL_OP, "TOTAL");
	if (any_impossible || segment_impossible(segment, ops))
		unknown_row(vs, row, segment, "TOTAL", NULL);
	else
		fill_row(row, &r, seconds);
}

static const char *state_name(enum segment_state state)
{
	return state == SEGMENT_LIVE     ? "live"
	    : state == SEGMENT_STALE     ? "stale"
	    : state == SEGMENT_UNTRUSTED ? "untrusted"
					 : "unknown";
}

/* Samples every segment listed; those that fail are dropped after their message. */
static void sample_all(struct vstat *vs)
{
	size_t kept = 0;

	for (size_t i = 0; i < vs->nsegments; i++) {
		struct segment *segment = vs->segments[i];
		enum segment_state was = segment->state;

		segment_check_alive(segment, vs->procfs);
		if (was == SEGMENT_LIVE && segment->state == SEGMENT_STALE && vs->target_kind != TARGET_PATH)
			note_departed(vs, segment);
		/* (one released is not sampled: its numbers are not shown) */
		if (listed(vs, segment) && segment->reader &&
		    segment_sample(segment, &vs->round, report_problem, vs) != 0) {
			drop_segment(vs, segment);
			continue;
		}
		vs->segments[kept++] = segment;
	}
	vs->nsegments = kept;
	/* Those whose room another user's took meanwhile (sampled before it was): closed now, said. */
	kept = 0;
	for (size_t i = 0; i < vs->nsegments; i++) {
		struct segment *segment = vs->segments[i];

		if (segment->evicted &&
		    (!listed(vs, segment) || segment_sample(segment, &vs->round, report_problem, vs))) {
			drop_segment(vs, segment);
			continue;
		}
		vs->segments[kept++] = segment;
	}
	vs->nsegments = kept;
}

/* "service (pid 4242[, 1 in its pid namespace], user NAME[ (uid 1000)][, STALE ...])  path": whose it is, always. */
static void print_title(const struct segment *segment)
{
	const struct vtrace_info *info = segment->info;
	char ns[48] = "", uid[24] = "", number[16];
	const char *user = segment_user_name(info->uid);

	if (segment->pid != info->pid)
		snprintf(ns, sizeof(ns), ", %d in its pid namespace", info->pid);
	snprintf(number, sizeof(number), "%u", info->uid);
	if (strcmp(user, number)) /* a name: its number too */
		snprintf(uid, sizeof(uid), " (uid %u)", info->uid);
	printf("%s (pid %d%s, user %s%s%s%s)  %s\n", info->service, (int)segment->pid, ns, user, uid,
	       segment->state == SEGMENT_STALE ? ", STALE: the process is gone" :
	       segment->state == SEGMENT_UNKNOWN ? ", cannot tell if it runs" :
	       segment->state == SEGMENT_UNTRUSTED ? ", UNTRUSTED: " : "",
	       segment->state == SEGMENT_UNTRUSTED ? segment->why : "", printable_name(segment->path));
}

static void print_table_report(struct vstat *vs, uint64_t time_ns, bool first)
{
	bool any = false;

	for (size_t i = 0; i < vs->nsegments; i++) {
		struct segment *segment = vs->segments[i];
		struct out_table *table;

		if (!listed(vs, segment))
			continue;
		if (!first || any)
			putchar('\n');
		any = true;
		print_title(segment);
		if (!shown_in_full(vs, segment))
			continue;
		table = out_table_new(columns, COL_COUNT, &vs->output, "ops");
		segment_rows(vs, segment, table, time_ns);
		if (out_table_print(table, stdout))
			vs->failed = true;
		out_table_free(table);
	}
	fflush(stdout);
}

static void print_json_report(struct vstat *vs, uint64_t time_ns, uint64_t interval_ns, bool since_start)
{
	struct out_record *report = out_record_new();

	out_rec_ns(report, "time_ns", time_ns);
	out_rec_ns_if(report, "interval_ns", interval_ns, interval_ns != 0);
	out_rec_bool(report, "since_start", since_start);
	struct out_list *services = out_rec_list(report, "services");
	struct out_list *untrusted = out_rec_list(report, "untrusted");

	for (size_t i = 0; i < vs->nsegments; i++) {
		struct segment *segment = vs->segments[i];
		struct out_record *service;
		struct out_table *table;

		if (!listed(vs, segment)) { /* said apart, with the reason */
			struct out_record *other = out_list_object(untrusted);
			out_rec_text(other, "path", segment->path);
			out_rec_text(other, "state", state_name(segment->state));
			out_rec_count(other, "owner_uid", segment->info->uid);
			out_rec_text(other, "owner_user", segment_user_name(segment->info->uid));
			out_rec_text(other, "reason", segment->why);
			continue;
		}
		service = out_list_object(services);
		table = out_table_new(columns, COL_COUNT, &vs->output, "ops");
		out_rec_text(service, "service", segment->info->service);
		out_rec_int(service, "pid", (int)segment->pid);
		if (segment->pid != segment->info->pid) /* its pid in its own namespace */
			out_rec_int(service, "ns_pid", segment->info->pid);
		out_rec_count(service, "owner_uid", segment->info->uid);
		out_rec_text(service, "owner_user", segment_user_name(segment->info->uid));
		if (segment->restarted_from)
			out_rec_int(service, "restarted_from_pid", (int)segment->restarted_from);
		out_rec_text(service, "path", segment->path);
		out_rec_text(service, "state", state_name(segment->state));
		if (segment->state == SEGMENT_UNTRUSTED)
			out_rec_text(service, "reason", segment->why);
		out_rec_ns(service, "created_ns", segment->info->created_ns);
		/* A service found after the first report starts with its own since-creation report. */
		out_rec_bool(service, "since_start", !segment->has_previous);
		out_rec_ns(service, "interval_ns",
			   delta(segment->current_ns, segment->has_previous ? segment->previous_ns
									 : segment->info->created_ns));
		out_rec_ns(service, "heartbeat_age_ns", delta(segment->current_ns, segment->info->heartbeat_ns));
		if (shown_in_full(vs, segment))
			segment_rows(vs, segment, table, time_ns);
		out_rec_table(service, "ops", table, "total");
		out_table_free(table);
	}
	/* A failed write leaves stdout in error: the loop's ferror() ends the run. */
	out_record_write(report, stdout, OUT_RECORD_LINE);
	fflush(stdout);
	out_record_free(report);
}

static void print_report(struct vstat *vs, bool first)
{
	uint64_t time_ns = realtime_ns(), interval_ns = 0;

	for (size_t i = 0; i < vs->nsegments; i++)
		if (vs->segments[i]->has_previous)
			interval_ns = delta(vs->segments[i]->current_ns, vs->segments[i]->previous_ns);
	switch (vs->output.format) {
	case OUT_JSON:
		print_json_report(vs, time_ns, interval_ns, first);
		break;
	case OUT_CSV:
		for (size_t i = 0; i < vs->nsegments; i++)
			if (shown_in_full(vs, vs->segments[i]))
				segment_rows(vs, vs->segments[i], vs->csv, time_ns);
		out_table_flush(vs->csv);
		fflush(stdout);
		break;
	default:
		print_table_report(vs, time_ns, first);
		break;
	}
}

/* ---- The command -------------------------------------------------------------- */

static int clean(struct vstat *vs);

static double seconds_arg(const char *text, const char *what, bool zero_allowed)
{
	double value;

	if (parse_seconds(text, 86400 * 365, zero_allowed, &value) != 0)
		usage_error("%s: '%s' is not a number of seconds", what, text);
	return value;
}

static bool is_number(const char *text)
{
	char *end;

	return *text && (strtod(text, &end), !*end);
}

/* [TARGET] [interval [count]]: a number first is the interval, as in iostat (a pid goes with -p). */
static void parse_positionals(struct vstat *vs, int argc, char **argv, double *interval, uint64_t *count)
{
	int i = 0;

	if (argc > 0 && !is_number(argv[0])) {
		vs->target = argv[i++];
		vs->target_kind = strchr(vs->target, '/') ? TARGET_PATH : TARGET_SERVICE;
		if (vs->target_kind == TARGET_SERVICE && vs->target_pid)
			usage_error("a service and --pid: one or the other");
	}
	if (i < argc)
		*interval = seconds_arg(argv[i++], "interval", false);
	if (i < argc && (parse_u64(argv[i++], count) || !*count))
		usage_error("count: '%s' is not a positive whole number", argv[i - 1]);
	if (i < argc)
		usage_error("too many arguments");
}

static void vstat_free(struct vstat *vs)
{
	for (size_t i = 0; i < vs->nsegments; i++)
		segment_free(vs->segments[i]);
	free(vs->segments);
	key_map_free(&vs->paths);
	key_map_free(&vs->files);
	segment_dir_free(vs->dir);
	free(vs->departed);
	free(vs->told);
}

static void sleep_until(uint64_t deadline_ns)
{
	sleep_until_ns(deadline_ns, &stop_signal);
}

int cmd_vstat(int argc, char **argv)
{
	enum { OPT_HANG_AFTER = 0x2000, OPT_DIR, OPT_CLEAN, OPT_STALE };
	static const struct option long_options[] = {
		OUT_LONG_OPTIONS,
		COMMON_LONG_OPTIONS,
		{ "all", no_argument, NULL, 'a' },
		{ "hang-after", required_argument, NULL, OPT_HANG_AFTER },
		{ "pid", required_argument, NULL, 'p' },
		{ "dir", required_argument, NULL, OPT_DIR },
		{ "clean", no_argument, NULL, OPT_CLEAN },
		{ "stale", no_argument, NULL, OPT_STALE },
		{ 0 }
	};
	struct vstat vs = { .hang_after_ns = 1000000000ull, .procfs = "/proc" };
	double interval = 0;
	uint64_t count = 0, pid;
	bool do_clean = false;
	int opt;

	vs.directory = vtrace_directory();
	while ((opt = next_option(argc, argv, OUT_SHORT_OPTIONS "ap:hV", long_options, NULL)) != -1) {
		if (out_parse_option(&vs.output, opt, optarg))
			continue;
		switch (opt) {
		case 'a':
			vs.show_idle = true;
			break;
		case OPT_HANG_AFTER:
			vs.hang_after_ns = (uint64_t)(seconds_arg(optarg, "--hang-after", true) * 1e9);
			break;
		case 'p':
			if (parse_u64(optarg, &pid) || !pid || pid > 4194304)
				usage_error("--pid: '%s' is not a process id", optarg);
			vs.target_kind = TARGET_PID;
			vs.target_pid = (long)pid;
			break;
		case OPT_DIR:
			vs.directory = optarg;
			break;
		case OPT_CLEAN:
			do_clean = true;
			break;
		case OPT_STALE:
			vs.show_stale = true;
			break;
		default:
			command_option_rest(opt, usage);
		}
	}
	if (do_clean) {
		if (optind < argc)
			usage_error("--clean takes no arguments");
		return clean(&vs);
	}
	parse_positionals(&vs, argc - optind, argv + optind, &interval, &count);
	/* JSON and CSV have their own defaults, which -o +LIST adds to. */
	char columns_added[1024];
	if (vs.output.format != OUT_TABLE && (!vs.output.columns || vs.output.columns[0] == '+')) {
		const char *defaults = vs.output.format == OUT_JSON ? json_columns : csv_columns;
		if (vs.output.columns) {
			snprintf(columns_added, sizeof(columns_added), "%s,%s", defaults, vs.output.columns + 1);
			vs.output.columns = columns_added;
		} else {
			vs.output.columns = defaults;
		}
	}
	/* Validate -o before anything else happens. */
	vs.csv = out_table_new(columns, COL_COUNT, &vs.output, "ops");
	if (!vs.csv)
		return EXIT_USAGE;
	if (vs.output.format == OUT_CSV)
		out_table_stream(vs.csv, stdout);
	if (!count)
		count = interval > 0 ? UINT64_MAX : 1;

	segment_round_begin(&vs.round, vs.procfs);
	if (vs.target_kind == TARGET_PATH) {
		struct segment *segment = segment_open(vs.target, SEGMENT_FOLLOW, 0, &vs.round, report_problem, &vs);
		if (!segment) {
			segment_round_end(&vs.round);
			out_table_free(vs.csv);
			return EXIT_FAIL;
		}
		add_segment(&vs, segment);
	} else {
		size_t listed_count = 0;

		rescan(&vs);
		for (size_t i = 0; i < vs.nsegments; i++)
			listed_count += listed(&vs, vs.segments[i]);
		if (!listed_count && vs.target_kind != TARGET_ALL) {
			if (vs.target_kind == TARGET_PID)
				warn_msg("no vtrace segment of pid %ld in %s, its open files or its /dev/shm",
					 vs.target_pid, printable_name(vs.directory));
			else
				warn_msg("no vtrace segment of service '%s' in %s", printable_name(vs.target),
					 printable_name(vs.directory));
			segment_round_end(&vs.round);
			out_table_free(vs.csv);
			vstat_free(&vs);
			return EXIT_FAIL;
		}
	}

	stop_on_signals();
	uint64_t deadline = monotonic_ns();
	for (uint64_t report = 0; report < count && !stop_signal; report++) {
		if (report) {
			deadline += (uint64_t)(interval * 1e9);
			sleep_until(deadline);
			if (stop_signal)
				break;
			segment_round_begin(&vs.round, vs.procfs);
			rescan(&vs);
			if (vs.reported_gone) {
				segment_round_end(&vs.round);
				break;
			}
		}
		sample_all(&vs);
		segment_round_end(&vs.round);
		if (!vs.nsegments && vs.target_kind == TARGET_ALL && vs.output.format == OUT_TABLE && !report)
			printf("no vtrace segments in %s\n", printable_name(vs.directory));
		print_report(&vs, report == 0);
		if (ferror(stdout)) {
			if (output_failed() != EXIT_OK)
				vs.failed = true;
			break;
		}
	}
	if (vs.output.format == OUT_CSV && out_table_print(vs.csv, stdout))
		vs.failed = true;
	out_table_free(vs.csv);
	vstat_free(&vs);
	return vs.failed ? EXIT_FAIL : EXIT_OK;
}

/* --clean: segments whose process is gone are removed; live, unknown, untrusted and bad ones stay. */

/* Removes path when it is still the file that was looked at. */
/*
 * Removes the file at path when it is still the one looked at (dev, ino) and nobody holds
 * its lock: removed with the lock taken, as a writer replacing a stale segment does, so
 * that neither of the two removes what the other has just put in its place.
 */
static bool remove_file(struct vstat *vs, const char *path, dev_t dev, ino_t ino)
{
	struct flock lock = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
	int fd = open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	bool removed = false;

	if (fd < 0) {
		if (errno != ENOENT) {
			warn_errno(printable_name(path), errno);
			vs->failed = true;
		}
		return false;
	}
	if (fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino && fcntl(fd, F_OFD_SETLK, &lock) == 0 &&
	    lstat(path, &st) == 0 && st.st_dev == dev && st.st_ino == ino) { /* else replaced, or held: not stale */
		removed = unlink(path) == 0;
		if (!removed) {
			warn_errno(printable_name(path), errno);
			vs->failed = true;
		}
	}
	close(fd);
	return removed;
}

/*
 * A segment left half made (never ready) by a writer that is gone: old, and nobody holds its lock
 * (remove_file takes it).
 */
static void clean_half_made(struct vstat *vs, const char *path)
{
	struct stat st;
	uint64_t age;

	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	    (age = (uint64_t)(time(NULL) - st.st_mtime)) >= HALF_MADE_AGE &&
	    remove_file(vs, path, st.st_dev, st.st_ino))
		printf("removed %s (half made, %llu s ago, by a writer that is gone)\n", printable_name(path),
		       (unsigned long long)age);
}

static enum segment_found clean_one(const char *path, void *context)
{
	struct vstat *vs = context;
	struct segment *segment;

	vs->last_error = 0;
	vs->scanning = true;
	segment = segment_open(path, 0, 0, &vs->round, report_problem, vs);
	vs->scanning = false;
	if (!segment) {
		if (vs->last_error == -EAGAIN)
			clean_half_made(vs, path);
		return SEGMENT_NOT;
	}
	if (segment->state == SEGMENT_STALE && remove_file(vs, path, segment->dev, segment->ino))
		printf("removed %s (service %s, pid %d: the process is gone)\n", printable_name(path),
		       segment->info->service, segment->info->pid);
	segment_free(segment);
	return SEGMENT_NOT;
}

static int clean(struct vstat *vs)
{
	int rc;

	segment_round_begin(&vs->round, vs->procfs);
	vs->cleaning = true;
	rc = segment_scan(vs->directory, &vs->round, clean_one, vs);
	segment_round_end(&vs->round);
	if (rc) {
		warn_errno(printable_name(vs->directory), -rc);
		return EXIT_FAIL;
	}
	return vs->failed ? EXIT_FAIL : EXIT_OK;
}
