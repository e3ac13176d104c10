/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cache_events.bpf.c: pages added to and removed from the page cache, counted per cpu from the filemap tracepoints. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "folio.h"

char LICENSE[] SEC("license") = "GPL";

enum { ADDED, REMOVED, COUNTERS };

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, COUNTERS);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

/* Counts a folio of a file's page cache (tmpfs and ramfs pages are not a cache: see file_of). */
static __always_inline void count(__u32 which, struct folio *folio)
{
	__u64 *value, ino;
	__u32 dev;

	if (!file_of(folio->mapping, &dev, &ino))
		return;
	value = bpf_map_lookup_elem(&counts, &which);
	if (value)
		*value += folio_nr(folio);
}

/*
 * tp_btf: attached by BTF id, so no tracefs is needed (a freshly booted machine often has
 * none mounted). A folio of order n is 2^n pages: counting events would count folios.
 */
SEC("tp_btf/mm_filemap_add_to_page_cache")
int BPF_PROG(on_add, struct folio *folio)
{
	count(ADDED, folio);
	return 0;
}

SEC("tp_btf/mm_filemap_delete_from_page_cache")
int BPF_PROG(on_delete, struct folio *folio)
{
	count(REMOVED, folio);
	return 0;
}
