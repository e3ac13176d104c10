/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * segments.c: proves whose each libvtrace segment is, opens it through libvtrace's reader, keeps
 * two samples of each, within each user's time and share of room.
 */
#include "collect/segments.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <vtrace/proc.h> /* libvtrace's reading of /proc/PID/stat, the one the writer records */

#include "collect/fdinfo.h"
#include "collect/procfs.h"
#include "collect/sysroot.h"
#include "common/key_map.h"
#include "common/util.h"

/*
 * A process's open files are looked at up to this many: a process with a million of them
 * costs no more than one with a few thousand. A writer opens its segment when it starts.
 */
#define FDS_PER_PROCESS 4096
/*
 * Looking for the writer of a user's segment among that user's processes: at most this long
 * a round, of the reader's CPU time (VTRACE_BUDGET_WALL_FACTOR times it on the clock), and no
 * longer than the user's time left. Where it stops, the next round goes on.
 */
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

/* ---- Each user's time, room and name ------------------------------------------------------ */

/* A user's part of a round. */
struct round_user {
	uint64_t cpu_ns;    /* its files' time: the reader's CPU time, */
	uint64_t wall_ns;   /* and the clock's (SEGMENT_USER_WALL_NS) */
	size_t skipped;     /* its files not looked at, its time spent */
};

static struct round_user *round_user(struct segment_round *round, uid_t uid)
{
	struct round_user *user;

	if (round->last_user && round->last_uid == uid) /* a directory's files come by owner, often */
		return round->last_user;
	if (!round->users)
		round->users = xcalloc(1, sizeof(*round->users));
	if (!(user = key_map_get(round->users, &uid, sizeof(uid)))) {
		user = xcalloc(1, sizeof(*user));
		key_map_put(round->users, &uid, sizeof(uid), user);
	}
	round->last_uid = uid;
	round->last_user = user;
	return user;
}

struct segment_clock segment_clock(void)
{
	struct timespec ts;
	uint64_t wall = monotonic_ns();

	/* (never fails on Linux: else the clock, which only counts more) */
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return (struct segment_clock){ wall, wall };
	return (struct segment_clock){ (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec, wall };
}

bool segment_clock_past(struct segment_clock since, uint64_t budget)
{
	struct segment_clock now = segment_clock();

	return now.cpu_ns - since.cpu_ns >= budget || now.wall_ns - since.wall_ns >= budget * VTRACE_BUDGET_WALL_FACTOR;
}

uint64_t segment_user_left(struct segment_round *round, uid_t uid)
{
	const struct round_user *user;
	uint64_t cpu, wall;

	if (uid == 0)
		return UINT64_MAX;
	user = round_user(round, uid);
	cpu = user->cpu_ns < SEGMENT_USER_BUDGET_NS ? SEGMENT_USER_BUDGET_NS - user->cpu_ns : 0;
	wall = user->wall_ns < SEGMENT_USER_WALL_NS ? SEGMENT_USER_WALL_NS - user->wall_ns : 0;
	wall /= VTRACE_BUDGET_WALL_FACTOR;
	return cpu < wall ? cpu : wall;
}

void segment_user_spent(struct segment_round *round, uid_t uid, struct segment_clock since)
{
	struct round_user *user;
	struct segment_clock now;

	if (uid == 0)
		return;
	now = segment_clock();
	user = round_user(round, uid);
	user->cpu_ns += now.cpu_ns - since.cpu_ns;
	user->wall_ns += now.wall_ns - since.wall_ns;
}

void segment_user_skipped(struct segment_round *round, uid_t uid)
{
	round_user(round, uid)->skipped++;
}

void segment_round_skipped(const struct segment_round *round, void (*each)(uid_t uid, size_t files, void *context),
			   void *context)
{
	const void *key;
	void *value;

	if (!round->users)
		return;
	for (size_t i = 0; key_map_next(round->users, &i, &key, NULL, &value);) {
		const struct round_user *user = value;
		uid_t uid;

		memcpy(&uid, key, sizeof(uid));
		if (user->skipped)
			each(uid, user->skipped, context);
	}
}

/*
 * What a user's segments hold open, from one round to the next (a reader is one thread), and
 * where the look for its writers stopped when it ran out of time.
 */
struct user_share {
	unsigned room;       /* ops, each segment SEGMENT_FILE_OPS at least */
	pid_t holders_from;  /* the look for writers among its processes goes on after this pid (0: from the first) */
};
static struct key_map shares;     /* uid -> struct user_share */
static unsigned room_taken;       /* by all users but root */
static struct segment *newest;    /* the segments that take room, newest first */

static struct user_share *share_of(uid_t uid)
{
	struct user_share *share = key_map_get(&shares, &uid, sizeof(uid));

	if (!share) {
		share = xcalloc(1, sizeof(*share));
		key_map_put(&shares, &uid, sizeof(uid), share);
	}
	return share;
}

/* A user whose segments hold nothing, and whose writers' look has nowhere to go on from, is forgotten. */
static void forget_share(uid_t uid)
{
	struct user_share *share = key_map_get(&shares, &uid, sizeof(uid));

	if (share && !share->room && !share->holders_from)
		free(key_map_remove(&shares, &uid, sizeof(uid)));
}

/* The room of each user's now, with uid among them: the total over the users whose segments take some. */
static unsigned fair_room(uid_t uid)
{
	size_t users = 0;
	bool counted = false;
	const void *key;
	void *value;

	for (size_t i = 0; key_map_next(&shares, &i, &key, NULL, &value);) {
		uid_t owner;

		memcpy(&owner, key, sizeof(owner));
		if (((struct user_share *)value)->room) {
			users++;
			counted |= owner == uid;
		}
	}
	return SEGMENT_TOTAL_OPS / (unsigned)(users + !counted);
}

static unsigned room_for(unsigned op_count)
{
	return op_count + 1 > SEGMENT_FILE_OPS ? op_count + 1 : SEGMENT_FILE_OPS;
}

static void give_back(struct segment *segment)
{
	uid_t uid = segment->info->uid;

	if (!segment->room)
		return;
	share_of(uid)->room -= segment->room;
	room_taken -= segment->room;
	segment->room = 0;
	if (segment->newer)
		segment->newer->older = segment->older;
	else
		newest = segment->older;
	if (segment->older)
		segment->older->newer = segment->newer;
	segment->newer = segment->older = NULL;
	forget_share(uid);
}

/* More room for a segment (a first: it joins the segments that take some, as the newest). */
static void take_room(struct segment *segment, unsigned room)
{
	if (!segment->room) {
		segment->older = newest;
		if (newest)
			newest->newer = segment;
		newest = segment;
	}
	segment->room += room;
	share_of(segment->info->uid)->room += room;
	room_taken += room;
}

/* The newest segment of the user most above its share (fair each), or NULL when none is. */
static struct segment *most_above(unsigned fair)
{
	struct segment *victim = NULL;
	unsigned most = fair;

	for (struct segment *s = newest; s; s = s->older) {
		unsigned room = share_of(s->info->uid)->room;

		if (room > most) {
			most = room;
			victim = s;
		}
	}
	return victim;
}

/*
 * Whether a segment of uid's that takes room may be opened: within what is left, or within
 * uid's share, room then made (with evict) by evicting the newest segments of the users most
 * above theirs. why says why not.
 */
static bool admit(uid_t uid, unsigned room, char *why, size_t len, bool evict)
{
	unsigned fair, mine;
	struct segment *victim;

	if (uid == 0 || room_taken + room <= SEGMENT_TOTAL_OPS)
		return true;
	fair = fair_room(uid);
	mine = share_of(uid)->room;
	if (mine + room > fair) {
		snprintf(why, len,
			 "not read: the segments of user %s (uid %u) read already take %u of their share of %u ops "
			 "(%u for every user's)",
			 segment_user_name(uid), (unsigned)uid, mine, fair, SEGMENT_TOTAL_OPS);
		forget_share(uid);
		return false;
	}
	if (!evict) {
		forget_share(uid); /* (a look only: nothing taken yet) */
		return true;
	}
	while (room_taken + room > SEGMENT_TOTAL_OPS && (victim = most_above(fair))) {
		victim->evicted = true;
		give_back(victim);
	}
	return room_taken + room <= SEGMENT_TOTAL_OPS;
}

/* A user name as useradd makes them: printed as it is everywhere (else the number is). */
static bool fit_name(const char *name)
{
	size_t len = strlen(name);

	if (!len || len > 64)
		return false;
	for (const char *c = name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' ||
		      *c == '-' || *c == '.' || *c == '$' || *c == '@'))
			return false;
	return true;
}

/* Names of users, looked up once each (the password database may be slow): at most this many kept. */
#define USER_NAMES_MAX 1024

const char *segment_user_name(uid_t uid)
{
	static struct key_map names;
	static char number[16];
	char buf[1024], *name;
	struct passwd pw, *found = NULL;

	if ((name = key_map_get(&names, &uid, sizeof(uid))))
		return name;
	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &found) == 0 && found && fit_name(found->pw_name)) {
		name = xstrdup(found->pw_name);
	} else {
		snprintf(number, sizeof(number), "%u", (unsigned)uid);
		name = xstrdup(number);
	}
	if (names.count < USER_NAMES_MAX) {
		key_map_put(&names, &uid, sizeof(uid), name);
		return name;
	}
	snprintf(number, sizeof(number), "%s", name); /* not remembered: no more than that many */
	free(name);
	return number;
}

/* ---- Who holds what ---------------------------------------------------------------------- */

/* A process's open vtrace file. */
struct segment_holder {
	pid_t pid;       /* in the reader's pid namespace */
	int fd;
	dev_t dev;
	ino_t ino;
};

/* The vtrace files the processes of one user hold, looked at once a round. */
struct holder_scan {
	bool cut;        /* its time ran out: not every process of the user was looked at */
	struct segment_holder *holders;
	size_t count;
};

/* procfs/PID/status's ids: its pid in its own namespace, and its uids. */
/* A status file is longer than a page with many supplementary groups (NSpid comes after Groups). */
#define STATUS_MAX (1u << 20)

static int process_ids(const char *procfs, pid_t pid, struct proc_ids *ids)
{
	char path[512], small[8192], *text = small;
	ssize_t size;
	int rc;

	snprintf(path, sizeof(path), "%s/%d/status", procfs, (int)pid);
	size = read_small_at(AT_FDCWD, path, small, sizeof(small));
	/*
	 * One that fills the buffer is read again whole, into STATUS_MAX (only the pages read are
	 * touched): not for every process (a sanitized build fills and unmaps what it allocates:
	 * 1 MB for each of a hundred processes was most of a holder scan's time).
	 */
	if (size == (ssize_t)sizeof(small) - 1) {
		text = xrealloc(NULL, STATUS_MAX);
		size = read_small_at(AT_FDCWD, path, text, STATUS_MAX);
	}
	rc = size < 0 ? (int)size : size ? proc_ids_parse(text, (size_t)size, (int)pid, ids) : -EIO;
	if (text != small)
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

/* Whether pid's descriptor fd is open for reading and writing, as a writer keeps its segment. */
static bool fd_writes(pid_t pid, int fd)
{
	struct fdinfo info;

	return fdinfo_read(pid, fd, &info) == 0 && (info.flags & O_ACCMODE) == O_RDWR;
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
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%d/fd/%d", m->procfs, (int)m->pid, fd);
	if (stat(path, &st) != 0 || st.st_dev != m->dev || st.st_ino != m->ino)
		return false;
	m->found = true;
	m->writes |= fd_writes(m->pid, fd);
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

/*
 * The processes, once a round, with the user each runs as: /proc/PID's owner, which is its
 * effective uid, but root's for a process that is not dumpable (of any user): the uids of
 * those are read from their status. (A dumpable process whose filesystem uid is not its
 * effective one is taken as its effective uid's.)
 */
static void list_processes(struct segment_round *round)
{
	struct proc_pids pids;
	pid_t pid;

	if (round->listed)
		return;
	round->listed = true;
	if (proc_pids_open_dir(&pids, round->procfs, 0) != 0)
		return;
	while ((pid = proc_pids_next(&pids))) {
		char name[16];
		struct proc_ids ids;
		struct stat st;
		uid_t euid, fsuid;

		snprintf(name, sizeof(name), "%d", (int)pid);
		if (fstatat(dirfd(pids.dir), name, &st, 0) != 0)
			continue;
		euid = fsuid = st.st_uid;
		if (st.st_uid == 0) {
			if (process_ids(round->procfs, pid, &ids) != 0)
				continue;
			euid = ids.uid[1];
			fsuid = ids.uid[3];
		}
		round->processes = xrealloc(round->processes, (round->nprocesses + 1) * sizeof(*round->processes));
		round->processes[round->nprocesses++] = (struct segment_process){ pid, euid, fsuid };
	}
	proc_pids_close(&pids);
}

struct note {
	struct segment_round *round;
	struct holder_scan *scan;
	pid_t pid;
};

static bool note_holder(int fd, void *context)
{
	struct note *note = context;
	struct holder_scan *scan = note->scan;
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%d/fd/%d", note->round->procfs, (int)note->pid, fd);
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	scan->holders = xrealloc(scan->holders, (scan->count + 1) * sizeof(*scan->holders));
	scan->holders[scan->count++] = (struct segment_holder){ note->pid, fd, st.st_dev, st.st_ino };
	return false;
}

/*
 * The vtrace files the processes of uid hold, once a round, when a segment of uid's has a
 * writer that is not where its pid says (in another pid namespace). A writer runs as the
 * owner of its segment: only uid's processes are looked at, so that no other user's, with
 * however many files open, can keep a writer from being found. uid's own processes take at
 * most HOLDER_SCAN_NS (and no more than its time left); the next round goes on after the last
 * one looked at, so every one of them is looked at within a few rounds.
 */
static struct holder_scan *holders_of(struct segment_round *round, uid_t uid)
{
	struct segment_clock started = segment_clock();
	uint64_t left = segment_user_left(round, uid), budget = left < HOLDER_SCAN_NS ? left : HOLDER_SCAN_NS;
	struct user_share *share = share_of(uid);
	struct holder_scan *scan;
	size_t first = 0;

	if (!round->holders)
		round->holders = xcalloc(1, sizeof(*round->holders));
	if ((scan = key_map_get(round->holders, &uid, sizeof(uid))))
		return scan;
	scan = xcalloc(1, sizeof(*scan));
	key_map_put(round->holders, &uid, sizeof(uid), scan);
	list_processes(round);
	while (first < round->nprocesses && round->processes[first].pid <= share->holders_from)
		first++;
	for (size_t k = 0; k < round->nprocesses; k++) {
		const struct segment_process *p = &round->processes[(first + k) % round->nprocesses];
		struct note note = { round, scan, p->pid };

		if (p->euid != uid && p->fsuid != uid)
			continue;
		if (segment_clock_past(started, budget)) {
			scan->cut = true;
			break;
		}
		each_vtrace_fd(round->procfs, p->pid, note_holder, &note);
		share->holders_from = p->pid;
	}
	if (!scan->cut)
		share->holders_from = 0;
	forget_share(uid);
	/* (charged to uid by the caller of establish, segment_open or segment_rejudge: not twice) */
	return scan;
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
		snprintf(s->why, sizeof(s->why), "pid %d has it open, but not for writing as its writer does",
			 (int)pid);
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
	bool cut = false;

	s->pid = info->pid;
	file_name(s->path, procfs, name, sizeof(name));
	if (named && !name_agrees(name, info))
		return untrusted(s, "its name does not agree with its header (service %s, pid %d)", info->service,
				 info->pid);
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
			return untrusted(
			    s, "pid %d runs, started when the header says, but does not hold it as its writer would",
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
	if (verdict != 1) { /* a writer in another pid namespace: among the processes of the file's owner */
		const struct holder_scan *scan = holders_of(round, info->uid);

		cut = scan->cut;
		for (size_t i = 0; i < scan->count && verdict != 1; i++) {
			const struct segment_holder *h = &scan->holders[i];
			int v;

			/* Readers (this one among them) hold it too: only a writer can be its writer. */
			if (h->dev != s->dev || h->ino != s->ino || h->pid == hint || h->pid == info->pid ||
			    !fd_writes(h->pid, h->fd))
				continue;
			if ((v = is_writer(s, procfs, h->pid, true)) != 0)
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
		snprintf(s->why, sizeof(s->why), "%s", cut
			 ? "its writer holds it, but not every process of its user could be looked at in time (looked "
			   "for again next time)"
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

static void free_values(struct key_map *map, void (*free_value)(void *value))
{
	void *value;

	if (!map)
		return;
	for (size_t i = 0; key_map_next(map, &i, NULL, NULL, &value);)
		free_value(value);
	key_map_free(map);
	free(map);
}

static void free_scan(void *value)
{
	struct holder_scan *scan = value;

	free(scan->holders);
	free(scan);
}

void segment_round_end(struct segment_round *round)
{
	free_values(round->users, free);
	free_values(round->holders, free_scan);
	free(round->processes);
	*round = (struct segment_round){0};
}

/*
 * Whether a file was written less than SEGMENT_MADE_SECONDS ago: a segment may still be being
 * made there (a writer creates it, sizes it and fills its header at once: each sets its mtime).
 */
bool segment_young(const struct stat *st)
{
	time_t now = time(NULL);

	/* (a clock set back) */
	return now - st->st_mtime < SEGMENT_MADE_SECONDS && st->st_mtime - now < SEGMENT_MADE_SECONDS;
}

/* What a scan makes of a file segment_open refused (the file as lstat saw it, or NULL) with error. */
static void verdict(struct segment_round *round, const struct stat *st, int error)
{
	/* (A header not ready yet is a writer's at work, or stopped there: looked at again, whatever its age.) */
	bool passing = error == -ETIME || error == -EMFILE || error == -ENFILE || error == -ENOMEM || error == -EINTR ||
		       (error == -EAGAIN && st && S_ISREG(st->st_mode) && st->st_size > 0);

	round->last_verdict = passing || (st && segment_young(st)) ? SEGMENT_AGAIN : SEGMENT_NOT;
}

enum segment_found segment_open_verdict(const struct segment_round *round)
{
	return (enum segment_found)round->last_verdict;
}

struct segment *segment_open(const char *path, unsigned flags, pid_t holder, struct segment_round *round,
			     segment_problem_fn report, void *context)
{
	struct segment *segment;
	struct vtrace_reader *reader;
	const char *why = NULL;
	struct segment_clock started = segment_clock();
	struct stat st = { .st_uid = 0 };
	bool found = lstat(path, &st) == 0, scanned = found && !(flags & SEGMENT_FOLLOW);
	char refused[192];
	uid_t owner;
	int rc;

	/*
	 * An empty file found by a scan is a segment being made (a writer creates it, then sizes
	 * it), or a name taken by someone else: nothing to read or say. A user whose files took all
	 * of their time this round: the rest wait for the next.
	 */
	if (!found && !(flags & SEGMENT_FOLLOW)) {
		verdict(round, NULL, -errno);
		return NULL;
	}
	if (scanned && S_ISREG(st.st_mode) && st.st_size == 0) {
		verdict(round, &st, -EAGAIN);
		return NULL;
	}
	if (scanned && !segment_user_left(round, st.st_uid)) {
		verdict(round, &st, -ETIME);
		problem(report, context, path, -ETIME,
			"not read: the files of its user took all their time this round");
		return NULL;
	}
	/* A user already at its share: refused before it is opened (what is refused is looked at each round). */
	if (scanned && !admit(st.st_uid, SEGMENT_FILE_OPS, refused, sizeof(refused), false)) {
		verdict(round, NULL, -EMFILE);
		problem(report, context, path, -EMFILE, refused);
		return NULL;
	}
	rc = vtrace_reader_open(path, flags & SEGMENT_FOLLOW ? 0 : VTRACE_READ_NOFOLLOW, &reader, &why);
	if (rc) {
		segment_user_spent(round, st.st_uid, started);
		verdict(round, scanned ? &st : NULL, rc);
		problem(report, context, path, rc, why);
		return NULL;
	}
	/* Open, a segment takes the room of its descriptor; sampled, that of its samples too. */
	owner = vtrace_reader_info(reader)->uid;
	if (!admit(owner, SEGMENT_FILE_OPS, refused, sizeof(refused), true)) {
		segment_user_spent(round, owner, started);
		vtrace_reader_close(reader);
		verdict(round, NULL, -EMFILE);
		problem(report, context, path, -EMFILE, refused);
		return NULL;
	}
	segment = xcalloc(1, sizeof(*segment));
	segment->path = xstrdup(path);
	segment->follow = flags & SEGMENT_FOLLOW;
	segment->one_sample = flags & SEGMENT_ONE_SAMPLE;
	segment->reader = reader;
	segment->info = vtrace_reader_info(reader);
	/* The file we hold, not what the path names now (it may have been swapped since). */
	segment->dev = (dev_t)segment->info->dev;
	segment->ino = (ino_t)segment->info->ino;
	if (owner != 0)
		take_room(segment, SEGMENT_FILE_OPS);
	establish(segment, !(flags & SEGMENT_FOLLOW) || path_holder(path, round->procfs),
		  holder ? holder : path_holder(path, round->procfs), round);
	/* Dead before we came: when it died is not known, its last sign of life is (the same each run). */
	if (segment->state == SEGMENT_STALE)
		segment->stale_since_ns = segment->info->heartbeat_ns ? segment->info->heartbeat_ns : monotonic_ns();
	segment_user_spent(round, owner, started);
	return segment;
}

void segment_rejudge(struct segment *segment, struct segment_round *round)
{
	struct segment_clock started = segment_clock();
	pid_t holder = path_holder(segment->path, round->procfs);

	if (segment->state != SEGMENT_UNKNOWN || !segment->reader || !segment_user_left(round, segment->info->uid))
		return;
	establish(segment, !segment->follow || holder, holder, round);
	if (segment->state == SEGMENT_STALE)
		segment->stale_since_ns = monotonic_ns();
	segment_user_spent(round, segment->info->uid, started);
}

void segment_check_alive(struct segment *segment, const char *procfs)
{
	int alive;

	if ((segment->state != SEGMENT_LIVE && segment->state != SEGMENT_UNKNOWN) || !segment->reader)
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
	size_t count = (size_t)segment->info->op_count + 1;
	struct vtrace_stats *swap;
	uint64_t now, left = segment_user_left(round, segment->info->uid);
	struct segment_clock started = segment_clock();
	const char *why = NULL;
	char evicted[192];
	int rc;

	if (!segment->reader) {
		problem(report, context, segment->path, -EBADF, "not read: released");
		return -EBADF;
	}
	if (segment->evicted) {
		snprintf(evicted, sizeof(evicted),
			 "not read any more: its room was given to the segments of users with less "
			 "than their share (%u ops for every user's)",
			 SEGMENT_TOTAL_OPS);
		problem(report, context, segment->path, -EMFILE, evicted);
		return -EMFILE;
	}
	if (!left) {
		problem(report, context, segment->path, -ETIME,
			"not read: the files of its user took all their time this round");
		return -ETIME;
	}
	/*
	 * The samples' memory (37 KB an op with both) from the first, within its user's share: a
	 * segment never sampled takes none. When it is first sampled every segment of the round
	 * is open, so each user present has its share (not only those whose files came first).
	 */
	if (!segment->current && segment->info->uid != 0 && room_for(segment->info->op_count) > segment->room) {
		unsigned more = room_for(segment->info->op_count) - segment->room;

		if (!admit(segment->info->uid, more, evicted, sizeof(evicted), true)) {
			problem(report, context, segment->path, -EMFILE, evicted);
			return -EMFILE;
		}
		take_room(segment, more);
	}
	if (!segment->current)
		segment->current = xcalloc(count, sizeof(*segment->current));
	if (!segment->one_sample) {
		if (!segment->previous)
			segment->previous = xcalloc(count, sizeof(*segment->previous));
		swap = segment->previous;
		segment->previous = segment->current;
		segment->previous_ns = segment->current_ns;
		segment->has_previous = segment->current_ns != 0;
		segment->current = swap;
	}
	vtrace_reader_set_budget(segment->reader, left < UINT64_MAX ? left : 0);
	rc = vtrace_reader_sample(segment->reader, segment->current, &now, &why);
	segment_user_spent(round, segment->info->uid, started);
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
	give_back(segment);
	vtrace_reader_close(segment->reader);
	free(segment->previous);
	free(segment->current);
	free(segment->released_service);
	free(segment->path);
	free(segment);
}

void segment_release(struct segment *segment)
{
	if (!segment->reader)
		return;
	segment->released = *segment->info;
	segment->released_service = xstrdup(segment->info->service);
	segment->released.service = segment->released_service;
	segment->info = &segment->released;
	vtrace_reader_close(segment->reader);
	segment->reader = NULL;
	give_back(segment);
	free(segment->previous);
	free(segment->current);
	segment->previous = segment->current = NULL;
	segment->has_previous = false;
	segment->current_ns = monotonic_ns(); /* when it was last looked at */
}

/* ---- Finding segments ---------------------------------------------------------------------- */

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

static enum segment_found found_in_root(const char *path, void *context)
{
	struct process_scan *scan = context;

	scan->found(path, 0, scan->context);
	return SEGMENT_KEPT; /* (nothing is remembered of a single look) */
}

void segment_scan_process(struct segment_round *round, pid_t pid,
			  void (*found)(const char *path, pid_t holder, void *context), void *context)
{
	struct process_scan scan = { round->procfs, pid, found, context };
	struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	char root[512], shm[600];
	struct stat ours, theirs;
	int rootfd, fd;

	each_vtrace_fd(round->procfs, pid, found_fd, &scan);
	/* Its /dev/shm, when it is not ours (a container's): resolved inside its root, as it sees it. */
	snprintf(root, sizeof(root), "%s/%d/root", round->procfs, (int)pid);
	rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return;
	fd = (int)syscall(SYS_openat2, rootfd, "dev/shm", &how, sizeof(how));
	close(rootfd);
	if (fd < 0)
		return;
	/*
	 * Its files are opened by this path: it must lead where the resolution inside its root
	 * led (a symbolic link on the way, which the path would follow from our root, must not
	 * send us elsewhere).
	 */
	snprintf(shm, sizeof(shm), "%s/dev/shm", root);
	if (fstat(fd, &theirs) == 0 &&
	    !(stat(vtrace_directory(), &ours) == 0 && ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino) &&
	    lstat(shm, &ours) == 0 && S_ISDIR(ours.st_mode) && ours.st_dev == theirs.st_dev &&
	    ours.st_ino == theirs.st_ino)
		segment_scan_at(fd, shm, round, found_in_root, &scan);
	close(fd);
}

/* ---- A set of segments, sampled together ------------------------------------------------ */

struct set_scan {
	struct segment_set *set;
	struct segment_round *round;
};

static void set_add(struct segment ***list, size_t *count, struct segment *segment)
{
	*list = xrealloc(*list, (*count + 1) * sizeof(**list));
	(*list)[(*count)++] = segment;
}

static enum segment_found set_found(const char *path, void *context)
{
	struct set_scan *scan = context;
	struct segment_set *set = scan->set;
	struct segment *segment = name_map_get(set->paths, path);

	if (segment && !segment_removed(segment)) {
		segment->seen = true;
		if (segment->state == SEGMENT_UNKNOWN) {
			segment_rejudge(segment, scan->round);
			/* found this time, or dead: not among the others any more */
			if (segment->state != SEGMENT_UNKNOWN)
				for (size_t i = 0; i < set->nothers; i++)
					if (set->others[i] == segment)
						set->others[i] = set->others[--set->nothers];
			if (segment->state == SEGMENT_LIVE) { /* sampled from now on */
				set_add(&set->list, &set->count, segment);
			/* stale, untrusted: closed, as a new one would be */
			} else if (segment->state != SEGMENT_UNKNOWN) {
				name_map_remove(set->paths, path);
				segment_free(segment);
				return SEGMENT_NOT;
			}
		}
		return SEGMENT_KEPT;
	}
	if (segment) /* another file at its path now: the one held goes (unseen) */
		name_map_remove(set->paths, path);
	segment = segment_open(path, set->one_sample ? SEGMENT_ONE_SAMPLE : 0, 0, scan->round, NULL, NULL);
	if (!segment)
		return segment_open_verdict(scan->round);
	/* Dead, or not its service's: nothing to show, and nothing that changes (closed, not looked at again). */
	if (segment->state == SEGMENT_STALE || segment->state == SEGMENT_UNTRUSTED) {
		segment_free(segment);
		return SEGMENT_NOT;
	}
	segment->seen = true;
	name_map_put(set->paths, path, segment);
	if (segment->state == SEGMENT_LIVE)
		set_add(&set->list, &set->count, segment);
	else
		set_add(&set->others, &set->nothers, segment);
	return SEGMENT_KEPT;
}

/* Keeps the segments that are still there, and whose writer runs (with live), freeing the rest. */
static size_t keep(struct segment_set *set, struct segment **list, size_t count, bool live, struct segment_round *round)
{
	size_t kept = 0;

	for (size_t i = 0; i < count; i++) {
		struct segment *s = list[i];
		bool stays = s->seen && !s->evicted && !segment_removed(s);

		if (stays && live) {
			segment_check_alive(s, round->procfs);
			stays = s->state == SEGMENT_LIVE && segment_sample(s, round, NULL, NULL) == 0;
		}
		if (stays) {
			list[kept++] = s;
			continue;
		}
		if (name_map_get(set->paths, s->path) == s)
			name_map_remove(set->paths, s->path);
		segment_free(s);
	}
	return kept;
}

static int by_path(const void *a, const void *b)
{
	return strcmp((*(struct segment *const *)a)->path, (*(struct segment *const *)b)->path);
}

void segment_set_refresh(struct segment_set *set)
{
	struct segment_round round;
	struct set_scan scan = { set, &round };

	if (!set->dir)
		set->dir = segment_dir_new(vtrace_directory());
	if (!set->paths)
		set->paths = xcalloc(1, sizeof(*set->paths));
	segment_round_begin(&round, "/proc");
	for (size_t i = 0; i < set->count; i++)
		set->list[i]->seen = false;
	for (size_t i = 0; i < set->nothers; i++)
		set->others[i]->seen = false;
	segment_dir_scan(set->dir, &round, set_found, &scan);
	set->count = keep(set, set->list, set->count, true, &round);
	set->nothers = keep(set, set->others, set->nothers, false, &round);
	/* Those whose room another user's took meanwhile (sampled before it was): closed now. */
	set->count = keep(set, set->list, set->count, false, &round);
	/* In path order, whatever order the directory gave. */
	if (set->count)
		qsort(set->list, set->count, sizeof(*set->list), by_path);
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
	segment_dir_free(set->dir);
	if (set->paths) {
		key_map_free(set->paths);
		free(set->paths);
	}
	*set = (struct segment_set){0};
}
