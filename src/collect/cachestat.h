/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cachestat.h: page-cache accesses, misses, dirties and evictions from eBPF, system-wide, per process and per file. */
#ifndef IOLENS_CACHESTAT_H
#define IOLENS_CACHESTAT_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/cachestat.h"

struct cachestat_options {
	bool per_process; /* count per process (cachetop) */
	bool per_file;    /* count per file (cachetop --files) */
	pid_t only_pid;   /* 0: every process */
};

/* A process's counts since they were last taken. */
struct cachestat_proc {
	uint32_t pid, uid;
	uint64_t cgroup; /* cgroup v2 id */
	uint64_t memcg;  /* its memory cgroup's id (v1's memory controller, or v2): memcg_of_id */
	char comm[16];
	struct cache_counters counters;
};

/* A file's counts since they were last taken; dev as userspace spells it (makedev). */
struct cachestat_file {
	dev_t dev;
	uint64_t ino;
	struct cache_counters counters;
};

/*
 * Loads and attaches the eBPF program. 0, or -errno with *why saying what is missing (root
 * or CAP_BPF and CAP_PERFMON, BTF, the tracepoints, an iolens built with eBPF).
 */
int cachestat_start(const struct cachestat_options *options, const char **why);
/*
 * How reads and page faults are seen once started: "tracepoints" (Linux 6.9 and later),
 * "fentry" or "kprobes" (on the functions those tracepoints are in); NULL when not counting.
 * IOLENS_CACHE_MECHANISM (auto, tracepoints, fentry, kprobes) forces one: cachestat_start
 * refuses one the kernel cannot do, saying why.
 */
const char *cachestat_mechanism(void);
/* What that mechanism counts less exactly than the tracepoints, in words; NULL when nothing. */
const char *cachestat_caveat(void);
/* "ebpf" once started, else "procfs" (the commands then estimate from /proc). */
const char *cachestat_mode(void);

/* Whether this kernel can count with a mechanism, as far as was looked. */
enum cachestat_verdict {
	CACHESTAT_CAN,    /* loaded and attached (probed), or the one counting now */
	CACHESTAT_CANNOT, /* why_not says what is missing */
	CACHESTAT_MAY,    /* the kernel's BTF has what it needs; not loaded to see (probe false, or not root) */
};
struct cachestat_capability {
	const char *mechanism; /* "tracepoints", "fentry", "kprobes": cachestat_mechanism's names */
	enum cachestat_verdict verdict;
	const char *why_not;   /* CACHESTAT_CANNOT: the missing tracepoint or function, "no kprobes", "does not
				  load fentry programs (...)", no BTF, an iolens without eBPF; else NULL */
};
#define CACHESTAT_MECHANISMS 3 /* tracepoints, fentry, kprobes */
/*
 * What each mechanism can do here, in the order auto tries them (tracepoints, then fentry, then
 * kprobes), from the kernel's BTF and kprobe event source; with probe, each the BTF allows is
 * also loaded, attached and unloaded (root, about 0.1 s each). Texts live until the next call.
 * 0, or -EBUSY while counting (not probed then: the one counting is CACHESTAT_CAN).
 */
int cachestat_capabilities(struct cachestat_capability caps[CACHESTAT_MECHANISMS], bool probe);
/* The system-wide counts since the start (summed over cpus). */
int cachestat_totals(struct cache_counters *out);
/*
 * Takes the counts per process and per file (either may be NULL) gathered since the last
 * call: every thread hands over what it counted so far, and what threads that moved to
 * another file or exited handed over meanwhile. *procs and *files to free, by pid and by
 * device and inode.
 */
int cachestat_take(struct cachestat_proc **procs, size_t *nprocs, struct cachestat_file **files, size_t *nfiles);
/*
 * Adds up what threads handed over so far, for the next cachestat_take: a long round drained
 * now and then keeps the buffer the kernel hands over in from filling (what does not fit is
 * counted in the totals' dropped, and lost to processes and files). The hand-overs added up.
 */
int cachestat_drain(void);
/* Detaches and unloads; safe to call twice, and from an exit path. */
void cachestat_stop(void);

#endif
