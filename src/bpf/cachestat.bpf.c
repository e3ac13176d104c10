/* cachestat.bpf.c: page-cache accesses, misses, dirties and evictions, system-wide, per process and per file, from stable tracepoints. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "cachestat.h"

char LICENSE[] SEC("license") = "GPL";

/* Set before loading: what to count beyond the system-wide totals. */
const volatile bool per_process = false;
const volatile bool per_file = false;
const volatile __u32 only_tgid = 0; /* 0: every process */

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
 * What each thread last did to the page cache, kept in place:
 * - the last range it read, to count a page returned twice by one read once;
 * - the last folio it added, so that dirtying that folio next makes the add a write miss;
 * - the pages it added to one file and has not read yet (see accessed()).
 */
struct thread_state {
	__u64 read_ino, read_last;      /* the last range read: its file and last page */
	__u64 added_ino, added_index;   /* the last folio added */
	__u64 pending_ino, pending;     /* pages added to this file, not read yet */
	__u32 read_dev, added_dev, pending_dev;
	__u32 added_pages;
};
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct thread_state);
} threads SEC(".maps");

/* Task-local storage: found from the task itself, no hash lookup, freed with the thread. */
static __always_inline struct thread_state *thread_state(bool create)
{
	return bpf_task_storage_get(&threads, bpf_get_current_task_btf(), 0,
				    create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
}

/* Adds every counter of d to c; atomically where other cpus share c. */
static __always_inline void apply(struct cache_counters *c, const struct cache_counters *d, bool shared)
{
#define ADD(f) if (d->f) { if (shared) __sync_fetch_and_add(&c->f, d->f); else c->f += d->f; }
	ADD(reads)
	ADD(maps)
	ADD(misses)
	ADD(hits)
	ADD(write_misses)
	ADD(dirties)
	ADD(evictions)
#undef ADD
}

static __always_inline struct cache_proc *proc_of(__u32 tgid, struct cache_counters *total)
{
	struct cache_proc *proc = bpf_map_lookup_elem(&procs, &tgid);

	if (!proc) {
		struct cache_proc fresh = {};

		fresh.uid = (__u32)bpf_get_current_uid_gid();
		fresh.cgroup = bpf_get_current_cgroup_id();
		bpf_get_current_comm(fresh.comm, sizeof(fresh.comm));
		bpf_map_update_elem(&procs, &tgid, &fresh, BPF_NOEXIST);
		proc = bpf_map_lookup_elem(&procs, &tgid);
		if (!proc && total) /* the table is full: the totals still count it */
			total->dropped++;
	}
	return proc;
}

/*
 * Counts d for the system, the current process and the file (dev, ino), one lookup each.
 * The process is looked up only where it is needed: with per_process and only_tgid fixed
 * before loading, the verifier drops what cachestat does not use from every read's path.
 */
static __always_inline void count(const struct cache_counters *d, __u32 dev, __u64 ino)
{
	__u32 zero = 0, tgid = 0;
	struct cache_counters *total;

	if (per_process || only_tgid)
		tgid = (__u32)(bpf_get_current_pid_tgid() >> 32);
	if (only_tgid && tgid != only_tgid)
		return;
	total = bpf_map_lookup_elem(&totals, &zero);
	if (total) /* per cpu: no atomics needed */
		apply(total, d, false);
	if (per_process) {
		struct cache_proc *proc = proc_of(tgid, total);

		if (proc)
			apply(&proc->counters, d, true);
	}
	if (per_file && ino) {
		struct cache_file_key key = { .ino = ino, .dev = dev };
		struct cache_counters *file = bpf_map_lookup_elem(&files, &key);

		if (!file) {
			struct cache_counters fresh = {};

			bpf_map_update_elem(&files, &key, &fresh, BPF_NOEXIST);
			file = bpf_map_lookup_elem(&files, &key);
			if (!file && total) /* the table is full: the totals still count it */
				total->dropped++;
		}
		if (file)
			apply(file, d, true);
	}
}

/* The pages of a folio: 2^order for a large one (ext4 and others add large folios). */
static __always_inline __u64 folio_nr(struct folio *folio)
{
	unsigned long flags = 0;

	bpf_probe_read_kernel(&flags, sizeof(flags), folio); /* page flags come first in every kernel */
	if (!(flags & (1ul << bpf_core_enum_value(enum pageflags, PG_head))))
		return 1;
	if (bpf_core_field_exists(folio->_nr_pages))
		return BPF_CORE_READ(folio, _nr_pages);
	return 1ull << (BPF_CORE_READ(folio, _flags_1) & 0xff);
}

/* The file of a mapping, as the filemap tracepoints name it: the inode and its filesystem's device. */
static __always_inline bool file_of(struct address_space *mapping, __u32 *dev, __u64 *ino)
{
	struct inode *host;
	struct super_block *sb;

	if (!mapping)
		return false;
	host = mapping->host;
	if (!host)
		return false;
	*ino = host->i_ino;
	sb = host->i_sb;
	*dev = sb ? sb->s_dev : host->i_rdev;
	return true;
}

/*
 * A miss: a folio added. Remembered as the thread's last add (a write dirties it next) and
 * as pages of that file waiting to be read (read-ahead adds pages before the read that
 * returns them). Kept for one file at a time: read-ahead left unread is never held against
 * another file's reads.
 */
SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(on_add, struct folio *folio)
{
	__u64 ino = 0;
	struct cache_counters d = { .misses = folio_nr(folio) };
	struct thread_state *state = thread_state(true);
	__u32 dev = 0;

	file_of(folio->mapping, &dev, &ino);
	if (state) {
		state->added_ino = ino;
		state->added_dev = dev;
		state->added_index = folio->index;
		state->added_pages = (__u32)d.misses;
		if (state->pending_ino == ino && state->pending_dev == dev) {
			state->pending += d.misses;
		} else {
			state->pending_ino = ino;
			state->pending_dev = dev;
			state->pending = d.misses;
		}
	}
	count(&d, dev, ino);
	return 0;
}

SEC("tp_btf/mm_filemap_delete_from_page_cache")
int BPF_PROG(on_delete, struct folio *folio)
{
	struct cache_counters d = { .evictions = folio_nr(folio) };
	__u64 ino = 0;
	__u32 dev = 0;

	file_of(folio->mapping, &dev, &ino);
	count(&d, dev, ino);
	return 0;
}

/* Pages read or mapped: those of the file the thread added and had not read yet were misses, the rest hits. */
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
	count(&d, dev, ino);
}

/*
 * The read path: [index, last_index] of a file returned to a read. One read can return
 * its last page again in the next event: what overlaps the thread's previous range of the
 * same file is counted once. tp_btf: the cheapest kind of tracepoint program, which
 * matters on a path every cached read takes.
 */
SEC("tp_btf/mm_filemap_get_pages")
int BPF_PROG(on_read, struct address_space *mapping, unsigned long index, unsigned long last_index)
{
	__u64 first = index, last = last_index, ino;
	__u32 dev;
	struct thread_state *state;

	if (last < first || !file_of(mapping, &dev, &ino))
		return 0;
	state = thread_state(true);
	if (state) {
		if (state->read_ino == ino && state->read_dev == dev && first <= state->read_last) {
			if (last <= state->read_last)
				return 0;
			first = state->read_last + 1;
		}
		state->read_ino = ino;
		state->read_dev = dev;
		state->read_last = last;
	}
	accessed(state, false, last - first + 1, dev, ino);
	return 0;
}

/* The mmap path: pages mapped around a fault (fault-around), and faults that map one page. */
SEC("tp_btf/mm_filemap_map_pages")
int BPF_PROG(on_map_pages, struct address_space *mapping, unsigned long index, unsigned long last_index)
{
	__u64 ino;
	__u32 dev;

	if (last_index >= index && file_of(mapping, &dev, &ino))
		accessed(thread_state(false), true, last_index - index + 1, dev, ino);
	return 0;
}

SEC("tp_btf/mm_filemap_fault")
int BPF_PROG(on_fault, struct address_space *mapping, unsigned long index)
{
	__u64 ino;
	__u32 dev;

	if (file_of(mapping, &dev, &ino))
		accessed(thread_state(false), true, 1, dev, ino);
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
	struct inode *host = NULL;
	struct thread_state *state;
	__u32 dev = 0;
	__u64 ino = 0;

	if (mapping)
		host = BPF_CORE_READ(mapping, host);
	if (host) {
		dev = BPF_CORE_READ(host, i_sb, s_dev);
		ino = BPF_CORE_READ(host, i_ino);
	}
	d.dirties = folio_nr(folio);
	state = thread_state(false);
	if (state && state->added_pages && state->added_ino == ino && state->added_dev == dev &&
	    state->added_index == folio->index) {
		d.write_misses = state->added_pages;
		state->added_pages = 0;
		if (state->pending_ino == ino && state->pending_dev == dev)
			state->pending = state->pending > d.write_misses ? state->pending - d.write_misses : 0;
	}
	count(&d, dev, ino);
	return 0;
}

/* A process that runs a new program gets its new name. */
SEC("tp/sched/sched_process_exec")
int on_exec(void *ctx)
{
	__u32 tgid = (__u32)(bpf_get_current_pid_tgid() >> 32);
	struct cache_proc *proc;

	if (!per_process)
		return 0;
	proc = bpf_map_lookup_elem(&procs, &tgid);
	if (proc)
		bpf_get_current_comm(proc->comm, sizeof(proc->comm));
	return 0;
}
