/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pagecache.c: page-cache residency of a byte range, by cachestat(2) or by mincore in bounded windows. */
#include "collect/pagecache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"

#ifndef __NR_cachestat
#define __NR_cachestat 451 /* the same number on every architecture */
#endif

/* The kernel's struct cachestat_range and struct cachestat (linux/mman.h, 6.5). */
struct kernel_cachestat_range {
	uint64_t off;
	uint64_t len;
};

struct kernel_cachestat {
	uint64_t nr_cache;
	uint64_t nr_dirty;
	uint64_t nr_writeback;
	uint64_t nr_evicted;
	uint64_t nr_recently_evicted;
};

/* mincore looks at this many pages per mmap window: memory stays constant whatever the size. */
#define MINCORE_WINDOW_PAGES 65536

static int method = -1;

enum pagecache_method pagecache_method(void)
{
	if (method < 0) {
		const char *forced = getenv("IOLENS_PAGECACHE");
		method = forced && !strcmp(forced, "mincore") ? PAGECACHE_MINCORE : PAGECACHE_CACHESTAT;
	}
	return (enum pagecache_method)method;
}

void pagecache_set_method(enum pagecache_method which)
{
	method = which;
}

const char *pagecache_method_name(enum pagecache_method which)
{
	return which == PAGECACHE_CACHESTAT ? "cachestat" : "mincore";
}

static int query_cachestat(int fd, uint64_t offset, uint64_t length, struct pagecache_stat *out)
{
	struct kernel_cachestat_range range = { offset, length };
	struct kernel_cachestat stat = {0};

	if (syscall(__NR_cachestat, fd, &range, &stat, 0) != 0)
		return -errno;
	out->cached = stat.nr_cache;
	out->dirty = stat.nr_dirty;
	out->writeback = stat.nr_writeback;
	out->evicted = stat.nr_evicted;
	out->recently_evicted = stat.nr_recently_evicted;
	out->detail_known = true;
	out->method = PAGECACHE_CACHESTAT;
	return 0;
}

/*
 * Since Linux 5.2 mincore reports every page of a file mapping as resident unless the
 * caller owns the file, has CAP_FOWNER, or may write to it (can_do_mincore). Its answer
 * then means nothing, and we must not pass it on.
 */
/* The effective uid, asked once: iolens never changes it (a file asks a call fewer). */
static uid_t euid = (uid_t)-1;

void pagecache_ids_changed(void)
{
	euid = (uid_t)-1;
}

static bool mincore_would_lie(int fd)
{
	struct stat st;
	char path[64];

	if (euid == (uid_t)-1)
		euid = geteuid();
	if (euid == 0)
		return false;
	if (fstat(fd, &st) == 0 && st.st_uid == euid)
		return false;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) != 0;
}

/* mincore over one mmap window; the caller checked that mincore tells the truth. */
static int mincore_window(int fd, uint64_t first_page, uint64_t npages, unsigned char *vector)
{
	const uint64_t page = page_size();
	void *map = mmap(NULL, npages * page, PROT_READ, MAP_SHARED, fd, (off_t)(first_page * page));
	int rc = 0;

	if (map == MAP_FAILED)
		return -errno;
	if (mincore(map, npages * page, vector) != 0)
		rc = -errno;
	munmap(map, npages * page);
	return rc;
}

/*
 * cachestat where it is to be asked: 0 or -errno, -ENOSYS when not. An older kernel, or a filter
 * that refuses cachestat to one who may ask mincore, turns it off for good (mincore then).
 */
static int cachestat_or_off(int fd, uint64_t offset, uint64_t length, struct pagecache_stat *out)
{
	int rc;

	if (pagecache_method() != PAGECACHE_CACHESTAT)
		return -ENOSYS;
	rc = query_cachestat(fd, offset, length, out);
	if (rc == -ENOSYS || (rc == -EPERM && !mincore_would_lie(fd))) {
		method = PAGECACHE_MINCORE;
		return -ENOSYS;
	}
	return rc;
}

/*
 * A range all cached or all not, as most files are, told by one cachestat (where the kernel has
 * it) instead of mmap, mincore and munmap: true with resident filled.
 */
static bool resident_uniform(int fd, uint64_t first_page, uint64_t npages, unsigned char *resident)
{
	const uint64_t page = page_size();
	struct pagecache_stat stat;

	if (cachestat_or_off(fd, first_page * page, npages * page, &stat) != 0 || (stat.cached && stat.cached < npages))
		return false;
	memset(resident, stat.cached ? 1 : 0, npages);
	return true;
}

int pagecache_resident(int fd, uint64_t first_page, uint64_t npages, unsigned char *resident)
{
	int rc;

	if (mincore_would_lie(fd))
		return -EPERM;
	if (npages && resident_uniform(fd, first_page, npages, resident))
		return 0;
	rc = npages ? mincore_window(fd, first_page, npages, resident) : 0;
	for (uint64_t i = 0; !rc && i < npages; i++)
		resident[i] &= 1;
	return rc;
}

static int query_mincore(int fd, uint64_t first_page, uint64_t npages, struct pagecache_stat *out)
{
	static unsigned char *vector;

	if (mincore_would_lie(fd))
		return -EPERM;
	if (!vector)
		vector = xcalloc(MINCORE_WINDOW_PAGES, 1);
	out->cached = 0;
	out->detail_known = false;
	for (uint64_t done = 0; done < npages;) {
		uint64_t count = npages - done < MINCORE_WINDOW_PAGES ? npages - done : MINCORE_WINDOW_PAGES;
		int rc = mincore_window(fd, first_page + done, count, vector);

		if (rc)
			return rc;
		for (uint64_t i = 0; i < count; i++)
			out->cached += vector[i] & 1;
		done += count;
	}
	return 0;
}

int pagecache_query(int fd, uint64_t offset, uint64_t length, struct pagecache_stat *out)
{
	const uint64_t page = page_size();
	uint64_t first_page = offset / page;
	int rc;

	*out = (struct pagecache_stat){ .method = pagecache_method() };
	out->pages = length ? (offset + length - 1) / page - first_page + 1 : 0;
	if (!out->pages) {
		out->detail_known = true; /* nothing to count: every count is zero */
		return 0;
	}

	rc = cachestat_or_off(fd, offset, length, out);
	if (rc != -ENOSYS)
		return rc;
	out->method = PAGECACHE_MINCORE;
	return query_mincore(fd, first_page, out->pages, out);
}

char pagecache_map_glyph(const struct pagecache_stat *stat)
{
	if (stat->detail_known && stat->dirty)
		return 'D';
	if (stat->detail_known && stat->writeback)
		return 'W';
	if (stat->pages && stat->cached >= stat->pages)
		return 'O';
	if (stat->cached)
		return 'o';
	if (stat->detail_known && stat->evicted)
		return 'e';
	return '.';
}

int pagecache_map(int fd, uint64_t offset, uint64_t length, unsigned ncells, char *out)
{
	const uint64_t page = page_size();
	uint64_t first_page = offset / page;
	uint64_t pages = length ? (offset + length - 1) / page - first_page + 1 : 0;

	out[0] = '\0';
	if (!pages)
		return 0;
	for (unsigned cell = 0; cell < ncells; cell++) {
		/* With fewer pages than cells, neighbouring cells show the same page. */
		uint64_t start = pages * cell / ncells;
		uint64_t end = pages * (cell + 1) / ncells;
		struct pagecache_stat stat;
		int rc;

		if (end <= start)
			end = start + 1;
		rc = pagecache_query(fd, (first_page + start) * page, (end - start) * page, &stat);
		if (rc == -EPERM) {
			memset(out, '?', ncells);
			out[ncells] = '\0';
			return rc;
		}
		if (rc)
			return rc;
		out[cell] = pagecache_map_glyph(&stat);
	}
	out[ncells] = '\0';
	return 0;
}

enum pagecache_backing pagecache_backing(int fd, const char **fs_name)
{
	static const struct {
		unsigned long magic;
		const char *name;
		enum pagecache_backing backing;
	} known[] = {
		{ TMPFS_MAGIC, "tmpfs", PAGECACHE_BACKING_MEMORY },
		{ RAMFS_MAGIC, "ramfs", PAGECACHE_BACKING_MEMORY },
		{ HUGETLBFS_MAGIC, "hugetlbfs", PAGECACHE_BACKING_MEMORY },
		{ SYSFS_MAGIC, "sysfs", PAGECACHE_BACKING_NONE },
		{ PROC_SUPER_MAGIC, "procfs", PAGECACHE_BACKING_NONE },
		{ DEBUGFS_MAGIC, "debugfs", PAGECACHE_BACKING_NONE },
		{ TRACEFS_MAGIC, "tracefs", PAGECACHE_BACKING_NONE },
		{ CGROUP_SUPER_MAGIC, "cgroupfs", PAGECACHE_BACKING_NONE },
		{ CGROUP2_SUPER_MAGIC, "cgroup2", PAGECACHE_BACKING_NONE },
		{ SECURITYFS_MAGIC, "securityfs", PAGECACHE_BACKING_NONE },
		{ BPF_FS_MAGIC, "bpffs", PAGECACHE_BACKING_NONE },
		{ PSTOREFS_MAGIC, "pstore", PAGECACHE_BACKING_NONE },
		{ EFIVARFS_MAGIC, "efivarfs", PAGECACHE_BACKING_NONE },
		{ 0x62656570, "configfs", PAGECACHE_BACKING_NONE }, /* CONFIGFS_MAGIC, not in linux/magic.h */
	};
	struct statfs fs;
	struct stat st;

	if (fs_name)
		*fs_name = NULL;
	/* A block device's cache is the device's, whatever filesystem its node sits on (devtmpfs). */
	if (fstat(fd, &st) == 0 && S_ISBLK(st.st_mode))
		return PAGECACHE_BACKING_DISK;
	if (fstatfs(fd, &fs) != 0)
		return PAGECACHE_BACKING_DISK;
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if ((unsigned long)fs.f_type == known[i].magic) {
			if (fs_name)
				*fs_name = known[i].name;
			return known[i].backing;
		}
	return PAGECACHE_BACKING_DISK;
}
