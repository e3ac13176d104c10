/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * model/cache.h: page-cache counters over an interval: hits as counted, the change between two
 * takes, and without eBPF the estimate from /proc/vmstat (cachestat, cachetop, doctor, export).
 */
#ifndef IOLENS_MODEL_CACHE_H
#define IOLENS_MODEL_CACHE_H

#include <stdint.h>

#include "collect/cachestat.h"
#include "collect/direct_reads.h"
#include "collect/procfs.h"

/*
 * Pages read or mapped that were already cached, as counted (see cachestat.bpf.c): never above the
 * pages read or mapped.
 */
uint64_t cache_hits(const struct cache_counters *c);
/* b - a for each counter (0 where b < a). */
void cache_delta(const struct cache_counters *a, const struct cache_counters *b, struct cache_counters *out);

/* Without eBPF, what the misses' estimate keeps from one sample to the next. */
struct cache_estimate {
	struct direct_reads direct; /* what O_DIRECT holders read */
	uint64_t misses;            /* the last given: a counter never given lower */
};
/*
 * /proc/vmstat (just read) as counters: misses from pgpgin (KiB read from disks) less what
 * processes holding an O_DIRECT descriptor read since the first sample (estimate, when not NULL:
 * its direct reads updated by the caller just after vmstat was read, so that a read between the
 * two lowers misses for one sample only, which is held), dirties from nr_dirtied, evictions from
 * pgsteal_file, refaults from workingset_refault_file.
 */
void cache_counters_from_vmstat(const struct vmstat *vmstat, struct cache_estimate *estimate,
				struct cache_counters *out);
void cache_estimate_free(struct cache_estimate *estimate);

#endif
