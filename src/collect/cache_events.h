/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cache_events.h: pages added to and removed from the page cache since the counting began (eBPF on
 * the filemap tracepoints).
 */
#ifndef IOLENS_CACHE_EVENTS_H
#define IOLENS_CACHE_EVENTS_H

#include <stdint.h>

/*
 * Starts counting: loads the eBPF program and attaches it to the tracepoints. 0, or
 * -errno with *why saying what is missing (root or CAP_BPF and CAP_PERFMON, a kernel
 * with BTF and the filemap tracepoints, an iolens built with eBPF).
 */
int cache_events_start(const char **why);
/* Pages added and removed since cache_events_start; -errno when not counting. */
int cache_events_read(uint64_t *added, uint64_t *removed);
void cache_events_stop(void);

#endif
