/* SPDX-License-Identifier: GPL-2.0-or-later */
/* miss.h: readers that missed the cache, off a snapshot: capture names their files and cgroups, rules judge them. */
#ifndef IOLENS_DOCTOR_MISS_H
#define IOLENS_DOCTOR_MISS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "doctor/snapshot.h"

#define MiB (1024.0 * 1024.0) /* bytes */

/* A reader (processes of one command) or a file whose reads missed the cache. */
struct miss_row {
	pid_t pid;             /* 0 for a file; for processes of one command, the one that missed most */
	unsigned processes;
	pid_t pids[5];         /* processes of one command: those that missed most */
	pid_t newest;          /* and the newest of them (the highest pid): the likeliest still alive */
	uint64_t memcg;        /* the memory cgroup id of the one that missed most (eBPF), for when none lives */
	char comm[32];
	unsigned major, minor; /* a file's */
	uint64_t ino;
	const char *name;      /* a file's name */
	uint64_t accesses, misses; /* pages read or mapped, and of those not cached */
	uint64_t refaults;     /* of the misses, pages reclaim had evicted (eBPF); UINT64_MAX unknown */
};

/*
 * The readers whose reads mostly missed, by command, most misses first (O_DIRECT processes
 * left out): *rows, their count.
 */
size_t snap_miss_readers(const struct doctor_snapshot *s, struct miss_row **rows);
/* Whether a row matters: mostly missed, at 1 MiB/s or more. */
bool snap_miss_matters(const struct doctor_snapshot *s, const struct miss_row *r);

#endif
