/* cachestat.bpf.c: page-cache accesses, misses, dirties and evictions, system-wide, per process and per file, from stable tracepoints. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "cachestat.h"
#include "folio.h"

char LICENSE[] SEC("license") = "GPL";

/* Set before loading: what to count beyond the system-wide totals. */
const volatile bool per_process = false;
const volatile bool per_file = false;
const volatile __u32 only_tgid = 0; /* 0: every process */
const volatile __u32 nr_cpus = 1;   /* possible cpus, for a process's mapped pages */
const volatile __u32 page_shift = 12;

#define MAX_CPUS 1024

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cache_counters);
} totals SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CACHESTAT_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct cache_proc);
} procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CACHESTAT_MAX_FILES);
	__type(key, struct cache_file_key);
	__type(value, struct cache_counters);
} files SEC(".maps");

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

/*
 * What each thread is doing to the page cache, kept in place (task-local storage: found from
 * the task itself, no hash lookup, freed with the thread):
 * - the range its last read returned, to tell a read(2) that the kernel serves in several
 *   batches (the same last page, a later first one) from a new read of the same pages;
 * - the pages it added to one file and has not read or mapped yet (read-ahead): misses when
 *   it reaches them, never hits;
 * - the last folio it added, so that dirtying that folio next makes the add a write miss;
 * - the file of the page fault it is serving, and pages mapped not yet given to a file;
 * - its counts so far (per_process, per_file), which are moved into the tables when the
 *   thread moves to another file, when the reader asks (the flush iterator) and when it exits.
 */
struct thread_state {
	__u64 read_ino, read_first, read_last; /* read_ino 0: no read in progress */
	__u64 pending_ino, pending;
	__u64 added_ino, added_index;
	__u64 fault_ino, fault_ns, mapped_ino, mapped_unnamed;
	__u32 read_dev, pending_dev, added_dev, added_pages;
	__u32 fault_dev, mapped_dev;
	/* Counts since the thread began, and how far they were moved into procs and files. */
	struct cache_counters counted, process_moved, file_moved;
	__u64 file_ino; /* the file the counts since file_moved belong to */
	__u32 file_dev;
};
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread_state);
} threads SEC(".maps");

#define FAULT_WINDOW_NS 1000000000ull /* a fault's mapping follows its event within this */
#define PMD_PAGES 512

static __always_inline struct thread_state *thread_state(bool create)
{
	return bpf_task_storage_get(&threads, bpf_get_current_task_btf(), 0,
				    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
}

static __always_inline bool counted_here(void)
{
	return !only_tgid || (__u32)(bpf_get_current_pid_tgid() >> 32) == only_tgid;
}

#define EACH_COUNTER(X) X(reads) X(maps) X(misses) X(hits) X(write_misses) X(dirties) X(evictions)

/* c += b - a for every counter, atomically (several threads and the reader share c). */
static __always_inline void add_difference(struct cache_counters *c, const struct cache_counters *b,
					   const struct cache_counters *a)
{
#define ADD(f) if (b->f != a->f) __sync_fetch_and_add(&c->f, b->f - a->f);
	EACH_COUNTER(ADD)
#undef ADD
}

static __always_inline void add(struct cache_counters *c, const struct cache_counters *d)
{
#define ADD(f) c->f += d->f;
	EACH_COUNTER(ADD)
#undef ADD
}

static __always_inline void copy_counters(struct cache_counters *to, const struct cache_counters *from)
{
#define COPY(f) to->f = from->f;
	EACH_COUNTER(COPY)
#undef COPY
}

static __always_inline void count_dropped(void)
{
	__u32 zero = 0;
	struct cache_counters *total = bpf_map_lookup_elem(&totals, &zero);

	if (total)
		total->dropped++;
}

/* The thread's counts since they were last moved, into its process's entry. */
static __always_inline void move_process(struct thread_state *state, struct task_struct *task)
{
	struct task_struct *leader = task->group_leader;
	__u32 tgid = task->tgid;
	struct cache_proc *proc;
	struct cache_counters now;

	copy_counters(&now, &state->counted);
	proc = bpf_map_lookup_elem(&procs, &tgid);
	if (!proc) {
		struct cache_proc fresh = {};

		bpf_map_update_elem(&procs, &tgid, &fresh, BPF_NOEXIST);
		proc = bpf_map_lookup_elem(&procs, &tgid);
		if (!proc) { /* the table is full: the totals still count it */
			count_dropped();
			copy_counters(&state->process_moved, &now);
			return;
		}
	}
	/* The name, owner and cgroup as they are now: a process that ran a new program is shown by it. */
	if (leader)
		bpf_probe_read_kernel(proc->comm, sizeof(proc->comm), leader->comm);
	proc->uid = BPF_CORE_READ(task, real_cred, uid.val);
	proc->cgroup = BPF_CORE_READ(task, cgroups, dfl_cgrp, kn, id);
	add_difference(&proc->counters, &now, &state->process_moved);
	copy_counters(&state->process_moved, &now);
}

/* The thread's counts since its file's were last moved, into that file's entry. */
static __always_inline void move_file(struct thread_state *state)
{
	struct cache_file_key key = { .ino = state->file_ino, .dev = state->file_dev };
	struct cache_counters now, *file;

	copy_counters(&now, &state->counted);
	if (!key.ino)
		goto done;
	file = bpf_map_lookup_elem(&files, &key);
	if (!file) {
		struct cache_counters fresh = {};

		bpf_map_update_elem(&files, &key, &fresh, BPF_NOEXIST);
		file = bpf_map_lookup_elem(&files, &key);
		if (!file) {
			count_dropped();
			goto done;
		}
	}
	add_difference(file, &now, &state->file_moved);
done:
	copy_counters(&state->file_moved, &now);
}

/*
 * Counts d for the system, and for the thread's process and file (dev, ino): per cpu and in
 * the thread's own storage, which no other cpu writes, so no atomics and no hash lookup on
 * the path every read takes; the thread's counts reach the tables when it moves to another
 * file, when the reader asks and when it exits.
 */
static __always_inline void count(struct thread_state *state, const struct cache_counters *d, __u32 dev, __u64 ino)
{
	__u32 zero = 0;
	struct cache_counters *total = bpf_map_lookup_elem(&totals, &zero);

	if (total)
		add(total, d);
	if (!state || !(per_process || per_file))
		return;
	if (per_file && (state->file_ino != ino || state->file_dev != dev)) {
		move_file(state);
		state->file_ino = ino;
		state->file_dev = dev;
	}
	add(&state->counted, d);
}

/* Pages read or mapped: those of the file the thread added and had not reached yet were misses, the rest hits. */
static __always_inline void accessed(struct thread_state *state, bool mapped, __u64 pages, __u32 dev, __u64 ino)
{
	struct cache_counters d = {};
	__u64 missed = 0;

	if (state && state->pending && state->pending_ino == ino && state->pending_dev == dev) {
		missed = state->pending < pages ? state->pending : pages;
		state->pending -= missed;
	}
	if (mapped)
		d.maps = pages;
	else
		d.reads = pages;
	d.hits = pages - missed;
	count(state, &d, dev, ino);
}

/* Pages mapped that no fault event named yet: the last file this thread mapped gets them. */
static __always_inline void name_mapped(struct thread_state *state)
{
	__u64 pages = state->mapped_unnamed;

	if (!pages)
		return;
	state->mapped_unnamed = 0;
	if (state->mapped_ino)
		accessed(state, true, pages, state->mapped_dev, state->mapped_ino);
}

/*
 * A miss: a folio added. Remembered as the thread's last add (a write dirties it next). Pages
 * inside the range of the read in progress were counted as hits when that read began (the
 * kernel reports a read's whole range before it has fetched every page): they become misses.
 * The rest wait to be read (read-ahead), kept for one file at a time.
 */
SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(on_add, struct folio *folio)
{
	__u64 ino = 0, index, pages, inside = 0;
	struct cache_counters d = {};
	struct thread_state *state;
	__u32 dev = 0;

	if (!counted_here() || !file_of(folio->mapping, &dev, &ino))
		return 0;
	state = thread_state(true);
	index = folio->index;
	pages = folio_nr(folio);
	d.misses = pages;
	if (state) {
		name_mapped(state);
		state->added_ino = ino;
		state->added_dev = dev;
		state->added_index = index;
		state->added_pages = (__u32)pages;
		if (state->read_ino == ino && state->read_dev == dev && index <= state->read_last &&
		    index + pages > state->read_first) {
			__u64 from = index > state->read_first ? index : state->read_first;
			__u64 to = index + pages - 1 < state->read_last ? index + pages - 1 : state->read_last;

			inside = to - from + 1;
			d.hits = -inside; /* wraps: the counts are differences, read as signed */
		}
		if (state->pending_ino == ino && state->pending_dev == dev) {
			state->pending += pages - inside;
		} else {
			state->pending_ino = ino;
			state->pending_dev = dev;
			state->pending = pages - inside;
		}
	}
	count(state, &d, dev, ino);
	return 0;
}

SEC("tp_btf/mm_filemap_delete_from_page_cache")
int BPF_PROG(on_delete, struct folio *folio)
{
	struct cache_counters d = {};
	__u64 ino = 0;
	__u32 dev = 0;

	if (!counted_here() || !file_of(folio->mapping, &dev, &ino))
		return 0;
	d.evictions = folio_nr(folio);
	count(per_process || per_file ? thread_state(true) : 0, &d, dev, ino);
	return 0;
}

/*
 * The read path: [index, last_index] of a file returned to a read(2), sendfile or splice.
 * The kernel serves a read in batches and reports each with the read's same last page and a
 * later first one: those pages were counted with the first batch. A read that begins in the
 * page where the thread's previous one ended does not count that page twice (the kernel marks
 * it accessed once too). Every other read counts every page it returns, again and again: a
 * second pass, random reads, a backward scan are real accesses. Pages past the end of the file
 * (a read asking for more than there is) are not pages read.
 */
SEC("tp_btf/mm_filemap_get_pages")
int BPF_PROG(on_read, struct address_space *mapping, unsigned long index, unsigned long last_index)
{
	__u64 first = index, last = last_index, ino, size;
	struct thread_state *state;
	__u32 dev;

	if (!counted_here() || last < first || !file_of(mapping, &dev, &ino))
		return 0;
	size = mapping->host->i_size;
	if (!size)
		return 0;
	if (last > (size - 1) >> page_shift)
		last = (size - 1) >> page_shift;
	if (last < first)
		return 0;
	state = thread_state(true);
	if (state) {
		if (state->mapped_unnamed)
			name_mapped(state);
		if (state->read_ino == ino && state->read_dev == dev) {
			if (last == state->read_last && first > state->read_first && first <= state->read_last) {
				state->read_first = first; /* the same read, its next batch */
				return 0;
			}
			if (first == state->read_last && last > first)
				first++; /* the page the previous read ended in */
		}
		state->read_ino = ino;
		state->read_dev = dev;
		state->read_first = index;
		state->read_last = last;
	}
	accessed(state, false, last - first + 1, dev, ino);
	return 0;
}

/*
 * The mmap path. What a fault maps is read from the process's own count of file pages mapped
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

static __always_inline bool learn_cpu_offsets(void)
{
	__u64 base = 0;
	__u32 zero = 0;

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
	struct percpu_counter *counter = &mm->rss_stat[MM_FILEPAGES];
	__s64 sum = counter->count;
	__u64 counters = address_of(counter->counters);

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
	before = __sync_lock_test_and_set(seen, now);
	/* Unmapped, or another process's pages (a fork copying them, reclaim taking them). */
	if (now <= before || mm != bpf_get_current_task_btf()->mm)
		return 0;
	pages = now - before;
	state = thread_state(true);
	if (!state)
		return 0;
	if (state->fault_ino && bpf_ktime_get_ns() - state->fault_ns < FAULT_WINDOW_NS) {
		/* A fault the file handled (filemap_fault): its file, named before. */
		state->mapped_ino = state->fault_ino;
		state->mapped_dev = state->fault_dev;
		state->fault_ino = 0;
		accessed(state, true, pages, state->mapped_dev, state->mapped_ino);
	} else if (pages >= PMD_PAGES) {
		/* A whole folio mapped around a fault, which no filemap event reports. */
		state->mapped_unnamed += pages;
		name_mapped(state);
	} else {
		state->mapped_unnamed += pages; /* fault-around: mm_filemap_map_pages follows */
	}
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
	state->fault_ino = 0;
	state->read_ino = 0;
	state->mapped_ino = ino;
	state->mapped_dev = dev;
	name_mapped(state);
	return 0;
}

SEC("tp_btf/mm_filemap_fault")
int BPF_PROG(on_fault, struct address_space *mapping, unsigned long index)
{
	struct thread_state *state;
	__u64 ino;
	__u32 dev;

	if (!counted_here() || !file_of(mapping, &dev, &ino))
		return 0;
	state = thread_state(true);
	if (!state)
		return 0;
	name_mapped(state);
	state->read_ino = 0;
	state->fault_ino = ino;
	state->fault_dev = dev;
	state->fault_ns = bpf_ktime_get_ns();
	return 0;
}

/*
 * Dirtied folios, in pages: the tracepoint's own fields have no size, its folio has. A
 * folio the same thread has just added is a write miss (a write into a page that was not
 * cached), and its pages are no longer waiting to be read.
 */
SEC("tp_btf/writeback_dirty_folio")
int BPF_PROG(on_dirty, struct folio *folio, struct address_space *mapping)
{
	struct cache_counters d = {};
	struct thread_state *state;
	__u32 dev = 0;
	__u64 ino = 0;

	if (!counted_here() || !file_of(mapping, &dev, &ino))
		return 0;
	d.dirties = folio_nr(folio);
	state = thread_state(false);
	if (state) {
		state->read_ino = 0;
		if (state->added_pages && state->added_ino == ino && state->added_dev == dev &&
		    state->added_index == folio->index) {
			d.write_misses = state->added_pages;
			state->added_pages = 0;
			if (state->pending_ino == ino && state->pending_dev == dev)
				state->pending = state->pending > d.write_misses ? state->pending - d.write_misses : 0;
		}
	}
	count(state, &d, dev, ino);
	return 0;
}

/* A thread's counts into the tables: when the reader asks (flush) and when the thread exits. */
static __always_inline void move_counts(struct thread_state *state, struct task_struct *task)
{
	if (per_process)
		move_process(state, task);
	if (per_file)
		move_file(state);
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *task)
{
	struct thread_state *state = thread_state(false);

	if (!state)
		return 0;
	name_mapped(state);
	move_counts(state, task);
	return 0;
}

/* Run by the reader before it takes the tables: every thread's counts so far. */
SEC("iter/task")
int flush(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct thread_state *state;

	if (!task)
		return 0;
	state = bpf_task_storage_get(&threads, task, 0, 0);
	if (state)
		move_counts(state, task);
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
