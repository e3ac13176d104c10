/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * self.h: this process as Prometheus client libraries describe their own (process_*): CPU time,
 * memory, file descriptors, start time.
 */
#ifndef IOLENS_COLLECT_SELF_H
#define IOLENS_COLLECT_SELF_H

#include <stdint.h>

#include "collect/procfs.h"

/* Each PROCFS_UNKNOWN (the doubles: negative) when it could not be read. */
struct process_self {
	double cpu_seconds;         /* user + system time (/proc/self/stat utime + stime) */
	uint64_t resident_bytes;    /* rss pages times the page size */
	uint64_t virtual_bytes;     /* vsize */
	uint64_t open_fds;          /* entries of /proc/self/fd, the directory's own descriptor not counted */
	uint64_t max_fds;           /* RLIMIT_NOFILE's soft limit ("Max open files" in /proc/self/limits) */
	double start_time_seconds;  /* since the epoch: btime of /proc/stat + starttime / clock ticks */
};

/* 0, or the first -errno (what could be read is set all the same). /proc/self is the live one; the
 * boot time comes from /proc/stat through the sysroot, as every system counter does. */
int process_self_read(struct process_self *out);

#endif
