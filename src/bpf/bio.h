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

/* A request in flight: who submitted it. (Issue time and the device can go here for latencies.) */
struct bio_submitter {
	__u32 tgid;
	__u32 op;       /* enum bio_op */
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
