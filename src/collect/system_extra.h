/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * system_extra.h: what only iolens stat's dstat plugins read: vmstat's reclaim counters (--vm-adv),
 * zoneinfo (--zones), the number of processes (--proc-count).
 */
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

/* ---- Processes, for dstat's top plugins: one walk over /proc, each reading what was asked ---- */

enum {
	PROCS_STAT = 1u << 0,  /* /proc/PID/stat: name, cpu ticks, rss, start time */
	PROCS_IO = 1u << 1,    /* /proc/PID/io: rchar, wchar, read_bytes, write_bytes (root, or the same user) */
	PROCS_SCHED = 1u << 2, /* /proc/PID/schedstat: time waited on a run queue */
	PROCS_OOM = 1u << 3,   /* /proc/PID/oom_score */
};

struct proc_entry {
	int pid;
	unsigned have;                   /* PROCS_* read for it */
	char name[16];                   /* comm, as the kernel keeps it (any bytes) */
	unsigned long long start_ticks;  /* start time: a pid reused is another process */
	uint64_t cpu_ticks;              /* utime + stime */
	uint64_t child_ticks;            /* cutime + cstime: its ended children's, waited for */
	uint64_t rss_pages;
	uint64_t rchar, wchar, read_bytes, write_bytes;
	uint64_t wait_ns;                /* schedstat: time waited on a run queue, */
	uint64_t run_ns, slices;         /* time run on a cpu, and time slices run */
	int64_t oom_score;
};

struct proc_table {
	unsigned count;
	struct proc_entry *proc; /* sorted by pid */
};

/* Every process under the sysroot's /proc with what `what` asks (those that end meanwhile left out). 0 or -errno. */
int proc_table_read(struct proc_table *out, unsigned what);
void proc_table_free(struct proc_table *table);
/* The same process (pid and start time) in a table, or NULL. */
const struct proc_entry *proc_table_find(const struct proc_table *table, const struct proc_entry *like);
/* Parses /proc/PID/stat's text into name, cpu_ticks, rss_pages and start_ticks: 0 or -EINVAL. */
int proc_stat_parse(const char *text, struct proc_entry *out);

#endif
