/* SPDX-License-Identifier: MIT */
/*
 * writer.c: the server side of libvtrace: creates the segment, and counts each request in the
 * calling thread's shard.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "layout.h"
#include "proc.h"

#define RELAXED __ATOMIC_RELAXED
#define NO_SLOT UINT16_MAX
#define NO_OP UINT32_MAX

struct vtrace {
	struct vt_header *header;
	size_t size;
	int fd;                /* kept open, so /proc/PID/fd/N reaches the segment as virtiofsd vstat reads it */
	pid_t creator;         /* only the process that made the segment removes it */
	uint64_t id;           /* unique for the life of the process: thread caches match on it */
	uint32_t op_count;
	uint32_t shard_count;  /* the overflow shard is number shard_count */
	struct vt_shared *shared;
	uint64_t *server_stamp; /* &shared[op_count].stamp, the server's */
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
	uint64_t id;    /* the segment's id; with OVERFLOW_ID set for the overflow shard, so the fast paths miss */
	char *shard;    /* this thread's shard in the segment */
	uint32_t index; /* its number; shard_count for the overflow shard */
};

/* Ids are unique for the life of the process, so the id alone tells a cache entry's segment. */
#define OVERFLOW_ID (1ull << 63)

/* initial-exec: a thread-local access is one instruction, not a call to __tls_get_addr as -fPIC would make it. */
static __thread struct thread_entry thread_cache[THREAD_CACHE] __attribute__((tls_model("initial-exec")));

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

static struct vt_shard_head *shard_head(const struct vtrace *vt, uint32_t shard)
{
	return (struct vt_shard_head *)(vt->shards + (uint64_t)shard * vt->shard_size);
}

static bool claimed(const struct vtrace *vt, uint32_t shard)
{
	return __atomic_load_n(&vt->header->shard_claimed[shard / 64], RELAXED) & (1ull << (shard % 64));
}
/* At thread exit: give back the shards of segments that are still open. */
static void thread_exit(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&registry_lock);
	for (unsigned i = 0; i < THREAD_CACHE; i++) {
		struct thread_entry *entry = &thread_cache[i];
		if (entry->vt && registered(entry->vt, entry->id & ~OVERFLOW_ID))
			release_shard(entry->vt, entry->index);
		entry->vt = NULL;
	}
	pthread_mutex_unlock(&registry_lock);
}

/*
 * After fork() the child would write its parent's shards, two processes on one shard: it
 * forgets them, and its first request claims shards of its own (its requests then count
 * in the same segment, as a pre-forking server's workers would want).
 */
static void forget_shards_after_fork(void)
{
	memset(thread_cache, 0, sizeof(thread_cache));
}

/* The slots of a shard whose owner is gone: what it had in flight never ends. */
static void clear_slots(const struct vtrace *vt, uint32_t shard)
{
	struct vt_op_stats *stats =
	    (struct vt_op_stats *)((char *)shard_head(vt, shard) + sizeof(struct vt_shard_head));

	for (uint32_t op = 0; op < vt->op_count; op++)
		for (unsigned slot = 0; slot < VT_SLOTS; slot++)
			if (__atomic_load_n(&stats[op].slot[slot], RELAXED))
				__atomic_store_n(&stats[op].slot[slot], 0, RELAXED);
}

/*
 * At process exit, the shards of its threads go back to the segments, for the processes
 * that share them (a pre-forking server's workers come and go), their requests in flight
 * forgotten; but the creator's stay as they are, for the post-mortem of a server that died
 * with requests in flight.
 */
static void process_exit(void)
{
	int32_t self = (int32_t)getpid();

	pthread_mutex_lock(&registry_lock);
	for (size_t i = 0; i < registry_count; i++) {
		struct vtrace *vt = registry[i];
		if (vt->creator == self)
			continue;
		for (uint32_t shard = 0; shard < vt->shard_count; shard++)
			if (claimed(vt, shard) && __atomic_load_n(&shard_head(vt, shard)->owner, RELAXED) == self) {
				clear_slots(vt, shard);
				release_shard(vt, shard);
			}
	}
	pthread_mutex_unlock(&registry_lock);
}

static void make_exit_key(void)
{
	pthread_key_create(&exit_key, thread_exit);
	pthread_atfork(NULL, NULL, forget_shards_after_fork);
	atexit(process_exit);
}

/* A process that is gone, or a zombie: a forked child killed before it could give its shards back. */
static bool process_gone(int32_t pid)
{
	uint64_t start_time;
	char state = 0;

	if (pid <= 0 || pid == (int32_t)getpid())
		return false;
	if (kill(pid, 0) != 0 && errno == ESRCH)
		return true;
	return vtrace_proc_stat("/proc", pid, &start_time, &state) == 0 && (state == 'Z' || state == 'X');
}

/*
 * Each claim (a thread's first request): the shards of other processes that are gone come
 * back, their requests in flight forgotten (a forked child killed before it could give them
 * back at exit). A process of one's own costs nothing here.
 */
static bool reclaim_shards(struct vtrace *vt)
{
	int32_t self = (int32_t)getpid();
	bool any = false;

	for (uint32_t shard = 0; shard < vt->shard_count; shard++) {
		struct vt_shard_head *head = shard_head(vt, shard);
		int32_t owner = __atomic_load_n(&head->owner, RELAXED);

		if (owner && owner != self && claimed(vt, shard) && process_gone(owner) &&
		    __atomic_compare_exchange_n(&head->owner, &owner, 0, false, RELAXED, RELAXED)) {
			clear_slots(vt, shard);
			release_shard(vt, shard);
			any = true;
		}
	}
	return any;
}

/* A shard just claimed is this process's. */
static void take_ownership(const struct vtrace *vt, uint32_t shard)
{
	__atomic_store_n(&shard_head(vt, shard)->owner, (int32_t)getpid(), RELAXED);
}

static uint32_t claim_free_shard(struct vtrace *vt)
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
				uint32_t shard = word * 64 + bit,
					 used = __atomic_load_n(&vt->header->shards_used, RELAXED);
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

static uint32_t claim_shard(struct vtrace *vt)
{
	uint32_t shard;

	reclaim_shards(vt);
	shard = claim_free_shard(vt);
	if (shard < vt->shard_count)
		take_ownership(vt, shard);
	return shard;
}

/* The first call of this thread on this segment, or one that fell out of the cache. */
static __attribute__((noinline, cold)) struct thread_entry *thread_entry_slow(struct vtrace *vt)
{
	unsigned victim = THREAD_CACHE - 1;
	struct thread_entry found;

	for (unsigned i = 1; i < THREAD_CACHE; i++)
		if ((thread_cache[i].id & ~OVERFLOW_ID) == vt->id) {
			found = thread_cache[i];
			memmove(&thread_cache[1], &thread_cache[0], i * sizeof(thread_cache[0]));
			thread_cache[0] = found;
			return &thread_cache[0];
		}
	pthread_once(&exit_key_once, make_exit_key);
	pthread_setspecific(exit_key, (void *)1); /* so thread_exit runs */
	for (unsigned i = 0; i < THREAD_CACHE; i++)
		if (!thread_cache[i].vt) {
			victim = i;
			break;
		}
	/* A thread that writes more segments than the cache holds gives back the shard it forgets. */
	if (thread_cache[victim].vt) {
		pthread_mutex_lock(&registry_lock);
		if (registered(thread_cache[victim].vt, thread_cache[victim].id & ~OVERFLOW_ID))
			release_shard(thread_cache[victim].vt, thread_cache[victim].index);
		pthread_mutex_unlock(&registry_lock);
	}
	memmove(&thread_cache[1], &thread_cache[0], victim * sizeof(thread_cache[0]));
	found.vt = vt;
	found.index = claim_shard(vt);
	found.id = vt->id | (found.index == vt->shard_count ? OVERFLOW_ID : 0);
	found.shard = vt->shards + (uint64_t)found.index * vt->shard_size;
	thread_cache[0] = found;
	return &thread_cache[0];
}

static inline struct thread_entry *thread_entry(struct vtrace *vt)
{
	struct thread_entry *entry = &thread_cache[0];

	if (__builtin_expect((entry->id & ~OVERFLOW_ID) == vt->id, 1))
		return entry;
	return thread_entry_slow(vt);
}

/* ---- Counting -------------------------------------------------------------------- */

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline struct vt_shard_head *head_of(char *shard)
{
	return (struct vt_shard_head *)shard;
}

static inline struct vt_op_stats *stats_of(char *shard, uint32_t op)
{
	return (struct vt_op_stats *)(shard + sizeof(struct vt_shard_head)) + op;
}

static inline char *shard_at(const struct vtrace *vt, uint32_t index)
{
	return vt->shards + (uint64_t)index * vt->shard_size;
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

/* Whether a request of op is in flight now: begins and ends summed over the shards. */
static bool op_in_flight(const struct vtrace *vt, uint32_t op)
{
	uint32_t used = __atomic_load_n(&vt->header->shards_used, RELAXED);
	uint64_t begins = 0, completions = 0;

	for (uint32_t n = 0; n <= used; n++) {
		const struct vt_op_stats *stats = stats_of(shard_at(vt, n < used ? n : vt->shard_count), op);
		begins += __atomic_load_n(&stats->begins, RELAXED);
		completions += __atomic_load_n(&stats->completions, RELAXED);
	}
	return begins > completions;
}

/* Whether a request of any op is in flight: the shards' heads count them all. */
static bool any_in_flight(const struct vtrace *vt)
{
	uint32_t used = __atomic_load_n(&vt->header->shards_used, RELAXED);
	uint64_t begins = 0, completions = 0;

	for (uint32_t n = 0; n <= used; n++) {
		const struct vt_shard_head *head = head_of(shard_at(vt, n < used ? n : vt->shard_count));
		begins += __atomic_load_n(&head->begins, RELAXED);
		completions += __atomic_load_n(&head->completions, RELAXED);
	}
	return begins > completions;
}

/*
 * Whether a request of op is in flight now, for index == op; for the server's stamp
 * (index == op_count), of any op, or of op itself: the heads count a begin after the
 * op and an end before it, so when op is busy the server is, whatever they say.
 */
static bool in_flight(const struct vtrace *vt, uint32_t index, uint32_t op)
{
	return index < vt->op_count ? op_in_flight(vt, index) : any_in_flight(vt) || op_in_flight(vt, op);
}

/*
 * The tick a call accounts busy time to: its own, or the server's stamp when that is later.
 * A time given to vtrace_end_at may be past (a server that gives the time its answer was
 * ready, then replies): meanwhile another request may have moved the server's stamp, and
 * counted the time since as busy because this one was still in flight. Its op must count
 * that time too, or the server would be busier than its ops together. Whoever moved the
 * server's stamp had read the clock, so the present is at least that stamp.
 */
static inline uint64_t busy_tick(const struct vtrace *vt, uint64_t now)
{
	uint64_t tick = now >> VT_TICK_SHIFT, server = __atomic_load_n(vt->server_stamp, RELAXED);

	return server > tick ? server : tick;
}

/* Whether op's stamp is behind now's tick: a begin has busy time to account. */
static inline bool stamp_behind(const struct vtrace *vt, uint32_t op, uint64_t now)
{
	return (now >> VT_TICK_SHIFT) > __atomic_load_n(&vt->shared[op].stamp, RELAXED);
}

/*
 * Whether op's stamp is behind the tick an end at now accounts to (busy_tick). A begin
 * need not look at the server's stamp: its request is in flight from now on, so an op
 * stamp at or after now stays right until the next move counts from it.
 */
static inline bool end_stamp_behind(const struct vtrace *vt, uint32_t op, uint64_t now)
{
	return busy_tick(vt, now) > __atomic_load_n(&vt->shared[op].stamp, RELAXED);
}

/*
 * Moves one stamp (index: op's, or the server's) to tick, if nobody did, for a call on op:
 * the ticks since it count as busy when a request was in flight all along (at an end,
 * the ending one was; at a begin, when another is). Returns whether this call moved it.
 */
static bool move_stamp(const struct vtrace *vt, uint32_t index, uint32_t op, uint64_t tick, bool end,
		       uint64_t *busy_ticks, bool shared_shard)
{
	uint64_t *stamp = &vt->shared[index].stamp, then = __atomic_load_n(stamp, RELAXED);
	bool busy;

	if (tick <= then)
		return false;
	/*
	 * In flight before the move, not after: a request another thread begins meanwhile, at
	 * this tick, was not in flight since then (checked after, it made a whole idle gap
	 * count as busy whenever two clients sent requests at once after it).
	 */
	busy = end || in_flight(vt, index, op);
	if (!__atomic_compare_exchange_n(stamp, &then, tick, false, RELAXED, RELAXED))
		return false;
	if (then && busy) {
		if (shared_shard)
			bump_shared(busy_ticks, tick - then);
		else
			bump(busy_ticks, tick - then);
	}
	return true;
}

/*
 * Busy time as the union of busy intervals, by the rule of the kernel's update_io_ticks:
 * one shared stamp per op (and one for the server), moved at most once a tick by whoever
 * gets there first. So %util never passes 100 %, and a shared line is written once a
 * tick, not once a request. The server's stamp is moved first, so that it is never
 * behind an op's: a request that finds its op's stamp current has nothing more to do,
 * even while the thread that moved it is preempted before the server's (the server's,
 * moved later from a stamp long past, would count all that time). It also serves as
 * the heartbeat.
 */
static __attribute__((noinline)) void account_busy_slow(const struct vtrace *vt, uint32_t op, uint64_t now, bool end,
							 uint64_t *op_ticks, uint64_t *all_ticks, bool shared_shard)
{
	uint64_t tick = busy_tick(vt, now);

	if (move_stamp(vt, vt->op_count, op, tick, end, all_ticks, shared_shard))
		__atomic_store_n(&vt->header->heartbeat_ns, now, RELAXED);
	move_stamp(vt, op, op, tick, end, op_ticks, shared_shard);
}

static inline void account_busy(const struct vtrace *vt, uint32_t op, uint64_t now, bool end, uint64_t *op_ticks,
				uint64_t *all_ticks, bool shared_shard)
{
	if (__builtin_expect(end ? end_stamp_behind(vt, op, now) : stamp_behind(vt, op, now), 0))
		account_busy_slow(vt, op, now, end, op_ticks, all_ticks, shared_shard);
}

/* A free slot for the start of a request, other than the first (tried inline); NO_SLOT when all are taken. */
static __attribute__((noinline)) uint16_t take_slot(struct vt_op_stats *stats, uint64_t now)
{
	for (uint16_t slot = 1; slot < VT_SLOTS; slot++)
		if (__atomic_load_n(&stats->slot[slot], RELAXED) == 0) {
			__atomic_store_n(&stats->slot[slot], now | 1, __ATOMIC_RELEASE);
			return slot;
		}
	return NO_SLOT;
}

/* Threads beyond the shards: atomic updates of the overflow shard, no slot for the oldest request. */
static void begin_shared(struct vtrace *vt, char *shard, uint32_t op, uint64_t now)
{
	struct vt_shard_head *head = head_of(shard);
	struct vt_op_stats *stats = stats_of(shard, op);

	account_busy(vt, op, now, false, &stats->busy_ticks, &head->busy_ticks, true);
	bump_shared(&stats->begins, 1);
	bump_shared(&head->begins, 1);
}

/*
 * Everything the fast path below leaves out: a thread's first call, the overflow shard,
 * a busy stamp to move, the first slot taken. Kept apart so that the fast path calls
 * nothing and saves no registers.
 */
static __attribute__((noinline)) struct vtrace_token begin_slow(struct vtrace *vt, unsigned op, uint64_t now)
{
	struct thread_entry *entry = thread_entry(vt);
	struct vtrace_token token = { now, op, (uint16_t)entry->index, NO_SLOT };
	struct vt_op_stats *stats;

	if (entry->index == vt->shard_count) {
		begin_shared(vt, entry->shard, op, now);
		return token;
	}
	stats = stats_of(entry->shard, op);
	account_busy(vt, op, now, false, &stats->busy_ticks, &head_of(entry->shard)->busy_ticks, false);
	bump(&stats->begins, 1);
	bump(&head_of(entry->shard)->begins, 1);
	if (__atomic_load_n(&stats->slot[0], RELAXED) == 0) {
		__atomic_store_n(&stats->slot[0], now | 1, __ATOMIC_RELEASE);
		token.slot = 0;
	} else {
		token.slot = take_slot(stats, now);
	}
	return token;
}

struct vtrace_token vtrace_begin_at(struct vtrace *vt, unsigned op, uint64_t now)
{
	struct vtrace_token token = { 0, NO_OP, 0, NO_SLOT };
	struct thread_entry *entry = &thread_cache[0];
	struct vt_op_stats *stats;

	if (__builtin_expect(!vt || op >= vt->op_count, 0))
		return token;
	/* One compare covers the thread's first call and the overflow shard (see OVERFLOW_ID). */
	if (__builtin_expect(entry->id != vt->id ||
				     stamp_behind(vt, op, now),
			     0))
		return begin_slow(vt, op, now);
	char *shard = entry->shard;
	stats = stats_of(shard, op);
	if (__builtin_expect(__atomic_load_n(&stats->slot[0], RELAXED) != 0, 0))
		return begin_slow(vt, op, now);
	bump(&stats->begins, 1);
	bump(&head_of(shard)->begins, 1);
	/* Only this thread fills a free slot; whoever ends the request empties it. */
	__atomic_store_n(&stats->slot[0], now | 1, __ATOMIC_RELEASE);
	token.start_ns = now;
	token.op = op;
	token.shard = (uint16_t)entry->index;
	token.slot = 0;
	return token;
}

static void end_shared(struct vtrace *vt, char *shard, uint32_t op, uint64_t now, uint64_t elapsed, uint64_t bytes,
		       int error)
{
	struct vt_shard_head *head = head_of(shard);
	struct vt_op_stats *stats = stats_of(shard, op);
	uint64_t max = __atomic_load_n(&stats->max_ns, RELAXED);

	account_busy(vt, op, now, true, &stats->busy_ticks, &head->busy_ticks, true);
	bump_shared(&head->completions, 1); /* before the op's: see end_counts */
	bump_shared(&stats->completions, 1);
	bump_shared(&stats->errors, error != 0);
	bump_shared(&stats->bytes, bytes);
	bump_shared(&stats->service_ns, elapsed);
	bump_shared(&stats->histogram[vt_bucket(elapsed)], 1);
	while (elapsed > max && !__atomic_compare_exchange_n(&stats->max_ns, &max, elapsed, false, RELAXED, RELAXED))
		;
}

/*
 * The counting of an end by the shard's owner; the busy stamps are the caller's business.
 * The head's completions are bumped before it, as its begins after the op's: so the
 * server is never seen with a request in flight that no op has (a reader reads the
 * head's begins, then the ops', then the head's completions).
 */
static inline __attribute__((always_inline)) void end_counts(struct vt_op_stats *stats, uint64_t elapsed,
							     uint64_t bytes, int error)
{
	/* Odd while the counters change: a reader who sees it odd, or changed, copies again. */
	uint64_t seq = __atomic_load_n(&stats->seq, RELAXED);

	__atomic_store_n(&stats->seq, seq + 1, RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	bump(&stats->completions, 1);
	if (error)
		bump(&stats->errors, 1);
	bump(&stats->bytes, bytes);
	bump(&stats->service_ns, elapsed);
	bump(&stats->histogram[vt_bucket(elapsed)], 1);
	if (elapsed > __atomic_load_n(&stats->max_ns, RELAXED))
		__atomic_store_n(&stats->max_ns, elapsed, RELAXED);
	__atomic_store_n(&stats->seq, seq + 2, __ATOMIC_RELEASE);
}

static inline __attribute__((always_inline)) void clear_slot(const struct vtrace *vt, struct vtrace_token token,
							     const struct thread_entry *entry)
{
	if (token.slot < VT_SLOTS) {
		char *shard = token.shard == entry->index ? entry->shard : shard_at(vt, token.shard);
		__atomic_store_n(&stats_of(shard, token.op)->slot[token.slot], 0, __ATOMIC_RELEASE);
	}
}

static __attribute__((noinline)) void end_slow(struct vtrace *vt, struct vtrace_token token, uint64_t now,
					       uint64_t bytes, int error)
{
	struct thread_entry *entry = thread_entry(vt);
	uint64_t elapsed = now > token.start_ns ? now - token.start_ns : 0;
	struct vt_op_stats *stats;

	if (entry->index == vt->shard_count) {
		end_shared(vt, entry->shard, token.op, now, elapsed, bytes, error);
	} else {
		stats = stats_of(entry->shard, token.op);
		/* The ticks an end accounts are inside the snapshot, as the other counters. */
		uint64_t seq = __atomic_load_n(&stats->seq, RELAXED);
		__atomic_store_n(&stats->seq, seq + 1, RELAXED);
		__atomic_thread_fence(__ATOMIC_RELEASE);
		account_busy(vt, token.op, now, true, &stats->busy_ticks, &head_of(entry->shard)->busy_ticks, false);
		__atomic_store_n(&stats->seq, seq + 2, __ATOMIC_RELEASE);
		bump(&head_of(entry->shard)->completions, 1);
		end_counts(stats, elapsed, bytes, error);
	}
	clear_slot(vt, token, entry);
}

void vtrace_end_at(struct vtrace *vt, struct vtrace_token token, uint64_t now, uint64_t bytes, int error)
{
	struct thread_entry *entry = &thread_cache[0];
	struct vt_op_stats *stats;
	char *shard;

	if (__builtin_expect(!vt || token.op >= vt->op_count || token.shard > vt->shard_count, 0))
		return;
	/*
	 * The fast path: this thread's own shard, a request it began in slot 0, no stamp to
	 * move. Everything else (another thread's request, the overflow shard) is end_slow's.
	 */
	if (__builtin_expect(entry->id != vt->id || token.shard != entry->index || token.slot != 0 ||
				     end_stamp_behind(vt, token.op, now),
			     0)) {
		end_slow(vt, token, now, bytes, error);
		return;
	}
	shard = entry->shard;
	stats = stats_of(shard, token.op);
	bump(&head_of(shard)->completions, 1);
	end_counts(stats, now > token.start_ns ? now - token.start_ns : 0, bytes, error);
	__atomic_store_n(&stats->slot[0], 0, __ATOMIC_RELEASE);
}

void vtrace_end_ready(struct vtrace *vt, struct vtrace_token token, uint64_t ready_ns, uint64_t bytes, int error)
{
	uint64_t now;

	if (!vt)
		return;
	/* The start moved on by now - ready_ns: the service time an end at now computes runs to ready_ns. */
	now = now_ns();
	if (ready_ns > token.start_ns && ready_ns < now)
		token.start_ns += now - ready_ns;
	else if (ready_ns <= token.start_ns)
		token.start_ns = now; /* ready before it began: 0, as vtrace_end_at says */
	vtrace_end_at(vt, token, now, bytes, error);
}

uint64_t vtrace_clock_ns(void)
{
	return now_ns();
}

/* The exported functions behind the header's inline ones, for callers that cannot inline. */
struct vtrace_token vtrace_begin(struct vtrace *vt, unsigned op)
{
	return vtrace_begin_at(vt, op, vt ? now_ns() : 0);
}

void vtrace_end(struct vtrace *vt, struct vtrace_token token, uint64_t bytes, int error)
{
	if (vt)
		vtrace_end_at(vt, token, now_ns(), bytes, error);
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
	for (unsigned i = 0; i < count; i++) {
		if (!ops[i].name || !ops[i].name[0] || strlen(ops[i].name) >= VT_NAME_MAX)
			return false;
		/* Printable, no space: what readers print can hold no control or escape sequence. */
		for (const char *p = ops[i].name; *p; p++)
			if (*p < 0x21 || *p > 0x7e)
				return false;
	}
	return true;
}

/* Whether this process has a segment of this service open. */
static bool service_open(const char *service)
{
	bool found = false;

	pthread_mutex_lock(&registry_lock);
	for (size_t i = 0; i < registry_count && !found; i++)
		found = registry[i]->creator == getpid() && !strcmp(registry[i]->header->service, service);
	pthread_mutex_unlock(&registry_lock);
	return found;
}

/*
 * An existing file of our name may be a segment a process of our pid left when it died
 * (pids are reused), or anything else: a live server's of the same name and pid in another
 * pid namespace, a file another user put there. It is removed only when it is proven
 * stale: a segment, ours (our user's), that nobody holds the lock of. Else it stays, and
 * we take another name. The stale file is removed with its lock taken, and only while the
 * path still names it: another process that judged it stale too, or a cleaner, cannot then
 * remove the segment that took its place.
 */
static bool replace_stale(const char *path)
{
	struct flock lock = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };
	struct vtrace_reader *reader;
	struct stat st, now;
	const char *why;
	bool stale;
	int fd;

	fd = open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return false;
	stale = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
		vtrace_reader_open(path, VTRACE_READ_NOFOLLOW, &reader, &why) == 0;
	if (stale) {
		const struct vtrace_info *info = vtrace_reader_info(reader);

		stale = info->dev == (uint64_t)st.st_dev && info->ino == (uint64_t)st.st_ino &&
			((info->flags & VTRACE_INFO_LOCKED) ? vtrace_segment_unlocked(fd) == 1
							    : vtrace_reader_alive(reader, "/proc") == 0);
		vtrace_reader_close(reader);
	}
	stale = stale && fcntl(fd, F_OFD_SETLK, &lock) == 0 && lstat(path, &now) == 0 && now.st_dev == st.st_dev &&
		now.st_ino == st.st_ino && (unlink(path) == 0 || errno == ENOENT);
	close(fd);
	return stale;
}

/*
 * DIRECTORY/vtrace.SERVICE.PID, or, when that is taken by something not proven stale,
 * DIRECTORY/vtrace.SERVICE.PID.XXXXXXXX (random): nobody can keep a server from publishing
 * by making files of the names it will take.
 */
static int create_file(struct vtrace *vt, const char *directory, const char *service)
{
	for (int attempt = 0; attempt < 64; attempt++) {
		int fd;

		if (attempt < 2) {
			snprintf(vt->path, sizeof(vt->path), "%s/vtrace.%s.%d", directory, service, (int)getpid());
		} else {
			uint32_t random = 0;

			if (getrandom(&random, sizeof(random), GRND_NONBLOCK) != sizeof(random))
				random = (uint32_t)(vtrace_clock_ns() ^ (uint64_t)attempt << 20);
			snprintf(vt->path, sizeof(vt->path), "%s/vtrace.%s.%d.%08x", directory, service, (int)getpid(),
				 random);
		}
		/* 0600 until locked (see vtrace_open): a reader let in before could take a read lock first. */
		fd = open(vt->path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd >= 0 ? fd : -errno;
		if (attempt == 0 && !replace_stale(vt->path))
			attempt = 1; /* not ours to remove: a name of our own */
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
	h->flags = VT_FLAG_LOCKED;
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
	if (service_open(service)) { /* one segment per service and process */
		errno = EEXIST;
		return NULL;
	}
	vt = calloc(1, sizeof(*vt));
	if (!vt)
		return NULL;
	vt->op_count = count;
	vt->shard_count = opts->max_threads ? opts->max_threads : VT_DEFAULT_SHARDS;
	if ((uint64_t)vt->shard_count * count > VT_MAX_CELLS)
		vt->shard_count = VT_MAX_CELLS / count; /* readers read no more (layout.h) */
	directory = opts->directory ? opts->directory : getenv("VTRACE_DIR");
	if (!directory || !*directory)
		directory = "/dev/shm";
	/* The longest name: vtrace.SERVICE.PID.XXXXXXXX */
	if (strlen(directory) + strlen(service) + 7 + 1 + 10 + 9 + 1 >= sizeof(vt->path)) {
		free(vt);
		errno = ENAMETOOLONG;
		return NULL;
	}
	vtrace_proc_start_time("/proc", getpid(), &start_time);

	g = vt_geometry(vt->op_count, vt->shard_count);
	mode = opts->flags & VTRACE_GROUP_READ ? 0640 : 0600;
	fd = create_file(vt, directory, service);
	if (fd < 0) {
		free(vt);
		errno = -fd;
		return NULL;
	}
	/*
	 * The lock says the segment is alive for as long as it is open (see VT_FLAG_LOCKED):
	 * taken first, while nobody else may open the file. Then the mode asked for (the umask
	 * must not take group read away); the file is sparse.
	 */
	if (fcntl(fd, F_OFD_SETLK,
		  &(struct flock){ .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 }) != 0 ||
	    ftruncate(fd, (off_t)g.segment_size) != 0 || fchmod(fd, mode) != 0)
		goto fail;
	base = mmap(NULL, g.segment_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		goto fail;
	vt->fd = fd;
	vt->creator = getpid();
	vt->header = base;
	vt->size = g.segment_size;
	vt->shared = (struct vt_shared *)((char *)base + g.shared_offset);
	vt->server_stamp = &vt->shared[count].stamp;
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
			close(fd);
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
	/* A child of fork() that closes its copy of the handle leaves the parent's segment alone. */
	if (vt->creator == getpid() && unlink(vt->path) != 0)
		rc = -1;
	munmap(vt->header, vt->size);
	close(vt->fd);
	free(vt);
	return rc;
}
