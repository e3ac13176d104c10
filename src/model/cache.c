/* SPDX-License-Identifier: GPL-2.0-or-later */
/* model/cache.c: page-cache hits, counters' change, and the /proc/vmstat estimate without eBPF. */
#include "model/cache.h"

#include <string.h>

/* Hits never above the pages read or mapped: two hand-overs racing can leave a row a little off. */
uint64_t cache_hits(const struct cache_counters *c)
{
	uint64_t accesses = c->reads + c->maps;

	return c->hits < accesses ? c->hits : accesses;
}

void cache_delta(const struct cache_counters *a, const struct cache_counters *b, struct cache_counters *out)
{
#define D(f) out->f = b->f >= a->f ? b->f - a->f : 0
	D(reads);
	D(maps);
	D(misses);
	D(hits);
	D(write_misses);
	D(dirties);
	D(evictions);
	D(dropped);
	D(refaults);
#undef D
}

void cache_counters_from_vmstat(const struct vmstat *vmstat, struct cache_estimate *estimate,
				struct cache_counters *out)
{
	memset(out, 0, sizeof(*out));
	out->misses = vmstat->pgpgin != PROCFS_UNKNOWN ? vmstat->pgpgin / 4 : 0;
	if (estimate) {
		uint64_t direct_pages;

		direct_pages = estimate->direct.bytes / 4096;
		out->misses = out->misses > direct_pages ? out->misses - direct_pages : 0;
		if (out->misses < estimate->misses) /* read after vmstat, or what pgpgin never had (NFS, FUSE) */
			out->misses = estimate->misses;
		estimate->misses = out->misses;
	}
	out->dirties = vmstat->nr_dirtied != PROCFS_UNKNOWN ? vmstat->nr_dirtied : 0;
	out->evictions = vmstat->pgsteal_file != PROCFS_UNKNOWN ? vmstat->pgsteal_file : 0;
	out->refaults = vmstat->workingset_refault_file != PROCFS_UNKNOWN ? vmstat->workingset_refault_file : 0;
}

void cache_estimate_free(struct cache_estimate *estimate)
{
	direct_reads_free(&estimate->direct);
	estimate->misses = 0;
}
