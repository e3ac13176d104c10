/* reader.c: the tool side of libvtrace: checks a segment, trusting nothing in it, and reads consistent snapshots. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
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
 * A snapshot that keeps changing under us is taken as it is after this many tries: never
 * a hang. A writer in a loop that does nothing but count takes this many; real servers a few.
 */
#define SNAPSHOT_TRIES 100000

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
	 * The counters are read through a read-only shared mapping, so that a snapshot takes
	 * nanoseconds and a busy writer cannot starve it; the big histograms through pread,
	 * which reads the holes of a sparse segment as zeros without filling them.
	 */
	const unsigned char *map;
	size_t map_size;
	struct vt_header header;    /* as read and checked at open */
	struct vt_op_record *ops;   /* names checked to end in a NUL */
	struct vtrace_info info;
	char service[VT_SERVICE_MAX];
	struct vt_op_stats *scratch; /* one op's stats while it is read */
	uint64_t *stamps;           /* op_count + 1 busy stamps, read at each sample */
	uint64_t *begins, *completions; /* per op, read with the stamps: whether requests are in flight */
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
	if (h->slots != VT_SLOTS || h->histogram_buckets != VTRACE_HISTOGRAM_BUCKETS || h->tick_shift != VT_TICK_SHIFT ||
	    h->op_record_size != sizeof(struct vt_op_record) || h->op_stats_size != sizeof(struct vt_op_stats))
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
	r->begins = calloc(r->header.op_count + 1, sizeof(*r->begins));
	r->completions = calloc(r->header.op_count + 1, sizeof(*r->completions));
	if (!r->ops || !r->scratch || !r->stamps || !r->begins || !r->completions)
		return *why = "out of memory", -ENOMEM;
	rc = read_at(r, r->header.ops_offset, r->ops, r->header.op_count * sizeof(*r->ops));
	if (rc)
		return *why = "cannot read the op table", rc;
	for (unsigned i = 0; i < r->header.op_count; i++)
		if (strnlen(r->ops[i].name, VT_NAME_MAX) == VT_NAME_MAX || !r->ops[i].name[0])
			return *why = "an op name without an end", -EBADMSG;

	if (r->fd >= 0) {
		void *map = mmap(NULL, r->header.segment_size, PROT_READ, MAP_SHARED, r->fd, 0);
		if (map == MAP_FAILED)
			return *why = "cannot map it", -errno;
		r->map = map;
		r->map_size = r->header.segment_size;
	} else {
		r->map = r->memory;
		r->map_size = r->memory_size;
	}
	memcpy(r->service, r->header.service, sizeof(r->service));
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
	};
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
	if (r->fd >= 0) {
		if (r->map)
			munmap((void *)r->map, r->map_size);
		close(r->fd);
	}
	free(r->ops);
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
	int rc = vtrace_proc_start_time(procfs_root, r->header.pid, &start_time);

	if (rc == -ENOENT || rc == -ESRCH)
		return 0;
	if (rc)
		return rc;
	return start_time == r->header.start_time;
}

/*
 * A segment truncated under the mapping would raise SIGBUS: while a sample reads the
 * mapping, SIGBUS jumps back out and the sample fails instead. The handler is installed
 * once and passes any other SIGBUS on to the handler there was before.
 */
static __thread sigjmp_buf *bus_jump;
static struct sigaction previous_bus;

static void on_sigbus(int signal, siginfo_t *info, void *context)
{
	if (bus_jump)
		siglongjmp(*bus_jump, 1);
	if ((previous_bus.sa_flags & SA_SIGINFO) && previous_bus.sa_sigaction) {
		previous_bus.sa_sigaction(signal, info, context);
	} else if (!(previous_bus.sa_flags & SA_SIGINFO) && previous_bus.sa_handler != SIG_DFL &&
		   previous_bus.sa_handler != SIG_IGN) {
		previous_bus.sa_handler(signal);
	} else {
		struct sigaction fallback = { .sa_handler = SIG_DFL };
		sigaction(SIGBUS, &fallback, NULL);
		raise(SIGBUS);
	}
}

/* Installs the handler unless it is there: someone (a test framework) may have put another since. */
static void ensure_bus_handler(void)
{
	struct sigaction current, action = { .sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO | SA_NODEFER };

	if (sigaction(SIGBUS, NULL, &current) == 0 && (current.sa_flags & SA_SIGINFO) &&
	    current.sa_sigaction == on_sigbus)
		return;
	sigemptyset(&action.sa_mask);
	sigaction(SIGBUS, &action, &previous_bus);
}

/* The counters of one op in one shard: copied again while seq was odd or moved; the histogram after. */
static int read_op_stats(struct vtrace_reader *r, uint64_t offset, struct vt_op_stats *out)
{
	const struct vt_op_stats *live = (const struct vt_op_stats *)(r->map + offset);
	/* What the seq guards is the first line; the other slots and the busy ticks change alone. */
	const size_t guarded = offsetof(struct vt_op_stats, slot[1]) / sizeof(uint64_t);
	const size_t counters = offsetof(struct vt_op_stats, histogram) / sizeof(uint64_t);
	uint64_t *copy = (uint64_t *)out;

	for (int tries = 0;; tries++) {
		uint64_t before = __atomic_load_n(&live->seq, __ATOMIC_ACQUIRE), after;
		if (before & 1) {
			cpu_relax();
			if (tries < SNAPSHOT_TRIES)
				continue;
		}
		for (size_t i = 0; i < guarded; i++)
			copy[i] = __atomic_load_n(&((const uint64_t *)live)[i], __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		after = __atomic_load_n(&live->seq, __ATOMIC_RELAXED);
		if ((before == after && !(before & 1)) || tries >= SNAPSHOT_TRIES)
			break;
		cpu_relax();
	}
	for (size_t i = guarded; i < counters; i++)
		copy[i] = __atomic_load_n(&((const uint64_t *)live)[i], __ATOMIC_RELAXED);
	/* Each bucket only grows: read one by one, they add up to about the count (to the requests in between). */
	return read_at(r, offset + counters * sizeof(uint64_t), out->histogram, sizeof(out->histogram));
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
	for (unsigned b = 0; b < VTRACE_HISTOGRAM_BUCKETS; b++)
		into->histogram[b] += s->histogram[b];
}

/* Busy ticks accounted so far, plus those since the stamp while requests are in flight; in ns. */
static uint64_t busy_now(uint64_t ticks, uint64_t stamp, bool in_flight, uint64_t now)
{
	uint64_t tick = now >> VT_TICK_SHIFT;

	if (in_flight && stamp && tick > stamp)
		ticks += tick - stamp;
	return ticks << VT_TICK_SHIFT;
}

static uint64_t load_u64(const struct vtrace_reader *r, uint64_t offset)
{
	return __atomic_load_n((const uint64_t *)(r->map + offset), __ATOMIC_ACQUIRE);
}

static bool read_stamps(const struct vtrace_reader *r, uint64_t *stamps)
{
	bool same = true;

	for (uint32_t i = 0; i <= r->header.op_count; i++) {
		uint64_t stamp = load_u64(r, r->header.shared_offset + (uint64_t)i * sizeof(struct vt_shared));
		same &= stamp == stamps[i];
		stamps[i] = stamp;
	}
	return same;
}

/*
 * The busy ticks of every op (into stats) and of the server (into all), with the stamps
 * they run to (into r->stamps). A writer moves a stamp, then adds the ticks up to it: ticks
 * read before a move with the stamp after it would lose the time between, which a reader
 * delayed between the two reads (by the histograms, or by the scheduler on a loaded
 * machine) made a visible dip in %util. So the ticks are read between two readings of
 * the stamps, again until no stamp moved in between (a few loads a try).
 */
static void read_busy(struct vtrace_reader *r, struct vtrace_stats *stats, uint32_t used, struct vt_shard_head *all)
{
	const struct vt_header *h = &r->header;

	read_stamps(r, r->stamps);
	for (int tries = 0;; tries++) {
		/* Begins and completions again, for whether requests are in flight now, with the stamps. */
		all->busy_ticks = all->begins = all->completions = 0;
		for (uint32_t op = 0; op < h->op_count; op++)
			stats[op].busy_ns = r->begins[op] = r->completions[op] = 0;
		for (uint32_t n = 0; n <= used; n++) {
			uint64_t base = h->shards_offset + (uint64_t)(n < used ? n : h->shard_count) * h->shard_size;
			/* The head's begins before the ops' and its completions after (see the writer's end_counts). */
			all->busy_ticks += load_u64(r, base + offsetof(struct vt_shard_head, busy_ticks));
			all->begins += load_u64(r, base + offsetof(struct vt_shard_head, begins));
			for (uint32_t op = 0; op < h->op_count; op++) {
				uint64_t at = base + sizeof(struct vt_shard_head) + (uint64_t)op * sizeof(struct vt_op_stats);
				stats[op].busy_ns += load_u64(r, at + offsetof(struct vt_op_stats, busy_ticks));
				r->begins[op] += load_u64(r, at + offsetof(struct vt_op_stats, begins));
				r->completions[op] += load_u64(r, at + offsetof(struct vt_op_stats, completions));
			}
			all->completions += load_u64(r, base + offsetof(struct vt_shard_head, completions));
		}
		if (read_stamps(r, r->stamps) || tries >= 16)
			return; /* else a writer is busier than we can read: its ticks count next time */
		cpu_relax();
	}
}

/* Every shard's counters, added into stats (per op) and all (the heads). */
static int read_shards(struct vtrace_reader *r, struct vtrace_stats *stats, uint32_t used, struct vt_shard_head *all,
		       const char **why)
{
	const struct vt_header *h = &r->header;
	int rc;

	for (uint32_t n = 0; n <= used; n++) {
		uint32_t shard = n < used ? n : h->shard_count; /* and the overflow shard, last */
		uint64_t base = h->shards_offset + (uint64_t)shard * h->shard_size;
		struct vt_shard_head head;

		if ((rc = read_at(r, base, &head, sizeof(head))) != 0)
			return *why = rc == -EBADMSG ? "truncated while it was read" : "cannot read a shard", rc;
		for (uint32_t op = 0; op < h->op_count; op++) {
			rc = read_op_stats(r, base + sizeof(struct vt_shard_head) + (uint64_t)op * sizeof(struct vt_op_stats),
					   r->scratch);
			if (rc)
				return *why = rc == -EBADMSG ? "truncated while it was read" : "cannot read an op's statistics",
				       rc;
			add_stats(&stats[op], r->scratch);
		}
	}
	read_busy(r, stats, used, all);
	return 0;
}

/* read_shards, with SIGBUS from a mapping truncated under us turned into an error. */
static int read_shards_guarded(struct vtrace_reader *r, struct vtrace_stats *stats, uint32_t used,
			       struct vt_shard_head *all, const char **why)
{
	sigjmp_buf jump;
	int rc;

	if (r->fd < 0)
		return read_shards(r, stats, used, all, why);
	ensure_bus_handler();
	if (sigsetjmp(jump, 1)) {
		bus_jump = NULL;
		return *why = "truncated while it was read", -EBADMSG;
	}
	bus_jump = &jump;
	rc = read_shards(r, stats, used, all, why);
	bus_jump = NULL;
	return rc;
}

int vtrace_reader_sample(struct vtrace_reader *r, struct vtrace_stats *stats, uint64_t *now_ns, const char **why)
{
	const struct vt_header *h = &r->header;
	uint32_t ops = h->op_count, used, ready;
	struct vt_shard_head all = {0};
	uint64_t heartbeat;
	struct timespec ts;
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
	rc = read_shards_guarded(r, stats, used, &all, why);
	if (rc)
		return rc;
	/* The clock after the stamps: ticks since a stamp count only while a request is in flight. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	*now_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;

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
