/* segments.c: finds libvtrace segments, proves whose each is, opens them through libvtrace's reader, keeps two samples of each. */
#include "collect/segments.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../lib/vtrace/proc.h" /* libvtrace's reading of /proc/PID/stat, the one the writer records */
#include "collect/fdinfo.h"
#include "collect/procfs.h"
#include "collect/sysroot.h"
#include "common/util.h"

/*
 * A process's open files are looked at up to this many: a process with a million of them
 * costs no more than one with a few thousand. A writer opens its segment when it starts.
 */
#define FDS_PER_PROCESS 4096
/* Looking for the holders of a segment among every process of the machine: at most this long a round. */
#define HOLDER_SCAN_NS 500000000ull

const char *vtrace_directory(void)
{
	const char *dir = getenv("VTRACE_DIR");

	return dir && *dir ? dir : "/dev/shm";
}

static void problem(segment_problem_fn report, void *context, const char *path, int error, const char *why)
{
	struct segment_problem p = { path, error, why };

	if (report)
		report(&p, context);
}

/* ---- Who holds what ---------------------------------------------------------------------- */

/* A process with a vtrace file open. */
struct segment_holder {
	pid_t pid;       /* in the reader's pid namespace */
	dev_t dev;
	ino_t ino;
	bool writes;     /* open O_RDWR, as a writer keeps it */
};

/* procfs/PID/status's ids: its pid in its own namespace, and its uids. */
/* A status file is longer than a page with many supplementary groups (NSpid comes after Groups). */
#define STATUS_MAX (1u << 20)

static int process_ids(const char *procfs, pid_t pid, struct proc_ids *ids)
{
	char path[512], *text = xrealloc(NULL, STATUS_MAX); /* only the pages read are touched */
	ssize_t size;
	int rc;

	snprintf(path, sizeof(path), "%s/%d/status", procfs, (int)pid);
	size = read_small_at(AT_FDCWD, path, text, STATUS_MAX);
	rc = size < 0 ? (int)size : size ? proc_ids_parse(text, (size_t)size, (int)pid, ids) : -EIO;
	free(text);
	return rc;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/*
 * Calls each(fd, link target) for the open files of pid (at most FDS_PER_PROCESS) whose link
 * names a vtrace file, until it returns true. 0, or -errno when they cannot be read.
 */
static int each_vtrace_fd(const char *procfs, pid_t pid, bool (*each)(int fd, void *context), void *context)
{
	char path[512], target[1024];
	struct dirent *de;
	int seen = 0;
	bool done = false;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/%d/fd", procfs, (int)pid);
	if (!(dir = opendir(path)))
		return -errno;
	while (!done && seen++ < FDS_PER_PROCESS && (de = readdir(dir))) {
		ssize_t len;

		if (!all_digits(de->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%d/fd/%s", procfs, (int)pid, de->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		if (strstr(target, "/vtrace."))
			done = each(atoi(de->d_name), context);
	}
	closedir(dir);
	return 0;
}

struct fd_match {
	const char *procfs;
	pid_t pid;
	dev_t dev;
	ino_t ino;
	bool found, writes;
};

static bool fd_matches(int fd, void *context)
{
	struct fd_match *m = context;
	struct fdinfo info;
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%d/fd/%d", m->procfs, (int)m->pid, fd);
	if (stat(path, &st) != 0 || st.st_dev != m->dev || st.st_ino != m->ino)
		return false;
	m->found = true;
	m->writes |= fdinfo_read(m->pid, fd, &info) == 0 && (info.flags & O_ACCMODE) == O_RDWR;
	return m->writes;
}

/* Whether pid has the file open (found), and for writing; -errno when its files cannot be read. */
static int process_holds(const char *procfs, pid_t pid, dev_t dev, ino_t ino, bool *found, bool *writes)
{
	struct fd_match m = { procfs, pid, dev, ino, false, false };
	int rc = each_vtrace_fd(procfs, pid, fd_matches, &m);

	*found = m.found;
	*writes = m.writes;
	return rc;
}

struct holder_scan {
	struct segment_round *round;
	pid_t pid;
};

static bool note_holder(int fd, void *context)
{
	struct holder_scan *scan = context;
	struct segment_round *round = scan->round;
	struct fdinfo info;
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%d/fd/%d", round->procfs, (int)scan->pid, fd);
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	round->holders = xrealloc(round->holders, (round->nholders + 1) * sizeof(*round->holders));
	round->holders[round->nholders++] = (struct segment_holder){
		.pid = scan->pid,
		.dev = st.st_dev,
		.ino = st.st_ino,
		.writes = fdinfo_read(scan->pid, fd, &info) == 0 && (info.flags & O_ACCMODE) == O_RDWR,
	};
	return false;
}

/* Every process's vtrace files, once a round, when a segment's writer is not where its pid says. */
static void scan_holders(struct segment_round *round)
{
	uint64_t started = monotonic_ns(), deadline = started + HOLDER_SCAN_NS;
	struct proc_pids pids;
	pid_t pid;

	if (round->scanned)
		return;
	round->scanned = true;
	if (proc_pids_open_dir(&pids, round->procfs, 0) != 0)
		return;
	while ((pid = proc_pids_next(&pids))) {
		struct holder_scan scan = { round, pid };

		if (monotonic_ns() >= deadline) {
			round->scan_cut = true;
			break;
		}
		each_vtrace_fd(round->procfs, scan.pid, note_holder, &scan);
	}
	proc_pids_close(&pids);
	round->scan_ns += monotonic_ns() - started;
}

/* ---- Whose a segment is ------------------------------------------------------------------ */

/* vtrace.SERVICE.PID, or vtrace.SERVICE.PID.XXXXXXXX (a name the writer took when its own was taken). */
static bool name_agrees(const char *name, const struct vtrace_info *info)
{
	char expected[128];
	size_t len = (size_t)snprintf(expected, sizeof(expected), "vtrace.%s.%d", info->service, info->pid);

	if (strncmp(name, expected, len) != 0)
		return false;
	if (!name[len])
		return true;
	if (name[len] != '.' || strlen(name + len + 1) != 8)
		return false;
	for (const char *p = name + len + 1; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return false;
	return true;
}

/* The name the file had: a /proc/PID/fd/N link's target (" (deleted)" taken off), else the path's last part. */
static void file_name(const char *path, const char *procfs, char *name, size_t size)
{
	char target[1024];
	size_t plen = strlen(procfs);
	ssize_t len = -1;
	const char *base;

	if (!strncmp(path, procfs, plen) && path[plen] == '/' && strstr(path + plen, "/fd/"))
		len = readlink(path, target, sizeof(target) - 1);
	if (len > 0) {
		target[len] = '\0';
		if (len > 10 && !strcmp(target + len - 10, " (deleted)"))
			target[len - 10] = '\0';
		path = target;
	}
	base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	snprintf(name, size, "%s", base);
}

/* The pid of a procfs/PID/fd/N path, or 0. */
static pid_t path_holder(const char *path, const char *procfs)
{
	size_t plen = strlen(procfs);
	char *end;
	long pid;

	if (strncmp(path, procfs, plen) != 0 || path[plen] != '/')
		return 0;
	pid = strtol(path + plen + 1, &end, 10);
	return pid > 0 && !strncmp(end, "/fd/", 4) ? (pid_t)pid : 0;
}

static void untrusted(struct segment *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void untrusted(struct segment *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->why, sizeof(s->why), fmt, ap);
	va_end(ap);
	s->state = SEGMENT_UNTRUSTED;
}

/*
 * Whether process pid, which has the segment open (for writing: writes), is its writer: it
 * knows itself by the pid the header names, started when the header says, and runs as the
 * user who owns the file. 1 yes, 0 it is gone, -1 it is not the writer (s->why says why).
 */
static int is_writer(struct segment *s, const char *procfs, pid_t pid, bool writes)
{
	const struct vtrace_info *info = s->info;
	struct proc_ids ids;
	uint64_t start_time;
	char state = 0;

	if (process_ids(procfs, pid, &ids) != 0 || vtrace_proc_stat(procfs, pid, &start_time, &state) != 0)
		return 0; /* gone meanwhile */
	if (!writes) {
		snprintf(s->why, sizeof(s->why), "pid %d has it open, but not for writing as its writer does", (int)pid);
		return -1;
	}
	if (ids.ns_pid != info->pid) {
		snprintf(s->why, sizeof(s->why), "held open for writing by pid %d (uid %u), not by the pid %d it names",
			 (int)pid, (unsigned)ids.uid[1], info->pid);
		return -1;
	}
	if (ids.uid[1] != info->uid && ids.uid[3] != info->uid) {
		snprintf(s->why, sizeof(s->why), "owned by uid %u, but its writer, pid %d, runs as uid %u", info->uid,
			 (int)pid, (unsigned)ids.uid[1]);
		return -1;
	}
	if (start_time != info->start_time) {
		snprintf(s->why, sizeof(s->why), "its writer, pid %d, did not start when its header says", (int)pid);
		return -1;
	}
	s->pid = pid;
	return 1;
}

/*
 * Process pid as the writer, when its open files cannot be read (a reader that is not root
 * looking at another user's server): the process the header names, with its start time, and
 * running as the file's owner (no one else can make a file that user owns). 1 yes, else 0.
 */
static int is_writer_unseen(struct segment *s, const char *procfs, pid_t pid)
{
	const struct vtrace_info *info = s->info;
	struct proc_ids ids;
	uint64_t start_time;
	char state = 0;

	if (process_ids(procfs, pid, &ids) != 0 || vtrace_proc_stat(procfs, pid, &start_time, &state) != 0 ||
	    ids.ns_pid != info->pid || start_time != info->start_time || state == 'Z' || state == 'X' ||
	    (ids.uid[1] != info->uid && ids.uid[3] != info->uid))
		return 0;
	s->pid = pid;
	return 1;
}

/* Whether pid is the writer: looked at in its open files, or else as is_writer_unseen. */
static int try_process(struct segment *s, const char *procfs, pid_t pid)
{
	bool holds = false, writes = false;
	int rc = process_holds(procfs, pid, s->dev, s->ino, &holds, &writes);

	if (rc == -EACCES || rc == -EPERM)
		return is_writer_unseen(s, procfs, pid);
	return rc == 0 && holds ? is_writer(s, procfs, pid, writes) : 0;
}

/* Finds out whose the segment is: sets state (and why, pid). */
static void establish(struct segment *s, bool named, pid_t hint, struct segment_round *round)
{
	const struct vtrace_info *info = s->info;
	const char *procfs = round->procfs;
	char name[1024];
	int verdict = 0, alive;

	s->pid = info->pid;
	file_name(s->path, procfs, name, sizeof(name));
	if (named && !name_agrees(name, info))
		return untrusted(s, "its name does not agree with its header (service %s, pid %d)", info->service, info->pid);
	/*
	 * A writer holds the lock as long as it runs: with nobody holding it, the server is gone.
	 * Unless the process it names runs, as it started: then it is not that server's (a file
	 * made to show a live server as dead, with numbers of someone else's choosing).
	 */
	if ((info->flags & VTRACE_INFO_LOCKED) && vtrace_reader_alive(s->reader, procfs) == 0) {
		uint64_t start_time;
		char state = 0;

		if (vtrace_proc_stat(procfs, info->pid, &start_time, &state) == 0 && start_time == info->start_time &&
		    state != 'Z' && state != 'X')
			return untrusted(s, "pid %d runs, started when the header says, but does not hold it as its writer would",
					 info->pid);
		s->state = SEGMENT_STALE;
		return;
	}
	if (hint)
		verdict = try_process(s, procfs, hint);
	if (verdict != 1 && info->pid != hint) { /* the pid it names, in this reader's namespace */
		int v = try_process(s, procfs, info->pid);
		if (v)
			verdict = v;
	}
	if (verdict != 1) { /* a writer in another pid namespace: among every process */
		scan_holders(round);
		for (size_t i = 0; i < round->nholders && verdict != 1; i++) {
			const struct segment_holder *h = &round->holders[i];
			int v;
			/* Readers (this one among them) hold it too: only a writer can be its writer. */
			if (h->dev != s->dev || h->ino != s->ino || !h->writes || h->pid == hint || h->pid == info->pid)
				continue;
			if ((v = is_writer(s, procfs, h->pid, h->writes)) != 0)
				verdict = v;
		}
	}
	if (verdict == 1) {
		s->state = SEGMENT_LIVE;
		return;
	}
	if (verdict < 0) {
		s->state = SEGMENT_UNTRUSTED;
		return;
	}
	/* Nobody this reader can see holds it. */
	if (info->flags & VTRACE_INFO_LOCKED) {
		snprintf(s->why, sizeof(s->why), "%s", round->scan_cut
			 ? "its writer holds it, but not every process could be looked at in time (looked for again next time)"
			 : "its writer holds it, but is not among the processes this reader can see");
		s->state = SEGMENT_UNKNOWN;
		return;
	}
	alive = vtrace_reader_alive(s->reader, procfs); /* a writer of a libvtrace before the lock */
	if (alive == 0)
		s->state = SEGMENT_STALE;
	else if (alive == 1)
		untrusted(s, "pid %d runs, but does not have it open", info->pid);
	else
		untrusted(s, "cannot tell whether pid %d has it open", info->pid);
}

/* ---- One segment ------------------------------------------------------------------------- */

void segment_round_begin(struct segment_round *round, const char *procfs)
{
	*round = (struct segment_round){ .procfs = procfs ? procfs : "/proc" };
}

void segment_round_end(struct segment_round *round)
{
	free(round->holders);
	free(round->users);
	*round = (struct segment_round){0};
}

/* The read time a user's segments have taken this round. */
static uint64_t *user_time(struct segment_round *round, uid_t uid)
{
	for (size_t i = 0; i < round->nusers; i++)
		if (round->users[i].uid == uid)
			return &round->users[i].spent_ns;
	round->users = xrealloc(round->users, (round->nusers + 1) * sizeof(*round->users));
	round->users[round->nusers].uid = uid;
	round->users[round->nusers].spent_ns = 0;
	return &round->users[round->nusers++].spent_ns;
}

/* What is left of the owner's budget (root's is not counted): 0 when spent. */
static uint64_t user_left(struct segment_round *round, uid_t uid)
{
	uint64_t spent;

	if (uid == 0)
		return UINT64_MAX;
	spent = *user_time(round, uid);
	return spent < SEGMENT_USER_BUDGET_NS ? SEGMENT_USER_BUDGET_NS - spent : 0;
}

static void user_spent(struct segment_round *round, uid_t uid, uint64_t since)
{
	if (uid != 0)
		*user_time(round, uid) += monotonic_ns() - since;
}

/* The operations of each user's segments held open (see SEGMENT_USER_OPS); a reader is one thread. */
static struct { uid_t uid; unsigned ops; } *user_ops;
static size_t nuser_ops;

static unsigned *ops_of(uid_t uid)
{
	for (size_t i = 0; i < nuser_ops; i++)
		if (user_ops[i].uid == uid)
			return &user_ops[i].ops;
	user_ops = xrealloc(user_ops, (nuser_ops + 1) * sizeof(*user_ops));
	user_ops[nuser_ops].uid = uid;
	user_ops[nuser_ops].ops = 0;
	return &user_ops[nuser_ops++].ops;
}

/* The time since started, but the holders' scan (the machine's), is the user's. */
static void user_spent_since(struct segment_round *round, uid_t uid, uint64_t started, uint64_t scan_before)
{
	user_spent(round, uid, started + (round->scan_ns - scan_before));
}

struct segment *segment_open(const char *path, unsigned flags, pid_t holder, struct segment_round *round,
			     segment_problem_fn report, void *context)
{
	uint64_t scan_before = round->scan_ns;
	struct segment *segment;
	struct vtrace_reader *reader;
	const char *why = NULL;
	uint64_t started = monotonic_ns();
	struct stat st = { .st_uid = 0 };
	size_t count;
	int rc;

	/*
	 * An empty file found by a scan is a segment being made (a writer creates it, then sizes
	 * it), or a name taken by someone else: nothing to read or say. A user whose files took all
	 * of their time this round: the rest wait for the next.
	 */
	bool scanned = lstat(path, &st) == 0 && !(flags & SEGMENT_FOLLOW);

	if (scanned && S_ISREG(st.st_mode) && st.st_size == 0)
		return NULL;
	if (scanned && !user_left(round, st.st_uid)) {
		problem(report, context, path, -ETIME, "not read: the segments of its user took all their time this round");
		return NULL;
	}
	rc = vtrace_reader_open(path, flags & SEGMENT_FOLLOW ? 0 : VTRACE_READ_NOFOLLOW, &reader, &why);
	if (rc) {
		user_spent(round, st.st_uid, started);
		problem(report, context, path, rc, why);
		return NULL;
	}
	count = vtrace_reader_info(reader)->op_count + 1;
	uid_t owner = vtrace_reader_info(reader)->uid;
	if (owner != 0 && *ops_of(owner) + count > SEGMENT_USER_OPS) {
		char why_ops[128];

		snprintf(why_ops, sizeof(why_ops), "not read: its user's segments already have %u operations open (at most %u)",
			 *ops_of(owner), SEGMENT_USER_OPS);
		user_spent(round, owner, started);
		vtrace_reader_close(reader);
		problem(report, context, path, -EMFILE, why_ops);
		return NULL;
	}
	segment = xcalloc(1, sizeof(*segment));
	segment->path = xstrdup(path);
	segment->follow = flags & SEGMENT_FOLLOW;
	segment->reader = reader;
	segment->info = vtrace_reader_info(reader);
	/* The file we hold, not what the path names now (it may have been swapped since). */
	segment->dev = (dev_t)segment->info->dev;
	segment->ino = (ino_t)segment->info->ino;
	if (segment->info->uid != 0)
		*ops_of(segment->info->uid) += (unsigned)count;
	segment->previous = xcalloc(count, sizeof(*segment->previous));
	segment->current = xcalloc(count, sizeof(*segment->current));
	establish(segment, !(flags & SEGMENT_FOLLOW) || path_holder(path, round->procfs),
		  holder ? holder : path_holder(path, round->procfs), round);
	/* Dead before we came: when it died is not known, its last sign of life is (the same each run). */
	if (segment->state == SEGMENT_STALE)
		segment->stale_since_ns = segment->info->heartbeat_ns ? segment->info->heartbeat_ns : monotonic_ns();
	user_spent_since(round, segment->info->uid, started, scan_before);
	return segment;
}

void segment_rejudge(struct segment *segment, struct segment_round *round)
{
	uint64_t started = monotonic_ns(), scan_before = round->scan_ns;
	pid_t holder = path_holder(segment->path, round->procfs);

	if (segment->state != SEGMENT_UNKNOWN || !user_left(round, segment->info->uid))
		return;
	establish(segment, !segment->follow || holder, holder, round);
	if (segment->state == SEGMENT_STALE)
		segment->stale_since_ns = monotonic_ns();
	user_spent_since(round, segment->info->uid, started, scan_before);
}

void segment_check_alive(struct segment *segment, const char *procfs)
{
	int alive;

	if (segment->state != SEGMENT_LIVE && segment->state != SEGMENT_UNKNOWN)
		return;
	if (segment->info->flags & VTRACE_INFO_LOCKED) {
		alive = vtrace_reader_alive(segment->reader, procfs);
	} else { /* a libvtrace before the lock: its writer is the process we found */
		struct proc_ids ids;
		alive = segment->pid == segment->info->pid ? vtrace_reader_alive(segment->reader, procfs)
							   : process_ids(procfs, segment->pid, &ids) == 0;
	}
	if (alive == 0) {
		segment->state = SEGMENT_STALE;
		segment->stale_since_ns = monotonic_ns();
	}
}

int segment_sample(struct segment *segment, struct segment_round *round, segment_problem_fn report, void *context)
{
	struct vtrace_stats *swap = segment->previous;
	uint64_t now, left = user_left(round, segment->info->uid), started = monotonic_ns();
	const char *why = NULL;
	int rc;

	if (!left) {
		problem(report, context, segment->path, -ETIME, "not read: the segments of its user took all their time this round");
		return -ETIME;
	}
	segment->previous = segment->current;
	segment->previous_ns = segment->current_ns;
	segment->has_previous = segment->current_ns != 0;
	segment->current = swap;
	vtrace_reader_set_budget(segment->reader, left < UINT64_MAX ? left : 0);
	rc = vtrace_reader_sample(segment->reader, segment->current, &now, &why);
	user_spent(round, segment->info->uid, started);
	if (rc) {
		problem(report, context, segment->path, rc, why);
		return rc;
	}
	segment->current_ns = now;
	return 0;
}

bool segment_removed(const struct segment *segment)
{
	struct stat st;

	/*
	 * The service unlinks its segment when it closes it; our open file would read on, frozen.
	 * (A link count of 0 alone means nothing: /proc/PID/fd/N may name a deleted segment.)
	 */
	return (segment->follow ? stat(segment->path, &st) : lstat(segment->path, &st)) != 0 ||
	       st.st_dev != segment->dev || st.st_ino != segment->ino;
}

/* A thread holds no more than this many requests of one op in flight: more is not a server's doing. */
#define MAX_IN_FLIGHT_PER_THREAD 65536ull

const char *segment_impossible(const struct segment *segment, unsigned op)
{
	static char why[160];
	const struct vtrace_stats *s = &segment->current[op];
	uint64_t threads = (uint64_t)segment->info->shard_count + 1;

	if (s->errors > s->completions) {
		snprintf(why, sizeof(why), "%llu errors, more than its %llu completions", (unsigned long long)s->errors,
			 (unsigned long long)s->completions);
		return why;
	}
	if (s->begins > s->completions && s->begins - s->completions > threads * MAX_IN_FLIGHT_PER_THREAD) {
		snprintf(why, sizeof(why), "%llu requests in flight, more than its %llu threads can hold",
			 (unsigned long long)(s->begins - s->completions), (unsigned long long)threads);
		return why;
	}
	return NULL;
}

uint64_t segment_age_at(const struct segment *segment)
{
	if (segment->state == SEGMENT_STALE && segment->stale_since_ns && segment->stale_since_ns < segment->current_ns)
		return segment->stale_since_ns;
	return segment->current_ns;
}

void segment_free(struct segment *segment)
{
	if (!segment)
		return;
	if (segment->info->uid != 0)
		*ops_of(segment->info->uid) -= segment->info->op_count + 1;
	vtrace_reader_close(segment->reader);
	free(segment->previous);
	free(segment->current);
	free(segment->path);
	free(segment);
}

/* ---- Finding segments ---------------------------------------------------------------------- */

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int scan_dir(DIR *dir, const char *directory, void (*found)(const char *path, void *context), void *context)
{
	char **names = NULL, *path;
	size_t count = 0, capacity = 0;
	struct dirent *de;

	while ((de = readdir(dir))) {
		if (strncmp(de->d_name, "vtrace.", 7) != 0)
			continue;
		if (count == capacity) {
			capacity = capacity ? capacity * 2 : 16;
			names = xrealloc(names, capacity * sizeof(*names));
		}
		names[count++] = xstrdup(de->d_name);
	}
	closedir(dir);
	if (count)
		qsort(names, count, sizeof(*names), compare_names);
	for (size_t i = 0; i < count; i++) {
		if (asprintf(&path, "%s/%s", directory, names[i]) < 0)
			abort();
		found(path, context);
		free(path);
		free(names[i]);
	}
	free(names);
	return 0;
}

int segment_scan(const char *directory, void (*found)(const char *path, void *context), void *context)
{
	DIR *dir = opendir(directory);

	return dir ? scan_dir(dir, directory, found, context) : -errno;
}

struct process_scan {
	const char *procfs;
	pid_t pid;
	void (*found)(const char *path, pid_t holder, void *context);
	void *context;
};

static bool found_fd(int fd, void *context)
{
	struct process_scan *scan = context;
	char path[512];

	snprintf(path, sizeof(path), "%s/%d/fd/%d", scan->procfs, (int)scan->pid, fd);
	scan->found(path, scan->pid, scan->context);
	return false;
}

static void found_in_root(const char *path, void *context)
{
	struct process_scan *scan = context;

	scan->found(path, 0, scan->context);
}

void segment_scan_process(const char *procfs, pid_t pid, void (*found)(const char *path, pid_t holder, void *context),
			  void *context)
{
	struct process_scan scan = { procfs, pid, found, context };
	struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	char root[512], shm[600];
	struct stat ours, theirs;
	int rootfd, fd;
	DIR *dir;

	each_vtrace_fd(procfs, pid, found_fd, &scan);
	/* Its /dev/shm, when it is not ours (a container's): resolved inside its root, as it sees it. */
	snprintf(root, sizeof(root), "%s/%d/root", procfs, (int)pid);
	rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return;
	fd = (int)syscall(SYS_openat2, rootfd, "dev/shm", &how, sizeof(how));
	close(rootfd);
	if (fd < 0)
		return;
	if (fstat(fd, &theirs) != 0 || (stat(vtrace_directory(), &ours) == 0 && ours.st_dev == theirs.st_dev &&
					 ours.st_ino == theirs.st_ino) ||
	    !(dir = fdopendir(fd))) {
		close(fd);
		return;
	}
	/*
	 * Its files are opened by this path: it must lead where the resolution inside its root
	 * led (a symbolic link on the way, which the path would follow from our root, must not
	 * send us elsewhere).
	 */
	snprintf(shm, sizeof(shm), "%s/dev/shm", root);
	if (lstat(shm, &ours) != 0 || !S_ISDIR(ours.st_mode) || ours.st_dev != theirs.st_dev ||
	    ours.st_ino != theirs.st_ino) {
		closedir(dir);
		return;
	}
	scan_dir(dir, shm, found_in_root, &scan);
}

/* ---- A set of segments, sampled together ------------------------------------------------ */

struct set_scan {
	struct segment_set *set;
	struct segment_round *round;
};

static void set_found(const char *path, void *context)
{
	struct set_scan *scan = context;
	struct segment_set *set = scan->set;
	struct segment *segment;

	for (size_t i = 0; i < set->count; i++)
		if (!strcmp(set->list[i]->path, path)) {
			set->list[i]->seen = true;
			return;
		}
	for (size_t i = 0; i < set->nothers; i++)
		if (!strcmp(set->others[i]->path, path) && !segment_removed(set->others[i])) {
			segment = set->others[i];
			segment->seen = true;
			segment_rejudge(segment, scan->round);
			if (segment->state == SEGMENT_LIVE) { /* found this time: sampled from now on */
				set->others[i] = set->others[--set->nothers];
				set->list = xrealloc(set->list, (set->count + 1) * sizeof(*set->list));
				set->list[set->count++] = segment;
			}
			return;
		}
	segment = segment_open(path, 0, 0, scan->round, NULL, NULL);
	if (!segment)
		return;
	segment->seen = true;
	if (segment->state != SEGMENT_LIVE) {
		set->others = xrealloc(set->others, (set->nothers + 1) * sizeof(*set->others));
		set->others[set->nothers++] = segment;
		return;
	}
	set->list = xrealloc(set->list, (set->count + 1) * sizeof(*set->list));
	set->list[set->count++] = segment;
}

/* Keeps the segments that are still there, and whose writer runs (with live), freeing the rest. */
static size_t keep(struct segment **list, size_t count, bool live, struct segment_round *round)
{
	size_t kept = 0;

	for (size_t i = 0; i < count; i++) {
		struct segment *s = list[i];
		bool stays = s->seen && !segment_removed(s);

		if (stays && live) {
			segment_check_alive(s, round->procfs);
			stays = s->state == SEGMENT_LIVE && segment_sample(s, round, NULL, NULL) == 0;
		}
		if (stays)
			list[kept++] = s;
		else
			segment_free(s);
	}
	return kept;
}

void segment_set_refresh(struct segment_set *set)
{
	struct segment_round round;
	struct set_scan scan = { set, &round };

	segment_round_begin(&round, "/proc");
	for (size_t i = 0; i < set->count; i++)
		set->list[i]->seen = false;
	for (size_t i = 0; i < set->nothers; i++)
		set->others[i]->seen = false;
	segment_scan(vtrace_directory(), set_found, &scan);
	set->count = keep(set->list, set->count, true, &round);
	set->nothers = keep(set->others, set->nothers, false, &round);
	segment_round_end(&round);
}

void segment_set_free(struct segment_set *set)
{
	for (size_t i = 0; i < set->count; i++)
		segment_free(set->list[i]);
	for (size_t i = 0; i < set->nothers; i++)
		segment_free(set->others[i]);
	free(set->list);
	free(set->others);
	*set = (struct segment_set){0};
}
