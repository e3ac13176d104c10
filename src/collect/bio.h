/* bio.h: block I/O per process since the counting began, each request charged to the process that submitted it, and latency histograms per disk (eBPF on the block tracepoints). */
#ifndef IOLENS_BIO_H
#define IOLENS_BIO_H

#include <linux/types.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/bio.h"
#include "bpf/histogram.h"

/*
 * One disk's latency histograms since the counting began: counts of requests completed whole
 * by libvtrace's log-linear buckets (vtrace_histogram_lower/upper/quantile read them), by
 * kind (enum bio_latency_kind: start to completion, issue to completion, start to issue) and
 * operation (enum bio_latency_op). Whole disks only: a partition's requests are its disk's.
 */
struct bio_disk {
	unsigned major, minor;
	uint64_t histogram[BIO_LAT_KINDS][BIO_LAT_OPS][LOG_LINEAR_BUCKETS];
	uint64_t sum_ns[BIO_LAT_KINDS][BIO_LAT_OPS]; /* the latencies each histogram counts, summed */
};

struct bio_disks {
	unsigned count;
	struct bio_disk *disk;
	uint64_t not_kept; /* requests completed on disks beyond BIO_MAX_DISKS (no histograms) */
};

/*
 * One process's block I/O: requests made from bios in its context (block:block_io_start), their
 * bytes added as they complete (block:block_rq_complete), grouped as /proc/diskstats groups
 * them. Writeback is made by the kernel's flush threads (kworker), not by the writers.
 */
struct bio_process {
	pid_t pid;
	uint64_t start_ns;          /* the process's start, ns since boot: with pid, which process it is */
	uint64_t since_ns;          /* CLOCK_MONOTONIC when its counts began: another value, other counts */
	char name[16];              /* its comm, as the kernel has it (any bytes) */
	uint64_t bytes[BIO_OPS];    /* enum bio_op: read, write, discard */
	uint64_t requests[BIO_OPS];
};

struct bio_table {
	unsigned count;
	struct bio_process *process; /* sorted by pid */
	uint64_t unattributed_bytes; /* of requests whose process had been forgotten (more than BIO_MAX_PROCESSES) */
};

/*
 * Starts counting: loads the program and attaches it to block_io_start and block_rq_complete
 * (tp_btf: no tracefs needed). 0, or -errno with *why saying what is missing (root or CAP_BPF
 * and CAP_PERFMON, BTF, a kernel with block_io_start (6.5), a build with eBPF).
 */
int bio_start(const char **why);
/* Every process counted since bio_start (at most BIO_MAX_PROCESSES). 0 or -errno; free it after. */
int bio_read(struct bio_table *out);
/* The same counts (pid and since_ns) in a table, or NULL: then they began after it was read. */
const struct bio_process *bio_table_find(const struct bio_table *table, const struct bio_process *like);
void bio_table_free(struct bio_table *table);
/* Every disk's latency histograms since bio_start (at most BIO_MAX_DISKS). 0 or -errno; free it after. */
int bio_read_disks(struct bio_disks *out);
/* The disk of that number, or NULL: no request of it has started since bio_start. */
const struct bio_disk *bio_disks_find(const struct bio_disks *disks, unsigned major, unsigned minor);
void bio_disks_free(struct bio_disks *disks);
/* The requests a histogram holds. */
uint64_t bio_histogram_count(const uint64_t *histogram);
void bio_stop(void);

#endif
