/* SPDX-License-Identifier: GPL-2.0-or-later */
/* memcg.h: a process's memory cgroup (cgroup v2, or v1's memory controller): its limit, what it uses, its refaults. */
#ifndef IOLENS_COLLECT_MEMCG_H
#define IOLENS_COLLECT_MEMCG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MEMCG_UNLIMITED UINT64_MAX

struct memcg {
	char path[512];    /* the cgroup as /proc/PID/cgroup names it: "/system.slice/db.service" */
	int version;       /* 2, or 1 for v1's memory controller */
	uint64_t max;      /* bytes: memory.max (v2), memory.limit_in_bytes (v1); MEMCG_UNLIMITED when none */
	uint64_t current;  /* bytes in use: memory.current, memory.usage_in_bytes */
	uint64_t refaults; /* file pages read back after reclaim evicted them, since it was made (memory.stat) */
	uint64_t events_max; /* v2 memory.events "max": times its use reached the limit; UINT64_MAX unknown */
};

/*
 * From the text of /proc/PID/cgroup: the cgroup v2 path ("0::/x") and the v1 memory
 * controller's ("4:memory:/y"), each "" when absent. -EINVAL when no line is well formed.
 */
int memcg_cgroup_parse(const char *text, size_t len, char *v2, size_t v2_size, char *v1_memory, size_t v1_size);
/* A "key value" file (memory.stat, memory.events): the value of key; -ENOENT when it is not there. */
int memcg_stat_value(const char *text, size_t len, const char *key, uint64_t *out);
/* A limit file: a number of bytes, or "max" (v2) or a v1 "no limit" (above 2^62) as MEMCG_UNLIMITED. */
int memcg_limit_parse(const char *text, size_t len, uint64_t *out);

/*
 * Where the cgroup v2 hierarchy is mounted (/sys/fs/cgroup, or /sys/fs/cgroup/unified on
 * hybrid systems), and v1's memory controller ("" when not mounted), from /proc/self/mounts.
 */
const char *memcg_v2_mount(void);
/* Whether /proc/self/mounts has a cgroup2 mount (memcg_v2_mount guesses /sys/fs/cgroup when not). */
bool memcg_v2_mounted(void);
const char *memcg_v1_memory_mount(void);
/*
 * Where the v1 hierarchy of these controllers ("memory", "cpu,cpuacct", "name=systemd") is mounted:
 * false when it is not.
 */
bool cgroup_v1_mount(const char *controllers, char *out, size_t size);

/* The memory cgroup of a process, read through the sysroot: 0, or -errno (no such process, none). */
int memcg_of_pid(pid_t pid, struct memcg *out);
/*
 * The memory cgroup whose id (its directory's inode number, as eBPF gives it) is id, in v1's
 * memory hierarchy where it is mounted, else in v2's: for a process that has ended.
 */
int memcg_of_id(uint64_t id, struct memcg *out);
/* The cgroup directory under a cgroup file system's mount whose inode number is id, 8 levels deep at most: its path. */
bool memcg_path_of_id(const char *mount, uint64_t id, char *out, size_t len);
/* Whether it is at its limit: 90 % of it used. */
bool memcg_at_limit(const struct memcg *cgroup);

#endif
