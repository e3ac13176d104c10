/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pagecache.c: export's pagecache collector: the page cache's size and traffic, by eBPF or from /proc/vmstat. */
#include <stdio.h>

#include "cmd/export.h"
#include "collect/cachestat.h"
#include "collect/direct_reads.h"
#include "collect/procfs.h"
#include "model/cache.h"

/* Without it no eBPF is loaded and none is needed. */
static void cache_start(struct exporter *e)
{
	cache_mode_start(&(struct cachestat_options){0}, &e->cache, NULL, NULL);
	if (!e->cache.bpf) /* ebpf_why's text lives until its next call */
		snprintf(e->cache_why, sizeof(e->cache_why), "%s", e->cache.why);
}

static void cache_metrics(struct prom *p, struct exporter *e)
{
	const char *mode = e->cache.bpf ? "ebpf" : "procfs";
	struct cache_counters c = {0};
	struct meminfo mem;
	struct vmstat vm;
	bool known = false;

	if (meminfo_read(&mem) == 0) {
		prom_family(p, "iolens_page_cache_bytes", PROM_GAUGE, "Page cache (Cached in /proc/meminfo).");
		prom_u64(p, "iolens_page_cache_bytes", mem.cached, NULL);
		prom_family(p, "iolens_dirty_bytes", PROM_GAUGE, "Dirty pages waiting to be written back.");
		prom_u64(p, "iolens_dirty_bytes", mem.dirty, NULL);
		prom_family(p, "iolens_writeback_bytes", PROM_GAUGE, "Pages being written back.");
		prom_u64(p, "iolens_writeback_bytes", mem.writeback, NULL);
	}
	if (e->cache.bpf)
		known = cachestat_totals(&c) == 0;
	else if (vmstat_read(&vm) == 0) {
		direct_reads_update(&e->estimate.direct);
		cache_counters_from_vmstat(&vm, &e->estimate, &c);
		known = true;
	}
	if (!known)
		return;
	if (e->cache.bpf && e->cache.mechanism) {
		prom_family(p, "iolens_page_cache_mechanism_info", PROM_GAUGE,
			    "How eBPF sees reads and page faults: tracepoints, fentry or kprobes.");
		prom_u64(p, "iolens_page_cache_mechanism_info", 1, "mechanism", e->cache.mechanism, NULL);
	}
	/* Without eBPF hits are not known: no line rather than a made-up one. */
	if (e->cache.bpf) {
		prom_family(p, "iolens_page_cache_hits", PROM_COUNTER,
			    "Pages read or mapped that were cached (mode: ebpf counts them as cachestat does).");
		prom_u64(p, "iolens_page_cache_hits_total", c.hits, "mode", mode, NULL);
		prom_family(p, "iolens_page_cache_accesses", PROM_COUNTER, "Pages read or mapped.");
		prom_u64(p, "iolens_page_cache_accesses_total", c.reads + c.maps, "mode", mode, NULL);
	}
	prom_family(p, "iolens_page_cache_misses", PROM_COUNTER,
		    "Pages added to the cache by reads (mode procfs: estimated from pgpgin, less what processes "
		    "holding an O_DIRECT descriptor read).");
	prom_u64(p, "iolens_page_cache_misses_total", c.misses, "mode", mode, NULL);
	prom_family(p, "iolens_page_cache_dirtied", PROM_COUNTER, "Pages dirtied.");
	prom_u64(p, "iolens_page_cache_dirtied_total", c.dirties, "mode", mode, NULL);
	prom_family(p, "iolens_page_cache_evictions", PROM_COUNTER, "Pages removed from the cache.");
	prom_u64(p, "iolens_page_cache_evictions_total", c.evictions, "mode", mode, NULL);
	prom_family(p, "iolens_page_cache_refaults", PROM_COUNTER,
		    "Pages added back after reclaim evicted them (mode procfs: workingset_refault_file).");
	prom_u64(p, "iolens_page_cache_refaults_total", c.refaults, "mode", mode, NULL);
}

const struct export_collector collector_pagecache = {
	.name = "pagecache",
	.help =
	    "iolens_page_cache_*, iolens_dirty_bytes, iolens_writeback_bytes: hits and misses by eBPF, else estimated",
	.rank = 40,
	.start = cache_start,
	.render = cache_metrics,
};
