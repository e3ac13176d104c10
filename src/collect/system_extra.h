/* system_extra.h: what only iolens stat's dstat plugins read: vmstat's reclaim counters (--vm-adv), zoneinfo (--zones), the number of processes (--proc-count). */
#ifndef IOLENS_SYSTEM_EXTRA_H
#define IOLENS_SYSTEM_EXTRA_H

#include <stddef.h>
#include <stdint.h>

/* dstat's --vm-adv: sums of /proc/vmstat's counters, in pages or times. */
struct vm_adv {
	uint64_t pgsteal;        /* pgsteal_*: pages reclaimed */
	uint64_t pgscan_kswapd;  /* pgscan_kswapd*: pages scanned by kswapd */
	uint64_t pgscan_direct;  /* pgscan_direct*: pages scanned by direct reclaim (not pgscan_direct_throttle) */
	uint64_t pageoutrun;     /* kswapd's reclaim runs */
	uint64_t allocstall;     /* allocstall and allocstall_*: allocations that stalled for direct reclaim */
};
int vm_adv_parse(const char *text, size_t len, struct vm_adv *out);
int vm_adv_read(struct vm_adv *out);

/* dstat's --zones: free pages and the high watermark of the DMA32 and Normal zones (summed over nodes). */
struct zones {
	uint64_t dma32_free, dma32_high, normal_free, normal_high; /* pages */
	unsigned has_dma32, has_normal;                            /* zones of that name seen */
};
int zones_parse(const char *text, size_t len, struct zones *out);
int zones_read(struct zones *out);

/* dstat's --proc-count: the processes in /proc (pid directories), 0 or -errno. */
int proc_count_read(uint64_t *count);

#endif
