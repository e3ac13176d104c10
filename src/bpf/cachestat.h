/* cachestat.h: what cachestat.bpf.c counts, shared by the eBPF program and the collector that reads it. */
#ifndef IOLENS_BPF_CACHESTAT_H
#define IOLENS_BPF_CACHESTAT_H

#define CACHESTAT_MAX_PROCS 16384
#define CACHESTAT_MAX_FILES 65536

/* Pages, each counter; totals are per cpu, per-process and per-file counters atomic. */
struct cache_counters {
	__u64 reads;        /* pages returned to reads (filemap:mm_filemap_get_pages, overlaps once) */
	__u64 maps;         /* pages mapped by faults (mm_filemap_map_pages, mm_filemap_fault) */
	__u64 misses;       /* pages added to the cache (mm_filemap_add_to_page_cache, 1 << order) */
	__u64 hits;         /* pages read or mapped that the thread had not added and left unread (cachestat.bpf.c) */
	__u64 write_misses; /* of those, added for a write: the thread dirtied the folio it had just added */
	__u64 dirties;      /* pages dirtied (writeback:writeback_dirty_folio, in pages) */
	__u64 evictions;    /* pages removed (mm_filemap_delete_from_page_cache) */
	__u64 dropped;      /* totals only: events a full per-process or per-file table could not take */
};

struct cache_proc {
	struct cache_counters counters;
	__u64 cgroup;
	__u32 uid;
	char comm[16];
};

struct cache_file_key {
	__u64 ino;
	__u32 dev; /* the kernel's dev_t: major << 20 | minor */
	__u32 pad;
};

#endif
