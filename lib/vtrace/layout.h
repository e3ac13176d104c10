/* SPDX-License-Identifier: MIT */
/* layout.h: the bytes of a vtrace segment, version 1, shared by the writer and the reader (not public). */
#ifndef VTRACE_LAYOUT_H
#define VTRACE_LAYOUT_H

#include <stdint.h>

#include "vtrace.h"

/*
 * A segment is, in order, each part starting on a 64-byte boundary:
 *
 *   header         struct vt_header
 *   op table       op_count x struct vt_op_record (names and numbers)
 *   shared         (op_count + 1) x struct vt_shared: the busy-time stamps, one cache line each
 *   shards         shard_count x shard, a shard being
 *                    struct vt_shard_head, then (op_count) x struct vt_op_stats
 *   overflow shard one more shard, for threads beyond shard_count, updated with atomics
 *
 * Every offset and size is in the header and must equal what the counts give. All
 * numbers are in the writer's byte order; all times are CLOCK_MONOTONIC nanoseconds.
 */

#define VT_MAGIC "VTRACE\0\1"

/*
 * Header flags. VT_FLAG_LOCKED: the writer holds a write lock (an open file description
 * lock, F_OFD_SETLK) on the segment's first byte for as long as it has the segment open:
 * a segment nobody holds a lock on is stale, whatever pid namespace its writer ran in.
 */
#define VT_FLAG_LOCKED 0x1u
#define VT_VERSION 1u
#define VT_LINE 64u

#define VT_NAME_MAX 56u    /* op name bytes, NUL included */
#define VT_SERVICE_MAX 48u /* service name bytes, NUL included */
#define VT_SLOTS 8u        /* in-flight requests tracked per thread and op, for the oldest one */
#define VT_MAX_SHARDS 4096u
#define VT_DEFAULT_SHARDS 64u
/*
 * op_count x shard_count at most: what a reader reads in one sample is bounded (1024 ops
 * with the default 64 shards; a writer asked for more shards than this allows gets fewer,
 * and its further threads share the overflow shard).
 */
#define VT_MAX_CELLS 65536u

/* Busy time is accounted in ticks of 2^VT_TICK_SHIFT ns (the kernel's io_ticks use jiffies). */
#define VT_TICK_SHIFT 16u

/* The histogram: values below 2^VT_LINEAR_BITS exact, then 2^VT_SUB_BITS buckets per power of two. */
#define VT_LINEAR_BITS 7u
#define VT_SUB_BITS 6u
#define VT_MAX_EXPONENT 40u

struct vt_header {
	char magic[8];               /* VT_MAGIC */
	uint32_t version;            /* VT_VERSION */
	uint32_t header_size;        /* sizeof(struct vt_header) */
	uint64_t segment_size;       /* the file's size */
	int32_t pid;
	uint32_t flags;
	uint64_t start_time;         /* /proc/PID/stat field 22 */
	uint64_t created_ns;
	int32_t clock_id;            /* CLOCK_MONOTONIC */
	uint32_t op_count;
	uint32_t shard_count;        /* shards with an owner thread each; the overflow shard is extra */
	uint32_t slots;              /* VT_SLOTS */
	uint32_t histogram_buckets;  /* VTRACE_HISTOGRAM_BUCKETS */
	uint32_t tick_shift;         /* VT_TICK_SHIFT */
	uint64_t ops_offset;
	uint64_t shared_offset;
	uint64_t shards_offset;
	uint64_t op_record_size;     /* sizeof(struct vt_op_record) */
	uint64_t op_stats_size;      /* sizeof(struct vt_op_stats) */
	uint64_t shard_size;         /* head + op_count op stats */
	char service[VT_SERVICE_MAX];
	char reserved[56];
	/* Written while the server runs; each on its own line. */
	uint64_t heartbeat_ns __attribute__((aligned(VT_LINE)));
	uint32_t shards_used __attribute__((aligned(VT_LINE))); /* high-water mark of claimed shards */
	uint64_t shard_claimed[VT_MAX_SHARDS / 64] __attribute__((aligned(VT_LINE))); /* who owns which now */
	uint32_t ready __attribute__((aligned(VT_LINE))); /* 1, written last when the segment is complete */
} __attribute__((aligned(VT_LINE)));

struct vt_op_record {
	int32_t number;
	uint32_t reserved;
	char name[VT_NAME_MAX];
};

/* Per op, and one more for all ops: when busy time was last accounted, in ticks. */
struct vt_shared {
	uint64_t stamp;
	char pad[VT_LINE - 8];
};

/*
 * Per thread: requests of any op, for the busy time of the server as a whole. The begins
 * and completions here spare the writer a scan of every op of every shard each time the
 * server-wide stamp moves (once a tick on a busy server: a scan cost 3 % of a FUSE server).
 */
struct vt_shard_head {
	uint64_t begins;
	uint64_t completions;
	uint64_t busy_ticks;
	int32_t owner; /* the process whose thread claimed it (a forked child's, when the child made the claim) */
} __attribute__((aligned(VT_LINE)));

/*
 * Per thread and op. seq is odd while the owner changes the counters, so a reader that
 * sees the same even seq before and after its copy of them has a consistent snapshot.
 * What a request touches is in the first line (and one histogram bucket); the rest of
 * the slots and the busy ticks, which change rarely, in the second.
 */
struct vt_op_stats {
	uint64_t seq;
	uint64_t begins;
	uint64_t completions;
	uint64_t errors;
	uint64_t bytes;
	uint64_t service_ns;
	uint64_t max_ns;
	uint64_t slot[VT_SLOTS]; /* start of in-flight requests begun by this thread (| 1); 0 = free */
	uint64_t busy_ticks;
	uint64_t histogram[VTRACE_HISTOGRAM_BUCKETS] __attribute__((aligned(VT_LINE)));
} __attribute__((aligned(VT_LINE)));

/*
 * The bucket of a service time, without a branch: with e the exponent of ns (at least 6),
 * the bucket is (e - 6) * 64 + (ns >> (e - 6)), which is ns itself below 128 and
 * 128 + (e - 7) * 64 + the 6 bits below the leading one above.
 */
static inline unsigned vt_bucket(uint64_t ns)
{
	unsigned shift = 57u - (unsigned)__builtin_clzll(ns | 64); /* e - 6 */
	uint64_t bucket = ((uint64_t)shift << VT_SUB_BITS) + (ns >> shift);

	return bucket < VTRACE_HISTOGRAM_BUCKETS ? (unsigned)bucket : VTRACE_HISTOGRAM_BUCKETS - 1;
}

static inline uint64_t vt_align(uint64_t n)
{
	return (n + VT_LINE - 1) & ~(uint64_t)(VT_LINE - 1);
}

/* The layout that op_count and shard_count give: the reader insists on exactly this. */
struct vt_geometry {
	uint64_t ops_offset, shared_offset, shards_offset, shard_size, segment_size;
};

static inline struct vt_geometry vt_geometry(uint32_t op_count, uint32_t shard_count)
{
	struct vt_geometry g;

	g.ops_offset = vt_align(sizeof(struct vt_header));
	g.shared_offset = vt_align(g.ops_offset + (uint64_t)op_count * sizeof(struct vt_op_record));
	g.shards_offset = vt_align(g.shared_offset + ((uint64_t)op_count + 1) * sizeof(struct vt_shared));
	g.shard_size = vt_align(sizeof(struct vt_shard_head) + (uint64_t)op_count * sizeof(struct vt_op_stats));
	g.segment_size = g.shards_offset + ((uint64_t)shard_count + 1) * g.shard_size;
	return g;
}

#endif
