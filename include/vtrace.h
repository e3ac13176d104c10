/* SPDX-License-Identifier: MIT */
/* vtrace.h: libvtrace, always-on per-operation statistics that a server keeps in shared memory for tools to read. */
#ifndef VTRACE_H
#define VTRACE_H

/*
 * A server opens a segment for its service with a table of operation names, and
 * brackets each request with vtrace_begin() and vtrace_end(). The counters live in a
 * file in /dev/shm that any reader (iolens vstat) maps without talking to the server:
 *
 *     static const struct vtrace_op ops[] = { { "FUSE_OPEN", 14 }, { "FUSE_READ", 15 } };
 *     struct vtrace *vt = vtrace_open("myfs", ops, 2, NULL);
 *     ...
 *     struct vtrace_token t = vtrace_begin(vt, 0);
 *     int error = do_open(...);
 *     vtrace_end(vt, t, 0, error);
 *     ...
 *     vtrace_close(vt);
 *
 * Cost: vtrace_begin and vtrace_end read CLOCK_MONOTONIC once each and otherwise do
 * no system call, take no lock and allocate nothing. Each thread writes its own shard
 * of the counters, so threads share no cache line on that path, and a reader never
 * blocks a writer. Link with `pkg-config --cflags --libs vtrace`; libc only.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden symbols: only what this header declares is exported. */
#ifdef VTRACE_BUILD
#pragma GCC visibility push(default)
#endif

/* ---- Writing: what a server calls ---------------------------------------------- */

/* One operation the server tells apart: a name and, when it has one, a number. */
struct vtrace_op {
	const char *name; /* up to 55 bytes; readers show "NAME(NUMBER)" */
	int32_t number;   /* the protocol's number (FUSE_OPEN is 14), or -1 for none */
};

#define VTRACE_GROUP_READ 0x1u /* the segment is mode 0640 rather than 0600 */

struct vtrace_options {
	unsigned flags;        /* VTRACE_GROUP_READ */
	unsigned max_threads;  /* threads with a shard of their own; 0 means 64. Further threads still
	                        * count, in one shared shard with atomic updates (slower, still right). */
	const char *directory; /* where the segment goes; NULL means $VTRACE_DIR, or else /dev/shm */
};

struct vtrace;

/*
 * Creates the segment DIRECTORY/vtrace.SERVICE.PID (O_EXCL|O_NOFOLLOW, mode 0600 unless
 * VTRACE_GROUP_READ), locked for as long as it is open, and returns the handle, or NULL
 * with errno set: EINVAL for a service name that is empty, longer than 47 bytes or not made
 * of [A-Za-z0-9._-], for no ops or more than VTRACE_MAX_OPS, for an op name that is empty,
 * too long or has a byte that is not printable ASCII or is a space; EEXIST when this process
 * has a segment of this service open already; or what open, ftruncate and mmap say. When the
 * name is taken (by another user's file, a live twin in another pid namespace), the segment
 * is DIRECTORY/vtrace.SERVICE.PID.XXXXXXXX (8 random hex digits) instead: creation never
 * fails for a name taken; a file of ours that nobody holds the lock of is stale and replaced.
 * At most 65536 / count shards: a larger max_threads gets fewer. opts may be NULL.
 */
struct vtrace *vtrace_open(const char *service, const struct vtrace_op *ops, unsigned count,
			   const struct vtrace_options *opts);

/* What vtrace_begin returns, to hand to vtrace_end. Small, and passed by value. */
struct vtrace_token {
	uint64_t start_ns;
	uint32_t op;
	uint16_t shard;
	uint16_t slot;
};

/*
 * A request of operation op (an index into the table given to vtrace_open) starts.
 * With vt NULL or op out of range it does nothing, and the vtrace_end it leads to does
 * nothing either: a server can keep the calls in place with tracing off.
 */
struct vtrace_token vtrace_begin(struct vtrace *vt, unsigned op);

/*
 * The request ends: bytes it moved (0 when that means nothing for the op) and its
 * error (0 for success; any other value counts as an error). Any thread may end a
 * request that another began.
 */
void vtrace_end(struct vtrace *vt, struct vtrace_token token, uint64_t bytes, int error);

/*
 * The same, with the time (vtrace_now(), CLOCK_MONOTONIC in ns) given: for a server
 * that has just read the clock anyway. vtrace_begin and vtrace_end are these with the
 * clock read inline, in the caller, and none at all when vt is NULL.
 */
struct vtrace_token vtrace_begin_at(struct vtrace *vt, unsigned op, uint64_t now_ns);
void vtrace_end_at(struct vtrace *vt, struct vtrace_token token, uint64_t now_ns, uint64_t bytes, int error);

/*
 * The request ends now, its answer having been ready at ready_ns (vtrace_now() read
 * then): its service time runs to ready_ns, but it stays in flight, and its op busy,
 * until this call. For a server that reads the clock when the answer is ready and ends
 * the request after sending it, so that the wake-up of the client does not count as
 * service time, yet a server stuck sending shows as busy. vtrace_end_at with a time
 * long past would end the busy time there while the request was still seen in flight.
 */
void vtrace_end_ready(struct vtrace *vt, struct vtrace_token token, uint64_t ready_ns, uint64_t bytes, int error);

/* CLOCK_MONOTONIC in nanoseconds, the clock of every time in a segment (vtrace_now() inline). */
uint64_t vtrace_clock_ns(void);

/*
 * Tells readers the server is alive although idle. Requests do it by themselves, once
 * every 65 us tick at most; a server that can be idle for long may call this from its
 * main loop.
 */
void vtrace_heartbeat(struct vtrace *vt);

/* The segment's path. */
const char *vtrace_path(const struct vtrace *vt);

/*
 * Removes the segment and frees the handle; 0, or -1 with errno from unlink (the
 * handle is freed all the same). No thread may be inside vtrace_begin or vtrace_end.
 */
int vtrace_close(struct vtrace *vt);

/* ---- The latency histogram -------------------------------------------------------- */

/*
 * Log-linear buckets of nanoseconds: exact below 128 ns, then 64 buckets for each power
 * of two up to 2^41 ns (about 37 minutes); longer times fall in the last bucket: a value
 * is known to within its bucket, 1/64 of a power of two (1.6 %). Histograms of any
 * threads and intervals add up bucket by bucket.
 */
#define VTRACE_HISTOGRAM_BUCKETS 2304u
#define VTRACE_MAX_OPS 1024u

unsigned vtrace_histogram_bucket(uint64_t ns);
/* The smallest and the largest value a bucket holds. */
uint64_t vtrace_histogram_lower(unsigned bucket);
uint64_t vtrace_histogram_upper(unsigned bucket);
/*
 * The value at quantile q (0 to 1) of a histogram: that of rank ceil(q * count), interpolated
 * within its bucket (the c values of a bucket taken as spread evenly over it, the k-th at
 * (k - 1/2) / c of its width; a bucket of one gives its middle): always in the bucket of the
 * true value, so within 1.6 % of it, and nearer when many values share the bucket. 0 for an
 * empty histogram.
 */
uint64_t vtrace_histogram_quantile(const uint64_t *histogram, double q);

/* ---- Reading: what tools call ------------------------------------------------------- */

struct vtrace_reader;

/* What the segment says about itself. */
struct vtrace_info {
	unsigned version;      /* layout version */
	int pid;               /* the server's process */
	uint64_t start_time;   /* its start time, in clock ticks after boot (/proc/PID/stat field 22) */
	int clock_id;          /* the clock of every time in the segment: CLOCK_MONOTONIC */
	uint64_t created_ns;   /* when the segment was created */
	uint64_t heartbeat_ns; /* the last sign of life, as of the last vtrace_reader_sample */
	const char *service;
	unsigned op_count;
	unsigned shard_count;  /* shards there is room for */
	unsigned shards_used;  /* shards ever used */
	unsigned mode;         /* the file's permission bits */
	unsigned flags;        /* VTRACE_INFO_LOCKED */
	unsigned uid;          /* the file's owner */
	uint64_t dev, ino;     /* the file the reader holds open (not what its path names now) */
	unsigned unsettled;    /* snapshots of the last sample taken while a writer changed them */
};

/* The writer holds a lock on the segment while it has it open: vtrace_reader_alive asks the lock. */
#define VTRACE_INFO_LOCKED 0x1u

/* All that is known of one op (or of all of them) at one moment. */
struct vtrace_stats {
	uint64_t begins;      /* requests started */
	uint64_t completions; /* requests ended */
	uint64_t errors;      /* of those, with an error */
	uint64_t bytes;
	uint64_t service_ns;  /* sum of service times */
	uint64_t busy_ns;     /* time with at least one request in flight, up to the moment of the sample */
	uint64_t max_ns;      /* the longest service time so far */
	uint64_t oldest_ns;   /* start of the oldest request still in flight, or 0 */
	uint64_t histogram[VTRACE_HISTOGRAM_BUCKETS];
};

#define VTRACE_READ_NOFOLLOW 0x1u /* refuse a symbolic link (when scanning a directory) */

/*
 * Opens and checks a segment: a regular file whose header, sizes, offsets, counts and
 * names all hold together. Returns 0, or a negative errno with *why saying what is wrong
 * in a few words ("bad magic: not a vtrace segment", "truncated: 4096 bytes, the header
 * says 81920", ...): -EBADMSG for a malformed segment, -EAGAIN for one still being
 * created (not ready), else what open and read said.
 */
int vtrace_reader_open(const char *path, unsigned flags, struct vtrace_reader **reader, const char **why);
/* The same on a copy of a segment in memory (the libFuzzer target goes through here). */
int vtrace_reader_open_memory(const void *data, size_t size, struct vtrace_reader **reader, const char **why);
void vtrace_reader_close(struct vtrace_reader *reader);

const struct vtrace_info *vtrace_reader_info(const struct vtrace_reader *reader);
const char *vtrace_reader_op_name(const struct vtrace_reader *reader, unsigned op);
int32_t vtrace_reader_op_number(const struct vtrace_reader *reader, unsigned op);

/*
 * Reads every op's statistics into stats[0 .. op_count - 1], and all ops together into
 * stats[op_count] (busy time and the oldest request there are those of the server as a
 * whole, not sums). Each op is a consistent snapshot (it is read again while a writer
 * was changing it). *now_ns is the moment of the sample on the segment's clock.
 * Returns 0, or a negative errno with *why (a segment truncated or corrupted since it
 * was opened; -ETIME for a sample that took longer than its budget).
 *
 * The work is bounded whatever the segment holds: it is read with pread, never mapped (so
 * a sparse segment's holes are never filled, and one truncated under the reader is an
 * error, not a SIGBUS); a snapshot is tried at most 64 times, and a sample retries at most
 * 4096 times in all; op_count x shard_count is at most 65536; and a sample that takes
 * longer than its budget (1 s unless vtrace_reader_set_budget says otherwise) is given up.
 * The budget is the reading thread's CPU time (a reader kept waiting for a CPU by a busy
 * machine reads what an idle one does), and VTRACE_BUDGET_WALL_FACTOR times it on the
 * clock, for what does not use the CPU (waiting for a writer, a read that blocks).
 */
int vtrace_reader_sample(struct vtrace_reader *reader, struct vtrace_stats *stats, uint64_t *now_ns,
			 const char **why);

/*
 * What one vtrace_reader_sample may take, in ns of the thread's CPU time, and at most
 * VTRACE_BUDGET_WALL_FACTOR times that on the clock; 0 restores the default of 1 s.
 */
#define VTRACE_BUDGET_WALL_FACTOR 8u
void vtrace_reader_set_budget(struct vtrace_reader *reader, uint64_t budget_ns);

/*
 * Whether the process that wrote the segment still runs: 1 or 0 (stale), -errno when it
 * cannot tell. A segment with VTRACE_INFO_LOCKED is alive while its writer's lock is held,
 * in whatever pid namespace the writer runs; else when procfs_root/PID/stat shows the same
 * start time and no zombie. procfs_root is normally "/proc".
 */
int vtrace_reader_alive(const struct vtrace_reader *reader, const char *procfs_root);

#ifdef VTRACE_BUILD
#pragma GCC visibility pop
#else
/*
 * Inline in the caller: the clock is read where the caller's frame already is, and the
 * library's part runs without calls of its own. (The library exports vtrace_begin and
 * vtrace_end as functions too, for callers that cannot use this header.) Where <time.h>
 * does not declare clock_gettime (strict ISO C without POSIX), the clock is read by the
 * library instead.
 */
#ifdef CLOCK_MONOTONIC
static inline uint64_t vtrace_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
#else
#define vtrace_now() vtrace_clock_ns()
#endif

#define vtrace_begin(vt, op) vtrace_begin_inline((vt), (op))
#define vtrace_end(vt, token, bytes, error) vtrace_end_inline((vt), (token), (bytes), (error))

static inline struct vtrace_token vtrace_begin_inline(struct vtrace *vt, unsigned op)
{
	return vtrace_begin_at(vt, op, vt ? vtrace_now() : 0);
}

static inline void vtrace_end_inline(struct vtrace *vt, struct vtrace_token token, uint64_t bytes, int error)
{
	if (vt)
		vtrace_end_at(vt, token, vtrace_now(), bytes, error);
}
#endif

#ifdef __cplusplus
}
#endif
#endif
