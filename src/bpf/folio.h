/* SPDX-License-Identifier: GPL-2.0-or-later */
/* folio.h: what the page-cache programs read of a folio and its file, through BTF (no tracefs needed). */
#ifndef IOLENS_BPF_FOLIO_H
#define IOLENS_BPF_FOLIO_H

/* Linux 6.1 to 6.14 name the pages of a large folio _folio_nr_pages (6.1 keeps its order apart from _flags_1). */
struct folio___nr_pages {
	unsigned int _folio_nr_pages;
} __attribute__((preserve_access_index));

/* The pages of a folio: 2^order for a large one (ext4 and others add large folios). */
static __always_inline __u64 folio_nr(struct folio *folio)
{
	unsigned long flags = 0;

	bpf_probe_read_kernel(&flags, sizeof(flags), folio); /* page flags come first in every kernel */
	if (!(flags & (1ul << bpf_core_enum_value(enum pageflags, PG_head))))
		return 1;
	if (bpf_core_field_exists(folio->_nr_pages))
		return BPF_CORE_READ(folio, _nr_pages);
	if (bpf_core_field_exists(((struct folio___nr_pages *)folio)->_folio_nr_pages))
		return BPF_CORE_READ((struct folio___nr_pages *)folio, _folio_nr_pages);
	return 1ull << (BPF_CORE_READ(folio, _flags_1) & 0xff);
}

/*
 * A page as the page-cache tracepoints passed it before folios (Linux 5.17 to 5.19): its file and
 * index (renamed in later kernels, whose tracepoints pass a folio), and in the first tail page of
 * a compound page its order.
 */
struct page___old {
	struct address_space *mapping;
	unsigned long index;
} __attribute__((preserve_access_index));
struct page___tail {
	unsigned char compound_order;
} __attribute__((preserve_access_index));

/* The pages of a page-cache page: 1, or 2^order for the head of a compound (huge) page. */
static __always_inline __u64 page_nr(struct page *page)
{
	struct page___tail *tail;
	unsigned long flags = 0;

	bpf_probe_read_kernel(&flags, sizeof(flags), page);
	if (!(flags & (1ul << bpf_core_enum_value(enum pageflags, PG_head))) ||
	    !bpf_core_field_exists(tail->compound_order))
		return 1;
	tail = (void *)((unsigned long)page + bpf_core_type_size(struct page));
	return 1ull << (BPF_CORE_READ(tail, compound_order) & 0x1f);
}

/* tmpfs and shmem: pages that are the file itself, never read from or written back to storage. */
#define TMPFS_MAGIC_NUMBER 0x01021994ul

/*
 * The file of a mapping known to be a cache (not tmpfs), as the filemap tracepoints name it:
 * its inode and its filesystem's device. Read with probe reads: the mapping may be one kept
 * as a number (a thread's state), which the verifier lets no program dereference.
 */
static __always_inline void cache_file_of(struct address_space *mapping, __u32 *dev, __u64 *ino)
{
	struct inode *host = BPF_CORE_READ(mapping, host);

	*dev = BPF_CORE_READ(host, i_sb, s_dev);
	*ino = BPF_CORE_READ(host, i_ino);
}

/* Whether a mapping is a file's cache (not tmpfs), read with probe reads (kprobes get plain pointers). */
static __always_inline bool cache_mapping(struct address_space *mapping)
{
	struct inode *host = BPF_CORE_READ(mapping, host);

	return host && BPF_CORE_READ(host, i_sb, s_magic) != TMPFS_MAGIC_NUMBER;
}

/*
 * The file of a mapping, as the filemap tracepoints name it: the inode and its filesystem's
 * device. False for tmpfs and shmem: their pages are not a cache of anything, and their adds
 * and reads take other paths (counting only their removals would be wrong).
 */
static __always_inline bool file_of(struct address_space *mapping, __u32 *dev, __u64 *ino)
{
	struct inode *host;
	struct super_block *sb;
	unsigned long magic;

	if (!mapping)
		return false;
	host = mapping->host; /* BTF pointers: plain loads, the cheapest kind, on every read's path */
	if (!host)
		return false;
	sb = host->i_sb;
	if (sb) {
		magic = sb->s_magic;
		if (magic == TMPFS_MAGIC_NUMBER)
			return false;
		*dev = sb->s_dev;
	} else {
		*dev = host->i_rdev;
	}
	*ino = host->i_ino;
	return true;
}

#endif
