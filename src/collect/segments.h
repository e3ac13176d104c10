/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * segments.h: the libvtrace segments on this machine, found, proven to be their servers', and
 * sampled for vstat, stat, export and doctor.
 */
#ifndef IOLENS_COLLECT_SEGMENTS_H
#define IOLENS_COLLECT_SEGMENTS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <vtrace.h>

struct key_map;
struct stat;

/* The directory segments live in: $VTRACE_DIR, or /dev/shm. */
const char *vtrace_directory(void);

/*
 * LIVE: proven to be its server's: a live process of the file owner's user holds it open
 * for writing, and the name's pid, the header's pid and that process (as its own pid
 * namespace numbers it) agree. STALE: its writer is gone (nobody holds its lock, or the
 * pid it names is dead). UNTRUSTED: anything else, with the reason: never shown under the
 * service's name, never sampled by a scan. UNKNOWN: held by a writer this reader cannot see.
 */
enum segment_state { SEGMENT_LIVE, SEGMENT_STALE, SEGMENT_UNKNOWN, SEGMENT_UNTRUSTED };

/* One segment, open for reading, with its last two samples. */
struct segment {
	char *path;
	dev_t dev;                 /* the file opened, to tell when the path names another */
	ino_t ino;
	struct vtrace_reader *reader;
	const struct vtrace_info *info;
	enum segment_state state;
	char why[192];             /* UNTRUSTED or UNKNOWN: the reason */
	pid_t pid;                 /* the writer as this reader's pid namespace numbers it (info->pid if not found) */
	/* when seen dying (monotonic), or its last heartbeat when found dead: a dead server's hang ages no more */
	uint64_t stale_since_ns;
	bool seen;                 /* found again by the latest scan */
	bool told;                 /* for the caller: said once what there is to say of it */
	bool arrived;              /* for the caller: its arrival looked at (a restart?) */
	bool follow;               /* opened with SEGMENT_FOLLOW: its path may be a link (/proc/PID/fd/N) */
	bool one_sample;           /* SEGMENT_ONE_SAMPLE: no previous sample kept */
	/* its user's room was given to another user's segments: to be closed (segment_sample fails) */
	bool evicted;
	unsigned room;             /* what it takes of its user's share of SEGMENT_TOTAL_OPS (0: root's) */
	struct segment *newer, *older; /* the segments that take room, newest first */
	pid_t restarted_from;      /* for the caller: the pid of the server of its service before it, or 0 */
	bool has_previous;         /* previous holds an earlier sample */
	uint64_t previous_ns, current_ns;
	/* op_count + 1 each, from the first sample (previous NULL with one_sample) */
	struct vtrace_stats *previous, *current;
	struct vtrace_info released; /* after segment_release: what info points to (reader NULL) */
	char *released_service;
};

/*
 * One pass over the segments (a refresh): what is shared between them, found once. Each
 * user's time: the files of a user (looking at them in a directory, opening, proving and
 * reading them, looking for their writer among the user's processes) take at most
 * SEGMENT_USER_BUDGET_NS of a round (root's are not counted), so that no user's files,
 * however many or made, can stall the reader or crowd out another's. The time is the reading
 * thread's CPU time, what the files made it do: a reader kept waiting for a CPU (a busy
 * machine) reads what an idle one does. What does not use the CPU (a sample waiting for a
 * writer) is bounded by the clock: SEGMENT_USER_WALL_NS, VTRACE_BUDGET_WALL_FACTOR times it.
 */
#define SEGMENT_USER_BUDGET_NS 250000000ull
#define SEGMENT_USER_WALL_NS (SEGMENT_USER_BUDGET_NS * VTRACE_BUDGET_WALL_FACTOR)
/*
 * What readers hold open of the segments of users other than root, at most, in ops: a reader
 * keeps two samples of each op (37 KB with its histogram), and a descriptor for each segment,
 * which counts as SEGMENT_FILE_OPS at least. 1088 ops is 40 MB; a segment of VTRACE_MAX_OPS
 * fits. Users share it equally: one within its share gets room from those above theirs (their
 * newest segments are closed), so that however many segments of whatever size one user
 * makes, another's are read.
 */
#define SEGMENT_TOTAL_OPS 1088u
#define SEGMENT_FILE_OPS 16u

/*
 * A writer makes its segment ready a moment after it creates it: a file still empty or not
 * ready this long after it was last changed was left half made (or is not a segment).
 */
#define SEGMENT_MADE_SECONDS 10
bool segment_young(const struct stat *st);

struct segment_round {
	const char *procfs;
	struct key_map *users;     /* uid -> its time this round, and its files not looked at */
	uid_t last_uid;            /* the user looked up last, and its entry */
	struct round_user *last_user;
	bool listed;               /* the processes below are read (once a round, when a writer is looked for) */
	struct segment_process { pid_t pid; uid_t euid, fsuid; } *processes;
	size_t nprocesses;
	struct key_map *holders;   /* uid -> the vtrace files its processes hold, read once a round */
	int last_verdict;          /* of the last segment_open that returned NULL (enum segment_found) */
};

void segment_round_begin(struct segment_round *round, const char *procfs);
void segment_round_end(struct segment_round *round);
/* A moment of the reading thread's CPU time and of the clock (CLOCK_MONOTONIC), both in ns. */
struct segment_clock {
	uint64_t cpu_ns, wall_ns;
};
struct segment_clock segment_clock(void);
/* Whether the work since `since` is past budget ns of CPU time, or VTRACE_BUDGET_WALL_FACTOR times it on the clock. */
bool segment_clock_past(struct segment_clock since, uint64_t budget);
/*
 * What is left of uid's time this round (UINT64_MAX for root's): of its CPU time, and no more
 * than its time left on the clock over VTRACE_BUDGET_WALL_FACTOR (a budget that is both, as a
 * sample's); and what its files took since `since`.
 */
uint64_t segment_user_left(struct segment_round *round, uid_t uid);
void segment_user_spent(struct segment_round *round, uid_t uid, struct segment_clock since);
/* A file of uid's not looked at: its time was spent (said by segment_round_skipped). */
void segment_user_skipped(struct segment_round *round, uid_t uid);
/* The users some of whose files were not looked at in the round (their time was spent), with how many. */
void segment_round_skipped(const struct segment_round *round, void (*each)(uid_t uid, size_t files, void *context),
			   void *context);

/*
 * The name of the user uid ("nobody"), or its number ("65534") when it has none (or one of
 * characters that a user name has not: it is printed as it is); looked up once per uid.
 */
const char *segment_user_name(uid_t uid);

/* A problem with one path, for the caller to report: the others go on. */
struct segment_problem {
	const char *path;
	int error;          /* negative errno */
	const char *why;    /* or NULL */
};

typedef void (*segment_problem_fn)(const struct segment_problem *problem, void *context);

#define SEGMENT_FOLLOW 0x1u      /* a path given by the user: a symbolic link is followed */
#define SEGMENT_ONE_SAMPLE 0x2u  /* the latest sample only (a reader of counters: export) */

/*
 * Opens one segment and finds out whose it is (segment->state); NULL after reporting the
 * problem. holder: a process known to have it open (a /proc/PID/fd path's), or 0.
 */
struct segment *segment_open(const char *path, unsigned flags, pid_t holder, struct segment_round *round,
			     segment_problem_fn report, void *context);
/* Whether the writer of a LIVE (or UNKNOWN) segment still runs: it may become STALE. */
void segment_check_alive(struct segment *segment, const char *procfs);
/* A segment whose writer could not be found (UNKNOWN) is looked for again: this round may see it. */
void segment_rejudge(struct segment *segment, struct segment_round *round);
/*
 * Takes a sample within the round's budget of the segment's owner: the current one becomes
 * the previous. 0, or -errno after reporting (-EMFILE: evicted, to be closed).
 */
int segment_sample(struct segment *segment, struct segment_round *round, segment_problem_fn report, void *context);
void segment_free(struct segment *segment);
/*
 * A segment that will not be sampled (stale, untrusted: said, not shown in full): its reader
 * closed and its room given back, what is known of it (info, state, why, pid) kept. It can
 * be looked at (segment_removed), not sampled nor judged again.
 */
void segment_release(struct segment *segment);
/* True when the file at the segment's path is no longer the one we read (the service closed it). */
bool segment_removed(const struct segment *segment);
/*
 * Counters of op (op_count: all) in the current sample that no server could have written
 * (more errors than completions, more requests in flight than its threads could hold):
 * the reason, or NULL. Readers show such an op as unknown.
 */
const char *segment_impossible(const struct segment *segment, unsigned op);
/* The moment a sample's hang ages are measured at: its time, or when a dead server was found dead. */
uint64_t segment_age_at(const struct segment *segment);

/*
 * What a reader made of a file a scan found: it keeps a segment of it (looked at again each
 * round), it may become one (a segment being made; a user's time spent: looked at again
 * later), or it is not one the reader reads (not looked at again while it stays that file).
 */
enum segment_found { SEGMENT_KEPT, SEGMENT_AGAIN, SEGMENT_NOT };
typedef enum segment_found (*segment_found_fn)(const char *path, void *context);
/* After segment_open returned NULL for a file a scan found: look at it again, or not. */
enum segment_found segment_open_verdict(const struct segment_round *round);

/*
 * A directory of segments looked at round after round (a reader that runs long): it is read
 * whole the first time and after the kernel lost track (inotify's queue overflowed), else
 * only the names that came and went are looked at; names known not to be segments are
 * remembered by inode (at most SEGMENT_DIR_REMEMBERED of them) and not looked at again
 * unless it changes (inotify says so).
 * Looking at a name (an lstat) is charged to the file's owner: once a user's time is spent,
 * the rest of its names wait for a later round.
 */
#define SEGMENT_DIR_REMEMBERED 262144u
struct segment_dir;
struct segment_dir *segment_dir_new(const char *path);
void segment_dir_free(struct segment_dir *dir);
/*
 * One round: found(path) for every file named vtrace.* that may be a segment: those the
 * reader keeps, new ones, ones being made (an empty file is one until it is old). In no
 * order. 0, or -errno (the directory cannot be read).
 */
int segment_dir_scan(struct segment_dir *dir, struct segment_round *round, segment_found_fn found, void *context);
/* The same once, with nothing remembered. */
int segment_scan(const char *directory, struct segment_round *round, segment_found_fn found, void *context);

/* The same of a directory open as dirfd, named directory in the paths found. */
int segment_scan_at(int dirfd, const char *directory, struct segment_round *round, segment_found_fn found,
		    void *context);

/*
 * The segments process pid has: those open in it (procfs/PID/fd, deleted ones too, as the
 * a sandboxed virtiofsd has), and those in its own /dev/shm (procfs/PID/root/dev/shm,
 * a container's). found gets a path to open and the pid that holds it, or 0.
 */
void segment_scan_process(struct segment_round *round, pid_t pid,
			  void (*found)(const char *path, pid_t holder, void *context), void *context);

/* The live segments of vtrace_directory(), kept open from one sample to the next. */
struct segment_set {
	struct segment **list;    /* LIVE, sampled, by path */
	size_t count;
	struct segment **others;  /* whose writer could not be found yet (UNKNOWN): kept, looked for again each round */
	size_t nothers;
	bool one_sample;          /* the latest sample only (SEGMENT_ONE_SAMPLE) */
	struct segment_dir *dir;  /* from the first refresh */
	struct key_map *paths;    /* path -> its segment, of both lists */
};

/*
 * Looks at the directory again: opens the segments of live writers that appeared (proven
 * theirs), drops those removed, whose writer died or that cannot be read any more, and
 * takes a sample of each that stays. Files that are not live segments (stale, untrusted, not
 * segments at all) are closed and not looked at again while they stay.
 */
void segment_set_refresh(struct segment_set *set);
void segment_set_free(struct segment_set *set);

#endif
