/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * judge.h: what more than one rule reads off a snapshot (a saturated disk, signs of a memory
 * shortage, the readers that miss the cache), computed from the snapshot alone.
 */
#ifndef IOLENS_DOCTOR_JUDGE_H
#define IOLENS_DOCTOR_JUDGE_H

#include "doctor/config.h"
#include "doctor/finding.h"
#include "doctor/miss.h"
#include "doctor/snapshot.h"

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

/*
 * The memory cgroup of a reader: the one eBPF saw its reads charged to, else of its first process
 * found; NULL unknown.
 */
const struct snap_memcg *snap_reader_memcg(const struct doctor_snapshot *s, const struct miss_row *r);
/* Whether a reader reported (the first 5 that matter) ran in a memory cgroup at its limit. */
bool snap_readers_at_limit(const struct doctor_snapshot *s);

/* The container process pid running comm was in (comm NULL: whatever it ran), or NULL. */
const struct snap_container *snap_container_of(const struct doctor_snapshot *s, pid_t pid, const char *comm);
/* " in container web (3f2a9c1b0d4e)" for a process in one, "" else: what a finding says after "process PID (COMM)". */
const char *snap_in_container(const struct doctor_snapshot *s, pid_t pid, const char *comm, char *buf, size_t size);
/* A finding's "container" of a process: {label, runtime, id, name, pod, namespace, uid}, or null in none. */
void field_container(struct doctor_fields *f, const struct doctor_snapshot *s, pid_t pid, const char *comm);

/*
 * Rules full and inodes: a finding for each filesystem (looked at once, read-write, not a pseudo
 * one) with TH_FULL_WARNING % or more of its blocks, or of its inodes, used as df counts.
 */
void judge_mount_use(const struct doctor_snapshot *s, const struct doctor_config *config, bool inodes,
		     struct doctor_findings *out);

/*
 * Rules vtrace-hang and vtrace-latency, of an op of a libvtrace server: its completions in the
 * window, and its mean service time in the window and before (ms).
 */
struct vtrace_op_window {
	uint64_t done;
	double window_ms, before_ms;
};

struct vtrace_op_window vtrace_op_window(const struct snap_vtrace_op *op);
/* "(pid 4242) of user nobody (uid 65534)" and " in container web (3f2a9c1b0d4e)": whose the server is, into buf. */
const char *vtrace_whose(const struct doctor_snapshot *s, const struct snap_vtrace *server, char *buf, size_t size);
/* The fields both rules write, and "more". */
void vtrace_finding_data(const struct doctor_snapshot *s, struct doctor_finding *f, const struct snap_vtrace *server,
			 const struct snap_vtrace_op *op, const struct vtrace_op_window *w);

#endif
