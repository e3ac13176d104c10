/* cache_events.bpf.c: pages added to and removed from the page cache, counted per cpu from the filemap tracepoints. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

enum { ADDED, REMOVED, COUNTERS };

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, COUNTERS);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

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

static __always_inline void count(__u32 which, __u64 pages)
{
	__u64 *value = bpf_map_lookup_elem(&counts, &which);

	if (value)
		*value += pages;
}

SEC("tp/filemap/mm_filemap_add_to_page_cache")
int on_add(struct trace_event_raw_mm_filemap_op_page_cache *ctx)
{
	count(ADDED, folio_pages(ctx));
	return 0;
}

SEC("tp/filemap/mm_filemap_delete_from_page_cache")
int on_delete(struct trace_event_raw_mm_filemap_op_page_cache *ctx)
{
	count(REMOVED, folio_pages(ctx));
	return 0;
}
