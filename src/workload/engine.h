/* SPDX-License-Identifier: GPL-2.0-or-later */
/* engine.h: one benchmark run: jobs doing psync or io_uring I/O on one file, timed into log-linear histograms. */
#ifndef IOLENS_BENCH_ENGINE_H
#define IOLENS_BENCH_ENGINE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "vtrace.h" /* the log-linear histogram: VTRACE_HISTOGRAM_BUCKETS, vtrace_histogram_*() */

enum bench_dir { BENCH_READ, BENCH_WRITE };
enum bench_engine { ENGINE_PSYNC, ENGINE_IO_URING };
enum bench_pattern { PATTERN_RANDOM, PATTERN_ZERO, PATTERN_COMPRESSIBLE };

/* Counts of the measured phase for one direction; latencies in ns. */
struct bench_dir_stats {
	uint64_t ios, bytes, lat_sum, lat_min, lat_max;
	uint64_t hist[VTRACE_HISTOGRAM_BUCKETS];
};

/* What the running jobs have done so far (the measured phase only), for progress and --interval. */
struct bench_progress {
	uint64_t elapsed_ns; /* since the measured phase began; 0 during the ramp */
	bool ramping;
	uint64_t ios[2], bytes[2], lat_sum[2];
};

struct bench_spec {
	int fd;                /* the file or device: each job opens it again (fd_reopen), never by name */
	bool direct;           /* O_DIRECT */
	bool random;
	unsigned read_percent; /* 100 reads only, 0 writes only, else a mix */
	uint64_t bs;
	uint64_t span;         /* bytes of the file used, from offset 0: a multiple of bs, at least bs */
	uint64_t buffer_align; /* memory alignment of the buffers (O_DIRECT's, at least a page) */
	unsigned qd, jobs;
	enum bench_engine engine;
	uint64_t bytes_limit;  /* bytes moved in the measured phase, over all jobs; 0 for no limit */
	uint64_t runtime_ns;   /* the measured phase's limit; 0 for none (then bytes_limit must be set) */
	uint64_t ramp_ns;      /* I/O before the measured phase, not counted */
	enum bench_pattern pattern;
	bool sync_writes;      /* fdatasync before the clock stops (buffered writes, as dd conv=fdatasync) */
	/* Called (when set) as the measured phase starts, after the ramp: to sample counters alongside. */
	void (*on_measure)(void *context);
	uint64_t tick_ns;      /* > 0: on_tick is called about this often with the running totals */
	void (*on_tick)(const struct bench_progress *progress, void *context);
	void *context;
	volatile sig_atomic_t *stop; /* set (by a signal handler) to end the run early */
};

struct bench_result {
	struct bench_dir_stats dir[2];
	uint64_t elapsed_ns;  /* the measured phase, with the final sync when there was one */
	uint64_t sync_ns;     /* how long the final fdatasync took */
	bool synced;
	double cpu_user_s, cpu_sys_s; /* of the whole process during the measured phase */
	bool interrupted;     /* *stop was set */
	/* bytes written by the whole run, ramp and all: what the device's count must not exceed */
	uint64_t written;
	uint64_t write_requests; /* and in how many requests */
	int error;            /* errno of the first failed I/O or set-up step, 0 when none */
	char error_what[96];  /* what failed: "pread at offset 4096", "io_uring_queue_init" */
};

/*
 * Runs the spec: 0, or -errno with result->error and error_what telling what failed
 * (the counts of what was done before are kept). Allocates its buffers and histograms
 * itself; needs no clean-up by the caller.
 */
int bench_run(const struct bench_spec *spec, struct bench_result *result);
/*
 * Opens the library the engine needs (liburing for io_uring: dlopen, not linked): 0, or -1 with
 * "SONAME: why". bench_run calls it too, and fails its jobs with it.
 */
int bench_engine_dl(enum bench_engine engine, char *why, size_t why_len);

/* The latency at quantile q (0 to 1) of a direction, ns; 0 without I/O. */
uint64_t bench_quantile(const struct bench_dir_stats *stats, double q);

/* Fills a buffer with a pattern: random bytes, zeros, or half random half zeros per 4 KiB. */
void bench_fill(unsigned char *buffer, uint64_t length, enum bench_pattern pattern, uint64_t *seed);
/*
 * Makes a buffer about to be written at offset unlike any other: the offset and a stamp in
 * the first 16 bytes of every 4 KiB, so storage that deduplicates cannot absorb the writes
 * (fio's scramble_buffers). Zeros stay zeros.
 */
void bench_scramble(unsigned char *buffer, uint64_t length, enum bench_pattern pattern, uint64_t offset,
		    uint64_t stamp);

#endif
