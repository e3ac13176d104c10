/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bio.h: block I/O per process since the counting began, each request charged to the process that
 * submitted it, and latency histograms per disk (eBPF on the block tracepoints).
 */
#ifndef IOLENS_BIO_H
#define IOLENS_BIO_H

#include <linux/types.h>
#include <stdbool.h>
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
	/*
	 * LOG_LINEAR_BUCKETS counts each (18 KiB), read-only: shared by every read while it does not
	 * change, so two reads' pointers are equal when their histograms are, and differ, but for a
	 * moment's race, only when one counted a request more; never NULL after bio_read_disks.
	 */
	const uint64_t *histogram[BIO_LAT_KINDS][BIO_LAT_OPS];
	uint64_t sum_ns[BIO_LAT_KINDS][BIO_LAT_OPS]; /* the latencies each histogram counts, summed */
};

struct bio_disks {
	unsigned count;
	struct bio_disk *disk;
	uint64_t not_kept; /* requests completed on disks beyond BIO_MAX_DISKS (no histograms) */
};

/*
 * A process's or cgroup's latency of one operation (read or write), start to completion, of its
 * requests completed whole: counts by bio_small_bucket (4 buckets per power of two, 1.024 us to
 * 17.2 s: a percentile, interpolated within its bucket, is at most a bucket's width, 25 %, from the
 * truth), their sum and the longest (exact).
 */
struct bio_latency {
	uint32_t bucket[BIO_SMALL_BUCKETS];
	uint64_t sum_ns, max_ns;
};

/* What a latency histogram says, over the counting or between two samples. */
struct bio_latency_figures {
	uint64_t requests;            /* requests in it (0: the figures are unknown) */
	uint64_t average_ns;          /* exact: the sum of the latencies / requests */
	uint64_t p50_ns, p99_ns;      /* interpolated within the bucket holding the percentile (vt_quantile) */
	/* exact where it is the longest since the counting began, else its bucket's middle */
	uint64_t max_ns;
};

/*
 * One process's (or cgroup's) block I/O on one disk, as bcc's biotop keeps it: requests made from bios in its context
 * (block:block_io_start), their bytes added as they complete (block:block_rq_complete), grouped
 * as /proc/diskstats groups them. Writeback is made by the kernel's flush threads (kworker), not
 * by the writers; read-ahead by the reader that triggered it.
 */
struct bio_process {
	pid_t pid;                  /* 0 in a table of cgroups */
	uint64_t start_ns;          /* the process's start, ns since boot: with pid, which process it is */
	uint64_t since_ns;          /* CLOCK_MONOTONIC when its counts began: another value, other counts */
	char name[16];              /* its comm, as the kernel has it (any bytes); "" for a cgroup */
	/* a cgroup's id; a process's cgroup at its last request (cgroup v2 ids: directory inodes) */
	uint64_t cgroup;
	/* its disk (whole: a partition's requests are its disk's; 0:0 requests without one) */
	unsigned disk_major, disk_minor;
	uint64_t bytes[BIO_OPS];    /* enum bio_op: read, write, discard */
	uint64_t requests[BIO_OPS];
	struct bio_latency latency[BIO_SMALL_OPS]; /* reads, writes */
};

struct bio_table {
	unsigned count;
	bool cgroups;                /* of cgroups, by id (bio_read_cgroups); else of processes */
	struct bio_process *process; /* sorted by pid (by cgroup id), then disk */
	/*
	 * completed and charged to no process: its entry forgotten (more than BIO_MAX_PROCESSES),
	 * or its start unseen
	 */
	uint64_t unattributed_bytes;
	/*
	 * Requests whose end the kernel ran no program for, charged to their process as their address
	 * was used again (bio.bpf.c's completions_unseen), and their bytes. Since the counting began.
	 */
	uint64_t unseen_completions, unseen_completion_bytes;
};

/*
 * Starts counting: loads the program and attaches it to the block tracepoints (tp_btf: no
 * tracefs needed). want (enum bio_want) says which maps are filled; the others get
 * one entry (locked memory: processes 8.2 MiB, cgroups 1 MiB, 220 KiB a disk, for the disks of
 * /sys/block and 8 more, the requests in flight 1.9 MiB always).
 * Each request's submitter and start are seen at block_io_start (Linux 6.5), else at block_getrq
 * (the same call, with the bio) and moved to the request as block_rq_insert, block_rq_issue or
 * block_rq_complete first sees it (enum bio_mechanism); IOLENS_BIO_MECHANISM (block_io_start or
 * block_getrq) forces one, refused where the kernel cannot.
 * A second call is the first's. 0, or -errno with *why saying what is missing (root or CAP_BPF
 * and CAP_PERFMON, a build with eBPF, or what bio_mechanism_check says).
 */
int bio_start(unsigned want, const char **why);
/*
 * How each request's submitter and start are seen: the mechanism bio_start chooses, from the
 * kernel's BTF (never its version). `iolens version --features` and doctor's header say it.
 */
enum bio_mechanism {
	BIO_BY_IO_START, /* block_io_start (Linux 6.5) */
	BIO_BY_GETRQ,    /* block_getrq (the same call, with the bio), moved to the request at its first sight */
	BIO_BY_DISKS,    /* no submitter: the disks' histograms alone (block_rq_issue, block_rq_complete) */
};
/* After bio_start, the mechanism it chose (BIO_BY_DISKS without processes and cgroups, or before). */
enum bio_mechanism bio_mechanism(void);
/*
 * Whether this kernel lets bio_start count with the mechanism: 0, or -errno with *why (no eBPF
 * in this build, no BTF, the first tracepoint it lacks, a request flag or operation whose value
 * its BTF does not give). Loads libbpf and reads the BTF: call it once, not per sample.
 */
int bio_mechanism_check(enum bio_mechanism mechanism, const char **why);
/* Its name (IOLENS_BIO_MECHANISM's, JSON's "mechanism"): "block_io_start", "block_getrq", "block_rq". */
const char *bio_mechanism_name(enum bio_mechanism mechanism);
/* In words, for a header: "ebpf (tracepoints block_io_start, block_rq_issue/merge/complete)". */
const char *bio_mechanism_mode(enum bio_mechanism mechanism);
/* What is less exact with it than with block_io_start, a sentence to say once; NULL for nothing. */
const char *bio_mechanism_less_exact(enum bio_mechanism mechanism);
/*
 * The bit of the request flag name (__RQF_IO_STAT) in the kernel of btf: its enumerator's value
 * (an enum since 6.9, named or not); where no __RQF_ enumerator is there at all (before 6.9,
 * defines), old_bit, the same from 4.10 to 6.8. 0 with *why saying which; -ESRCH (others are
 * there but not it, no BTF) with *why: the bit is not known and must not be guessed.
 */
struct btf;
int bio_request_flag_bit(const struct btf *btf, const char *name, unsigned old_bit, unsigned *bit, const char **why);
/* Every process counted since bio_start, a row per disk (at most BIO_MAX_PROCESSES). 0 or -errno; free it after. */
int bio_read(struct bio_table *out);
/*
 * A request started and not seen ending: in flight still, or ended without the kernel running the
 * program at its completion (bio.bpf.c's completions_unseen) and its address not used again since.
 */
struct bio_unended {
	pid_t pid;          /* its submitter (0: not known, the disks alone counted) */
	unsigned disk_major, disk_minor;
	unsigned op;        /* enum bio_op; BIO_OPS a flush */
	uint64_t bytes;     /* its size at its start, or at its issue where that is counted */
	uint64_t issue_ns;  /* CLOCK_MONOTONIC at its last issue; 0: not issued, or issues not counted */
};
struct bio_unended_set {
	size_t count;
	struct bio_unended *request;
};
/* The requests started and not seen ending, now. 0 or -errno; free it after. */
int bio_read_unended(struct bio_unended_set *out);
/*
 * The entries of processes that ended (kill(pid, 0) says no such process) taken out of the
 * program's table, their counts being in table (a table of processes read before) and no more,
 * unless a request of theirs is in flight (unended). A process's next requests, if its pid comes back,
 * begin another entry (another since_ns). Without it a machine that starts many short processes
 * kept the table full (BIO_MAX_PROCESSES entries of ~1 KB), read whole at each window's ends.
 * The number taken out.
 */
unsigned bio_forget_ended(const struct bio_table *table, const struct bio_unended_set *unended);
/*
 * Requests charged so far as their completion went unseen (bio_table's unseen_completions, now): 0
 * without the program.
 */
uint64_t bio_unseen_completions(void);
void bio_unended_free(struct bio_unended_set *set);
/* Every cgroup counted since bio_start with BIO_WANT_CGROUPS, a row per disk (at most BIO_MAX_CGROUPS). 0 or -errno. */
int bio_read_cgroups(struct bio_table *out);
/*
 * The figures of a latency histogram now, or of what it gained since then (NULL: since the
 * counting began; then must be the same counts, as bio_table_find gives them).
 */
void bio_latency_figures(const struct bio_latency *now, const struct bio_latency *then,
			 struct bio_latency_figures *out);
/* Another histogram's counts added to one (u32 buckets, modulo 2^32 as the program's), the longest kept. */
void bio_latency_add(struct bio_latency *into, const struct bio_latency *from);
/* A process's (or cgroup's) reads and writes in one histogram. */
void bio_latency_both(const struct bio_process *p, struct bio_latency *out);
/* A bucket of bio_small_bucket: its lowest value and its highest, in ns. */
uint64_t bio_small_lower(unsigned bucket);
uint64_t bio_small_upper(unsigned bucket);
/* The same counts (pid or cgroup, disk, and since_ns) in a table, or NULL: then they began after it was read. */
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
