/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pagecache.h: how much of a file is in the page cache: cachestat(2), or mmap + mincore where it is missing. */
#ifndef IOLENS_PAGECACHE_H
#define IOLENS_PAGECACHE_H

#include <stdbool.h>
#include <stdint.h>

enum pagecache_method {
	PAGECACHE_CACHESTAT, /* Linux >= 6.5: one system call, and all the fields below */
	PAGECACHE_MINCORE,   /* any Linux: mmap in bounded windows + mincore; cached pages only */
};

struct pagecache_stat {
	enum pagecache_method method; /* how it was measured */
	uint64_t pages;            /* pages the range covers */
	uint64_t cached;           /* of those, in the page cache */
	/* Only cachestat(2) tells these; detail_known says whether they hold numbers. */
	bool detail_known;
	uint64_t dirty;            /* cached and modified, not yet written back */
	uint64_t writeback;        /* being written back now */
	uint64_t evicted;          /* were cached, left by reclaim (shadow entries) */
	uint64_t recently_evicted; /* evicted, and would still be in a cache as large as the working set */
};

/*
 * The page-cache state of the pages that overlap [offset, offset + length) of an open
 * regular file or block device. Returns 0, or -errno; -EPERM when the kernel will not tell
 * (cachestat without write access on newer kernels, and the case where mincore would
 * answer "all cached" whatever the truth), so the caller reports the numbers as unknown.
 */
int pagecache_query(int fd, uint64_t offset, uint64_t length, struct pagecache_stat *out);

/*
 * The method in use: cachestat while the kernel has it; mincore once it says ENOSYS, or
 * EPERM to a caller it should answer (a seccomp filter in a container), or when
 * IOLENS_PAGECACHE=mincore is set in the environment (for tests and comparisons).
 */
enum pagecache_method pagecache_method(void);
void pagecache_set_method(enum pagecache_method method);
/* The process's effective uid changed (a test's child): asked again. */
void pagecache_ids_changed(void);
const char *pagecache_method_name(enum pagecache_method method);

/*
 * Which of npages pages from first_page are cached: one byte per page in resident,
 * 1 when cached (mincore's vector, so npages is at most what the caller can hold).
 * -EPERM when the kernel would not tell the truth, as for pagecache_query.
 */
int pagecache_resident(int fd, uint64_t first_page, uint64_t npages, unsigned char *resident);

/*
 * One character per cell for a map of the range split into ncells equal parts:
 * 'O' all cached, 'o' partly cached, '.' nothing cached, 'e' nothing cached but evicted
 * earlier, 'D' some pages dirty, 'W' some under writeback, '?' unknown. out holds ncells + 1.
 * Returns 0 or -errno as pagecache_query.
 */
int pagecache_map(int fd, uint64_t offset, uint64_t length, unsigned ncells, char *out);
char pagecache_map_glyph(const struct pagecache_stat *stat);

/* What holds a file's pages, which says whether the page cache can load or drop them. */
enum pagecache_backing {
	PAGECACHE_BACKING_DISK,   /* a disk (or network) filesystem, a block device: the cache is a copy */
	PAGECACHE_BACKING_MEMORY, /* tmpfs, ramfs, hugetlbfs: the pages are the file itself */
	PAGECACHE_BACKING_NONE,   /* sysfs, procfs, debugfs...: contents made when read, no page cache */
};
/* The backing of an open file; *fs_name (when not NULL) gets the filesystem's name ("tmpfs", "sysfs"). */
enum pagecache_backing pagecache_backing(int fd, const char **fs_name);

#endif
