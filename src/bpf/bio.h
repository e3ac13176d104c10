/* SPDX-License-Identifier: GPL-2.0-or-later */
/* bio.h: what bio.bpf.c counts of block I/O per process, shared by the eBPF program and the collector that reads it. */
#ifndef IOLENS_BPF_BIO_H
#define IOLENS_BPF_BIO_H

/*
 * Processes remembered, each with each disk it did I/O on. The map is an LRU: when more than this
 * have done block I/O since the start, the one idle the longest is forgotten; if it makes block
 * I/O again it starts from zero with a new `since_ns`, which tells the reader that its earlier
 * counts are gone.
 */
#define BIO_MAX_PROCESSES 8192
/*
 * Requests between their start and their completion whose place (BIO_IN_FLIGHT_SLOTS, by address)
 * another request holds: in a hash (those the kernel merges into another are taken out as they
 * merge; see bio.bpf.c).
 */
#define BIO_MAX_IN_FLIGHT 8192
/* Places for requests in flight, by address (a power of two; 64 bytes each: 1 MiB). */
#define BIO_IN_FLIGHT_SLOTS 16384

/* As /proc/diskstats groups them: discards apart, flushes (no data) and driver commands left out. */
enum bio_op { BIO_READ, BIO_WRITE, BIO_DISCARD, BIO_OPS };

/*
 * Latency histograms are kept for this many disks (whole disks, by major and minor): the first
 * ones to do I/O since the start. Requests of disks beyond them are counted in disks_not_kept.
 */
#define BIO_MAX_DISKS 32
/* The disks remembered, those beyond BIO_MAX_DISKS too (so that each is refused once). */
#define BIO_MAX_DISK_KEYS 256

/* Latencies by operation: /proc/diskstats's groups, flushes included. */
enum bio_latency_op { BIO_LAT_READ, BIO_LAT_WRITE, BIO_LAT_DISCARD, BIO_LAT_FLUSH, BIO_LAT_OPS };

/*
 * Which latency: a request starts when it is made from a bio and enters the block layer
 * (block_io_start, right before /proc/diskstats starts its ticks and iostat its await), is issued
 * when the driver is handed it (block_rq_issue), and completes (block_rq_complete).
 */
enum bio_latency_kind {
	BIO_LAT_TOTAL,  /* start to completion: iostat's await, as a distribution */
	BIO_LAT_DEVICE, /* issue to completion: the device's (and its driver's) time */
	BIO_LAT_QUEUE,  /* start to issue: time in the scheduler's and the block layer's queues */
	BIO_LAT_KINDS
};

/* One histogram: counts by libvtrace's log-linear buckets (histogram.h), of ns. */
struct bio_histogram {
	__u64 bucket[2304]; /* LOG_LINEAR_BUCKETS */
};

/* The histogram of a disk's slot, kind and operation in the map `latency`. */
#define BIO_LATENCY_INDEX(slot, kind, op) (((slot) * BIO_LAT_KINDS + (kind)) * BIO_LAT_OPS + (op))

/* A disk's key in the map `disks` (its value: its slot, or BIO_MAX_DISKS for none). */
#define BIO_DISK_KEY(major, minor) (((__u64)(major) << 32) | (__u32)(minor))

/*
 * Each process's (and cgroup's) own latency, start to completion, reads and writes apart: a
 * coarser log-linear scale than the disks' so that BIO_MAX_PROCESSES of them stay small. Four
 * buckets per power of two from 1.024 us (2^10 ns) to 17.2 s (2^34 ns): a bucket spans at most a
 * quarter of its lower bound: a percentile interpolated within it is within 25 % of the truth. One bucket
 * below 1.024 us, one from 17.2 s on. Counts are u32: a process's 4 billionth request of one
 * latency wraps that bucket (a few days of 10,000 IOPS all in one bucket).
 */
#define BIO_SMALL_SUB_BITS 2
#define BIO_SMALL_FIRST_BIT 10 /* 1.024 us */
#define BIO_SMALL_LAST_BIT 34  /* 17.2 s: from here on, the last bucket */
#define BIO_SMALL_BUCKETS (((BIO_SMALL_LAST_BIT - BIO_SMALL_FIRST_BIT) << BIO_SMALL_SUB_BITS) + 2) /* 98 */
/* Per process and per cgroup: reads and writes (discards are counted, not timed). */
#define BIO_SMALL_OPS 2

/*
 * The bucket of a latency in ns: 0 below 2^10; then 1 + 4 per power of two above 2^10 + which
 * quarter of its power it is in; the last from 2^34 on. The highest bit found by halving (BPF has
 * no count-leading-zeros).
 */
static inline __attribute__((always_inline)) unsigned bio_small_bucket(__u64 ns)
{
	__u64 v = ns;
	unsigned e = 0;

	if (ns < (1ull << BIO_SMALL_FIRST_BIT))
		return 0;
	if (ns >= (1ull << BIO_SMALL_LAST_BIT))
		return BIO_SMALL_BUCKETS - 1;
	for (unsigned step = 32; step; step >>= 1) {
		if (v >> step) {
			e += step;
			v >>= step;
		}
	}
	return 1 + ((e - BIO_SMALL_FIRST_BIT) << BIO_SMALL_SUB_BITS) +
	       (unsigned)((ns >> (e - BIO_SMALL_SUB_BITS)) & ((1u << BIO_SMALL_SUB_BITS) - 1));
}

/* Which of the per-process maps the program fills: set before it loads (the others get one entry). */
enum bio_want {
	BIO_WANT_PROCESSES = 1, /* the map `processes`: per process (stat --top-bio, biotop) */
	BIO_WANT_CGROUPS = 2,   /* the map `cgroups`: per cgroup (biotop -C) */
	BIO_WANT_DISKS = 4,     /* the map `latency`: per disk, 7 MiB (stat -x) */
};

/* A request flag's bit that this kernel's BTF does not give (bio.bpf.c's rqf_*): the flag is never seen set. */
#define BIO_FLAG_UNKNOWN 32

/* Cgroups remembered, each with each disk: an LRU as `processes` is. */
#define BIO_MAX_CGROUPS 1024

/* A request in flight: who submitted it, when, where. */
struct bio_submitter {
	__u64 cgroup;     /* the submitter's cgroup v2 id (bpf_get_current_cgroup_id) */
	__u64 disk;       /* BIO_DISK_KEY of its disk, or 0 */
	__u32 tgid;
	__u16 op;         /* enum bio_op, or BIO_OPS for a flush: not counted per process */
	__u16 latency_op; /* enum bio_latency_op */
	__u32 slot;       /* its disk's histograms, or BIO_MAX_DISKS: none */
	/* its size at its start (at its issue, where block_rq_issue is counted): see completions_unseen */
	__u32 bytes;
	__u64 start_ns;   /* bpf_ktime_get_ns (CLOCK_MONOTONIC) at block_io_start */
	__u64 issue_ns;   /* at its last block_rq_issue (a request requeued is issued again), or 0 */
};

/* A place for a request in flight (the map in_flight_slots; bio.bpf.c). */
struct bio_slot {
	__u64 rq; /* the request's address (or its bio's), 0 when free */
	struct bio_submitter who;
	__u64 unused; /* to 64 bytes: a place is a cache line */
};

/*
 * The key of the maps `processes` and `cgroups`: a process (its tgid) or a cgroup (its id) on one
 * disk (BIO_DISK_KEY; 0 for a request without one), as bcc's biotop keeps a row per process and
 * disk: each row's latency is of one disk's requests.
 */
struct bio_key {
	__u64 id;
	__u64 disk;
};

/*
 * A process's block I/O on one disk since it was first seen there (the value of the map keyed
 * by tgid and disk), or a cgroup's (keyed by its id and disk; start_ns, cgroup and comm unused):
 * 968 bytes, 1048 a map element: 8.2 MiB for BIO_MAX_PROCESSES. Two parts: what a request's start
 * sets (who), written only when it changes, so that the CPU making requests keeps those lines in
 * its cache; and the counts, which the CPU completing them adds to. A gap of a cache line between
 * them: whatever the element's alignment in the map, no line holds both (a line written by both
 * CPUs at each request would go back and forth between their caches).
 */
struct bio_counts {
	/* the process's start (its leader's start_boottime): a tgid reused is another process */
	__u64 start_ns;
	__u64 since_ns;            /* CLOCK_MONOTONIC when these counts began */
	__u64 cgroup;              /* the cgroup of its last request (per process) */
	char comm[16];             /* the process's name (its leader's), as it was at its last request */
	__u8 gap[64];
	__u64 bytes[BIO_OPS];      /* bytes completed, as the requests completed */
	__u64 requests[BIO_OPS];   /* requests completed whole */
	__u64 latency_sum_ns[BIO_SMALL_OPS]; /* start to completion, of the requests completed whole: for the average */
	__u64 latency_max_ns[BIO_SMALL_OPS]; /* the longest, exact */
	__u32 latency[BIO_SMALL_OPS][BIO_SMALL_BUCKETS]; /* bio_small_bucket's counts */
};

#endif
