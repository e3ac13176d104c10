/* segments.h: the libvtrace segments on this machine, found and sampled for vstat, stat and export. */
#ifndef IOLENS_COLLECT_SEGMENTS_H
#define IOLENS_COLLECT_SEGMENTS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <vtrace.h>

/* The directory segments live in: $VTRACE_DIR, or /dev/shm. */
const char *vtrace_directory(void);

enum segment_state { SEGMENT_LIVE, SEGMENT_STALE, SEGMENT_UNKNOWN };

/* One segment, open for reading, with its last two samples. */
struct segment {
	char *path;
	dev_t dev;                 /* the file opened, to tell when the path names another */
	ino_t ino;
	struct vtrace_reader *reader;
	const struct vtrace_info *info;
	enum segment_state state;
	bool seen;                 /* found again by the latest scan */
	bool has_previous;         /* previous holds an earlier sample */
	uint64_t previous_ns, current_ns;
	struct vtrace_stats *previous, *current; /* op_count + 1 each */
};

/* A problem with one path, for the caller to report: the others go on. */
struct segment_problem {
	const char *path;
	int error;          /* negative errno */
	const char *why;    /* or NULL */
};

typedef void (*segment_problem_fn)(const struct segment_problem *problem, void *context);

/* Opens one segment; NULL after reporting the problem. follow: accept a symbolic link. */
struct segment *segment_open(const char *path, bool follow, const char *procfs, segment_problem_fn report,
			     void *context);
/*
 * Whether the writer still runs: its pid and start time, or else (a writer in another pid
 * namespace records its own pid) whether some process holds the segment open, as a
 * writer does. Sets segment->state.
 */
void segment_check_alive(struct segment *segment, const char *procfs);
/* Takes a sample: the current one becomes the previous. 0, or -errno after reporting. */
int segment_sample(struct segment *segment, segment_problem_fn report, void *context);
void segment_free(struct segment *segment);
/* True when the file at the segment's path is no longer the one we read (the service closed it). */
bool segment_removed(const struct segment *segment);

/*
 * Calls found(path) for every file named vtrace.* in directory, in name order. Returns 0
 * or -errno (the directory cannot be read).
 */
int segment_scan(const char *directory, void (*found)(const char *path, void *context), void *context);

/* The live segments of vtrace_directory(), kept open from one sample to the next. */
struct segment_set {
	struct segment **list;
	size_t count;
};

/*
 * Looks at the directory again: opens the segments of live writers that appeared, drops
 * those removed or that cannot be read any more, and takes a sample of each that stays.
 */
void segment_set_refresh(struct segment_set *set);
void segment_set_free(struct segment_set *set);

#endif
