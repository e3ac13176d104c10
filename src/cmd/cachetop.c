/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cachetop.c: iolens cachetop: page-cache hits, misses and dirties per process, file or cgroup, as
 * bcc's cachetop (full screen on a tty).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cache_mode.h"
#include "cmd/command.h"
#include "cmd/recorded.h"
#include "cmd/top_screen.h"
#include "collect/cachestat.h"
#include "collect/inode_names.h"
#include "collect/memcg.h"
#include "collect/proc_io_rounds.h"
#include "collect/procfs.h"
#include "collect/sysroot.h"
#include "model/cache.h"
#include "common/signals.h"
#include "common/util.h"
#include "render/out.h"

enum group_by { BY_PROCESS, BY_FILE, BY_CGROUP };

enum sort_key {
	SORT_PID,
	SORT_UID,
	SORT_CMD,
	SORT_HITS,
	SORT_MISSES,
	SORT_DIRTIES,
	SORT_READ_HIT,
	SORT_WRITE_HIT,
	SORT_COUNT
};
static const char *const sort_names[SORT_COUNT] = { "pid",    "uid",     "cmd",      "hits",
						    "misses", "dirties", "read_hit", "write_hit" };
static const char *const sort_titles[SORT_COUNT] = { "PID",    "UID",     "CMD",       "HITS",
						     "MISSES", "DIRTIES", "READ_HIT%", "WRITE_HIT%" };

/* The columns: the table's for people, the JSON line's keys (and CSV's header, the same) in their order. */
enum column {
	C_TIME_NS, C_INTERVAL_NS, C_MODE, C_MECHANISM, C_BUFFERS, C_CACHED, C_DROPPED, /* the interval's own */
	C_PID, C_USER, C_UID, C_COMM, C_FILE, C_CGROUP,                    /* the row's name, by --files, --cgroup */
	/* its container: CONTAINER_COLUMNS of them */
	C_CONTAINER,
	C_HITS = C_CONTAINER + CONTAINER_COLUMNS, C_MISSES, C_DIRTIES, C_READ_HIT, C_WRITE_HIT, C_ACCESSES, C_READS,
	C_MAPS, C_WRITE_MISSES, C_EVICTIONS, C_REFAULTS, C_COUNT
};

static const struct out_column all_columns[C_COUNT] = {
	[C_TIME_NS] = { "time_ns", "TIME", NULL, OUT_CLOCK, true, "when the interval was printed (Unix time)",
			.where = OUT_GROUP },
	[C_INTERVAL_NS] = { "interval_ns", "INTERVAL", NULL, OUT_SEC, true, "the time the rows cover, measured",
			    .where = OUT_GROUP },
	[C_MODE] = { "mode", "MODE", NULL, OUT_TEXT, true, "ebpf, or procfs for estimates", .where = OUT_GROUP },
	[C_MECHANISM] = { "mechanism", "MECHANISM", NULL, OUT_TEXT, true, "ebpf's: tracepoints, fentry or kprobes",
			  .where = OUT_GROUP },
	[C_BUFFERS] = { "buffers_bytes", "BUFFERS", NULL, OUT_BYTES, true, "Buffers of /proc/meminfo",
			.where = OUT_GROUP },
	[C_CACHED] = { "cached_bytes", "CACHED", NULL, OUT_BYTES, true, "Cached of /proc/meminfo", .where = OUT_GROUP },
	[C_DROPPED] = { "dropped", "DROPPED", NULL, OUT_COUNT, true, "hand-overs a full ring buffer could not take",
			.where = OUT_GROUP },
	[C_PID] = { "pid", "PID", NULL, OUT_COUNT, false, "process id", .width = -8 },
	[C_USER] = { "user", "UID", NULL, OUT_TEXT, false, "user name", .width = -8, .where = OUT_TABLE_ONLY },
	[C_UID] = { "uid", "UID", NULL, OUT_COUNT, false, "user id", .where = OUT_DATA_ONLY },
	[C_COMM] = { "comm", "CMD", NULL, OUT_TEXT, false, "command name", .width = -16 },
	[C_FILE] = { "file", "FILE", NULL, OUT_TEXT, false, "path (or dev MAJ:MIN inode N)" },
	[C_CGROUP] = { "cgroup", "CGROUP", NULL, OUT_TEXT, false, "cgroup path" },
	CONTAINER_OUT_COLUMNS(C_CONTAINER),
	[C_HITS] = { "hits", "HITS", NULL, OUT_COUNT, true, "pages read or mapped that were cached", .width = 8 },
	[C_MISSES] = { "misses", "MISSES", NULL, OUT_COUNT, true, "pages added to the cache", .width = 8 },
	[C_DIRTIES] = { "dirties", "DIRTIES", NULL, OUT_COUNT, true, "pages dirtied", .width = 8 },
	[C_READ_HIT] = { "read_hit", "READ_HIT%", NULL, OUT_RATIO, true,
			 "hits / accesses, 0-1 (a percentage in tables)", .decimals = 1, .width = 10 },
	[C_WRITE_HIT] = { "write_hit", "WRITE_HIT%", NULL, OUT_RATIO, true, "(dirties - write misses) / dirties, 0-1",
			  .decimals = 1, .width = 10 },
	[C_ACCESSES] = { "accesses", "ACCESSES", NULL, OUT_COUNT, true, "pages read or mapped",
			 .where = OUT_DATA_ONLY },
	[C_READS] = { "reads", "READS", NULL, OUT_COUNT, true, "pages returned to reads", .where = OUT_DATA_ONLY },
	[C_MAPS] = { "maps", "MAPS", NULL, OUT_COUNT, true, "pages mapped by page faults", .where = OUT_DATA_ONLY },
	[C_WRITE_MISSES] = { "write_misses", "WRITE_MISSES", NULL, OUT_COUNT, true, "misses a write added",
			     .where = OUT_DATA_ONLY },
	[C_EVICTIONS] = { "evictions", "EVICTIONS", NULL, OUT_COUNT, true, "pages removed from the cache",
			  .where = OUT_DATA_ONLY },
	[C_REFAULTS] = { "refaults", "REFAULTS", NULL, OUT_COUNT, true, "pages added back after reclaim evicted them",
			 .width = 8 },
};

struct top_row {
	uint32_t pid, uid;
	bool uid_unknown; /* /proc mode: the status file could not be read */
	char *name; /* command, file path or cgroup path: the row's own, freed with it */
	const struct container *container; /* a process's or cgroup's, or NULL (until container_cache_trim) */
	struct cache_counters c;
	uint64_t hits;
	double read_hit, write_hit; /* percent; -1 when there was nothing to hit */
};

struct top {
	struct cache_options o;
	enum group_by by;
	int sort; /* enum sort_key: an int, for top_screen_wait's keys to move */
	bool reverse;
	pid_t pid;
	bool all; /* --all: rows of nothing too, every process (per process) */
	unsigned long long max_rows;
	struct top_row *rows;
	size_t nrows, rows_capacity;
	bool screen; /* ncurses */
	const char *note; /* the full screen's second line, or NULL */
	uint64_t dropped, dropped_now; /* events a full table could not take: since the start, in this interval */
	struct meminfo mem;
	struct inode_names names;
	bool naming_failed; /* said once */
	uint64_t taken_ns;  /* when this interval's counts were taken: its end */
	struct cache_counters totals; /* the totals then, for the events dropped */
	bool totals_known;
	bool estimates; /* from /proc/PID/io: no accesses, refaults or evictions known */
	const char *mechanism; /* with eBPF: tracepoints, fentry or kprobes */
	uint64_t interval_ns; /* the time the rows cover */
	struct out_column columns[C_COUNT]; /* all_columns, with the name columns of --files or --cgroup */
	struct out_table *out; /* plain rows, CSV or JSON lines on stdout; NULL on the full screen */
	/* IOLENS_REPLAY=DIR: the samples are the recorded roots DIR/0, DIR/1 ..., not the live /proc. */
	const char *replay;
	unsigned replay_index;     /* the next sample's number */
	char replay_root[4096];    /* the sample read last */
	uint64_t replay_mono_ns, replay_real_ns; /* its time file: CLOCK_MONOTONIC and Unix time */
	bool replay_damaged;       /* a recorded file could not be understood: said, and the exit status is 1 */
	/* --at TIME: the window iolens record --doctor kept (accesses, misses, refaults per process, file, cgroup) */
	const char *at, *record_dir;
	bool recorded;
};

/* --help: a screen; --help-all: the whole list below. */
static const char brief_help[] =
	"Usage:\n"
	" iolens cachetop [options] [interval [count]]\n"
	"\n"
	"Page-cache hits, misses and dirtied pages per process (or per file, or per\n"
	"cgroup) each interval (seconds, default 1), as bcc's cachetop shows them:\n"
	"counted by eBPF on kernel tracepoints (root); without eBPF, estimates from\n"
	"/proc/PID/io. On a terminal a full screen (keys: < > sort column, r reverse,\n"
	"q quit); piped, plain rows.\n"
	"\n"
	"Options:\n"
	"  -s, --sort COLUMN      pid, uid, cmd, hits (default), misses, dirties,\n"
	"                         read_hit, write_hit\n"
	"  -r, --reverse          ascending order\n"
	"  -p, --pid PID          only this process\n"
	"  -n, --rows N           at most N rows each interval\n"
	"  -a, --all              idle processes too (default: those that used the cache)\n"
	"      --files            per file\n"
	"      --cgroup           per cgroup\n"
	"      --json, --csv      JSON lines or CSV\n"
	"      --at TIME          what iolens record --doctor kept at TIME (03:00, -2h)\n"
	"  -h, --help             this help; --help-all: every option and field\n"
	"\n"
	"Examples:\n"
	"  iolens cachetop                     full screen, every second\n"
	"  iolens cachetop --files 5           which files miss most, every 5 seconds\n";

static _Noreturn void usage(bool all)
{
	if (!all)
		help_brief("cachetop", brief_help);
	printf("Usage:\n"
	       " %s [options] [interval [count]]\n"
	       "\n"
	       "Page-cache hits, misses and dirtied pages per process (or per file, or per cgroup),\n"
	       "each interval (seconds, default 1), as bcc's cachetop shows them, from stable kernel\n"
	       "tracepoints (eBPF, root). On a terminal a full screen refreshed each interval; keys:\n"
	       "< and > change the sort column, r reverses the order, q quits. Piped, plain rows.\n"
	       "\n"
	       "Counts are in pages. Without eBPF, estimates from /proc/PID/io: read_bytes against rchar.\n"
	       "\n",
	       program_name);
	out_help_fields(stdout, all_columns, C_COUNT);
	printf("\n"
	       "Options:\n"
	       "  -s, --sort COLUMN      pid, uid, cmd, hits (default), misses, dirties, read_hit, write_hit\n"
	       "  -r, --reverse          ascending order (default: descending)\n"
	       "  -p, --pid PID          only this process\n"
	       "  -n, --rows N           at most N rows each interval\n"
	       "  -a, --all              processes idle in the interval too (every process)\n"
	       "      --files            per file (device and inode, with a path where one is found)\n"
	       "      --cgroup           per cgroup\n"
	       "      --json             JSON lines, one object per interval\n"
	       "      --csv              comma-separated values: JSON's keys, units and values\n"
	       "      --no-header        leave out the header lines\n"
	       "      --at TIME          the window iolens record --doctor kept at TIME (03:00, yesterday\n"
	       "                         03:00, -2h, @EPOCH), once: each process's (file's, cgroup's)\n"
	       "                         accesses, misses, hits and refaults (not dirties, the rest)\n"
	       "      --record-dir DIR   the store --at reads (default: iolens record's)\n"
	       "  -v, --verbose          what each warning means, and its fix\n"
	       "  -h, --help             a screen of help; --help-all: all of this\n"
	       "  -V, --version          show the version\n"
	       "\n"
	       "Examples:\n"
	       "  %s                     full screen, every second\n"
	       "  %s --files 5           which files miss most, every 5 seconds\n"
	       "  %s -p 4242 1 10        one process, ten times\n"
	       "  %s --json 1 3 | jq .   three JSON lines\n",
	       program_name, program_name, program_name, program_name);
	exit(EXIT_OK);
}

static double percent_or_unknown(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : -1;
}

/* The derived figures: what share of reads and of writes found their page cached. */
static void derive(struct top_row *row)
{
	uint64_t accesses = row->c.reads + row->c.maps;

	row->hits = cache_hits(&row->c);
	row->read_hit = percent_or_unknown(row->hits < accesses ? row->hits : accesses, accesses);
	row->write_hit = percent_or_unknown(
	    row->c.dirties > row->c.write_misses ? row->c.dirties - row->c.write_misses : 0, row->c.dirties);
}

/* ---- Names ------------------------------------------------------------------------------- */

static void user_name(uint32_t uid, char *buf, size_t len)
{
	struct passwd *pw = getpwuid(uid);

	if (pw)
		snprintf(buf, len, "%s", pw->pw_name);
	else
		snprintf(buf, len, "%u", uid);
}

/* ---- Gathering -------------------------------------------------------------------------- */

/* A row with its name (copied): 100,000 files make 100,000 rows, each only as long as its name. */
static void add_row(struct top *t, const struct top_row *row, const char *name)
{
	if (t->nrows == t->rows_capacity) {
		t->rows_capacity = t->rows_capacity ? 2 * t->rows_capacity : 256;
		t->rows = xrealloc(t->rows, t->rows_capacity * sizeof(*t->rows));
	}
	t->rows[t->nrows] = *row;
	t->rows[t->nrows++].name = xstrdup(name);
}

static void clear_rows(struct top *t)
{
	for (size_t i = 0; i < t->nrows; i++)
		free(t->rows[i].name);
	t->nrows = 0;
}

/* The end of the interval the rows just taken cover, and the totals then. */
static void took(struct top *t)
{
	t->taken_ns = monotonic_ns();
	t->totals_known = cachestat_totals(&t->totals) == 0;
}

static void gather_bpf(struct top *t)
{
	clear_rows(t);
	container_cache_trim();
	if (t->by == BY_FILE) {
		struct cachestat_file *files;
		struct file_id *ids;
		size_t n;

		cachestat_take(NULL, NULL, &files, &n);
		took(t);
		/* Names are looked for in the background: the rows have those known now, the others later. */
		ids = xcalloc(n ? n : 1, sizeof(*ids));
		for (size_t i = 0; i < n; i++)
			ids[i] = (struct file_id){ files[i].dev, files[i].ino };
		if (!inode_names_ask(&t->names, ids, n) && !t->naming_failed) {
			warn_msg("files: no process to look for their paths (%s): shown by device and inode",
				 strerror(errno));
			t->naming_failed = true;
		}
		free(ids);
		for (size_t i = 0; i < n; i++) {
			struct top_row row = { .c = files[i].counters };
			char unknown[64];

			derive(&row);
			add_row(t, &row,
				inode_names_get(&t->names, files[i].dev, files[i].ino, unknown, sizeof(unknown)));
		}
		free(files);
		return;
	}
	struct cachestat_proc *procs;
	size_t n;

	cachestat_take(&procs, &n, NULL, NULL);
	took(t);
	for (size_t i = 0; i < n; i++) {
		struct top_row row = { .pid = procs[i].pid, .uid = procs[i].uid, .c = procs[i].counters };
		char name[4096];
		size_t j;

		if (t->by == BY_CGROUP) {
			/* One row per cgroup: its processes added up, named by its path. */
			for (j = 0; j < t->nrows && t->rows[j].pid != (uint32_t)procs[i].cgroup; j++)
				;
			if (j < t->nrows) {
				struct cache_counters sum = t->rows[j].c;

				sum.reads += row.c.reads;
				sum.maps += row.c.maps;
				sum.misses += row.c.misses;
				sum.hits += row.c.hits;
				sum.write_misses += row.c.write_misses;
				sum.dirties += row.c.dirties;
				sum.evictions += row.c.evictions;
				sum.refaults += row.c.refaults;
				t->rows[j].c = sum;
				derive(&t->rows[j]);
				continue;
			}
			row.pid = (uint32_t)procs[i].cgroup;
			if (!memcg_path_of_id(memcg_v2_mount(), procs[i].cgroup, name, sizeof(name)))
				snprintf(name, sizeof(name), "cgroup %llu", (unsigned long long)procs[i].cgroup);
			row.container = container_of_cgroup(procs[i].cgroup);
		} else {
			snprintf(name, sizeof(name), "%s", procs[i].comm);
			row.container = container_of_process((pid_t)procs[i].pid, procs[i].cgroup, procs[i].memcg);
		}
		derive(&row);
		add_row(t, &row, name);
	}
	free(procs);
}

/*
 * Without eBPF: /proc/PID/io, read_bytes (from storage) against rchar (all reads): estimates,
 * round after round, a reaped child's counts taken off its parent (proc_io_rounds.h).
 */
static struct proc_io_rounds io_rounds;

/*
 * The user of a process: the real uid of its status file's Uid: line, as eBPF counts it
 * (the task's real_cred), live and in a recording alike (the owner of a recorded directory
 * is whoever checked it out). -errno when the file cannot be read or has no such line.
 */
static int proc_uid_read(uint32_t pid, uint32_t *uid)
{
	char path[64], text[4096];
	struct proc_ids ids;
	ssize_t length;
	int rc;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	if ((length = sysroot_read_small(path, text, sizeof(text))) < 0)
		return (int)length;
	if ((rc = proc_ids_parse(text, (size_t)length, (int)pid, &ids)) != 0)
		return rc;
	*uid = ids.uid[0];
	return 0;
}

/*
 * In a replay, a recorded file that is there but not understood is said (the process is left out),
 * and fails the run.
 */
static void replay_damaged(struct top *t, uint32_t pid, const char *files, int rc)
{
	if (!t->replay || rc != -EINVAL)
		return;
	warn_msg("%s/proc/%u/%s: not as /proc writes it: process %u left out",
		 printable_name(t->replay_root), pid, files, pid);
	t->replay_damaged = true;
}

/*
 * Every process is sampled, --pid or not: a child reaped meanwhile is taken off its parent only
 * when it was seen. Pids in readdir's order, ascending in /proc: a parent before its children,
 * so that a reap after the parent was read shows in it only next round (proc_io_rounds.c).
 */
static void gather_proc(struct top *t)
{
	uint64_t ticks = t->replay ? 0 : proc_io_rounds_ticks_now();
	struct proc_io_sample *now = NULL;
	struct proc_io_delta *deltas;
	struct proc_pids pids;
	size_t nnow = 0, capacity = 0;
	bool *known;
	pid_t next;

	clear_rows(t);
	container_cache_trim();
	proc_pids_open(&pids, 0);
	while ((next = proc_pids_next(&pids))) {
		int rc;

		if (nnow == capacity) {
			capacity = capacity ? 2 * capacity : 256;
			now = xrealloc(now, capacity * sizeof(*now));
		}
		if ((rc = proc_io_sample_read(next, &now[nnow])) != 0) {
			if (!t->pid || next == t->pid)
				replay_damaged(t, (uint32_t)next, "{stat,io}", rc);
			continue;
		}
		nnow++;
	}
	proc_pids_close(&pids);
	if (nnow > 1) /* a recording's directory is in no order */
		qsort(now, nnow, sizeof(*now), proc_io_sample_by_pid);
	deltas = xcalloc(nnow ? nnow : 1, sizeof(*deltas));
	known = xcalloc(nnow ? nnow : 1, sizeof(*known));
	proc_io_rounds_take(&io_rounds, now, nnow, ticks, proc_ignores_sigchld, NULL, deltas, known);
	for (size_t i = 0; i < nnow; i++) {
		uint32_t pid = (uint32_t)now[i].pid;
		struct top_row row = { .pid = pid };
		int rc;

		if (t->pid && pid != (uint32_t)t->pid)
			continue;
		/* A pid reused or a counter gone back gives no row, nor does a process that did nothing (but
		 * with --all): fetched from storage counts (a read's readahead, before the call returns). */
		if (!known[i] || (!t->all && !deltas[i].rchar && !deltas[i].read_bytes && !deltas[i].write_bytes))
			continue;
		row.c.reads = deltas[i].read_pages;
		row.c.misses = deltas[i].missed_pages;
		row.c.hits = deltas[i].hit_pages; /* an estimate */
		row.c.dirties = deltas[i].written_pages;
		if ((rc = proc_uid_read(pid, &row.uid)) != 0) {
			row.uid_unknown = true;
			replay_damaged(t, pid, "status", rc);
		}
		row.container = container_of_pid(now[i].pid);
		derive(&row);
		row.write_hit = -1; /* write_bytes says what reached storage, not what was dirtied in cache */
		add_row(t, &row, now[i].comm);
	}
	free(known);
	free(deltas);
	free(now);
}

/* Whether a row counted no page at all in the interval: what is left out without --all. */
static bool row_idle(const struct top_row *row)
{
	const struct cache_counters *c = &row->c;

	return !row->hits && !c->reads && !c->maps && !c->misses && !c->dirties && !c->write_misses && !c->evictions &&
	       !c->refaults;
}

static int row_by_pid(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/*
 * The rows shown: without --all, those that counted pages in the interval (as bcc's cachetop,
 * whose table holds only processes with events); with --all per process, every process running
 * too, with counts of 0 (eBPF has no row for one that had no event).
 */
static void settle_rows(struct top *t)
{
	size_t kept = 0, had;
	struct proc_pids pids;
	pid_t pid;

	if (!t->all) {
		for (size_t i = 0; i < t->nrows; i++) {
			if (row_idle(&t->rows[i]))
				free(t->rows[i].name);
			else
				t->rows[kept++] = t->rows[i];
		}
		t->nrows = kept;
		return;
	}
	if (t->by != BY_PROCESS || t->estimates || t->replay)
		return; /* /proc's rows are every process's already */
	had = t->nrows;
	if (had > 1)
		qsort(t->rows, had, sizeof(*t->rows), row_by_pid);
	proc_pids_open(&pids, 0);
	while ((pid = proc_pids_next(&pids))) {
		struct top_row row = { .pid = (uint32_t)pid, .read_hit = -1, .write_hit = -1 };
		char comm[64];

		if ((t->pid && pid != t->pid) || bsearch(&row, t->rows, had, sizeof(*t->rows), row_by_pid))
			continue;
		if (!proc_comm_read(pid, comm, sizeof(comm)))
			continue; /* gone meanwhile */
		row.uid_unknown = proc_uid_read((uint32_t)pid, &row.uid) != 0;
		row.container = container_of_pid(pid);
		add_row(t, &row, comm);
	}
	proc_pids_close(&pids);
}

/* ---- Sorting and printing ---------------------------------------------------------------- */

static const struct top *sorting;

static int compare_rows(const void *a_, const void *b_)
{
	const struct top_row *a = a_, *b = b_;
	int order = 0;

	switch (sorting->sort) {
	case SORT_PID: order = (a->pid > b->pid) - (a->pid < b->pid); break;
	case SORT_UID: order = (a->uid > b->uid) - (a->uid < b->uid); break;
	case SORT_CMD: order = strcmp(a->name, b->name); break;
	case SORT_HITS: order = (a->hits > b->hits) - (a->hits < b->hits); break;
	case SORT_MISSES: order = (a->c.misses > b->c.misses) - (a->c.misses < b->c.misses); break;
	case SORT_DIRTIES: order = (a->c.dirties > b->c.dirties) - (a->c.dirties < b->c.dirties); break;
	case SORT_READ_HIT: order = (a->read_hit > b->read_hit) - (a->read_hit < b->read_hit); break;
	case SORT_WRITE_HIT: order = (a->write_hit > b->write_hit) - (a->write_hit < b->write_hit); break;
	default: break;
	}
	if (!order) /* a stable order between equals: by pid, then name */
		order = a->pid != b->pid ? (a->pid > b->pid) - (a->pid < b->pid) : strcmp(a->name, b->name);
	return sorting->reverse ? order : -order;
}

static void sort_rows(struct top *t)
{
	sorting = t;
	if (t->nrows > 1)
		qsort(t->rows, t->nrows, sizeof(*t->rows), compare_rows);
}

/* bcc cachetop's header line: "HH:MM:SS Buffers MB: 13 / Cached MB: 760 / Sort: HITS / Order: ascending". */
static void header_line(const struct top *t, char *buf, size_t len)
{
	char clock[16];
	time_t now = t->replay || t->recorded ? (time_t)(t->replay_real_ns / 1000000000u) : time(NULL);

	strftime(clock, sizeof(clock), "%H:%M:%S", localtime(&now));
	snprintf(buf, len, "%s Buffers MB: %llu / Cached MB: %llu / Sort: %s / Order: %s", clock,
		 (unsigned long long)(t->mem.buffers >> 20), (unsigned long long)(t->mem.cached >> 20),
		 sort_titles[t->sort], t->reverse ? "ascending" : "descending");
}

static size_t rows_shown(const struct top *t)
{
	return t->max_rows && t->max_rows < t->nrows ? (size_t)t->max_rows : t->nrows;
}

/* A row for the output layer; the user's name only for people (getpwuid costs). */
static void put_row(const struct top *t, struct out_table *table, const struct top_row *row, bool people)
{
	struct out_row *out = out_row_add(table);
	char user[32];

	if (t->by == BY_PROCESS) {
		out_set_count(out, C_PID, row->pid);
		if (people && !row->uid_unknown) {
			user_name(row->uid, user, sizeof(user));
			out_set_text(out, C_USER, user);
		}
		out_set_count_if(out, C_UID, row->uid, !row->uid_unknown);
	}
	out_set_text(out, t->by == BY_FILE ? C_FILE : t->by == BY_CGROUP ? C_CGROUP : C_COMM, row->name);
	if (t->by != BY_FILE)
		container_columns_set(out, C_CONTAINER, row->container);
	out_set_count(out, C_HITS, row->hits); /* "mode" says when it is an estimate */
	out_set_count(out, C_MISSES, row->c.misses);
	out_set_count_if(out, C_DIRTIES, row->c.dirties, !t->recorded);
	if (row->read_hit >= 0)
		out_set_real(out, C_READ_HIT, row->read_hit / 100);
	if (row->write_hit >= 0)
		out_set_real(out, C_WRITE_HIT, row->write_hit / 100);
	out_set_count(out, C_ACCESSES, row->c.reads + row->c.maps);
	out_set_count(out, C_READS, row->c.reads);
	out_set_count_if(out, C_MAPS, row->c.maps, !t->estimates && !t->recorded);
	out_set_count_if(out, C_WRITE_MISSES, row->c.write_misses, !t->estimates && !t->recorded);
	out_set_count_if(out, C_EVICTIONS, row->c.evictions, !t->estimates && !t->recorded);
	out_set_count_if(out, C_REFAULTS, row->c.refaults, !t->estimates);
}

/*
 * An interval as a group of the output layer: bcc cachetop's header line and the columns, then
 * at most max rows (plain rows); its fields and rows (CSV); one JSON line. Each row is made,
 * written and freed in turn: 100,000 files are 100,000 rows, never held twice.
 */
static void write_interval(const struct top *t, struct out_table *table, size_t max, bool people)
{
	char title[256];
	struct out_row *group;
	size_t n = rows_shown(t);

	header_line(t, title, sizeof(title));
	group = out_table_group(table, title);
	out_set_count(group, C_TIME_NS, t->replay || t->recorded ? t->replay_real_ns : realtime_ns());
	out_set_count(group, C_INTERVAL_NS, t->interval_ns);
	out_set_text(group, C_MODE, t->estimates ? "procfs" : "ebpf");
	if (t->mechanism)
		out_set_text(group, C_MECHANISM, t->mechanism);
	out_set_count_if(group, C_BUFFERS, t->mem.buffers, !t->recorded);
	out_set_count(group, C_CACHED, t->mem.cached);
	out_set_count_if(group, C_DROPPED, t->dropped_now, !t->estimates && !t->recorded);
	for (size_t i = 0; i < n && i < max; i++)
		put_row(t, table, &t->rows[i], people);
	out_table_group_end(table);
}

/* The full screen's rows: those plain output prints, for people. */
static void write_screen(const void *context, struct out_table *table, size_t max)
{
	write_interval(context, table, max, true);
}

/*
 * The full screen in a terminal narrower than the rows (103 columns): first the room the values
 * rarely use, then CONTAINER left out (said on the second line), then CMD and UID cut (with
 * '+'): at 80 columns every figure is there. What is still too wide ends in '>' at the edge.
 * Piped rows are never narrowed.
 */
static const struct top_narrow narrow_steps[] = {
	{ C_PID, -7 }, { C_HITS, 7 }, { C_MISSES, 7 }, { C_DIRTIES, 7 }, { C_CONTAINER, 0 }, { C_COMM, -12 },
	{ C_USER, -7 }, { C_COMM, -9 }, { C_COMM, -7 },
};

static void draw_screen(const struct top *t, const char *note)
{
	top_screen_draw(write_screen, t, t->columns, C_COUNT, note, narrow_steps,
			sizeof(narrow_steps) / sizeof(narrow_steps[0]));
}

/* The keys changed the order: the rows sorted again, and drawn. */
static void redraw(void *context)
{
	struct top *t = context;

	sort_rows(t);
	draw_screen(t, t->note);
}

/* Waits for the next interval on the screen, acting on keys meanwhile; false to quit. */
static bool screen_wait(struct top *t, uint64_t deadline, const char *note)
{
	t->note = note;
	return top_screen_wait(deadline, &t->sort, SORT_COUNT, &t->reverse, redraw, t);
}

static enum sort_key parse_sort(const char *text)
{
	for (int i = 0; i < SORT_COUNT; i++)
		if (!strcasecmp(text, sort_names[i]) || !strcasecmp(text, sort_titles[i]))
			return (enum sort_key)i;
	if (!strcasecmp(text, "comm") || !strcasecmp(text, "file") || !strcasecmp(text, "cgroup"))
		return SORT_CMD;
	usage_error("--sort: '%s' is not pid, uid, cmd, hits, misses, dirties, read_hit or write_hit", text);
}

/*
 * IOLENS_REPLAY=DIR: the next recorded sample, DIR/N, made the root /proc is read under, and
 * its times (DIR/N/time: "CLOCK_MONOTONIC_ns Unix_ns"). 0; 1 when the recording has no more
 * samples; -1 when this one cannot be used (said).
 */
static int replay_next(struct top *t)
{
	char text[128], *mono, *real, *save = NULL;
	uint64_t mono_ns, real_ns;
	ssize_t length;
	int rc;

	if ((size_t)snprintf(t->replay_root, sizeof(t->replay_root), "%s/%u", t->replay, t->replay_index) >=
	    sizeof(t->replay_root)) {
		warn_msg("IOLENS_REPLAY: '%s' is too long a path", printable_name(t->replay));
		return -1;
	}
	rc = sysroot_set(t->replay_root);
	if (rc == -ENOENT && t->replay_index > 0)
		return 1; /* the recording ends */
	if (rc != 0) {
		warn_msg("IOLENS_REPLAY: %s: %s%s", printable_name(t->replay_root), strerror(-rc),
			 t->replay_index ? "" : " (the first sample, the baseline, is DIR/0)");
		return -1;
	}
	length = sysroot_read_small("/time", text, sizeof(text));
	if (length < 0) {
		warn_msg("%s/time: %s: each recorded sample needs one, \"CLOCK_MONOTONIC_ns Unix_ns\"",
			 printable_name(t->replay_root), strerror((int)-length));
		return -1;
	}
	mono = strtok_r(text, " \t\n", &save);
	real = strtok_r(NULL, " \t\n", &save);
	if (!mono || !real || strtok_r(NULL, " \t\n", &save) || parse_u64(mono, &mono_ns) != 0 ||
	    parse_u64(real, &real_ns) != 0) {
		warn_msg("%s/time: not \"CLOCK_MONOTONIC_ns Unix_ns\" (two whole numbers of nanoseconds)",
			 printable_name(t->replay_root));
		return -1;
	}
	if (t->replay_index > 0 && mono_ns <= t->replay_mono_ns) {
		warn_msg("%s/time: CLOCK_MONOTONIC %llu ns is not after the previous sample's, %llu ns",
			 printable_name(t->replay_root),
			 (unsigned long long)mono_ns, (unsigned long long)t->replay_mono_ns);
		return -1;
	}
	t->replay_mono_ns = mono_ns;
	t->replay_real_ns = real_ns;
	t->replay_index++;
	return 0;
}

/* cachetop's options into t; the interval and count after them. */
static void parse_options(int argc, char **argv, struct top *t)
{
	enum { OPT_FILES = 0x2000, OPT_CGROUP, OPT_AT, OPT_RECORD_DIR };
	static const struct option long_options[] = {
		COMMON_LONG_OPTIONS,
		{ "verbose", no_argument, NULL, 'v' },
		{ "sort", required_argument, NULL, 's' },
		{ "reverse", no_argument, NULL, 'r' },
		{ "pid", required_argument, NULL, 'p' },
		{ "rows", required_argument, NULL, 'n' },
		{ "all", no_argument, NULL, 'a' },
		{ "files", no_argument, NULL, OPT_FILES },
		{ "cgroup", no_argument, NULL, OPT_CGROUP },
		{ "json", no_argument, NULL, OUT_OPT_JSON },
		{ "csv", no_argument, NULL, OUT_OPT_CSV },
		{ "no-header", no_argument, NULL, OUT_OPT_NO_HEADER },
		{ "at", required_argument, NULL, OPT_AT },
		{ "record-dir", required_argument, NULL, OPT_RECORD_DIR },
		{ 0 }
	};
	int opt;

	while ((opt = next_option(argc, argv, "s:rp:n:ahvV", long_options, NULL)) != -1) {
		switch (opt) {
		case 's':
			t->sort = parse_sort(optarg);
			break;
		case 'a':
			t->all = true;
			break;
		case 'r':
			t->reverse = true;
			break;
		case 'p':
			t->pid = top_option_pid(optarg);
			break;
		case 'n':
			t->max_rows = top_option_rows(optarg);
			break;
		case OPT_FILES:
			t->by = BY_FILE;
			break;
		case OPT_CGROUP:
			t->by = BY_CGROUP;
			break;
		case OPT_AT:
			t->at = optarg;
			break;
		case OPT_RECORD_DIR:
			t->record_dir = optarg;
			break;
		case 'v':
			warn_verbose = true;
			break;
		default:
			if (!out_parse_option(&t->o.out, opt, optarg))
				command_option_rest(opt, usage);
		}
	}
	if (t->at && optind < argc)
		usage_error("--at shows the window recorded at TIME: no interval or count");
	cache_parse_interval_count(argc, argv, optind, &t->o, true);
}

/* A row of a recorded window: what doctor's snapshot keeps of a process or file. */
static void add_recorded(struct top *t, uint32_t pid, uint64_t accesses, uint64_t misses, uint64_t refaults,
			 const char *name)
{
	struct top_row row = { .pid = pid, .uid_unknown = true };

	row.c.reads = accesses;
	row.c.misses = misses;
	row.c.hits = accesses > misses ? accesses - misses : 0;
	row.c.refaults = refaults;
	derive(&row);
	add_row(t, &row, name);
}

/*
 * --at --cgroup: the recorded processes added up by cgroup, each named by the path it had in the
 * window (else "cgroup ID"). -1 when the window kept no process's cgroup (recorded before).
 */
static int by_cgroup_id(const void *a, const void *b)
{
	uint64_t x = ((const struct snap_cache_proc *)a)->cgroup, y = ((const struct snap_cache_proc *)b)->cgroup;

	return (x > y) - (x < y);
}

static int by_snap_cgroup_id(const void *a, const void *b)
{
	uint64_t x = (*(const struct snap_cgroup *const *)a)->id, y = (*(const struct snap_cgroup *const *)b)->id;

	return (x > y) - (x < y);
}

/* The recorded processes summed by cgroup (sorted by id, then adjacent ones added), named by path. */
static int add_recorded_cgroups(struct top *t, const struct doctor_snapshot *snap)
{
	struct snap_cache_proc *sums = xcalloc(snap->ncache_procs + 1, sizeof(*sums));
	const struct snap_cgroup **paths = xcalloc(snap->ncgroups + 1, sizeof(*paths));
	size_t n = 0, known = 0;

	for (size_t i = 0; i < snap->ncache_procs; i++) {
		const struct snap_cache_proc *p = &snap->cache_procs[i];

		known += p->cgroup_known;
		if (p->cgroup_known && !(t->pid && p->pid != t->pid))
			sums[n++] = *p;
	}
	qsort(sums, n, sizeof(*sums), by_cgroup_id);
	for (size_t c = 0; c < snap->ncgroups; c++)
		paths[c] = &snap->cgroups[c];
	qsort(paths, snap->ncgroups, sizeof(*paths), by_snap_cgroup_id);
	for (size_t k = 0; k < n;) {
		struct snap_cgroup key = { .id = sums[k].cgroup };
		const struct snap_cgroup *want = &key, **found;
		uint64_t accesses = 0, misses = 0, refaults = 0;
		char name[512];

		for (; k < n && sums[k].cgroup == key.id; k++) {
			accesses += sums[k].accesses;
			misses += sums[k].misses;
			refaults += sums[k].refaults;
		}
		found = bsearch(&want, paths, snap->ncgroups, sizeof(*paths), by_snap_cgroup_id);
		if (found)
			snprintf(name, sizeof(name), "%s", (*found)->path);
		else
			snprintf(name, sizeof(name), "cgroup %llu", (unsigned long long)key.id);
		if (t->all || accesses || misses)
			add_recorded(t, 0, accesses, misses, refaults, name);
	}
	free(paths);
	free(sums);
	return snap->ncache_procs && !known ? -1 : 0;
}

/*
 * --at: the processes (or files, or cgroups) of the window iolens record --doctor kept at TIME,
 * printed once as an interval's: their page-cache accesses, misses and refaults (eBPF's; the rest
 * is not kept).
 */
static int show_recorded(struct top *t)
{
	static char mechanism[sizeof(((struct doctor_snapshot *)0)->cache_mechanism)];
	struct doctor_snapshot snap;
	uint64_t start, end;
	int rc = recorded_snapshot_at(t->record_dir, t->at, &snap, &start, &end);

	if (rc)
		return rc;
	t->recorded = true;
	snprintf(mechanism, sizeof(mechanism), "%s", snap.cache_mechanism);
	t->mechanism = snap.cache_ebpf && mechanism[0] ? mechanism : NULL;
	t->replay_real_ns = end;
	t->interval_ns = end - start;
	t->mem.cached = snap.cached;
	for (size_t i = 0; t->by == BY_PROCESS && i < snap.ncache_procs; i++) {
		const struct snap_cache_proc *p = &snap.cache_procs[i];

		if ((!t->pid || p->pid == t->pid) && (t->all || p->accesses || p->misses))
			add_recorded(t, (uint32_t)p->pid, p->accesses, p->misses, p->refaults, p->comm);
	}
	for (size_t i = 0; t->by == BY_FILE && i < snap.ncache_files; i++) {
		const struct snap_cache_file *f = &snap.cache_files[i];
		char name[64];

		/* (named in the window where it mostly missed at a rate that matters, as live doctor named it) */
		snprintf(name, sizeof(name), "dev %u:%u inode %llu", f->major, f->minor, (unsigned long long)f->ino);
		if (t->all || f->accesses || f->misses)
			add_recorded(t, 0, f->accesses, f->misses, f->refaults, f->name[0] ? f->name : name);
	}
	if (t->by == BY_CGROUP && add_recorded_cgroups(t, &snap) != 0) {
		warn_msg("--cgroup: the window recorded at %s kept no process's cgroup (recorded before)", t->at);
		doctor_snapshot_free(&snap);
		clear_rows(t);
		free(t->rows);
		return EXIT_FAIL;
	}
	doctor_snapshot_free(&snap);
	sort_rows(t);
	memcpy(t->columns, all_columns, sizeof(t->columns));
	t->columns[C_PID].is_default = t->columns[C_COMM].is_default = t->by == BY_PROCESS;
	t->columns[C_FILE].is_default = t->by == BY_FILE;
	t->columns[C_CGROUP].is_default = t->by == BY_CGROUP;
	t->out = out_table_new(t->columns, C_COUNT, &t->o.out,
			       t->by == BY_FILE ? "files" : t->by == BY_CGROUP ? "cgroups" : "processes");
	if (!t->out)
		return EXIT_USAGE;
	out_table_lines(t->out, stdout);
	write_interval(t, t->out, SIZE_MAX, true);
	out_table_free(t->out);
	clear_rows(t);
	free(t->rows);
	return fflush(stdout) || ferror(stdout) ? output_failed() : EXIT_OK;
}

int cmd_cachetop(int argc, char **argv)
{
	struct top t = { .o = { .interval = 1 }, .sort = SORT_HITS };
	struct cachestat_options bpf_options = { .per_process = true };
	struct cache_mode mode = {0};
	uint64_t deadline, previous_ns;
	unsigned long long printed = 0;
	char note[256] = "";
	int rc = EXIT_OK;

	parse_options(argc, argv, &t);
	if (t.at)
		return show_recorded(&t);
	t.replay = getenv("IOLENS_REPLAY");
	if (t.replay && !*t.replay)
		t.replay = NULL;
	if (t.pid && !t.replay && kill(t.pid, 0) != 0 && errno == ESRCH) {
		warn_msg("--pid %d: no such process", (int)t.pid);
		return EXIT_FAIL;
	}
	stop_on_signals();
	bpf_options.per_file = t.by == BY_FILE;
	bpf_options.per_process = t.by != BY_FILE;
	bpf_options.only_pid = t.pid;
	static const char detail[] = "misses are what a process read from disks, hits the rest of what it read "
				     "(pipes and sockets included), dirties what reached storage";
	if (t.replay)
		cache_mode_fallback(&mode, "a recording has no kernel to trace", "/proc/PID/io", detail);
	else
		cache_mode_start(&bpf_options, &mode, "/proc/PID/io", detail);
	if (!mode.bpf && t.by != BY_PROCESS) {
		warn_msg("%s needs eBPF: /proc tells only per process", t.by == BY_FILE ? "--files" : "--cgroup");
		return EXIT_FAIL;
	}
	t.estimates = !mode.bpf;
	t.mechanism = mode.mechanism;
	if (t.replay && replay_next(&t) != 0)
		return EXIT_FAIL;
	if (!mode.bpf) {
		gather_proc(&t); /* the first sample: rates from the next */
		snprintf(note, sizeof(note), "estimates from /proc (no eBPF: %s)", mode.why);
	}
	memcpy(t.columns, all_columns, sizeof(t.columns));
	t.columns[C_PID].is_default = t.columns[C_USER].is_default = t.columns[C_UID].is_default =
		t.columns[C_COMM].is_default = t.by == BY_PROCESS;
	t.columns[C_FILE].is_default = t.by == BY_FILE;
	t.columns[C_CGROUP].is_default = t.by == BY_CGROUP;
	container_columns_show(t.columns, C_CONTAINER, t.by != BY_FILE);
	/* A replay prints its intervals one after the other, never on a full screen it would only flash by. */
	t.screen = t.o.out.format == OUT_TABLE && !t.replay && isatty(STDOUT_FILENO) && isatty(STDIN_FILENO) &&
		   getenv("TERM");
	if (t.screen)
		t.screen = top_screen_open();
	if (!t.screen) {
		t.out = out_table_new(t.columns, C_COUNT, &t.o.out,
				      t.by == BY_FILE ? "files" : t.by == BY_CGROUP ? "cgroups" : "processes");
		out_table_lines(t.out, stdout);
	}
	previous_ns = deadline = t.replay ? t.replay_mono_ns : monotonic_ns();
	while (!stop_signal && (!t.o.count || printed < t.o.count)) {
		uint64_t now;

		deadline += (uint64_t)(t.o.interval * 1e9);
		if (t.replay) {
			int next = replay_next(&t); /* no waiting: the recorded times say how long each interval was */

			if (next != 0) {
				rc = next > 0 ? EXIT_OK : EXIT_FAIL;
				break;
			}
		} else if (t.screen) {
			if (!screen_wait(&t, deadline, note[0] ? note : NULL))
				break;
		} else {
			sleep_until_ns(deadline, &stop_signal);
			if (stop_signal)
				break;
		}
		if (mode.bpf) {
			gather_bpf(&t);
			const struct cache_counters totals = t.totals;

			/* Events a full table could not take are in the totals only: say so once, and in JSON. */
			if (t.totals_known && totals.dropped > t.dropped) {
				if (!t.dropped && !t.screen)
					warn_msg("the table of %s is full: some events only in the totals",
						 t.by == BY_FILE ? "files (65536)" : "processes (16384)");
				if (t.screen)
					snprintf(note, sizeof(note),
						 "the table is full: %llu events counted in the totals only",
						 (unsigned long long)totals.dropped);
				t.dropped_now = totals.dropped - t.dropped;
				t.dropped = totals.dropped;
			} else {
				t.dropped_now = 0;
			}
		} else {
			gather_proc(&t);
			t.taken_ns = t.replay ? t.replay_mono_ns : monotonic_ns();
		}
		if (meminfo_read(&t.mem) != 0)
			memset(&t.mem, 0, sizeof(t.mem));
		now = t.taken_ns; /* the rows' period ends where they were taken, however long naming took */
		t.interval_ns = now - previous_ns;
		settle_rows(&t);
		sort_rows(&t);
		if (t.screen)
			draw_screen(&t, note[0] ? note : NULL);
		else
			write_interval(&t, t.out, SIZE_MAX, t.o.out.format == OUT_TABLE);
		if (!t.screen && (fflush(stdout) != 0 || ferror(stdout))) {
			rc = output_failed();
			break;
		}
		previous_ns = now;
		printed++;
		if (deadline + 1000000 < now)
			deadline = now;
	}
	if (t.screen)
		top_screen_close();
	if (t.replay_damaged && rc == EXIT_OK)
		rc = EXIT_FAIL;
	out_table_free(t.out);
	cachestat_stop();
	inode_names_free(&t.names);
	container_cache_free();
	clear_rows(&t);
	free(t.rows);
	proc_io_rounds_free(&io_rounds);
	return rc;
}
