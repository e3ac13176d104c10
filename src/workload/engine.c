/* SPDX-License-Identifier: GPL-2.0-or-later */
/* engine.c: one benchmark run: jobs doing psync or io_uring I/O on one file, timed into log-linear histograms. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "workload/engine.h"
#include "workload/uring_dl.h" /* <liburing.h>, its functions through dlopen */
#include "common/dl.h"
#include "common/path_walk.h"
#include "common/util.h"

enum phase { PHASE_RAMP, PHASE_MEASURE, PHASE_STOP };

/*
 * A pseudo-random permutation of [0, n): random I/O touches every block once per pass,
 * as fio's random map does, rather than some twice and others never. A four-round Feistel
 * network over the next even power of two, walking the cycle until the value falls below n.
 */
struct permutation {
	uint64_t n, mask;
	unsigned half_bits;
	uint64_t keys[4];
};

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static void permutation_init(struct permutation *p, uint64_t n, uint64_t seed)
{
	unsigned bits = n > 1 ? 64 - (unsigned)__builtin_clzll(n - 1) : 1;

	p->n = n;
	p->half_bits = (bits + 1) / 2;
	p->mask = (1ull << p->half_bits) - 1;
	for (int k = 0; k < 4; k++)
		p->keys[k] = mix64(seed + 0x9E3779B97F4A7C15ULL * (uint64_t)(k + 1));
}

static uint64_t permute(const struct permutation *p, uint64_t x, uint64_t pass)
{
	if (p->n <= 1)
		return 0;
	do {
		uint64_t left = x >> p->half_bits, right = x & p->mask;

		for (int k = 0; k < 4; k++) {
			uint64_t next = left ^ (mix64(right ^ p->keys[k] ^ pass) & p->mask);

			left = right;
			right = next;
		}
		x = (left << p->half_bits) | right;
	} while (x >= p->n);
	return x;
}

struct run {
	const struct bench_spec *spec;
	struct permutation order;  /* of the blocks, for random I/O */
	int phase;                 /* enum phase, atomic */
	uint64_t measure_start_ns; /* written before phase becomes PHASE_MEASURE */
	uint64_t deadline_ns;      /* likewise: completions after it are not counted (0: no runtime) */
	unsigned running;          /* jobs still working, under lock */
	pthread_mutex_t lock;
	pthread_cond_t changed;    /* a job ended, or the clock started */
	bool go;                   /* under lock: every job is set up and the clock has started */
};

/* One I/O slot: its buffer, and what it is doing. */
struct slot {
	unsigned char *buffer;
	uint64_t offset, submit_ns;
	enum bench_dir dir;
	bool measured; /* submitted during the measured phase */
};

struct job {
	struct run *run;
	unsigned index;
	pthread_t thread;
	int fd;
	uint64_t rng;
	uint64_t region_start, region_blocks, next_block; /* in blocks of bs */
	uint64_t pass;              /* random I/O: rounds of the permutation done */
	uint64_t budget, submitted; /* measured bytes this job moves (0: no limit), and submitted so far */
	struct slot *slots;
	unsigned char *memory;
	struct bench_dir_stats stats[2];
	uint64_t written, write_requests; /* every write completed, ramp and all */
	uint64_t live_ios[2], live_bytes[2], live_lat[2]; /* atomics: the main thread reads them */
	uint64_t finish_ns;
	int error;
	char error_what[96];
};

static uint64_t next_random(uint64_t *state)
{
	/* xorshift64*: fast and good enough to spread offsets and fill buffers. */
	uint64_t x = *state;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545F4914F6CDD1DULL;
}

void bench_fill(unsigned char *buffer, uint64_t length, enum bench_pattern pattern, uint64_t *seed)
{
	uint64_t i;

	if (pattern == PATTERN_ZERO) {
		memset(buffer, 0, length);
		return;
	}
	for (i = 0; i + 8 <= length; i += 8) {
		/* compressible: the second half of every 4 KiB is zeros (fio's buffer_compress_percentage=50) */
		uint64_t value = pattern == PATTERN_COMPRESSIBLE && (i & 4095) >= 2048 ? 0 : next_random(seed);
		memcpy(buffer + i, &value, 8);
	}
	for (; i < length; i++)
		buffer[i] = pattern == PATTERN_COMPRESSIBLE ? 0 : (unsigned char)next_random(seed);
}

void bench_scramble(unsigned char *buffer, uint64_t length, enum bench_pattern pattern, uint64_t offset, uint64_t stamp)
{
	if (pattern == PATTERN_ZERO)
		return;
	for (uint64_t at = 0; at + 16 <= length; at += 4096) {
		uint64_t where = offset + at;

		memcpy(buffer + at, &where, 8);
		memcpy(buffer + at + 8, &stamp, 8);
	}
}

uint64_t bench_quantile(const struct bench_dir_stats *stats, double q)
{
	uint64_t value;

	if (!stats->ios)
		return 0;
	value = vtrace_histogram_quantile(stats->hist, q);
	/* A value interpolated in a bucket may lie outside what was seen: never report beyond the extremes. */
	if (value > stats->lat_max)
		value = stats->lat_max;
	if (value < stats->lat_min)
		value = stats->lat_min;
	return value;
}

static int load_phase(const struct run *run)
{
	return __atomic_load_n(&run->phase, __ATOMIC_ACQUIRE);
}

static void job_fail(struct job *job, int err, const char *what, uint64_t offset)
{
	if (job->error)
		return;
	job->error = err;
	if (offset == UINT64_MAX)
		snprintf(job->error_what, sizeof(job->error_what), "%s", what);
	else
		snprintf(job->error_what, sizeof(job->error_what), "%s at offset %llu", what,
			 (unsigned long long)offset);
}

/* Picks the next I/O for a slot; false when the job has nothing more to submit. */
static bool job_next(struct job *job, struct slot *slot)
{
	const struct bench_spec *spec = job->run->spec;
	int phase = load_phase(job->run);
	uint64_t block;

	if (phase == PHASE_STOP || job->error)
		return false;
	slot->measured = phase == PHASE_MEASURE;
	if (slot->measured && job->budget && job->submitted >= job->budget)
		return false;
	if (spec->random) {
		/* Job j takes positions j, j + jobs, ... of one permutation: together, each block once a pass. */
		block = permute(&job->run->order, job->next_block, job->pass);
		job->next_block += spec->jobs;
		if (job->next_block >= job->run->order.n) {
			job->next_block %= job->run->order.n;
			job->pass++;
		}
	} else {
		block = job->region_start + job->next_block;
		if (++job->next_block >= job->region_blocks)
			job->next_block = 0; /* round again (time-based runs, and a ramp before a size-bound run) */
	}
	slot->offset = block * spec->bs;
	if (spec->read_percent >= 100)
		slot->dir = BENCH_READ;
	else if (spec->read_percent == 0)
		slot->dir = BENCH_WRITE;
	else
		slot->dir = next_random(&job->rng) % 100 < spec->read_percent ? BENCH_READ : BENCH_WRITE;
	if (slot->measured)
		job->submitted += spec->bs;
	if (slot->dir == BENCH_WRITE)
		bench_scramble(slot->buffer, spec->bs, spec->pattern, slot->offset, job->rng);
	return true;
}

static void job_record(struct job *job, const struct slot *slot, uint64_t bytes, uint64_t done_ns)
{
	struct bench_dir_stats *stats = &job->stats[slot->dir];
	uint64_t latency = done_ns > slot->submit_ns ? done_ns - slot->submit_ns : 0;

	if (slot->dir == BENCH_WRITE) {
		job->written += bytes;
		job->write_requests++;
	}
	if (!slot->measured || (job->run->deadline_ns && done_ns > job->run->deadline_ns))
		return; /* in the ramp, or done after the runtime (the time measured stops there) */
	stats->ios++;
	stats->bytes += bytes;
	stats->lat_sum += latency;
	if (stats->ios == 1 || latency < stats->lat_min)
		stats->lat_min = latency;
	if (latency > stats->lat_max)
		stats->lat_max = latency;
	stats->hist[vtrace_histogram_bucket(latency)]++;
	__atomic_store_n(&job->live_ios[slot->dir], stats->ios, __ATOMIC_RELAXED);
	__atomic_store_n(&job->live_bytes[slot->dir], stats->bytes, __ATOMIC_RELAXED);
	__atomic_store_n(&job->live_lat[slot->dir], stats->lat_sum, __ATOMIC_RELAXED);
	job->finish_ns = done_ns;
}

/* One request at a time, as dd and fio's psync engine do. */
static void job_psync(struct job *job)
{
	const struct bench_spec *spec = job->run->spec;
	struct slot *slot = &job->slots[0];

	while (job_next(job, slot)) {
		ssize_t done;

		slot->submit_ns = monotonic_ns();
		do { /* a signal interrupts the request, not the run: the same one again */
			if (slot->dir == BENCH_READ)
				done = pread(job->fd, slot->buffer, spec->bs, (off_t)slot->offset);
			else
				done = pwrite(job->fd, slot->buffer, spec->bs, (off_t)slot->offset);
		} while (done < 0 && errno == EINTR);
		if (done < 0) {
			job_fail(job, errno, slot->dir == BENCH_READ ? "pread" : "pwrite", slot->offset);
			break;
		} else if (done == 0) {
			job_fail(job, ENODATA, "read past the end of the file", slot->offset);
			break;
		}
		job_record(job, slot, (uint64_t)done, monotonic_ns());
	}
}

static void prep_slot(struct io_uring *ring, struct job *job, unsigned index)
{
	const struct bench_spec *spec = job->run->spec;
	struct slot *slot = &job->slots[index];
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring); /* never NULL: at most qd in flight in a ring of qd */

	if (slot->dir == BENCH_READ)
		io_uring_prep_read(sqe, job->fd, slot->buffer, (unsigned)spec->bs, slot->offset);
	else
		io_uring_prep_write(sqe, job->fd, slot->buffer, (unsigned)spec->bs, slot->offset);
	io_uring_sqe_set_data64(sqe, index);
}

/*
 * qd requests in flight, each one replaced as soon as it completes and submitted at once,
 * as fio's io_uring engine does: refilling in batches lets the queue run low while the
 * batch builds up (about 20 % fewer IOPS at queue depth 32 on a virtio disk here).
 */
int uring_dl(char *why, size_t why_len)
{
	static void *liburing;

	return dl_open_many(&liburing, URING_SONAME, why, why_len, DLSYM_ARG(io_uring_queue_init_params),
			    DLSYM_ARG(io_uring_queue_exit), DLSYM_ARG(io_uring_submit), DLSYM_ARG(__io_uring_get_cqe),
			    NULL);
}

int bench_engine_dl(enum bench_engine engine, char *why, size_t why_len)
{
	return engine == ENGINE_IO_URING ? uring_dl(why, why_len) : 0;
}

static void job_io_uring(struct job *job)
{
	const struct bench_spec *spec = job->run->spec;
	struct io_uring_params params = {
		/* fio's set-up: completions run when this thread asks, not by interrupting it (Linux >= 6.1) */
		.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
	};
	struct io_uring ring;
	unsigned inflight = 0;
	int rc;

	rc = io_uring_queue_init_params(spec->qd, &ring, &params);
	if (rc == -EINVAL) { /* an older kernel: the plain ring */
		memset(&params, 0, sizeof(params));
		rc = io_uring_queue_init_params(spec->qd, &ring, &params);
	}
	if (rc < 0) {
		job_fail(job, -rc, "io_uring_queue_init", UINT64_MAX);
		return;
	}
	for (unsigned i = 0; i < spec->qd && job_next(job, &job->slots[i]); i++) {
		job->slots[i].submit_ns = monotonic_ns();
		prep_slot(&ring, job, i);
		inflight++;
	}
	rc = io_uring_submit(&ring);
	while (inflight && rc >= 0) {
		struct io_uring_cqe *cqe;

		rc = io_uring_wait_cqe(&ring, &cqe);
		if (rc == -EINTR) {
			rc = 0;
			continue;
		}
		while (rc == 0 && io_uring_peek_cqe(&ring, &cqe) == 0) {
			unsigned index = (unsigned)io_uring_cqe_get_data64(cqe);
			struct slot *slot = &job->slots[index];
			int res = cqe->res;

			io_uring_cqe_seen(&ring, cqe);
			inflight--;
			if (res < 0)
				job_fail(job, -res, slot->dir == BENCH_READ ? "read" : "write", slot->offset);
			else if (res == 0)
				job_fail(job, ENODATA, "read past the end of the file", slot->offset);
			else
				job_record(job, slot, (uint64_t)res, monotonic_ns());
			if (job_next(job, slot)) {
				slot->submit_ns = monotonic_ns();
				prep_slot(&ring, job, index);
				inflight++;
				rc = io_uring_submit(&ring);
				if (rc > 0)
					rc = 0;
			}
		}
	}
	if (rc < 0 && rc != -EINTR)
		job_fail(job, -rc, "io_uring_enter", UINT64_MAX);
	/* An error leaves requests in flight: wait for them before their buffers go. */
	while (inflight) {
		struct io_uring_cqe *cqe;

		if (io_uring_wait_cqe(&ring, &cqe) < 0)
			break;
		if (cqe->res > 0 && job->slots[io_uring_cqe_get_data64(cqe)].dir == BENCH_WRITE) {
			job->written += (uint64_t)cqe->res;
			job->write_requests++;
		}
		io_uring_cqe_seen(&ring, cqe);
		inflight--;
	}
	io_uring_queue_exit(&ring);
}

static void job_end(struct job *job)
{
	struct run *run = job->run;

	pthread_mutex_lock(&run->lock);
	run->running--;
	pthread_cond_broadcast(&run->changed);
	pthread_mutex_unlock(&run->lock);
}

static void *job_main(void *arg)
{
	struct job *job = arg;
	const struct bench_spec *spec = job->run->spec;

	pthread_mutex_lock(&job->run->lock);
	while (!job->run->go)
		pthread_cond_wait(&job->run->changed, &job->run->lock);
	pthread_mutex_unlock(&job->run->lock);
	if (!job->error) {
		if (spec->engine == ENGINE_IO_URING)
			job_io_uring(job);
		else
			job_psync(job);
	}
	job_end(job);
	return NULL;
}

/* Opens the file and allocates the buffers: before the clock starts. */
static int job_setup(struct job *job)
{
	const struct bench_spec *spec = job->run->spec;
	int flags = (spec->read_percent >= 100 ? O_RDONLY : spec->read_percent == 0 ? O_WRONLY : O_RDWR) | O_CLOEXEC;
	uint64_t blocks = spec->span / spec->bs, align = spec->buffer_align < 4096 ? 4096 : spec->buffer_align;
	uint64_t seed = 0x9E3779B97F4A7C15ULL * (job->index + 1);
	void *memory = NULL;

	job->rng = seed ^ monotonic_ns();
	if (!job->rng)
		job->rng = 1;
	if (spec->random) {
		job->region_start = 0;
		job->region_blocks = blocks;
		job->next_block = job->index % blocks;
	} else if (spec->jobs <= 1 || blocks < spec->jobs) {
		job->region_start = 0;
		job->region_blocks = blocks;
	} else {
		/* Sequential jobs each stream through their own slice, as fio's offset_increment would. */
		job->region_start = blocks * job->index / spec->jobs;
		job->region_blocks = blocks * (job->index + 1) / spec->jobs - job->region_start;
	}
	job->fd = fd_reopen(spec->fd, flags | (spec->direct ? O_DIRECT : 0));
	if (job->fd < 0) {
		job_fail(job, errno, "open", UINT64_MAX);
		return -1;
	}
	if (!spec->direct) /* as fio's fadvise_hint: no read-ahead for random reads, more for sequential */
		posix_fadvise(job->fd, 0, 0, spec->random ? POSIX_FADV_RANDOM : POSIX_FADV_SEQUENTIAL);
	if (posix_memalign(&memory, align, spec->bs * spec->qd)) {
		job_fail(job, ENOMEM, "allocating the buffers", UINT64_MAX);
		return -1;
	}
	job->memory = memory;
	job->slots = xcalloc(spec->qd, sizeof(*job->slots));
	for (unsigned i = 0; i < spec->qd; i++) {
		job->slots[i].buffer = job->memory + i * spec->bs;
		if (spec->read_percent < 100)
			bench_fill(job->slots[i].buffer, spec->bs, spec->pattern, &seed);
	}
	return 0;
}

static void job_free(struct job *job)
{
	if (job->fd >= 0)
		close(job->fd);
	free(job->memory);
	free(job->slots);
}

static void merge(struct bench_dir_stats *into, const struct bench_dir_stats *from)
{
	if (!from->ios)
		return;
	if (!into->ios || from->lat_min < into->lat_min)
		into->lat_min = from->lat_min;
	if (from->lat_max > into->lat_max)
		into->lat_max = from->lat_max;
	into->ios += from->ios;
	into->bytes += from->bytes;
	into->lat_sum += from->lat_sum;
	for (unsigned b = 0; b < VTRACE_HISTOGRAM_BUCKETS; b++)
		into->hist[b] += from->hist[b];
}

static void progress_of(const struct run *run, const struct job *jobs, uint64_t now, struct bench_progress *out)
{
	const struct bench_spec *spec = run->spec;

	memset(out, 0, sizeof(*out));
	out->ramping = load_phase(run) == PHASE_RAMP;
	out->elapsed_ns = out->ramping ? 0 : now - run->measure_start_ns;
	for (unsigned j = 0; j < spec->jobs; j++) {
		for (int d = 0; d < 2; d++) {
			out->ios[d] += __atomic_load_n(&jobs[j].live_ios[d], __ATOMIC_RELAXED);
			out->bytes[d] += __atomic_load_n(&jobs[j].live_bytes[d], __ATOMIC_RELAXED);
			out->lat_sum[d] += __atomic_load_n(&jobs[j].live_lat[d], __ATOMIC_RELAXED);
		}
	}
}

static void set_phase(struct run *run, enum phase phase)
{
	__atomic_store_n(&run->phase, (int)phase, __ATOMIC_RELEASE);
}

/* Waits until a job ends or the time given (monotonic ns) comes; the number of jobs still running. */
static unsigned wait_jobs(struct run *run, uint64_t until_ns)
{
	struct timespec deadline;
	unsigned running;
	/*
	 * The condition variable's clock is CLOCK_REALTIME: wait in steps of at most 50 ms, so a
	 * clock step cannot stall us.
	 */
	uint64_t now = monotonic_ns(), step = until_ns > now ? until_ns - now : 0;

	if (step > 50000000)
		step = 50000000;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_nsec += (long)step;
	deadline.tv_sec += deadline.tv_nsec / 1000000000;
	deadline.tv_nsec %= 1000000000;
	pthread_mutex_lock(&run->lock);
	if (run->running && step)
		pthread_cond_timedwait(&run->changed, &run->lock, &deadline);
	running = run->running;
	pthread_mutex_unlock(&run->lock);
	return running;
}

static double seconds_of(const struct timeval *tv)
{
	return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

/* Job j of run, before it starts: its share of a byte limit, its file; a failure is kept in it. */
static void jobs_setup(struct run *run, struct job *job, unsigned j)
{
	const struct bench_spec *spec = run->spec;
	char why[96];

	job->run = run;
	job->index = j;
	job->fd = -1;
	if (spec->bytes_limit) {
		/* The limit split over the jobs, in whole blocks, the first jobs taking the rest. */
		uint64_t blocks = spec->bytes_limit / spec->bs;
		job->budget = (blocks / spec->jobs + (j < blocks % spec->jobs)) * spec->bs;
		if (!job->budget)
			job->budget = spec->bs;
	}
	job_setup(job); /* a failure is kept in the job, which then does nothing */
	if (bench_engine_dl(spec->engine, why, sizeof(why)) != 0) /* cmd_bench has said it already */
		job_fail(job, ELIBACC, why, UINT64_MAX);
}

/*
 * The jobs' counts into result, the first error among them, and the sync that ends a run of
 * buffered writes; the time the measured phase ended (end_ns, or after the sync).
 */
static uint64_t gather(const struct bench_spec *spec, struct job *jobs, struct bench_result *result, uint64_t end_ns)
{
	for (unsigned j = 0; j < spec->jobs; j++) {
		merge(&result->dir[BENCH_READ], &jobs[j].stats[BENCH_READ]);
		merge(&result->dir[BENCH_WRITE], &jobs[j].stats[BENCH_WRITE]);
		result->written += jobs[j].written;
		result->write_requests += jobs[j].write_requests;
		if (jobs[j].error && !result->error) {
			result->error = jobs[j].error;
			memcpy(result->error_what, jobs[j].error_what, sizeof(result->error_what));
		}
	}
	if (spec->sync_writes && !result->error && jobs[0].fd >= 0) {
		/* The data is on the disk before the clock stops: buffered writes are not measured as memory copies. */
		uint64_t sync_start = monotonic_ns();

		if (fdatasync(jobs[0].fd) != 0) {
			result->error = errno;
			snprintf(result->error_what, sizeof(result->error_what), "fdatasync");
		} else {
			result->synced = true;
		}
		result->sync_ns = monotonic_ns() - sync_start;
		end_ns = (end_ns > sync_start ? end_ns : sync_start) + result->sync_ns;
	}
	return end_ns;
}

int bench_run(const struct bench_spec *spec, struct bench_result *result)
{
	struct run run = { .spec = spec, .phase = spec->ramp_ns ? PHASE_RAMP : PHASE_MEASURE };
	struct job *jobs = xcalloc(spec->jobs, sizeof(*jobs));
	struct rusage usage_start, usage_end;
	uint64_t start_ns, end_ns = 0, next_tick = 0, ramp_end = 0;
	unsigned started = 0;
	bool stopped_by_time = false;

	memset(result, 0, sizeof(*result));
	permutation_init(&run.order, spec->span / spec->bs, monotonic_ns());
	pthread_mutex_init(&run.lock, NULL);
	pthread_cond_init(&run.changed, NULL);
	for (unsigned j = 0; j < spec->jobs; j++)
		jobs_setup(&run, &jobs[j], j);
	run.running = spec->jobs;
	for (unsigned j = 0; j < spec->jobs; j++) {
		if (pthread_create(&jobs[j].thread, NULL, job_main, &jobs[j])) {
			/* The jobs that started end at once; the ones that could not, never ran. */
			job_fail(&jobs[j], EAGAIN, "starting a job thread", UINT64_MAX);
			set_phase(&run, PHASE_STOP);
			pthread_mutex_lock(&run.lock);
			run.running = started;
			pthread_mutex_unlock(&run.lock);
			break;
		}
		started++;
	}
	if (!spec->ramp_ns && spec->on_measure)
		spec->on_measure(spec->context);
	getrusage(RUSAGE_SELF, &usage_start);
	start_ns = monotonic_ns();
	run.measure_start_ns = start_ns;
	if (spec->ramp_ns)
		ramp_end = start_ns + spec->ramp_ns;
	else if (spec->runtime_ns)
		run.deadline_ns = start_ns + spec->runtime_ns;
	pthread_mutex_lock(&run.lock);
	run.go = true;
	pthread_cond_broadcast(&run.changed);
	pthread_mutex_unlock(&run.lock);
	if (spec->tick_ns)
		next_tick = start_ns + spec->tick_ns;
	for (;;) {
		uint64_t now = monotonic_ns(), until = UINT64_MAX;
		int phase = load_phase(&run);

		if (spec->stop && *spec->stop && phase != PHASE_STOP) {
			result->interrupted = true;
			set_phase(&run, PHASE_STOP);
			end_ns = now;
			phase = PHASE_STOP;
		}
		if (phase == PHASE_RAMP && now >= ramp_end) {
			/* The measured phase starts now: what is counted, and the CPU time, from here. */
			if (spec->on_measure)
				spec->on_measure(spec->context);
			getrusage(RUSAGE_SELF, &usage_start);
			now = monotonic_ns();
			run.measure_start_ns = now;
			if (spec->runtime_ns)
				run.deadline_ns = now + spec->runtime_ns;
			set_phase(&run, PHASE_MEASURE);
			phase = PHASE_MEASURE;
			if (spec->tick_ns)
				next_tick = now + spec->tick_ns;
		}
		if (phase == PHASE_MEASURE && spec->runtime_ns && now >= run.measure_start_ns + spec->runtime_ns) {
			stopped_by_time = true;
			end_ns = run.measure_start_ns + spec->runtime_ns;
			set_phase(&run, PHASE_STOP);
			phase = PHASE_STOP;
		}
		if (spec->tick_ns && now >= next_tick && phase != PHASE_STOP) {
			struct bench_progress progress;

			progress_of(&run, jobs, now, &progress);
			spec->on_tick(&progress, spec->context);
			next_tick += spec->tick_ns;
			if (next_tick <= now) /* a slow callback: skip what was missed */
				next_tick = now + spec->tick_ns;
		}
		if (phase == PHASE_RAMP)
			until = ramp_end;
		else if (phase == PHASE_MEASURE && spec->runtime_ns)
			until = run.measure_start_ns + spec->runtime_ns;
		if (spec->tick_ns && next_tick < until)
			until = next_tick;
		if (!wait_jobs(&run, until))
			break;
	}
	for (unsigned j = 0; j < started; j++)
		pthread_join(jobs[j].thread, NULL);
	if (spec->tick_ns && load_phase(&run) != PHASE_RAMP && !result->interrupted) {
		/* The last, partial interval, up to where the measured phase ended. */
		struct bench_progress progress;
		uint64_t last = end_ns;

		if (!last)
			for (unsigned j = 0; j < spec->jobs; j++)
				if (jobs[j].finish_ns > last)
					last = jobs[j].finish_ns;
		if (last > run.measure_start_ns) {
			progress_of(&run, jobs, last, &progress);
			progress.ramping = false;
			spec->on_tick(&progress, spec->context);
		}
	}
	if (load_phase(&run) == PHASE_RAMP) {
		/* Every job ended during the ramp (an error): nothing was measured. */
		run.measure_start_ns = monotonic_ns();
	}
	if (!stopped_by_time && !result->interrupted) {
		for (unsigned j = 0; j < spec->jobs; j++)
			if (jobs[j].finish_ns > end_ns)
				end_ns = jobs[j].finish_ns;
		if (!end_ns)
			end_ns = monotonic_ns();
	}
	end_ns = gather(spec, jobs, result, end_ns);
	getrusage(RUSAGE_SELF, &usage_end);
	result->elapsed_ns = end_ns > run.measure_start_ns ? end_ns - run.measure_start_ns : 0;
	result->cpu_user_s = seconds_of(&usage_end.ru_utime) - seconds_of(&usage_start.ru_utime);
	result->cpu_sys_s = seconds_of(&usage_end.ru_stime) - seconds_of(&usage_start.ru_stime);
	for (unsigned j = 0; j < spec->jobs; j++)
		job_free(&jobs[j]);
	free(jobs);
	pthread_cond_destroy(&run.changed);
	pthread_mutex_destroy(&run.lock);
	return result->error ? -result->error : 0;
}
