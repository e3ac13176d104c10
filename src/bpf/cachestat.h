/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cachestat.h: what cachestat.bpf.c counts, shared by the eBPF program and the collector that reads it. */
#ifndef IOLENS_BPF_CACHESTAT_H
#define IOLENS_BPF_CACHESTAT_H

#define CACHESTAT_MAX_PROCS 16384 /* address spaces whose mapped pages are followed */

/* Pages, each counter; the totals per cpu, the rest each thread's own until it hands them over. */
struct cache_counters {
	__u64 reads;        /* pages returned to reads (filemap:mm_filemap_get_pages, overlaps once) */
	__u64 maps;         /* pages mapped by faults (mm_filemap_map_pages, mm_filemap_fault) */
	__u64 misses;       /* pages added to the cache (mm_filemap_add_to_page_cache, 1 << order) */
	__u64 hits;         /* pages read or mapped that the thread had not added and left unread (cachestat.bpf.c) */
	__u64 write_misses; /* of those, added for a write: the thread dirtied the folio it had just added */
	__u64 dirties;      /* pages dirtied (writeback:writeback_dirty_folio, in pages) */
	__u64 evictions;    /* pages removed (mm_filemap_delete_from_page_cache) */
	__u64 dropped;      /* totals only: hand-overs a full ring buffer could not take (counted in the totals) */
	__u64 refaults;     /* pages added back where reclaim left a shadow entry (cachestat.bpf.c) */
};

/*
 * A thread's counts since it last handed them over, for its process and the file they belong
 * to: when it moves to another file and when it exits (through a ring buffer), and when the
 * reader asks (the flush iterator's output). Differences, added up as signed: in a race of two
 * hand-overs one may carry less than nothing, what the other carries more.
 */
struct cache_record {
	struct cache_counters delta;
	__u64 cgroup;  /* the cgroup v2 id (its directory's inode number) */
	__u64 memcg;   /* the memory controller's cgroup id: v1's where memory is on v1, else v2's */
	__u64 ino;     /* 0: no file (per-file counting off) */
	__u32 tgid, uid;
	__u32 dev;     /* the kernel's dev_t: major << 20 | minor */
	__u32 pad;
	char comm[16]; /* the process's (its leader's), as it is now */
};

#endif
