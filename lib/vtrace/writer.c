/* writer.c: the server side of libvtrace: creates the segment, and counts each request in the calling thread's shard. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "layout.h"
#include "proc.h"

#define RELAXED __ATOMIC_RELAXED
#define NO_SLOT UINT16_MAX
#define NO_OP UINT32_MAX
#define HEARTBEAT_NS (1ull << 26) /* about 64 ms */

struct vtrace {
	struct vt_header *header;
	size_t size;
	uint64_t id;           /* unique for the life of the process: thread caches match on it */
	uint32_t op_count;
	uint32_t shard_count;  /* the overflow shard is number shard_count */
	struct vt_shared *shared;
	char *shards;
	uint64_t shard_size;
	char path[PATH_MAX];
};

/* ---- Which shard a thread writes ------------------------------------------------- */

/*
 * Each thread remembers its shard for the last few segments it wrote to. On its exit the
 * shards go back to the segments still open (found by id in the registry, under a lock:
 * thread exit is not the hot path).
 */
#define THREAD_CACHE 4

struct thread_entry {
	struct vtrace *vt;
	uint64_t id;
	uint32_t shard;
};

static __thread struct thread_entry thread_cache[THREAD_CACHE];

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vtrace **registry;
static size_t registry_count, registry_capacity;
static uint64_t next_id = 1;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

static bool registered(const struct vtrace *vt, uint64_t id)
{
	for (size_t i = 0; i < registry_count; i++)
		if (registry[i] == vt && registry[i]->id == id)
			return true;
	return false;
}

static void release_shard(struct vtrace *vt, uint32_t shard)
{
	if (shard < vt->shard_count)
		__atomic_fetch_and(&vt->header->shard_claimed[shard / 64], ~(1ull << (shard % 64)), __ATOMIC_RELEASE);
}

/* At thread exit: give back the shards of segments that are still open. */
static void thread_exit(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&registry_lock);
	for (unsigned i = 0; i < THREAD_CACHE; i++) {
		struct thread_entry *entry = &thread_cache[i];
		if (entry->vt && registered(entry->vt, entry->id))
			release_shard(entry->vt, entry->shard);
		entry->vt = NULL;
	}
	pthread_mutex_unlock(&registry_lock);
}

static void make_exit_key(void)
{
	pthread_key_create(&exit_key, thread_exit);
}

static uint32_t claim_shard(struct vtrace *vt)
{
	for (uint32_t word = 0; word * 64 < vt->shard_count; word++) {
		uint64_t *claimed = &vt->header->shard_claimed[word];
		uint64_t bits = __atomic_load_n(claimed, RELAXED);
		uint32_t in_word = vt->shard_count - word * 64 < 64 ? vt->shard_count - word * 64 : 64;
		uint64_t valid = in_word == 64 ? ~0ull : (1ull << in_word) - 1;

		while (~bits & valid) {
			unsigned bit = (unsigned)__builtin_ctzll(~bits & valid);
			if (__atomic_compare_exchange_n(claimed, &bits, bits | (1ull << bit), false, __ATOMIC_ACQUIRE,
							RELAXED)) {
				uint32_t shard = word * 64 + bit, used = __atomic_load_n(&vt->header->shards_used, RELAXED);
				while (used < shard + 1 &&
				       !__atomic_compare_exchange_n(&vt->header->shards_used, &used, shard + 1, false,
								    RELAXED, RELAXED))
					;
				return shard;
			}
		}
	}
	return vt->shard_count; /* all taken: the overflow shard */
}

/* The slow path: the first call of this thread on this segment. */
static uint32_t thread_shard_slow(struct vtrace *vt)
{
	unsigned victim = THREAD_CACHE - 1;

	pthread_once(&exit_key_once, make_exit_key);
	pthread_setspecific(exit_key, (void *)1); /* so thread_exit runs */
	for (unsigned i = 0; i < THREAD_CACHE; i++)
		if (!thread_cache[i].vt) {
			victim = i;
			break;
		}
	/* A thread writing more segments than the cache holds keeps its shards; they are only not reused. */
	memmove(&thread_cache[1], &thread_cache[0], victim * sizeof(thread_cache[0]));
	thread_cache[0] = (struct thread_entry){ vt, vt->id, claim_shard(vt) };
	return thread_cache[0].shard;
}

static inline uint32_t thread_shard(struct vtrace *vt)
{
	if (__builtin_expect(thread_cache[0].vt == vt && thread_cache[0].id == vt->id, 1))
		return thread_cache[0].shard;
	for (unsigned i = 1; i < THREAD_CACHE; i++)
		if (thread_cache[i].vt == vt && thread_cache[i].id == vt->id)
			return thread_cache[i].shard;
	return thread_shard_slow(vt);
}

/* ---- Counting -------------------------------------------------------------------- */

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline struct vt_shard_head *shard_head(const struct vtrace *vt, uint32_t shard)
{
	return (struct vt_shard_head *)(vt->shards + (uint64_t)shard * vt->shard_size);
}

static inline struct vt_op_stats *op_stats(const struct vtrace *vt, uint32_t shard, uint32_t op)
{
	return (struct vt_op_stats *)(vt->shards + (uint64_t)shard * vt->shard_size + sizeof(struct vt_shard_head)) + op;
}

/* A field only its owner writes: a plain add, atomic only so that readers race with no one. */
static inline void bump(uint64_t *field, uint64_t by)
{
	__atomic_store_n(field, __atomic_load_n(field, RELAXED) + by, RELAXED);
}

/* The overflow shard has many writers. */
static inline void bump_shared(uint64_t *field, uint64_t by)
{
	__atomic_fetch_add(field, by, RELAXED);
}

/* Requests of op (or, with op == op_count, of any op) in flight now, summed over the shards. */
static uint64_t in_flight(const struct vtrace *vt, uint32_t op)
{
	uint32_t used = __atomic_load_n(&vt->header->shards_used, RELAXED);
	uint64_t begins = 0, completions = 0;

	for (uint32_t shard = 0; shard <= used; shard++) {
		uint32_t s = shard < used ? shard : vt->shard_count; /* and the overflow shard */
		if (op < vt->op_count) {
			const struct vt_op_stats *stats = op_stats(vt, s, op);
			begins += __atomic_load_n(&stats->begins, RELAXED);
			completions += __atomic_load_n(&stats->completions, RELAXED);
		} else {
			const struct vt_shard_head *head = shard_head(vt, s);
			begins += __atomic_load_n(&head->begins, RELAXED);
			completions += __atomic_load_n(&head->completions, RELAXED);
		}
	}
	return begins > completions ? begins - completions : 0;
}

/*
 * Busy time as the union of busy intervals, by the rule of the kernel's update_io_ticks:
 * one shared stamp per op, moved at most once a tick by whoever gets there first; the
 * ticks since the stamp count as busy when a request was in flight all along (at an end,
 * the ending one was; at a begin, when another is). So %util never passes 100 %, and the
 * shared line is written once a tick, not once a request.
 */
static inline void account_busy(const struct vtrace *vt, uint32_t index, uint64_t now, bool end,
				uint64_t *busy_ticks, bool shared_shard)
{
	uint64_t *stamp = &vt->shared[index].stamp, tick = now >> VT_TICK_SHIFT;
	uint64_t then = __atomic_load_n(stamp, RELAXED);

	if (__builtin_expect(tick <= then, 1))
		return;
	if (!__atomic_compare_exchange_n(stamp, &then, tick, false, RELAXED, RELAXED))
		return;
	if (then && (end || in_flight(vt, index))) {
		if (shared_shard)
			bump_shared(busy_ticks, tick - then);
		else
			bump(busy_ticks, tick - then);
	}
}

struct vtrace_token vtrace_begin(struct vtrace *vt, unsigned op)
{
	struct vtrace_token token = { 0, NO_OP, 0, NO_SLOT };
	struct vt_shard_head *head;
	struct vt_op_stats *stats;
	uint32_t shard;
	uint64_t now;

	if (!vt || op >= vt->op_count)
		return token;
	shard = thread_shard(vt);
	now = now_ns();
	token = (struct vtrace_token){ now, op, (uint16_t)shard, NO_SLOT };
	head = shard_head(vt, shard);
	stats = op_stats(vt, shard, op);

	if (__builtin_expect(shard == vt->shard_count, 0)) {
		account_busy(vt, op, now, false, &stats->busy_ticks, true);
		account_busy(vt, vt->op_count, now, false, &head->busy_ticks, true);
		bump_shared(&stats->begins, 1);
		bump_shared(&head->begins, 1);
		return token; /* not tracked for the oldest request: the slots have one writer each */
	}
	account_busy(vt, op, now, false, &stats->busy_ticks, false);
	account_busy(vt, vt->op_count, now, false, &head->busy_ticks, false);
	bump(&stats->begins, 1);
	bump(&head->begins, 1);
	for (uint16_t slot = 0; slot < VT_SLOTS; slot++)
		if (__atomic_load_n(&stats->slot[slot], RELAXED) == 0) {
			/* Only this thread fills a free slot; whoever ends the request empties it. */
			__atomic_store_n(&stats->slot[slot], now | 1, __ATOMIC_RELEASE);
			token.slot = slot;
			break;
		}
	return token;
}

static inline void raise_max(uint64_t *field, uint64_t value, bool shared_shard)
{
	uint64_t max = __atomic_load_n(field, RELAXED);

	if (!shared_shard) {
		if (value > max)
			__atomic_store_n(field, value, RELAXED);
		return;
	}
	while (value > max && !__atomic_compare_exchange_n(field, &max, value, false, RELAXED, RELAXED))
		;
}

void vtrace_end(struct vtrace *vt, struct vtrace_token token, uint64_t bytes, int error)
{
	struct vt_shard_head *head;
	struct vt_op_stats *stats;
	uint64_t now, elapsed, seq;
	uint32_t shard;
	unsigned bucket;

	if (!vt || token.op >= vt->op_count || token.shard > vt->shard_count)
		return;
	shard = thread_shard(vt);
	now = now_ns();
	elapsed = now > token.start_ns ? now - token.start_ns : 0;
	bucket = vtrace_histogram_bucket(elapsed);
	head = shard_head(vt, shard);
	stats = op_stats(vt, shard, token.op);

	if (__builtin_expect(shard == vt->shard_count, 0)) {
		account_busy(vt, token.op, now, true, &stats->busy_ticks, true);
		bump_shared(&stats->completions, 1);
		bump_shared(&stats->errors, error != 0);
		bump_shared(&stats->bytes, bytes);
		bump_shared(&stats->service_ns, elapsed);
		bump_shared(&stats->histogram[bucket], 1);
		raise_max(&stats->max_ns, elapsed, true);
		account_busy(vt, vt->op_count, now, true, &head->busy_ticks, true);
		bump_shared(&head->completions, 1);
	} else {
		/* Odd while the fields change: a reader who sees it odd, or changed, reads again. */
		seq = __atomic_load_n(&stats->seq, RELAXED);
		__atomic_store_n(&stats->seq, seq + 1, RELAXED);
		__atomic_thread_fence(__ATOMIC_RELEASE);
		account_busy(vt, token.op, now, true, &stats->busy_ticks, false);
		bump(&stats->completions, 1);
		bump(&stats->errors, error != 0);
		bump(&stats->bytes, bytes);
		bump(&stats->service_ns, elapsed);
		bump(&stats->histogram[bucket], 1);
		raise_max(&stats->max_ns, elapsed, false);
		__atomic_store_n(&stats->seq, seq + 2, __ATOMIC_RELEASE);
		account_busy(vt, vt->op_count, now, true, &head->busy_ticks, false);
		bump(&head->completions, 1);
	}
	if (token.slot < VT_SLOTS)
		__atomic_store_n(&op_stats(vt, token.shard, token.op)->slot[token.slot], 0, __ATOMIC_RELEASE);
	if (__builtin_expect(now - __atomic_load_n(&vt->header->heartbeat_ns, RELAXED) > HEARTBEAT_NS, 0))
		__atomic_store_n(&vt->header->heartbeat_ns, now, RELAXED);
}

void vtrace_heartbeat(struct vtrace *vt)
{
	if (vt)
		__atomic_store_n(&vt->header->heartbeat_ns, now_ns(), RELAXED);
}

const char *vtrace_path(const struct vtrace *vt)
{
	return vt ? vt->path : NULL;
}

/* ---- Opening and closing --------------------------------------------------------- */

static bool valid_service(const char *service)
{
	size_t len = service ? strlen(service) : 0;

	if (len == 0 || len >= VT_SERVICE_MAX || service[0] == '.')
		return false;
	for (const char *p = service; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '.' ||
		      *p == '_' || *p == '-'))
			return false;
	return true;
}

static bool valid_ops(const struct vtrace_op *ops, unsigned count)
{
	if (!ops || count == 0 || count > VTRACE_MAX_OPS)
		return false;
	for (unsigned i = 0; i < count; i++)
		if (!ops[i].name || !ops[i].name[0] || strlen(ops[i].name) >= VT_NAME_MAX)
			return false;
	return true;
}

/*
 * An existing file of our name is left by a process of our pid that died (pids are
 * reused): replace it, unless it is ours, from this very process.
 */
static int replace_stale(const char *path)
{
	struct vtrace_reader *reader;
	const char *why;
	int alive;

	if (vtrace_reader_open(path, VTRACE_READ_NOFOLLOW, &reader, &why) != 0)
		return unlink(path) == 0 || errno == ENOENT ? 0 : -errno; /* not even a segment */
	alive = vtrace_reader_alive(reader, "/proc");
	vtrace_reader_close(reader);
	if (alive == 1)
		return -EEXIST;
	return unlink(path) == 0 || errno == ENOENT ? 0 : -errno;
}

static int create_file(const char *path, mode_t mode)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		int rc;

		if (fd >= 0 || errno != EEXIST || attempt)
			return fd >= 0 ? fd : -errno;
		rc = replace_stale(path);
		if (rc)
			return rc;
	}
	return -EEXIST;
}

static void fill_header(struct vtrace *vt, const char *service, const struct vtrace_op *ops,
			const struct vt_geometry *g, uint64_t start_time)
{
	struct vt_header *h = vt->header;
	struct vt_op_record *records = (struct vt_op_record *)((char *)h + g->ops_offset);

	memcpy(h->magic, VT_MAGIC, sizeof(h->magic));
	h->version = VT_VERSION;
	h->header_size = sizeof(*h);
	h->segment_size = g->segment_size;
	h->pid = (int32_t)getpid();
	h->start_time = start_time;
	h->created_ns = now_ns();
	h->clock_id = CLOCK_MONOTONIC;
	h->op_count = vt->op_count;
	h->shard_count = vt->shard_count;
	h->slots = VT_SLOTS;
	h->histogram_buckets = VTRACE_HISTOGRAM_BUCKETS;
	h->tick_shift = VT_TICK_SHIFT;
	h->ops_offset = g->ops_offset;
	h->shared_offset = g->shared_offset;
	h->shards_offset = g->shards_offset;
	h->op_record_size = sizeof(struct vt_op_record);
	h->op_stats_size = sizeof(struct vt_op_stats);
	h->shard_size = g->shard_size;
	snprintf(h->service, sizeof(h->service), "%s", service);
	for (unsigned i = 0; i < vt->op_count; i++) {
		records[i].number = ops[i].number;
		snprintf(records[i].name, sizeof(records[i].name), "%s", ops[i].name);
	}
	h->heartbeat_ns = h->created_ns;
	__atomic_store_n(&h->ready, 1, __ATOMIC_RELEASE); /* last: readers wait for it */
}

struct vtrace *vtrace_open(const char *service, const struct vtrace_op *ops, unsigned count,
			   const struct vtrace_options *opts)
{
	static const struct vtrace_options defaults;
	const char *directory;
	struct vt_geometry g;
	struct vtrace *vt;
	uint64_t start_time = 0;
	mode_t mode;
	void *base;
	int fd, err;

	if (!opts)
		opts = &defaults;
	if (!valid_service(service) || !valid_ops(ops, count) || opts->max_threads > VT_MAX_SHARDS) {
		errno = EINVAL;
		return NULL;
	}
	vt = calloc(1, sizeof(*vt));
	if (!vt)
		return NULL;
	vt->op_count = count;
	vt->shard_count = opts->max_threads ? opts->max_threads : VT_DEFAULT_SHARDS;
	directory = opts->directory ? opts->directory : getenv("VTRACE_DIR");
	if (!directory || !*directory)
		directory = "/dev/shm";
	if ((size_t)snprintf(vt->path, sizeof(vt->path), "%s/vtrace.%s.%d", directory, service, (int)getpid()) >=
	    sizeof(vt->path)) {
		free(vt);
		errno = ENAMETOOLONG;
		return NULL;
	}
	vtrace_proc_start_time("/proc", getpid(), &start_time);

	g = vt_geometry(vt->op_count, vt->shard_count);
	mode = opts->flags & VTRACE_GROUP_READ ? 0640 : 0600;
	fd = create_file(vt->path, mode);
	if (fd < 0) {
		free(vt);
		errno = -fd;
		return NULL;
	}
	/* The umask must not take group read away when it was asked for; the file is sparse. */
	if (fchmod(fd, mode) != 0 || ftruncate(fd, (off_t)g.segment_size) != 0)
		goto fail;
	base = mmap(NULL, g.segment_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		goto fail;
	close(fd);
	vt->header = base;
	vt->size = g.segment_size;
	vt->shared = (struct vt_shared *)((char *)base + g.shared_offset);
	vt->shards = (char *)base + g.shards_offset;
	vt->shard_size = g.shard_size;

	pthread_mutex_lock(&registry_lock);
	vt->id = next_id++;
	if (registry_count == registry_capacity) {
		size_t capacity = registry_capacity ? registry_capacity * 2 : 8;
		struct vtrace **grown = realloc(registry, capacity * sizeof(*registry));
		if (!grown) {
			pthread_mutex_unlock(&registry_lock);
			munmap(base, g.segment_size);
			unlink(vt->path);
			free(vt);
			errno = ENOMEM;
			return NULL;
		}
		registry = grown;
		registry_capacity = capacity;
	}
	registry[registry_count++] = vt;
	pthread_mutex_unlock(&registry_lock);

	fill_header(vt, service, ops, &g, start_time);
	return vt;
fail:
	err = errno;
	close(fd);
	unlink(vt->path);
	free(vt);
	errno = err;
	return NULL;
}

int vtrace_close(struct vtrace *vt)
{
	int rc = 0;

	if (!vt)
		return 0;
	pthread_mutex_lock(&registry_lock);
	for (size_t i = 0; i < registry_count; i++)
		if (registry[i] == vt) {
			registry[i] = registry[--registry_count];
			break;
		}
	pthread_mutex_unlock(&registry_lock);
	/* This thread's cache may name it: a later segment at the same address has another id. */
	for (unsigned i = 0; i < THREAD_CACHE; i++)
		if (thread_cache[i].vt == vt)
			thread_cache[i].vt = NULL;
	if (unlink(vt->path) != 0)
		rc = -1;
	munmap(vt->header, vt->size);
	free(vt);
	return rc;
}
