/* judge.h: what more than one rule reads off a snapshot (a saturated disk, signs of a memory shortage, the readers that miss the cache), computed from the snapshot alone. */
#ifndef IOLENS_DOCTOR_JUDGE_H
#define IOLENS_DOCTOR_JUDGE_H

#include "doctor/config.h"
#include "doctor/finding.h"
#include "doctor/snapshot.h"

#define MiB (1024.0 * 1024.0)
#define DISK_SATURATED_UTIL 90.0 /* %util */

/* Percent of the window a PSI line stalled; -1 unknown. */
double snap_psi_share(const struct snap_psi *psi, double seconds);
/* Whether a whole disk was busy DISK_SATURATED_UTIL % of the window or more. */
bool snap_disk_saturated(const struct doctor_snapshot *s);

/* Signs that memory is short, whoever it is short for: stalls on memory, little of it available. */
struct memory_signs {
	double psi_some;    /* percent of the window some task stalled on memory; -1 unknown */
	bool low_available; /* MemAvailable under a tenth of MemTotal at the end */
	bool short_now;     /* either */
};
struct memory_signs snap_memory_signs(const struct doctor_snapshot *s);

/* Refaults, system-wide: pages read back soon after the cache evicted them (/proc/vmstat). */
struct refault_window {
	uint64_t refaults, read_pages;
	double rate, share; /* bytes/s; percent of the pages read from disks */
	bool high;          /* at a rate that matters, and a large share of what is read */
};
struct refault_window snap_refault_window(const struct doctor_snapshot *s);

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

/* The readers whose reads mostly missed, by command, most misses first (O_DIRECT processes left out): *rows, their count. */
size_t snap_miss_readers(const struct doctor_snapshot *s, struct miss_row **rows);
/* Whether a row matters: mostly missed, at 1 MiB/s or more. */
bool snap_miss_matters(const struct doctor_snapshot *s, const struct miss_row *r);
/* The memory cgroup of a reader: the one eBPF saw its reads charged to, else of its first process found; NULL unknown. */
const struct snap_memcg *snap_reader_memcg(const struct doctor_snapshot *s, const struct miss_row *r);
/* Whether a reader reported (the first 5 that matter) ran in a memory cgroup at its limit. */
bool snap_readers_at_limit(const struct doctor_snapshot *s);

/* The container process pid running comm was in (comm NULL: whatever it ran), or NULL. */
const struct snap_container *snap_container_of(const struct doctor_snapshot *s, pid_t pid, const char *comm);
/* " in container web (3f2a9c1b0d4e)" for a process in one, "" else: what a finding says after "process PID (COMM)". */
const char *snap_in_container(const struct doctor_snapshot *s, pid_t pid, const char *comm, char *buf, size_t size);
/* A finding's "container" of a process: {label, runtime, id, name, pod, namespace, uid}, or null in none. */
void field_container(struct doctor_fields *f, const struct doctor_snapshot *s, pid_t pid, const char *comm);

#endif
