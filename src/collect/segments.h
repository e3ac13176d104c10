/* segments.h: the libvtrace segments on this machine, found, proven to be their servers', and sampled for vstat, stat, export and doctor. */
#ifndef IOLENS_COLLECT_SEGMENTS_H
#define IOLENS_COLLECT_SEGMENTS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <vtrace.h>

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
	uint64_t stale_since_ns;   /* when seen dying (monotonic), or its last heartbeat when found dead: a dead server's hang ages no more */
	bool seen;                 /* found again by the latest scan */
	bool told;                 /* for the caller: said once what there is to say of it */
	bool arrived;              /* for the caller: its arrival looked at (a restart?) */
	bool follow;               /* opened with SEGMENT_FOLLOW: its path may be a link (/proc/PID/fd/N) */
	pid_t restarted_from;      /* for the caller: the pid of the server of its service before it, or 0 */
	bool has_previous;         /* previous holds an earlier sample */
	uint64_t previous_ns, current_ns;
	struct vtrace_stats *previous, *current; /* op_count + 1 each */
};

/*
 * One pass over the segments (a refresh): what is shared between them, found once. Who
 * holds which file open, read from every process only when a segment needs it (a writer in
 * another pid namespace); and each user's read time: a user's segments together take at most
 * SEGMENT_USER_BUDGET_NS of a round (root's are not counted), so that no user's segments,
 * however made, can stall the reader or crowd out another's.
 */
#define SEGMENT_USER_BUDGET_NS 250000000ull
/*
 * And the operations of a user's segments held open at once, at most (root's not counted):
 * a reader keeps two samples of each op (37 KB with its histogram), so that many segments
 * of 1024 ops cannot make it take gigabytes. 2048 ops is 75 MB.
 */
#define SEGMENT_USER_OPS 2048u

struct segment_holder;
struct segment_round {
	const char *procfs;
	bool scanned;
	bool scan_cut;            /* the holders' scan ran out of time: not every process was looked at */
	uint64_t scan_ns;         /* the time it took: the machine's, charged to no user */
	struct segment_holder *holders;
	size_t nholders;
	struct { uid_t uid; uint64_t spent_ns; } *users;
	size_t nusers;
};

void segment_round_begin(struct segment_round *round, const char *procfs);
void segment_round_end(struct segment_round *round);

/* A problem with one path, for the caller to report: the others go on. */
struct segment_problem {
	const char *path;
	int error;          /* negative errno */
	const char *why;    /* or NULL */
};

typedef void (*segment_problem_fn)(const struct segment_problem *problem, void *context);

#define SEGMENT_FOLLOW 0x1u  /* a path given by the user: a symbolic link is followed */

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
 * the previous. 0, or -errno after reporting.
 */
int segment_sample(struct segment *segment, struct segment_round *round, segment_problem_fn report, void *context);
void segment_free(struct segment *segment);
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
 * Calls found(path) for every file named vtrace.* in directory, in name order. Returns 0
 * or -errno (the directory cannot be read).
 */
int segment_scan(const char *directory, void (*found)(const char *path, void *context), void *context);

/*
 * The segments process pid has: those open in it (procfs/PID/fd, deleted ones too, as the
 * seed's sandboxed virtiofsd has), and those in its own /dev/shm (procfs/PID/root/dev/shm,
 * a container's). found gets a path to open and the pid that holds it, or 0.
 */
void segment_scan_process(const char *procfs, pid_t pid, void (*found)(const char *path, pid_t holder, void *context),
			  void *context);

/* The live segments of vtrace_directory(), kept open from one sample to the next. */
struct segment_set {
	struct segment **list;    /* LIVE, sampled */
	size_t count;
	struct segment **others;  /* found but not shown (stale, untrusted, ...): kept, not opened again each round */
	size_t nothers;
};

/*
 * Looks at the directory again: opens the segments of live writers that appeared (proven
 * theirs), drops those removed, whose writer died or that cannot be read any more, and
 * takes a sample of each that stays.
 */
void segment_set_refresh(struct segment_set *set);
void segment_set_free(struct segment_set *set);

#endif
