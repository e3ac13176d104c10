/* SPDX-License-Identifier: MIT */
/* reader.c: the tool side of libvtrace: checks a segment, trusting nothing in it, and reads consistent snapshots. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "layout.h"
#include "proc.h"

/*
 * A snapshot that keeps changing under us is copied again at once up to SNAPSHOT_TRIES
 * times: real servers need one or two. Then, while the sample has SETTLE_NS of waiting
 * left, after a short sleep each time: a writer preempted in the middle of an update (a
 * busy machine) runs again and finishes it. Beyond that, or beyond SAMPLE_RETRIES tries in
 * all, the snapshot is taken as it is and counted unsettled, and every later one of the
 * sample gets one try: never a hang, also when a hostile writer keeps a snapshot odd.
 */
#define SNAPSHOT_TRIES 64
#define SAMPLE_RETRIES 4096
#define SETTLE_NS 10000000ull
#define SETTLE_SLEEP_NS 50000

/*
 * What one sample may take by default (vtrace_reader_set_budget changes it): a segment made
 * to be slow to read is given up with a message, so that the other segments, and the tool,
 * go on. The largest segment a writer makes (VT_MAX_CELLS, every op of every shard busy)
 * reads in about a tenth of it. The budget is the reading thread's CPU time, the work done:
 * a reader that waits for a CPU on a busy machine (or is stopped) reads what an idle one
 * does. What does not use the CPU (sleeps while a writer settles, a read that blocks) is
 * bounded by the clock, VTRACE_BUDGET_WALL_FACTOR times the budget.
 */
#define SAMPLE_BUDGET_NS 1000000000ull

/* Between tries: let the writer's core finish what it does with the line. */
#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define cpu_relax() __asm__ volatile("yield" ::: "memory")
#else
#define cpu_relax() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#endif

struct vtrace_reader {
	int fd;                     /* -1 when reading memory */
	const unsigned char *memory;
	size_t memory_size;
	/*
	 * Everything is read with pread, nothing through a mapping: pread reads the holes of a
	 * sparse segment as zeros without filling them (a mapping would allocate a page of
	 * tmpfs for each it touched: a sparse segment of many gigabytes made by anyone could fill
	 * /dev/shm), and a segment truncated under us is an error, not a SIGBUS.
	 */
	struct vt_header header;    /* as read and checked at open */
	struct vt_op_record *ops;   /* names checked to end in a NUL */
	struct vtrace_info info;
	char service[VT_SERVICE_MAX];
	struct vt_op_stats *scratch; /* one op's stats while it is read */
	struct vt_shared *shared;   /* op_count + 1 lines of busy stamps, read at each sample */
	uint64_t *stamps;           /* their stamps */
	uint64_t *begins, *completions; /* per op, read with the stamps: whether requests are in flight */
	uint64_t budget_ns;         /* what one sample may take, of the thread's CPU time */
	uint64_t cpu_deadline;      /* of the sample under way: the thread's CPU time, */
	uint64_t deadline;          /* and the clock (the budget times VTRACE_BUDGET_WALL_FACTOR) */
	unsigned checks;            /* of the deadlines in the sample under way */
	uint64_t settle_until;      /* the sample under way may wait for a writer until then */
	unsigned retries;           /* left to the sample under way */
};

/* Reads exactly len bytes at offset, from the file or the memory: -EBADMSG when they are not there. */
static int read_at(const struct vtrace_reader *r, uint64_t offset, void *buf, size_t len)
{
	if (r->fd < 0) {
		if (offset > r->memory_size || len > r->memory_size - offset)
			return -EBADMSG;
		memcpy(buf, r->memory + offset, len);
		return 0;
	}
	for (size_t done = 0; done < len;) {
		ssize_t got = pread(r->fd, (char *)buf + done, len - done, (off_t)(offset + done));
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (got == 0)
			return -EBADMSG;
		done += (size_t)got;
	}
	return 0;
}

static uint64_t source_size(const struct vtrace_reader *r)
{
	struct stat st;

	if (r->fd < 0)
		return r->memory_size;
	return fstat(r->fd, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static bool valid_service(const char *service)
{
	size_t len = strnlen(service, VT_SERVICE_MAX);

	if (len == 0 || len == VT_SERVICE_MAX || service[0] == '.')
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = service[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
		      c == '_' || c == '-'))
			return false;
	}
	return true;
}

/* Every number of the header against what it must be, and the layout against the counts. */
static const char *check_header(const struct vt_header *h, uint64_t size)
{
	static __thread char message[160]; /* *why stays valid until this thread's next call */
	struct vt_geometry g;

	if (memcmp(h->magic, VT_MAGIC, sizeof(h->magic)))
		return "bad magic: not a vtrace segment";
	if (h->version != VT_VERSION) {
		snprintf(message, sizeof(message), "layout version %u, this reader knows %u", h->version, VT_VERSION);
		return message;
	}
	if (h->header_size != sizeof(*h))
		return "header size does not match its version";
	if (h->op_count == 0 || h->op_count > VTRACE_MAX_OPS)
		return "op count out of range";
	if (h->shard_count == 0 || h->shard_count > VT_MAX_SHARDS)
		return "shard count out of range";
	if ((uint64_t)h->op_count * h->shard_count > VT_MAX_CELLS) {
		snprintf(message, sizeof(message), "too large to read: %u ops x %u shards is more than %u", h->op_count,
			 h->shard_count, VT_MAX_CELLS);
		return message;
	}
	if (h->slots != VT_SLOTS || h->histogram_buckets != VTRACE_HISTOGRAM_BUCKETS ||
	    h->tick_shift != VT_TICK_SHIFT || h->op_record_size != sizeof(struct vt_op_record) ||
	    h->op_stats_size != sizeof(struct vt_op_stats))
		return "record sizes do not match the layout version";
	g = vt_geometry(h->op_count, h->shard_count);
	if (h->ops_offset != g.ops_offset || h->shared_offset != g.shared_offset ||
	    h->shards_offset != g.shards_offset || h->shard_size != g.shard_size || h->segment_size != g.segment_size)
		return "offsets and sizes do not add up";
	if (size != h->segment_size) {
		snprintf(message, sizeof(message), "truncated or overlong: %llu bytes, the header says %llu",
			 (unsigned long long)size, (unsigned long long)h->segment_size);
		return message;
	}
	if (h->pid <= 0)
		return "bad pid";
	if (h->clock_id != CLOCK_MONOTONIC)
		return "unknown clock";
	if (!valid_service(h->service))
		return "bad service name";
	if (h->shards_used > h->shard_count)
		return "more shards used than there are";
	return NULL;
}

static int finish_open(struct vtrace_reader *r, const char **why)
{
	uint64_t size = source_size(r);
	int rc;

	*why = NULL;
	if (size < sizeof(r->header)) {
		*why = "truncated: too short for a header";
		return -EBADMSG;
	}
	rc = read_at(r, 0, &r->header, sizeof(r->header));
	if (rc)
		return *why = "cannot read the header", rc;
	if ((*why = check_header(&r->header, size)))
		return -EBADMSG;
	if (__atomic_load_n(&r->header.ready, __ATOMIC_ACQUIRE) != 1) {
		*why = "not ready: being created, or left half made";
		return -EAGAIN;
	}
	r->ops = calloc(r->header.op_count, sizeof(*r->ops));
	r->scratch = malloc(sizeof(*r->scratch));
	r->stamps = calloc(r->header.op_count + 1, sizeof(*r->stamps));
	r->shared = calloc(r->header.op_count + 1, sizeof(*r->shared));
	r->begins = calloc(r->header.op_count + 1, sizeof(*r->begins));
	r->completions = calloc(r->header.op_count + 1, sizeof(*r->completions));
	if (!r->ops || !r->scratch || !r->stamps || !r->shared || !r->begins || !r->completions)
		return *why = "out of memory", -ENOMEM;
	rc = read_at(r, r->header.ops_offset, r->ops, r->header.op_count * sizeof(*r->ops));
	if (rc)
		return *why = "cannot read the op table", rc;
	for (unsigned i = 0; i < r->header.op_count; i++) {
		size_t len = strnlen(r->ops[i].name, VT_NAME_MAX);

		if (len == VT_NAME_MAX || !len)
			return *why = "an op name without an end", -EBADMSG;
		for (size_t c = 0; c < len; c++)
			if (r->ops[i].name[c] < 0x21 || r->ops[i].name[c] > 0x7e)
				return *why = "an op name with a character that is not printable", -EBADMSG;
	}
	memcpy(r->service, r->header.service, sizeof(r->service));
	struct vtrace_info file = r->info; /* what fstat said: mode, owner, device and inode */
	r->info = (struct vtrace_info){
		.version = r->header.version,
		.pid = r->header.pid,
		.start_time = r->header.start_time,
		.clock_id = r->header.clock_id,
		.created_ns = r->header.created_ns,
		.heartbeat_ns = r->header.heartbeat_ns,
		.service = r->service,
		.op_count = r->header.op_count,
		.shard_count = r->header.shard_count,
		.shards_used = r->header.shards_used,
		.mode = file.mode,
		.uid = file.uid,
		.dev = file.dev,
		.ino = file.ino,
		.flags = r->header.flags & VT_FLAG_LOCKED ? VTRACE_INFO_LOCKED : 0,
	};
	r->budget_ns = SAMPLE_BUDGET_NS;
	return 0;
}

static int open_common(struct vtrace_reader *r, struct vtrace_reader **reader, const char **why)
{
	int rc = finish_open(r, why);

	if (rc) {
		vtrace_reader_close(r);
		return rc;
	}
	*reader = r;
	return 0;
}

int vtrace_reader_open(const char *path, unsigned flags, struct vtrace_reader **reader, const char **why)
{
	struct vtrace_reader *r;
	struct stat st;
	int fd;

	*reader = NULL;
	*why = NULL;
	/* O_NONBLOCK: a FIFO put in place of a segment must not hang us. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | (flags & VTRACE_READ_NOFOLLOW ? O_NOFOLLOW : 0));
	if (fd < 0) {
		if (errno == ELOOP && (flags & VTRACE_READ_NOFOLLOW))
			*why = "a symbolic link: refused";
		return -errno;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		*why = "not a regular file";
		return -EBADMSG;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		close(fd);
		*why = "out of memory";
		return -ENOMEM;
	}
	r->fd = fd;
	r->info.mode = st.st_mode & 07777;
	r->info.uid = st.st_uid;
	r->info.dev = (uint64_t)st.st_dev;
	r->info.ino = (uint64_t)st.st_ino;
	return open_common(r, reader, why);
}

int vtrace_reader_open_memory(const void *data, size_t size, struct vtrace_reader **reader, const char **why)
{
	struct vtrace_reader *r = calloc(1, sizeof(*r));

	*reader = NULL;
	*why = NULL;
	if (!r)
		return *why = "out of memory", -ENOMEM;
	r->fd = -1;
	r->memory = data;
	r->memory_size = size;
	return open_common(r, reader, why);
}

void vtrace_reader_close(struct vtrace_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	free(r->ops);
	free(r->shared);
	free(r->scratch);
	free(r->stamps);
	free(r->begins);
	free(r->completions);
	free(r);
}

const struct vtrace_info *vtrace_reader_info(const struct vtrace_reader *r)
{
	return &r->info;
}

const char *vtrace_reader_op_name(const struct vtrace_reader *r, unsigned op)
{
	return op < r->header.op_count ? r->ops[op].name : NULL;
}

int32_t vtrace_reader_op_number(const struct vtrace_reader *r, unsigned op)
{
	return op < r->header.op_count ? r->ops[op].number : -1;
}

int vtrace_reader_alive(const struct vtrace_reader *r, const char *procfs_root)
{
	uint64_t start_time;
	char state = 0;
	int rc;

	if ((r->header.flags & VT_FLAG_LOCKED) && r->fd >= 0) {
		rc = vtrace_segment_unlocked(r->fd);
		return rc < 0 ? rc : !rc;
	}
	rc = vtrace_proc_stat(procfs_root, r->header.pid, &start_time, &state);
	if (rc == -ENOENT || rc == -ESRCH)
		return 0;
	if (rc)
		return rc;
	return start_time == r->header.start_time && state != 'Z' && state != 'X'; /* a zombie is dead */
}

static uint64_t clock_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The CPU time of the calling thread: what it did, not how long it waited for a CPU. */
static uint64_t thread_cpu_now(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return clock_now(); /* (never on Linux: the clock then, which only counts more) */
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void vtrace_reader_set_budget(struct vtrace_reader *r, uint64_t budget_ns)
{
	r->budget_ns = budget_ns ? budget_ns : SAMPLE_BUDGET_NS;
}

/* The deadlines of a sample that starts now (at start on the clock), never wrapping. */
static void start_budget(struct vtrace_reader *r, uint64_t start)
{
	uint64_t cpu = thread_cpu_now(), wall = r->budget_ns;

	wall = wall > UINT64_MAX / VTRACE_BUDGET_WALL_FACTOR ? UINT64_MAX : wall * VTRACE_BUDGET_WALL_FACTOR;
	r->cpu_deadline = r->budget_ns > UINT64_MAX - cpu ? UINT64_MAX : cpu + r->budget_ns;
	r->deadline = wall > UINT64_MAX - start ? UINT64_MAX : start + wall;
	r->checks = 0;
}

/*
 * Whether the sample under way is past its budget: the clock each time, the thread's CPU time
 * (a system call, dearer) every 16th time and the first: a few cells more at most.
 */
static bool past_budget(struct vtrace_reader *r)
{
	if (clock_now() > r->deadline)
		return true;
	return (r->checks++ & 15) == 0 && thread_cpu_now() > r->cpu_deadline;
}

/* A sample that took longer than its budget: given up. */
static int over_budget(const struct vtrace_reader *r, const char **why)
{
	static __thread char message[96];

	snprintf(message, sizeof(message),
		 "took more than %llu ms to read: given up (a segment made to be slow to read?)",
		 (unsigned long long)(r->budget_ns / 1000000));
	*why = message;
	return -ETIME;
}

/* The part of an op's stats before the histogram: the counters, the slots, the busy ticks. */
#define COUNTERS_SIZE offsetof(struct vt_op_stats, histogram)

/*
 * The counters of one op in one shard, seq among them, then seq again, until the two are
 * the same and even (at most SNAPSHOT_TRIES times, and while the sample has retries left):
 * two reads where the lines stay still, as they do almost always. The histogram after, up
 * to the bucket of the longest time (the buckets above are empty), when the op completed
 * anything in this shard (else it is all zeros, and not read at all).
 */
static int read_op_stats(struct vtrace_reader *r, uint64_t offset, struct vt_op_stats *out)
{
	uint64_t after;
	unsigned top;
	int rc;

	for (int tries = 1;; tries++) {
		if ((rc = read_at(r, offset, out, COUNTERS_SIZE)) != 0 ||
		    (rc = read_at(r, offset, &after, sizeof(after))) != 0)
			return rc;
		if (out->seq == after && !(after & 1))
			break;
		if (r->retries && tries >= SNAPSHOT_TRIES && clock_now() >= r->settle_until)
			r->retries = 0;
		if (!r->retries) {
			r->info.unsettled++;
			break;
		}
		r->retries--;
		if (tries < SNAPSHOT_TRIES)
			cpu_relax();
		else
			nanosleep(&(struct timespec){ .tv_nsec = SETTLE_SLEEP_NS }, NULL);
	}
	if (!out->completions) {
		memset(out->histogram, 0, sizeof(out->histogram));
		return 0;
	}
	/* Each bucket only grows: read one by one, they add up to about the count (to the requests in between). */
	top = vt_bucket(out->max_ns) + 1;
	memset(out->histogram + top, 0, (VTRACE_HISTOGRAM_BUCKETS - top) * sizeof(out->histogram[0]));
	return read_at(r, offset + COUNTERS_SIZE, out->histogram, top * sizeof(out->histogram[0]));
}

static void add_stats(struct vtrace_stats *into, const struct vt_op_stats *s)
{
	into->begins += s->begins;
	into->completions += s->completions;
	into->errors += s->errors;
	into->bytes += s->bytes;
	into->service_ns += s->service_ns;
	if (s->max_ns > into->max_ns)
		into->max_ns = s->max_ns;
	for (unsigned i = 0; i < VT_SLOTS; i++)
		if (s->slot[i] && (!into->oldest_ns || s->slot[i] < into->oldest_ns))
			into->oldest_ns = s->slot[i] & ~1ull;
	if (s->completions) {
		unsigned top = vt_bucket(s->max_ns) + 1;
		for (unsigned b = 0; b < top; b++)
			into->histogram[b] += s->histogram[b];
	}
}

/* Busy ticks accounted so far, plus those since the stamp while requests are in flight; in ns. */
static uint64_t busy_now(uint64_t ticks, uint64_t stamp, bool in_flight, uint64_t now)
{
	uint64_t tick = now >> VT_TICK_SHIFT;

	if (in_flight && stamp && tick > stamp)
		ticks += tick - stamp;
	return ticks << VT_TICK_SHIFT;
}

/* Every busy stamp in one read: true when none moved since the last. */
static int read_stamps(struct vtrace_reader *r, bool *same)
{
	int rc = read_at(r, r->header.shared_offset, r->shared, ((size_t)r->header.op_count + 1) * sizeof(*r->shared));

	*same = true;
	if (rc)
		return rc;
	for (uint32_t i = 0; i <= r->header.op_count; i++) {
		*same &= r->shared[i].stamp == r->stamps[i];
		r->stamps[i] = r->shared[i].stamp;
	}
	return 0;
}

/* A shard in use: one whose head counted a request begun or ended. */
static bool shard_used(const struct vt_shard_head *head)
{
	return head->begins || head->completions;
}

/*
 * One pass over every shard in use (and the overflow shard, last): the busy ticks of every
 * op (into stats) and of the server (into all), with whether requests are in flight; with
 * full, each op's statistics too (added into stats).
 */
static int read_pass(struct vtrace_reader *r, struct vtrace_stats *stats, uint32_t used, struct vt_shard_head *all,
		     bool full)
{
	const struct vt_header *h = &r->header;
	int rc;

	all->busy_ticks = all->begins = all->completions = 0;
	for (uint32_t op = 0; op < h->op_count; op++)
		stats[op].busy_ns = r->begins[op] = r->completions[op] = 0;
	for (uint32_t n = 0; n <= used; n++) {
		uint64_t base = h->shards_offset + (uint64_t)(n < used ? n : h->shard_count) * h->shard_size;
		struct vt_shard_head head;

		if ((rc = read_at(r, base, &head, sizeof(head))) != 0)
			return rc;
		if (!shard_used(&head))
			continue;
		all->busy_ticks += head.busy_ticks;
		all->begins += head.begins;
		for (uint32_t op = 0; op < h->op_count; op++) {
			uint64_t at = base + sizeof(struct vt_shard_head) + (uint64_t)op * sizeof(struct vt_op_stats);

			if ((rc = full ? read_op_stats(r, at, r->scratch)
				       : read_at(r, at, r->scratch, COUNTERS_SIZE)) != 0 ||
			    (rc = past_budget(r) ? -ETIME : 0) != 0)
				return rc;
			if (full)
				add_stats(&stats[op], r->scratch);
			stats[op].busy_ns += r->scratch->busy_ticks;
			r->begins[op] += r->scratch->begins;
			r->completions[op] += r->scratch->completions;
		}
		/* The head's begins before the ops' and its completions after (see the writer's end_counts). */
		if ((rc = read_at(r, base + offsetof(struct vt_shard_head, completions), &head.completions,
				  sizeof(head.completions))) != 0)
			return rc;
		all->completions += head.completions;
	}
	return 0;
}

/*
 * Every shard in use's counters, added into stats (per op) and all (the heads), read between
 * two readings of the busy stamps; the busy ticks again until no stamp moved in between (at
 * most 3 times more: a writer busier than we can read counts its ticks next time). A writer
 * moves a stamp, then adds the ticks up to it: ticks read before a move with the stamp after
 * it would lose the time between, which a reader delayed by the scheduler made a dip in %util.
 */
static int read_shards(struct vtrace_reader *r, struct vtrace_stats *stats, uint32_t used, struct vt_shard_head *all,
		       const char **why)
{
	bool same;
	int rc;

	if ((rc = read_stamps(r, &same)) != 0 || (rc = read_pass(r, stats, used, all, true)) != 0)
		goto fail;
	for (int tries = 0;; tries++) {
		if ((rc = read_stamps(r, &same)) != 0)
			goto fail;
		if (same || tries >= 3)
			return 0;
		cpu_relax();
		if ((rc = read_pass(r, stats, used, all, false)) != 0)
			goto fail;
	}
fail:
	if (rc == -ETIME)
		return over_budget(r, why);
	*why = rc == -EBADMSG ? "truncated while it was read" : "cannot read the counters";
	return rc;
}

int vtrace_reader_sample(struct vtrace_reader *r, struct vtrace_stats *stats, uint64_t *now_ns, const char **why)
{
	const struct vt_header *h = &r->header;
	uint32_t ops = h->op_count, used, ready;
	struct vt_shard_head all = {0};
	uint64_t heartbeat, start;
	int rc;

	*why = NULL;
	if (source_size(r) != h->segment_size)
		return *why = "truncated or resized since it was opened", -EBADMSG;
	if ((rc = read_at(r, offsetof(struct vt_header, shards_used), &used, sizeof(used))) != 0 ||
	    (rc = read_at(r, offsetof(struct vt_header, heartbeat_ns), &heartbeat, sizeof(heartbeat))) != 0 ||
	    (rc = read_at(r, offsetof(struct vt_header, ready), &ready, sizeof(ready))) != 0)
		return *why = "cannot read the header", rc;
	if (used > h->shard_count || ready != 1)
		return *why = "header corrupted since it was opened", -EBADMSG;
	r->info.shards_used = used;
	r->info.heartbeat_ns = heartbeat;

	memset(stats, 0, (ops + 1) * sizeof(*stats));
	start = clock_now();
	start_budget(r, start);
	r->settle_until = start + SETTLE_NS;
	r->retries = SAMPLE_RETRIES;
	r->info.unsettled = 0;
	rc = read_shards(r, stats, used, &all, why);
	if (rc)
		return rc;
	/* The clock after the stamps: ticks since a stamp count only while a request is in flight. */
	*now_ns = clock_now();

	for (uint32_t op = 0; op < ops; op++) {
		struct vtrace_stats *s = &stats[op], *every = &stats[ops];
		s->busy_ns = busy_now(s->busy_ns, r->stamps[op], r->begins[op] > r->completions[op], *now_ns);
		every->begins += s->begins;
		every->completions += s->completions;
		every->errors += s->errors;
		every->bytes += s->bytes;
		every->service_ns += s->service_ns;
		if (s->max_ns > every->max_ns)
			every->max_ns = s->max_ns;
		if (s->oldest_ns && (!every->oldest_ns || s->oldest_ns < every->oldest_ns))
			every->oldest_ns = s->oldest_ns;
		for (unsigned b = 0; b < VTRACE_HISTOGRAM_BUCKETS; b++)
			every->histogram[b] += s->histogram[b];
	}
	stats[ops].busy_ns = busy_now(all.busy_ticks, r->stamps[ops], all.begins > all.completions, *now_ns);
	return 0;
}
