/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vmstat.c: export's vmstat collector: the /proc/vmstat counters of paging and refaults, iolens_vmstat_*. */
#include <stddef.h>
#include <stdio.h>

#include "cmd/export.h"
#include "collect/procfs.h"

/* The counters as the kernel counts them; one it does not count has no line. */
static void vmstat_metrics(struct prom *p, struct exporter *e)
{
	static const struct {
		const char *name, *help;
		size_t offset;
	} counters[] = {
#define C(n, h, f) { "iolens_vmstat_" n, h, offsetof(struct vmstat, f) }
		C("pgpgin", "KiB read from block devices (pgpgin in /proc/vmstat).", pgpgin),
		C("pgpgout", "KiB written to block devices (pgpgout).", pgpgout),
		C("pswpin", "Pages swapped in (pswpin).", pswpin),
		C("pswpout", "Pages swapped out (pswpout).", pswpout),
		C("pgfault", "Page faults, minor and major (pgfault).", pgfault),
		C("pgmajfault", "Major page faults: the page had to be read (pgmajfault).", pgmajfault),
		C("pgsteal_file", "File pages reclaimed (the sum of pgsteal_*_file; 5.8+).", pgsteal_file),
		C("pgscan_file", "File pages scanned by reclaim (the sum of pgscan_*_file; 5.8+).", pgscan_file),
		C("workingset_refault_file",
		  "File pages read back soon after reclaim evicted them: a working set larger than memory "
		  "(workingset_refault_file; workingset_refault before 5.9).", workingset_refault_file),
		C("workingset_refault_anon", "Anonymous pages swapped back in soon after their eviction (5.9+).",
		  workingset_refault_anon),
#undef C
	};
	struct vmstat vm;

	(void)e;
	if (vmstat_read(&vm) != 0)
		return;
	for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
		uint64_t value = *(const uint64_t *)((const char *)&vm + counters[i].offset);
		char sample[96];

		if (value == PROCFS_UNKNOWN) /* this kernel does not count it: no line, not a made-up 0 */
			continue;
		prom_family(p, counters[i].name, PROM_COUNTER, counters[i].help);
		snprintf(sample, sizeof(sample), "%s_total", counters[i].name);
		prom_u64(p, sample, value, NULL);
	}
}

const struct export_collector collector_vmstat = {
	.name = "vmstat",
	.help = "iolens_vmstat_*: /proc/vmstat's paging, swapping, reclaim and refault counters",
	.rank = 60,
	.render = vmstat_metrics,
};
