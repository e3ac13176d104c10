/* bio.h: what bio.bpf.c counts of block I/O per process, shared by the eBPF program and the collector that reads it. */
#ifndef IOLENS_BPF_BIO_H
#define IOLENS_BPF_BIO_H

/*
 * Processes remembered. The map is an LRU: when more processes than this have done block I/O
 * since the start, the one idle the longest is forgotten; if it makes block I/O again it starts
 * from zero with a new `since_ns`, which tells the reader that its earlier counts are gone.
 */
#define BIO_MAX_PROCESSES 8192
/*
 * Requests between their start and their completion (an LRU too: requests the kernel merged
 * into another, which never complete on their own, are forgotten as new ones come).
 */
#define BIO_MAX_IN_FLIGHT 16384

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

/* A request in flight: who submitted it, when, where. */
struct bio_submitter {
	__u32 tgid;
	__u32 op;         /* enum bio_op, or BIO_OPS for a flush: not counted per process */
	__u32 latency_op; /* enum bio_latency_op */
	__u32 slot;       /* its disk's histograms, or BIO_MAX_DISKS: none */
	__u64 start_ns;   /* bpf_ktime_get_ns (CLOCK_MONOTONIC) at block_io_start */
	__u64 issue_ns;   /* at its last block_rq_issue (a request requeued is issued again), or 0 */
};

/* A process's block I/O since it was first seen (the value of the map keyed by tgid). */
struct bio_counts {
	__u64 start_ns;            /* the process's start (its leader's start_boottime): a tgid reused is another process */
	__u64 since_ns;            /* CLOCK_MONOTONIC when these counts began */
	__u64 bytes[BIO_OPS];      /* bytes completed, as the requests completed */
	__u64 requests[BIO_OPS];   /* requests completed whole */
	char comm[16];             /* the process's name (its leader's), as it was at its last request */
};

#endif
