/* SPDX-License-Identifier: GPL-2.0-or-later */
/* model/memory.h: memory and swap figures of a sample, as dstat and free(1) count them. */
#ifndef IOLENS_MODEL_MEMORY_H
#define IOLENS_MODEL_MEMORY_H

#include <stdbool.h>

#include "collect/procfs.h"
#include "collect/system.h"

/* Memory used, in bytes: total less free, buffers and cache (shared memory counted, reclaimable slab not). */
double mem_used(const struct meminfo *m);
/* A swap area's (item: its name, or "total") used and free bytes; false when unknown. */
bool sample_swap(const struct system_sample *s, const char *item, double *used, double *free_bytes);

#endif
