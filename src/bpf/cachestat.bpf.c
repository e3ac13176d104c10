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

/* The last range each thread read, to count a page returned twice by one read once. */
struct last_read {
	__u64 ino;
	__u64 last_index;
	__u32 dev;
};
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct last_read);
} last_reads SEC(".maps");

/*
 * Pages each thread added to the cache and has not read yet: read-ahead adds pages before
 * the read that returns them, so a page read is a hit only when nothing the thread added
 * is still waiting to be read. Counting hits this way, as they happen, keeps a miss that
 * leads its read in one interval from turning into a hit in the next.
 */
struct pending_pages {
	__u64 ino;
	__u64 pages;
	__u32 dev;
};
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct pending_pages);
} pending SEC(".maps");

/* Threads inside a write system call: the pages they add to the cache are write misses. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u8);
} writing SEC(".maps");

enum counter { C_READS, C_MAPS, C_MISSES, C_HITS, C_WRITE_MISSES, C_DIRTIES, C_EVICTIONS };

static __always_inline void add(struct cache_counters *c, enum counter which, __u64 pages)
{
	switch (which) {
	case C_READS: __sync_fetch_and_add(&c->reads, pages); break;
	case C_MAPS: __sync_fetch_and_add(&c->maps, pages); break;
	case C_MISSES: __sync_fetch_and_add(&c->misses, pages); break;
	case C_HITS: __sync_fetch_and_add(&c->hits, pages); break;
	case C_WRITE_MISSES: __sync_fetch_and_add(&c->write_misses, pages); break;
	case C_DIRTIES: __sync_fetch_and_add(&c->dirties, pages); break;
	case C_EVICTIONS: __sync_fetch_and_add(&c->evictions, pages); break;
	}
}

static __always_inline struct cache_proc *proc_of(__u32 tgid)
{
	struct cache_proc *proc = bpf_map_lookup_elem(&procs, &tgid);

	if (!proc) {
		struct cache_proc fresh = {};

		fresh.uid = (__u32)bpf_get_current_uid_gid();
		fresh.cgroup = bpf_get_current_cgroup_id();
		bpf_get_current_comm(fresh.comm, sizeof(fresh.comm));
		bpf_map_update_elem(&procs, &tgid, &fresh, BPF_NOEXIST);
		proc = bpf_map_lookup_elem(&procs, &tgid);
		if (!proc) { /* the table is full: the totals still count it */
			__u32 zero = 0;
			struct cache_counters *total = bpf_map_lookup_elem(&totals, &zero);

			if (total)
				total->dropped++;
		}
	}
	return proc;
}

/* Counts pages for the system, the current process and the file (dev, ino). */
static __always_inline void count(enum counter which, __u64 pages, __u32 dev, __u64 ino)
{
	__u32 zero = 0, tgid = (__u32)(bpf_get_current_pid_tgid() >> 32);
	struct cache_counters *total = bpf_map_lookup_elem(&totals, &zero);

	if (only_tgid && tgid != only_tgid)
		return;
	if (total) { /* per cpu: no atomics needed */
		switch (which) {
		case C_READS: total->reads += pages; break;
		case C_MAPS: total->maps += pages; break;
		case C_MISSES: total->misses += pages; break;
		case C_HITS: total->hits += pages; break;
		case C_WRITE_MISSES: total->write_misses += pages; break;
		case C_DIRTIES: total->dirties += pages; break;
		case C_EVICTIONS: total->evictions += pages; break;
		}
	}
	if (per_process) {
		struct cache_proc *proc = proc_of(tgid);

		if (proc)
			add(&proc->counters, which, pages);
	}
	if (per_file && ino) {
		struct cache_file_key key = { .ino = ino, .dev = dev };
		struct cache_counters *file = bpf_map_lookup_elem(&files, &key);

		if (!file) {
			struct cache_counters fresh = {};

			bpf_map_update_elem(&files, &key, &fresh, BPF_NOEXIST);
			file = bpf_map_lookup_elem(&files, &key);
		}
		if (file)
			add(file, which, pages);
	}
}

/*
 * A folio of order n is 2^n pages: ext4 and others add large folios, so counting events
 * would count folios, not pages. Kernels before order was in the event add single pages.
 */
static __always_inline __u64 folio_pages(struct trace_event_raw_mm_filemap_op_page_cache *ctx)
{
	if (bpf_core_field_exists(ctx->order))
		return 1ull << (BPF_CORE_READ(ctx, order) & 31);
	return 1;
}

SEC("tp/filemap/mm_filemap_add_to_page_cache")
int on_add(struct trace_event_raw_mm_filemap_op_page_cache *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 pages = folio_pages(ctx);
	__u32 dev = BPF_CORE_READ(ctx, s_dev);
	__u64 ino = BPF_CORE_READ(ctx, i_ino);

	count(C_MISSES, pages, dev, ino);
	if (bpf_map_lookup_elem(&writing, &tid)) {
		count(C_WRITE_MISSES, pages, dev, ino);
	} else {
		/* Kept for one file at a time: read-ahead never read is not held against another file. */
		struct pending_pages *waiting = bpf_map_lookup_elem(&pending, &tid);

		if (waiting && waiting->ino == ino && waiting->dev == dev) {
			waiting->pages += pages;
		} else {
			struct pending_pages fresh = { .ino = ino, .dev = dev, .pages = pages };

			bpf_map_update_elem(&pending, &tid, &fresh, BPF_ANY);
		}
	}
	return 0;
}

/* Pages read or mapped: those the thread added and had not read yet were misses, the rest hits. */
static __always_inline void accessed(enum counter which, __u64 pages, __u32 dev, __u64 ino)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct pending_pages *waiting = bpf_map_lookup_elem(&pending, &tid);
	__u64 missed = 0;

	if (waiting && waiting->pages && waiting->ino == ino && waiting->dev == dev) {
		missed = waiting->pages < pages ? waiting->pages : pages;
		waiting->pages -= missed;
	}
	count(which, pages, dev, ino);
	if (pages > missed)
		count(C_HITS, pages - missed, dev, ino);
}

SEC("tp/filemap/mm_filemap_delete_from_page_cache")
int on_delete(struct trace_event_raw_mm_filemap_op_page_cache *ctx)
{
	count(C_EVICTIONS, folio_pages(ctx), BPF_CORE_READ(ctx, s_dev), BPF_CORE_READ(ctx, i_ino));
	return 0;
}

struct get_pages_args {
	__u64 common;
	unsigned long i_ino;
	dev_t s_dev;
	unsigned long index;
	unsigned long last_index;
};

/*
 * The read path: [index, last_index] of a file returned to a read. One read can return
 * its last page again in the next event: what overlaps the thread's previous range of the
 * same file is counted once.
 */
SEC("tp/filemap/mm_filemap_get_pages")
int on_read(struct get_pages_args *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 first = ctx->index, last = ctx->last_index;
	struct last_read *prev = bpf_map_lookup_elem(&last_reads, &tid);
	struct last_read now = { .ino = ctx->i_ino, .dev = ctx->s_dev, .last_index = last };

	if (last < first)
		return 0;
	if (prev && prev->ino == now.ino && prev->dev == now.dev && first <= prev->last_index) {
		if (last <= prev->last_index)
			return 0;
		first = prev->last_index + 1;
	}
	bpf_map_update_elem(&last_reads, &tid, &now, BPF_ANY);
	accessed(C_READS, last - first + 1, now.dev, now.ino);
	return 0;
}

/* The mmap path: pages mapped around a fault (fault-around), and faults that map one page. */
SEC("tp/filemap/mm_filemap_map_pages")
int on_map_pages(struct get_pages_args *ctx)
{
	if (ctx->last_index >= ctx->index)
		accessed(C_MAPS, ctx->last_index - ctx->index + 1, ctx->s_dev, ctx->i_ino);
	return 0;
}

struct fault_args {
	__u64 common;
	unsigned long i_ino;
	dev_t s_dev;
	unsigned long index;
};

SEC("tp/filemap/mm_filemap_fault")
int on_fault(struct fault_args *ctx)
{
	accessed(C_MAPS, 1, ctx->s_dev, ctx->i_ino);
	return 0;
}

/* Dirtied folios, in pages: the tracepoint's own fields have no size, its folio has. */
SEC("tp_btf/writeback_dirty_folio")
int BPF_PROG(on_dirty, struct folio *folio, struct address_space *mapping)
{
	unsigned long flags = 0;
	__u64 pages = 1;
	struct inode *host = NULL;

	if (mapping)
		host = BPF_CORE_READ(mapping, host);

	bpf_probe_read_kernel(&flags, sizeof(flags), folio); /* page flags come first in every kernel */
	if (flags & (1ul << bpf_core_enum_value(enum pageflags, PG_head))) {
		if (bpf_core_field_exists(folio->_nr_pages))
			pages = BPF_CORE_READ(folio, _nr_pages);
		else
			pages = 1ull << (BPF_CORE_READ(folio, _flags_1) & 0xff);
	}
	count(C_DIRTIES, pages, host ? BPF_CORE_READ(host, i_sb, s_dev) : 0, host ? BPF_CORE_READ(host, i_ino) : 0);
	return 0;
}

/* Which threads are in a write system call. */
static __always_inline int write_enter(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u8 one = 1;

	bpf_map_update_elem(&writing, &tid, &one, BPF_ANY);
	return 0;
}

static __always_inline int write_exit(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	bpf_map_delete_elem(&writing, &tid);
	return 0;
}

SEC("tp/syscalls/sys_enter_write") int enter_write(void *ctx) { return write_enter(); }
SEC("tp/syscalls/sys_exit_write") int exit_write(void *ctx) { return write_exit(); }
SEC("tp/syscalls/sys_enter_pwrite64") int enter_pwrite64(void *ctx) { return write_enter(); }
SEC("tp/syscalls/sys_exit_pwrite64") int exit_pwrite64(void *ctx) { return write_exit(); }
SEC("tp/syscalls/sys_enter_writev") int enter_writev(void *ctx) { return write_enter(); }
SEC("tp/syscalls/sys_exit_writev") int exit_writev(void *ctx) { return write_exit(); }
SEC("tp/syscalls/sys_enter_pwritev") int enter_pwritev(void *ctx) { return write_enter(); }
SEC("tp/syscalls/sys_exit_pwritev") int exit_pwritev(void *ctx) { return write_exit(); }
SEC("tp/syscalls/sys_enter_pwritev2") int enter_pwritev2(void *ctx) { return write_enter(); }
SEC("tp/syscalls/sys_exit_pwritev2") int exit_pwritev2(void *ctx) { return write_exit(); }

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
