/* SPDX-License-Identifier: GPL-2.0-or-later */
/* model/memory.c: memory used and swap, from /proc/meminfo and /proc/swaps. */
#include "model/memory.h"

#include <string.h>

bool sample_swap(const struct system_sample *s, const char *item, double *used, double *free_bytes)
{
	bool found = false;

	*used = *free_bytes = 0;
	if (!(s->have & SYS_SWAPS))
		return false;
	for (unsigned i = 0; i < s->swaps.count; i++) {
		const struct swap_area *a = &s->swaps.area[i];
		if (strcmp(item, "total") && strcmp(item, a->name))
			continue;
		*used += (double)a->used;
		*free_bytes += (double)(a->size - (a->used < a->size ? a->used : a->size));
		found = true;
	}
	return found || !strcmp(item, "total");
}

/* As dstat and free(1): reclaimable slab is not "used"; shared memory, counted in Cached, is. */
double mem_used(const struct meminfo *m)
{
	double used = (double)m->mem_total - (double)m->mem_free - (double)m->buffers - (double)m->cached +
		      (m->shmem != PROCFS_UNKNOWN ? (double)m->shmem : 0) -
		      (m->sreclaimable != PROCFS_UNKNOWN ? (double)m->sreclaimable : 0);

	return used < 0 ? 0 : used;
}
