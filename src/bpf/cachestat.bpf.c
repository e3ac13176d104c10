/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cachestat.bpf.c: page-cache accesses, misses, dirties, evictions and refaults, system-wide, per
 * process and per file, from stable tracepoints.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "cachestat.h"
#include "compat.h"
#include "folio.h"

char LICENSE[] SEC("license") = "GPL";

/* Set before loading: what to count beyond the system-wide totals. */
const volatile bool per_process = false;
const volatile bool per_file = false;
const volatile __u32 only_tgid = 0; /* 0: every process */
const volatile __u32 nr_cpus = 1;   /* possible cpus, for a process's mapped pages */
const volatile __u32 page_shift = 12;
const volatile bool split_counts = false; /* threads keep their mapped pages apart (before Linux 6.2) */
const volatile bool whole_reads = false;  /* a read is seen once, as it begins (fentry, kprobes), not batch by batch */
const volatile bool kernel_refaults = false; /* refaults seen where the kernel counts them (workingset_refault) */
const volatile bool page_adds = false;       /* the page cache's tracepoints and functions pass a page, not a folio */

#define MAX_CPUS 1024

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cache_counters);
} totals SEC(".maps");

/* Hand-overs of threads that move to another file or exit; its size is set before loading. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} records SEC(".maps");

/*
 * Where each cpu's copy of a per-cpu variable is: the offset from its per-cpu address, found
 * from a per-cpu array of our own (its per-cpu address, and each cpu's copy of it), once. The
 * kernel's own table of these (__per_cpu_offset) is not in kallsyms on most kernels.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} cpu_probe SEC(".maps");
__u64 cpu_offset[MAX_CPUS];
__u32 cpu_offsets_known;

/* File pages each address space had mapped when last seen (rss_stat), by mm_struct address. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CACHESTAT_MAX_PROCS);
	__type(key, __u64);
	__type(value, __u64);
} mapped_pages SEC(".maps");

/* Sets of pages, as bitmaps of 64-page chunks of a file. */
struct chunk_key {
	__u64 file;  /* evicted: the inode; unread: the mapping */
	__u64 chunk; /* the page index >> 6 */
	__u32 owner; /* evicted: the device; unread: the thread */
	__u32 pad;
};

/*
 * Without kernel_refaults: pages reclaim evicted while counting, by file: a page added back
 * that is here is a refault (the kernel keeps a shadow entry for what reclaim evicts; a
 * truncated or dropped page leaves none, nor any here). Pages evicted before are not known.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536); /* 4 Mi pages: 16 GiB of evicted cache remembered */
	__type(key, struct chunk_key);
	__type(value, __u64);
} evicted SEC(".maps");

/*
 * The pages each thread added and has not read yet, by thread and file. Looked at only by a
 * thread that has such pages: never on the path of a cached read.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct chunk_key);
	__type(value, __u64);
} unread SEC(".maps");

#define CHUNK_SHIFT 6
#define MAX_CHUNKS 8 /* a folio of up to 512 pages (2 MiB): larger ones are remembered in part */
#define PF_MEMALLOC_FLAG 0x00000800 /* reclaim (kswapd, direct, memcg and DAMON's) runs with it */
#define FAULT_WINDOW_NS 1000000000ull /* a fault's mapping follows its event within this */
#define PMD_PAGES 512
#define MAX_READ_CHUNKS 64 /* a read's pages looked up among those read ahead: 4096 (16 MiB) at most */

/*
 * What each thread is doing to the page cache, kept in place (task-local storage: found from
 * the task itself, no hash lookup, freed with the thread). Files are told apart by their
 * mapping (struct address_space), which every filemap tracepoint gives: no loads of the inode
 * and its device on the path every read takes.
 * - the read in progress: its file, its last page, the first page of the batch the kernel is
 *   serving now, the first page not counted yet, and the thread's read calls (task->ioac.syscr,
 *   which the kernel counts as each read(2), pread, readv, sendfile or copy_file_range
 *   returns) when it began: a read's pages are counted batch by batch as the kernel returns
 *   them, and its last batch once the thread has made another read, or that count has moved on;
 * - how many pages it added to one file and has not read or mapped yet (read-ahead, and the
 *   pages a read fetches ahead of the batch it is in), and which (the map unread): misses
 *   when it reaches them, never hits, and a page read again, or read elsewhere in the file, a hit;
 * - the last folio it added, so that dirtying that folio next makes the add a write miss;
 * - the file of the page fault it is serving, and pages mapped not yet given to a file;
 * - its counts so far (per_process, per_file), handed over (struct cache_record) when the
 *   thread moves to another file, when the reader asks (the flush iterator) and when it exits.
 */
struct thread_state {
	__u64 read_mapping, read_batch, read_last, read_calls; /* read_mapping 0: none yet */
	__u64 read_from;  /* its first page not counted yet, plus 1; 0: every one counted (exchanged with the flush) */
	__u64 read_early; /* whole_reads: pages of the read counted as it fetched them */
	__u64 pending_mapping, pending; /* which pages: in the map unread */
	__u64 added_mapping, added_index, added_pages;
	__u64 fault_mapping, fault_ns, mapped_mapping, mapped_unnamed;
	/* Kernels before 6.2 (split_counts): the fault in progress, its file and the thread's own
	 * count of file pages mapped when it began; what the thread folds in while it runs is
	 * taken off; `folding`: the rss_stat event of that fold is not a mapping. */
	__u64 window_mapping;
	__s64 window_base;
	__u64 folding;
	/* Counts since the thread began, and how far they were handed over. */
	struct cache_counters counted, handed;
	__u64 file_mapping, file_ino; /* the file the counts since handed belong to */
	__u32 file_dev;
};
THREAD_STORAGE(threads, struct thread_state);

static __always_inline struct thread_state *thread_state(bool create)
{
	return thread_storage(&threads, &threads_empty, create);
}

static __always_inline bool counted_here(void)
{
	return !only_tgid || (__u32)(bpf_get_current_pid_tgid() >> 32) == only_tgid;
}

#define EACH_COUNTER(X) X(reads) X(maps) X(misses) X(hits) X(write_misses) X(dirties) X(evictions) X(refaults)

static __always_inline void add(struct cache_counters *c, const struct cache_counters *d)
{
#define ADD(f) c->f += d->f;
	EACH_COUNTER(ADD)
#undef ADD
}

static __always_inline void count_dropped(void)
{
	__u32 zero = 0;
	struct cache_counters *total = bpf_map_lookup_elem(&totals, &zero);

	if (total)
		total->dropped++;
}

/* ---- Hand-overs --------------------------------------------------------------------------- */

/* The id of a task's memory cgroup (its directory's inode number), on v1 or v2; 0 without one. */
static __always_inline __u64 memory_cgroup_of(struct task_struct *task)
{
	struct cgroup_subsys_state *css = 0;
	struct css_set *set = BPF_CORE_READ(task, cgroups);
	int memory;

	if (!bpf_core_enum_value_exists(enum cgroup_subsys_id, memory_cgrp_id) || !set)
		return 0;
	memory = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
	if (memory < 0 || memory >= 16)
		return 0;
	bpf_core_read(&css, sizeof(css), &set->subsys[memory]);
	return css ? BPF_CORE_READ(css, cgroup, kn, id) : 0;
}

/*
 * The thread's counts since the last hand-over, into r, with who they belong to: false when
 * there are none. Each counter's mark is exchanged, so that two hand-overs at once (the
 * thread's own and the reader's iterator) carry each count once between them.
 */
static __always_inline void identify(struct task_struct *task, struct cache_record *r);

static __always_inline bool hand_over(struct thread_state *state, struct task_struct *task, struct cache_record *r)
{
	__u64 any = 0;

#define MOVE(f)                                                                     \
	{                                                                           \
		__u64 now = state->counted.f;                                       \
		r->delta.f = now - EXCHANGE(&state->handed.f, now);      \
		any |= r->delta.f;                                                  \
	}
	EACH_COUNTER(MOVE)
#undef MOVE
	r->delta.dropped = 0;
	if (!any)
		return false;
	r->ino = state->file_ino;
	r->dev = state->file_dev;
	identify(task, r);
	return true;
}

/* Whose counts r carries: the task's process, owner, cgroups and name. */
static __always_inline void identify(struct task_struct *task, struct cache_record *r)
{
	struct task_struct *leader = BPF_CORE_READ(task, group_leader);

	r->tgid = BPF_CORE_READ(task, tgid);
	r->uid = BPF_CORE_READ(task, real_cred, uid.val);
	r->cgroup = BPF_CORE_READ(task, cgroups, dfl_cgrp, kn, id);
	r->memcg = memory_cgroup_of(task);
	if (leader)
		bpf_probe_read_kernel(r->comm, sizeof(r->comm), leader->comm);
}

/* A hand-over through the ring buffer; when it is full the counts stay in the totals only. */
static __always_inline void hand_over_now(struct thread_state *state, struct task_struct *task)
{
	struct cache_record *r = bpf_ringbuf_reserve(&records, sizeof(*r), 0);

	if (!r) {
		struct cache_record lost = {};

		if (hand_over(state, task, &lost))
			count_dropped();
		return;
	}
	if (hand_over(state, task, r))
		bpf_ringbuf_submit(r, 0);
	else
		bpf_ringbuf_discard(r, 0);
}

/* The thread's counts from here on belong to this file (per_file): what it had so far goes to the last one. */
static __always_inline void to_file(struct thread_state *state, struct address_space *mapping)
{
	if (per_file && state->file_mapping != (__u64)mapping) {
		__u32 dev = 0;
		__u64 ino = 0;

		hand_over_now(state, current_task());
		cache_file_of(mapping, &dev, &ino);
		state->file_mapping = (__u64)mapping;
		state->file_dev = dev;
		state->file_ino = ino;
	}
}

/*
 * Counts d for the system, and for the thread's process and file: per cpu and in the thread's
 * own storage, which no other cpu writes, so no atomics and no hash lookup on the path every
 * read takes; the thread's counts reach the reader in its hand-overs.
 */
static __always_inline void count(struct thread_state *state, const struct cache_counters *d,
				  struct address_space *mapping)
{
	__u32 zero = 0;
	struct cache_counters *total = bpf_map_lookup_elem(&totals, &zero);

	if (total)
		add(total, d);
	if (!state || !(per_process || per_file))
		return;
	to_file(state, mapping);
	add(&state->counted, d);
}

/* ---- Accesses ----------------------------------------------------------------------------- */

/* The bits of [first, first + pages) inside the chunk. */
static __always_inline __u64 chunk_bits(__u64 chunk, __u64 first, __u64 pages)
{
	__u64 start = chunk << CHUNK_SHIFT, end = start + 64, from = first > start ? first : start,
	      to = first + pages < end ? first + pages : end;

	if (to <= from)
		return 0;
	return (to - from == 64 ? ~0ull : ((1ull << (to - from)) - 1)) << (from - start);
}

/*
 * The pages of [first, first + pages) marked in a map of bitmaps by (file, owner, chunk):
 * counted and unmarked. At most max_chunks chunks looked at.
 */
static __always_inline __u64 take_bits(void *map, __u64 file, __u32 owner, __u64 first, __u64 pages, int max_chunks)
{
	struct chunk_key key = { .file = file, .owner = owner };
	__u64 count = 0;

	for (int i = 0; i < max_chunks; i++) {
		__u64 bits, *bitmap;

		key.chunk = (first >> CHUNK_SHIFT) + i;
		if (key.chunk << CHUNK_SHIFT >= first + pages)
			break;
		bitmap = bpf_map_lookup_elem(map, &key);
		if (!bitmap)
			continue;
		bits = *bitmap & chunk_bits(key.chunk, first, pages);
		if (!bits)
			continue;
		count += __builtin_popcountll(bits);
		CLEAR_BITS(bitmap, bits);
	}
	return count;
}

/* Marks the pages of [first, first + pages): a folio of up to MAX_CHUNKS chunks. */
static __always_inline void set_bits(void *map, __u64 file, __u32 owner, __u64 first, __u64 pages)
{
	struct chunk_key key = { .file = file, .owner = owner };

	for (int i = 0; i < MAX_CHUNKS; i++) {
		__u64 bits, *bitmap;

		key.chunk = (first >> CHUNK_SHIFT) + i;
		if (key.chunk << CHUNK_SHIFT >= first + pages)
			break;
		bits = chunk_bits(key.chunk, first, pages);
		bitmap = bpf_map_lookup_elem(map, &key);
		if (bitmap)
			SET_BITS(bitmap, bits);
		else
			bpf_map_update_elem(map, &key, &bits, BPF_ANY);
	}
}

/* Of [first, first + pages) of a file, the pages thread tid added and had not read: taken off (they are read now). */
static __always_inline __u64 missed_of(struct thread_state *state, __u32 tid, bool mapped, __u64 first, __u64 pages,
				       struct address_space *mapping)
{
	__u64 missed;

	if (!state || !state->pending || state->pending_mapping != (__u64)mapping)
		return 0;
	missed = mapped ? pages : take_bits(&unread, (__u64)mapping, tid, first, pages, MAX_READ_CHUNKS);
	return missed < state->pending ? missed : state->pending;
}

/*
 * Pages read or mapped: those of the file the thread added and had not reached yet were
 * misses, the rest hits; `early` of them were counted already (whole_reads: added, and so
 * read and missed, while the read ran). The path of every cached read: two counters
 * touched, nothing else.
 */
static __always_inline void accessed(struct thread_state *state, bool mapped, __u64 first, __u64 pages,
				     struct address_space *mapping, __u64 early)
{
	struct cache_counters *total;
	__u64 hits, missed;
	__u32 zero = 0;

	if (early > pages)
		early = pages;
	pages -= early;
	missed = missed_of(state, (__u32)bpf_get_current_pid_tgid(), mapped, first, pages + early, mapping);
	if (state)
		state->pending -= missed;
	hits = missed < pages ? pages - missed : 0;
	total = bpf_map_lookup_elem(&totals, &zero);
	if (total) {
		if (mapped)
			total->maps += pages;
		else
			total->reads += pages;
		total->hits += hits;
	}
	if (!state || !(per_process || per_file))
		return;
	to_file(state, mapping);
	if (mapped)
		state->counted.maps += pages;
	else
		state->counted.reads += pages;
	state->counted.hits += hits;
}

/*
 * Pages mapped that no fault event named yet: the last file this thread mapped gets them, or
 * the file of the fault at hand when the thread has mapped none before (a process whose first
 * fault mapped a whole 2 MiB folio, with no filemap event). With no file at all they wait,
 * and at the thread's exit go to its process alone.
 */
static __always_inline void name_mapped(struct thread_state *state, struct address_space *fallback, bool at_exit)
{
	__u64 pages = state->mapped_unnamed, mapping = state->mapped_mapping ? state->mapped_mapping : (__u64)fallback;

	if (!pages || (!mapping && !at_exit))
		return;
	state->mapped_unnamed = 0;
	accessed(state, true, 0, pages, (struct address_space *)mapping, 0);
}

/* The thread's read calls so far (task->ioac.syscr; 0 on kernels without CONFIG_TASK_XACCT). */
static __always_inline __u64 read_calls(struct task_struct *task)
{
	if (!bpf_core_field_exists(task->ioac.syscr))
		return 0;
	return THREADS_BY_ID ? BPF_CORE_READ(task, ioac.syscr) : task->ioac.syscr; /* a BTF pointer: a plain load */
}

/* The read in progress is over: the pages of it not counted yet are. */
static __always_inline void read_ends(struct thread_state *state)
{
	__u64 from = state->read_from ? EXCHANGE(&state->read_from, 0) : 0;

	if (from && from - 1 <= state->read_last)
		accessed(state, false, from - 1, state->read_last - from + 2,
			 (struct address_space *)state->read_mapping, state->read_early);
	state->read_early = 0;
}

/*
 * The read path: [first, last] of a file a read(2), sendfile or splice asks for, as the kernel
 * serves it: in batches, each reported with the read's same last page and a later first one
 * (or, whole_reads, once as it begins). Each batch's pages are counted when the next begins,
 * the last batch's when the read is over: when the thread begins another read, or (the flush)
 * once its read calls have moved on or it waits elsewhere, or as it exits. So a page is a hit or a miss as the read
 * reaches it, in the interval it does. A read that begins in the page where the thread's
 * previous one ended does not count that page twice (the kernel marks it accessed once too).
 * Every other read counts every page it returns, again and again: a second pass, overlapping
 * windows, random reads, a backward scan are real accesses. Two reads are told apart by the
 * thread's read calls; reads that leave them as they are (io_uring, splice(2)) by position.
 * tmpfs and shmem have their own read path: what arrives here is a cache.
 */
static __always_inline void pages_read(struct address_space *mapping, __u64 first, __u64 last)
{
	struct thread_state *state = thread_state(true);
	__u64 calls, from;

	if (!state) {
		accessed(0, false, first, last - first + 1, mapping, 0);
		return;
	}
	if (state->mapped_unnamed)
		name_mapped(state, 0, false);
	calls = read_calls(current_task());
	if (!whole_reads && state->read_mapping == (__u64)mapping && state->read_calls == calls &&
	    last == state->read_last && first > state->read_batch && first <= last) {
		/* The same read's next batch: the one before was [read_batch, first). */
		state->read_batch = first;
		from = EXCHANGE(&state->read_from, first + 1);
		if (from && from - 1 < first)
			accessed(state, false, from - 1, first - from + 1, mapping, 0);
		return;
	}
	read_ends(state);
	from = first;
	if (state->read_mapping == (__u64)mapping && first == state->read_last && last > first)
		from++; /* the page the previous read ended in */
	state->read_mapping = (__u64)mapping;
	state->read_batch = first;
	state->read_last = last;
	state->read_calls = calls;
	state->read_from = from + 1;
}

/*
 * filemap_get_pages reports [index, last_index] of a read. Pages past the end of the file (a
 * read asking for more than there is) are not pages read.
 */
SEC("tp_btf/mm_filemap_get_pages")
int BPF_PROG(on_read, struct address_space *mapping, unsigned long index, unsigned long last_index)
{
	__u64 first = index, last = last_index;

	if (!counted_here() || last < first)
		return 0;
	if (last > first) { /* one page: the kernel checked it is inside the file */
		long long size = mapping->host->i_size;

		if (size <= 0 || first > (__u64)(size - 1) >> page_shift)
			return 0;
		if (last > (__u64)(size - 1) >> page_shift)
			last = (__u64)(size - 1) >> page_shift;
	}
	pages_read(mapping, first, last);
	return 0;
}

/*
 * A handler run as a function begins, by two programs, of which the collector loads one: NAME_fentry
 * (BPF trampolines) and NAME_kprobe (where the kernel has none). The handler reads what it needs
 * of the arguments with probe reads, as kprobes must.
 */
#define ON_ENTRY(function, name, handler, ...)                 \
	SEC("fentry/" #function)                               \
	int BPF_PROG(name##_fentry, __VA_ARGS__)                \
	{                                                      \
		handler;                                       \
		return 0;                                      \
	}                                                      \
	SEC("kprobe/" #function)                               \
	int BPF_KPROBE(name##_kprobe, __VA_ARGS__)              \
	{                                                      \
		handler;                                       \
		return 0;                                      \
	}

/*
 * Without that tracepoint (before Linux 6.9): the same range, from the functions that call
 * filemap_get_pages, as they begin: filemap_read (read(2), and splice before 6.5; before 5.12
 * generic_file_buffered_read) and
 * filemap_splice_read (splice, sendfile, copy_file_range since 6.5). A read of count bytes at
 * pos is the pages of [pos, pos + count) inside the file, as filemap_get_pages reports them;
 * its batches are one call here. Read with probe reads: kprobes get plain pointers.
 */
static __always_inline void read_call(struct file *file, __u64 pos, __u64 count)
{
	struct address_space *mapping = BPF_CORE_READ(file, f_mapping);
	long long size = BPF_CORE_READ(mapping, host, i_size);
	__u64 end;

	if (!count || size <= 0 || pos >= (__u64)size || !counted_here())
		return;
	end = pos + count < (__u64)size ? pos + count : (__u64)size;
	pages_read(mapping, pos >> page_shift, (end - 1) >> page_shift);
}

static __always_inline void read_iter_call(struct kiocb *iocb, struct iov_iter *iter)
{
	read_call(BPF_CORE_READ(iocb, ki_filp), BPF_CORE_READ(iocb, ki_pos), BPF_CORE_READ(iter, count));
}

static __always_inline void splice_call(struct file *in, loff_t *ppos, size_t len)
{
	loff_t pos = 0;

	bpf_probe_read_kernel(&pos, sizeof(pos), ppos); /* the caller has cut len to the pipe's room */
	read_call(in, pos, len);
}

ON_ENTRY(filemap_read, read, read_iter_call(iocb, iter), struct kiocb *iocb, struct iov_iter *iter)
/* Its name before Linux 5.12, with the same arguments (read(2) and splice). */
ON_ENTRY(generic_file_buffered_read, buffered_read, read_iter_call(iocb, iter), struct kiocb *iocb,
	 struct iov_iter *iter)
ON_ENTRY(filemap_splice_read, splice, splice_call(in, ppos, len), struct file *in, loff_t *ppos,
	 struct pipe_inode_info *pipe, size_t len)

/* ---- Misses, evictions, refaults, dirties ------------------------------------------------- */

/* Reclaim took [index, index + pages) of a file. */
static __always_inline void remember_evicted(__u32 dev, __u64 ino, __u64 index, __u64 pages)
{
	set_bits(&evicted, ino, dev, index, pages);
}

/* The pages of [index, index + pages) that reclaim had evicted: refaults, forgotten once counted. */
static __always_inline __u64 refaulted(__u32 dev, __u64 ino, __u64 index, __u64 pages)
{
	return take_bits(&evicted, ino, dev, index, pages, MAX_CHUNKS);
}

/* Pages the thread added that it has not reached yet: counted, and marked (one file's at a time). */
static __always_inline void remember_pending(struct thread_state *state, struct address_space *mapping, __u64 index,
					     __u64 pages)
{
	if (state->pending_mapping != (__u64)mapping) {
		state->pending = 0;
		state->pending_mapping = (__u64)mapping;
	}
	state->pending += pages;
	set_bits(&unread, (__u64)mapping, (__u32)bpf_get_current_pid_tgid(), index, pages);
}

/*
 * A miss: a folio added. Remembered as the thread's last add (a write dirties it next), and
 * as pages the thread has not read yet, of one file at a time: its read reaches them in a
 * later batch, or a later read does. Seen whole_reads, a read's pages it fetches as it runs
 * are read and missed now (its range is one, counted when it ends).
 */
static __always_inline void added(struct address_space *mapping, __u64 index, __u64 pages)
{
	__u64 ino = 0, inside = 0, calls;
	struct cache_counters d = {};
	struct thread_state *state;
	__u32 dev = 0;

	if (!counted_here() || !file_of(mapping, &dev, &ino))
		return;
	state = thread_state(true);
	d.misses = pages;
	if (!kernel_refaults)
		d.refaults = refaulted(dev, ino, index, pages);
	if (state) {
		name_mapped(state, 0, false);
		state->added_mapping = (__u64)mapping;
		state->added_index = index;
		state->added_pages = pages;
		calls = read_calls(current_task());
		/* A read that is over is counted before its file's pages waiting to be read may be forgotten. */
		if (state->read_from && state->read_calls != calls)
			read_ends(state);
		if (whole_reads && state->read_from && state->read_mapping == (__u64)mapping &&
		    index <= state->read_last && index + pages > state->read_from - 1 && state->read_calls == calls) {
			__u64 from = index > state->read_from - 1 ? index : state->read_from - 1;
			__u64 to = index + pages - 1 < state->read_last ? index + pages - 1 : state->read_last;

			inside = to - from + 1;
			d.reads = inside;
			state->read_early += inside;
		}
		if (!inside) {
			remember_pending(state, mapping, index, pages);
		} else { /* the folio's pages outside the read, on either side */
			__u64 from = index > state->read_from - 1 ? index : state->read_from - 1;

			if (from > index)
				remember_pending(state, mapping, index, from - index);
			if (from + inside < index + pages)
				remember_pending(state, mapping, from + inside, index + pages - from - inside);
		}
	}
	count(state, &d, mapping);
}

/*
 * The add and delete tracepoints pass a folio (Linux 5.17 to 5.19 on), or before that a page:
 * a program for each, NAME and NAME_page, around one handler of (mapping, index, pages), of
 * which the collector loads the one the kernel's BTF says (its btf_trace_ typedef's argument).
 */
#define ON_FOLIO_OR_PAGE(tracepoint, name, handler)                                   \
	SEC("tp_btf/" #tracepoint)                                                    \
	int BPF_PROG(name, struct folio *folio)                                       \
	{                                                                             \
		handler(folio->mapping, folio->index, folio_nr(folio));               \
		return 0;                                                             \
	}                                                                             \
	SEC("tp_btf/" #tracepoint)                                                    \
	int BPF_PROG(name##_page, struct page *page)                                  \
	{                                                                             \
		struct page___old *old = (void *)page;                                \
                                                                                      \
		handler(old->mapping, old->index, page_nr(page));                     \
		return 0;                                                             \
	}

ON_FOLIO_OR_PAGE(mm_filemap_add_to_page_cache, on_add, added)

/*
 * A refault as the kernel counts it (workingset_refault_file): workingset_refault is called
 * for a page-cache folio added where reclaim had left a shadow entry, whenever the eviction
 * was, and not for a write. Seen there (fentry or a kprobe: its folio, before Linux 5.17 a
 * page, read with probe reads), or where it adds the pages to the counter (the memcg stat
 * tracepoint, Linux 6.16: in the thread that added the folio, just after it did).
 */
static __always_inline void refaulted_pages(struct address_space *mapping, __u64 pages)
{
	struct cache_counters d = { .refaults = pages };

	count(per_process || per_file ? thread_state(true) : 0, &d, mapping);
}

static __always_inline void refault(void *folio)
{
	struct page___old *page = folio;
	struct address_space *mapping = BPF_CORE_READ(page, mapping);

	if (counted_here() && mapping && cache_mapping(mapping))
		refaulted_pages(mapping, page_adds ? page_nr(folio) : folio_nr(folio));
}

SEC("tp_btf/mod_memcg_lruvec_state")
int BPF_PROG(on_memcg_stat, struct mem_cgroup *memcg, int item, int val)
{
	struct thread_state *state;

	if (item != bpf_core_enum_value(enum node_stat_item, WORKINGSET_REFAULT_FILE) || val <= 0 || !counted_here())
		return 0;
	state = thread_state(false);
	refaulted_pages(state ? (struct address_space *)state->added_mapping : 0, val);
	return 0;
}

SEC("fentry/workingset_refault")
int BPF_PROG(refault_fentry, void *folio)
{
	refault(folio);
	return 0;
}

SEC("kprobe/workingset_refault")
int BPF_KPROBE(refault_kprobe, void *folio)
{
	refault(folio);
	return 0;
}

/* An eviction (reclaim), or a page truncated, invalidated or dropped: who removed it is charged. */
static __always_inline void deleted(struct address_space *mapping, __u64 index, __u64 pages)
{
	struct cache_counters d = {};
	__u64 ino = 0;
	__u32 dev = 0;

	if (!file_of(mapping, &dev, &ino))
		return;
	d.evictions = pages;
	if (!kernel_refaults && (CURRENT(flags) & PF_MEMALLOC_FLAG))
		remember_evicted(dev, ino, index, pages);
	if (!counted_here())
		return;
	count(per_process || per_file ? thread_state(true) : 0, &d, mapping);
}

ON_FOLIO_OR_PAGE(mm_filemap_delete_from_page_cache, on_delete, deleted)

/* Pages a write added and dirtied: not waiting to be read any more. */
static __always_inline void forget_pending(struct thread_state *state, struct address_space *mapping, __u64 index,
					   __u64 pages)
{
	__u64 taken = take_bits(&unread, (__u64)mapping, (__u32)bpf_get_current_pid_tgid(), index, pages, MAX_CHUNKS);

	state->pending -= taken < state->pending ? taken : state->pending;
}

/*
 * Dirtied folios, in pages: the tracepoint's own fields have no size, its folio has. A
 * folio the same thread has just added is a write miss (a write into a page that was not
 * cached), and its pages are no longer waiting to be read.
 */
static __always_inline void dirtied(struct address_space *mapping, __u64 index, __u64 pages)
{
	struct cache_counters d = {};
	struct thread_state *state;
	__u32 dev = 0;
	__u64 ino = 0;

	if (!counted_here() || !file_of(mapping, &dev, &ino))
		return;
	d.dirties = pages;
	state = thread_state(per_process || per_file); /* a writer's first event may be this */
	if (state) {
		if (state->added_pages && state->added_mapping == (__u64)mapping && state->added_index == index) {
			d.write_misses = state->added_pages;
			state->added_pages = 0;
			if (state->pending && state->pending_mapping == (__u64)mapping)
				forget_pending(state, mapping, index, d.write_misses);
		}
	}
	count(state, &d, mapping);
}

SEC("tp_btf/writeback_dirty_folio")
int BPF_PROG(on_dirty, struct folio *folio, struct address_space *mapping)
{
	dirtied(mapping, folio->index, folio_nr(folio));
	return 0;
}

/* Before Linux 5.19: writeback_dirty_page, of a page. */
SEC("tp_btf/writeback_dirty_page")
int BPF_PROG(on_dirty_page, struct page *page, struct address_space *mapping)
{
	dirtied(mapping, ((struct page___old *)page)->index, page_nr(page));
	return 0;
}

/* ---- The mmap path ------------------------------------------------------------------------ */

/*
 * What a fault maps is read from the process's own count of file pages mapped
 * (mm->rss_stat[MM_FILEPAGES], which the kernel updates for every fault and unmap, and which
 * rss_stat reports): pages the kernel mapped, around the fault too (fault-around) and whole
 * 2 MiB folios, each once; a page touched again while mapped is no access the kernel sees.
 * mm_filemap_fault (before the page is looked up) and mm_filemap_map_pages (after fault-around
 * mapped, with its window, not what it mapped) name the file.
 */

/* A pointer as a number (the verifier allows no arithmetic on some pointers, a number it does). */
static __always_inline __u64 address_of(const void *pointer)
{
	__u64 address = 0;

	bpf_probe_read_kernel(&address, sizeof(address), &pointer);
	return address;
}

/*
 * Until Linux 6.2 an address space's counts were atomics, and each thread kept what it mapped
 * apart, folding it in every 64 faults and at its exit (rss_stat fires then): the count here
 * is what was folded in.
 */
struct mm_rss_stat___atomic {
	atomic_long_t count[4];
} __attribute__((preserve_access_index));
struct mm_struct___atomic {
	struct mm_rss_stat___atomic rss_stat;
} __attribute__((preserve_access_index));

static __always_inline bool learn_cpu_offsets(void)
{
	struct mm_struct___atomic *old = 0;
	__u64 base = 0;
	__u32 zero = 0;

	/* Address spaces whose counts are atomics have no per-cpu parts, and those kernels (before
	 * 6.2) no bpf_map_lookup_percpu_elem (5.19): a branch the verifier drops there. */
	if (bpf_core_field_exists(old->rss_stat.count)) {
		cpu_offsets_known = 1;
		return true;
	}
	bpf_probe_read_kernel(&base, sizeof(base),
			      (void *)(address_of(&cpu_probe) + bpf_core_field_offset(struct bpf_array, pptrs)));
	if (!base)
		return false;
	for (__u32 cpu = 0; cpu < MAX_CPUS && cpu < nr_cpus; cpu++) {
		void *copy = bpf_map_lookup_percpu_elem(&cpu_probe, &zero, cpu);

		if (!copy)
			break;
		cpu_offset[cpu] = address_of(copy) - base;
	}
	cpu_offsets_known = 1;
	return true;
}

/* The exact count, as percpu_counter_sum: the shared part and every cpu's part not yet folded in. */
static __always_inline __u64 file_pages_mapped(struct mm_struct *mm)
{
	struct mm_struct___atomic *old = (void *)mm;
	struct percpu_counter *counter;
	__u64 counters;
	__s64 sum;

	if (bpf_core_field_exists(old->rss_stat.count)) {
		sum = BPF_CORE_READ(old, rss_stat.count[MM_FILEPAGES].counter);
		return sum > 0 ? sum : 0;
	}
	counter = &mm->rss_stat[MM_FILEPAGES];
	sum = counter->count;
	counters = address_of(counter->counters);
	for (__u32 cpu = 0; cpu < MAX_CPUS && cpu < nr_cpus; cpu++) {
		__s32 value = 0;

		bpf_probe_read_kernel(&value, sizeof(value), (void *)(counters + cpu_offset[cpu & (MAX_CPUS - 1)]));
		sum += value;
	}
	return sum > 0 ? sum : 0;
}

/* An address space's baseline: a new program, a new process. */
static __always_inline void mapped_baseline(struct mm_struct *mm)
{
	__u64 key = (__u64)mm, pages;

	if (!mm || (!cpu_offsets_known && !learn_cpu_offsets()))
		return;
	pages = file_pages_mapped(mm);
	bpf_map_update_elem(&mapped_pages, &key, &pages, BPF_ANY);
}

SEC("tp_btf/rss_stat")
int BPF_PROG(on_rss, struct mm_struct *mm, int member)
{
	__u64 key = (__u64)mm, now, before, *seen, pages;
	struct thread_state *state;

	if (member != MM_FILEPAGES || !counted_here() || (!cpu_offsets_known && !learn_cpu_offsets()))
		return 0;
	now = file_pages_mapped(mm);
	seen = bpf_map_lookup_elem(&mapped_pages, &key);
	if (!seen) {
		bpf_map_update_elem(&mapped_pages, &key, &now, BPF_ANY);
		return 0;
	}
	before = EXCHANGE(seen, now);
	/* Unmapped, or another process's pages (a fork copying them, reclaim taking them). */
	if (now <= before || mm != CURRENT(mm))
		return 0;
	pages = now - before;
	if (split_counts) { /* a thread folding in its own count: its faults counted them (fault_window) */
		state = thread_state(false);
		if (state && state->folding) {
			state->folding = 0;
			return 0;
		}
	}
	state = thread_state(true);
	if (!state)
		return 0;
	if (state->fault_mapping && bpf_ktime_get_ns() - state->fault_ns < FAULT_WINDOW_NS) {
		/* A fault the file handled (filemap_fault): its file, named before. */
		state->mapped_mapping = state->fault_mapping;
		state->fault_mapping = 0;
		accessed(state, true, 0, pages, (struct address_space *)state->mapped_mapping, 0);
	} else if (pages >= PMD_PAGES) {
		/* A whole folio mapped around a fault, which no filemap event reports. */
		state->mapped_unnamed += pages;
		name_mapped(state, 0, false);
	} else {
		state->mapped_unnamed += pages; /* fault-around: mm_filemap_map_pages follows */
	}
	return 0;
}

/*
 * Before Linux 6.2 a thread counts the pages it maps in its own task->rss_stat, and folds that
 * into its address space's count every 64 faults and as it exits (sync_mm_rss, which fires
 * rss_stat): pages mapped seen only then would be given, in bulk, to whatever file the thread
 * faults on at that moment. Instead each fault of a file mapping is a window: the pages it
 * mapped are how much the thread's own count grew from its start (handle_mm_fault) to its end,
 * the vma's file named from the start. A fold inside the window (it happens as a fault begins)
 * is taken off the base. rss_stat still counts what is added to the address space's count
 * directly (a whole 2 MiB folio mapped at once), and not the folds.
 */
struct task_rss_stat___split {
	int count[4];
} __attribute__((preserve_access_index));
struct task_struct___split {
	struct task_rss_stat___split rss_stat;
} __attribute__((preserve_access_index));

static __always_inline __s64 own_file_pages(void)
{
	struct task_struct___split *task = (void *)bpf_get_current_task();

	return BPF_CORE_READ(task, rss_stat.count[MM_FILEPAGES]);
}

static __always_inline void fault_begins(struct vm_area_struct *vma)
{
	struct address_space *mapping = BPF_CORE_READ(vma, vm_file, f_mapping);
	struct thread_state *state;

	if (!mapping || BPF_CORE_READ(vma, vm_mm) != CURRENT(mm) ||
	    !counted_here() || !cache_mapping(mapping)) {
		state = thread_state(false);
		if (state)
			state->window_mapping = 0;
		return;
	}
	state = thread_state(true);
	if (!state)
		return;
	state->window_mapping = (__u64)mapping;
	state->window_base = own_file_pages();
}

static __always_inline void fault_ends(void)
{
	struct thread_state *state = thread_state(false);
	__s64 pages;

	if (!state || !state->window_mapping)
		return;
	pages = own_file_pages() - state->window_base;
	if (pages > 0) {
		name_mapped(state, 0, false);
		state->mapped_mapping = state->window_mapping;
		accessed(state, true, 0, pages, (struct address_space *)state->window_mapping, 0);
	}
	state->window_mapping = 0;
}

static __always_inline void folds(void)
{
	__s64 pages = own_file_pages();
	struct thread_state *state;

	if (!pages || !counted_here())
		return;
	state = thread_state(true);
	if (!state)
		return;
	state->window_base -= pages; /* that count goes to 0 */
	state->folding = 1;
}

ON_ENTRY(handle_mm_fault, window, fault_begins(vma), struct vm_area_struct *vma)
ON_ENTRY(sync_mm_rss, fold, folds(), struct mm_struct *mm)

SEC("fexit/handle_mm_fault")
int BPF_PROG(window_fexit)
{
	fault_ends();
	return 0;
}

SEC("kretprobe/handle_mm_fault")
int BPF_KRETPROBE(window_kretprobe)
{
	fault_ends();
	return 0;
}

SEC("tp_btf/mm_filemap_map_pages")
int BPF_PROG(on_map_pages, struct address_space *mapping, unsigned long index, unsigned long last_index)
{
	struct thread_state *state;
	__u64 ino;
	__u32 dev;

	if (!counted_here() || !file_of(mapping, &dev, &ino))
		return 0;
	state = thread_state(false);
	if (!state)
		return 0;
	state->fault_mapping = 0;
	state->mapped_mapping = (__u64)mapping;
	name_mapped(state, mapping, false);
	return 0;
}

/* A fault a file handles: the pages mapped next (rss_stat) are that file's. */
static __always_inline void faulting(struct address_space *mapping)
{
	struct thread_state *state = thread_state(true);

	if (!state)
		return;
	name_mapped(state, mapping, false);
	state->fault_mapping = (__u64)mapping;
	state->fault_ns = bpf_ktime_get_ns();
}

SEC("tp_btf/mm_filemap_fault")
int BPF_PROG(on_fault, struct address_space *mapping, unsigned long index)
{
	__u64 ino;
	__u32 dev;

	if (counted_here() && file_of(mapping, &dev, &ino))
		faulting(mapping);
	return 0;
}

/*
 * Without the filemap fault tracepoints (before Linux 6.9): filemap_fault, where
 * mm_filemap_fault is, and filemap_map_pages (fault-around), as they begin: the pages
 * mapped until the next event are that file's. (mm_filemap_map_pages comes after
 * fault-around has mapped; naming the file before it does gives the same pages to it.)
 */
static __always_inline void fault_call(struct vm_fault *vmf)
{
	struct address_space *mapping = BPF_CORE_READ(vmf, vma, vm_file, f_mapping);

	if (counted_here() && cache_mapping(mapping))
		faulting(mapping);
}

ON_ENTRY(filemap_fault, fault, fault_call(vmf), struct vm_fault *vmf)
ON_ENTRY(filemap_map_pages, map_pages, fault_call(vmf), struct vm_fault *vmf)

/* ---- Processes ---------------------------------------------------------------------------- */

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *task)
{
	struct thread_state *state = thread_state(false);

	if (state)
		read_ends(state);
	if (state && (per_process || per_file)) {
		name_mapped(state, 0, true);
		hand_over_now(state, task);
	}
	if (state)
		thread_storage_done(&threads, task->pid);
	return 0;
}

/* Before Linux 5.14 a task's state was `state`. */
struct task_struct___state {
	long state;
} __attribute__((preserve_access_index));

#define TASK_INTERRUPTIBLE_STATE 0x1
#define TASK_UNINTERRUPTIBLE_STATE 0x2
#define TASK_STOPPED_STATES 0xc /* __TASK_STOPPED, __TASK_TRACED */

/*
 * Whether a task waits, asleep or stopped, where no read of a file's cache is: a read sleeps
 * only killable (uninterruptible: a folio's lock, its I/O), and is over before a stop.
 * A thread reading a file and then waiting for input in read(2) on a pipe, socket or tty
 * has not moved its read calls on yet.
 */
static __always_inline bool waits_elsewhere(struct task_struct *task)
{
	unsigned long state;

	if (bpf_core_field_exists(task->__state))
		state = BPF_CORE_READ(task, __state);
	else
		state = BPF_CORE_READ((struct task_struct___state *)task, state);
	return (state & (TASK_INTERRUPTIBLE_STATE | TASK_STOPPED_STATES)) && !(state & TASK_UNINTERRUPTIBLE_STATE);
}

/*
 * A thread's read that is over, its read calls having moved on since it began or the thread
 * waiting elsewhere, whose last batch is not counted yet (the thread has made no read since):
 * counted by the flush, into the
 * totals (atomically: this is not the thread's cpu) and a record of the read's file. The
 * thread's count of pages waiting to be read is left as it is (only the thread writes it):
 * at most more look-ups later. The page to count from is exchanged, so the thread and the
 * flush never both count it; a thread beginning its next read in the same instant may have
 * rewritten the rest, and that read's first pages are then counted early, as hits.
 */
static __always_inline void flush_read(struct thread_state *state, struct task_struct *task, struct cache_record *r)
{
	struct address_space *mapping = (struct address_space *)state->read_mapping;
	__u64 from, last = state->read_last, pages, missed, hits;
	struct cache_counters *total;
	__u32 zero = 0;

	if (!state->read_from || (read_calls(task) == state->read_calls && !waits_elsewhere(task)))
		return;
	from = EXCHANGE(&state->read_from, 0);
	if (!from || from - 1 > last)
		return;
	pages = last - from + 2;
	missed = missed_of(state, task->pid, false, from - 1, pages, mapping);
	pages -= state->read_early < pages ? state->read_early : pages;
	hits = missed < pages ? pages - missed : 0;
	total = bpf_map_lookup_elem(&totals, &zero);
	if (total) {
		__sync_fetch_and_add(&total->reads, pages);
		__sync_fetch_and_add(&total->hits, hits);
	}
	if (!(per_process || per_file))
		return;
	r->delta.reads = pages;
	r->delta.hits = hits;
	if (per_file)
		cache_file_of(mapping, &r->dev, &r->ino);
	identify(task, r);
}

/* Run by the reader before it takes the records: every thread's counts so far, as its output. */
SEC("iter/task")
int flush(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct cache_record r = {};
	struct thread_state *state;

	if (!task)
		return 0;
	state = task_storage_of(&threads, task);
	if (!state)
		return 0;
	if (hand_over(state, task, &r))
		bpf_seq_write(ctx->meta->seq, &r, sizeof(r));
	__builtin_memset(&r, 0, sizeof(r));
	flush_read(state, task, &r);
	if (r.delta.reads)
		bpf_seq_write(ctx->meta->seq, &r, sizeof(r));
	return 0;
}

/* A new program: a new address space to count mapped pages from. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *task, pid_t old_pid, struct linux_binprm *binprm)
{
	mapped_baseline(task->mm);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	if (child->mm != parent->mm)
		mapped_baseline(child->mm);
	return 0;
}
