/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * snapshot.h: everything doctor's rules judge, taken from the machine in one window (or read back
 * from a recording): plain values, no handle on the machine.
 */
#ifndef IOLENS_DOCTOR_SNAPSHOT_H
#define IOLENS_DOCTOR_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "collect/diskstats.h"

#define SNAP_DIRECT_FILES 4 /* files named per O_DIRECT process */

/* A file opened O_DIRECT, and what the page cache held of it when first found. */
struct snap_direct_file {
	unsigned major, minor; /* the filesystem's device, or the block device itself */
	uint64_t ino;          /* 0 for a block device */
	bool block;
	char path[512];
	bool cache_known;
	uint64_t cached_pages, file_pages;
};

/* A process seen doing I/O with O_DIRECT in the window. */
struct snap_direct_process {
	pid_t pid;
	char comm[32];
	unsigned nfiles;
	size_t files[SNAP_DIRECT_FILES];   /* in the snapshot's direct_files */
	uint64_t opens[SNAP_DIRECT_FILES]; /* O_DIRECT opens eBPF saw of each */
	int first_fd;                      /* -1 unknown */
	unsigned first_flags;
	char seen_by[8];                   /* "fdinfo" or "ebpf" */
	char call[16];                     /* eBPF: "openat" ...; "" none */
	double first_seen_seconds;         /* into the window */
	bool io_known;                     /* /proc/PID/io read from when it was first seen */
	uint64_t read_bytes, write_bytes;  /* from storage, over rate_seconds */
	double rate_seconds;
	bool ended;
	/* Its block requests over the whole window (eBPF, charged to the process that submitted them:
	 * an O_DIRECT read is its own), however briefly it lived; absent from older snapshots. */
	bool bio_known;
	uint64_t bio_read_requests, bio_read_bytes, bio_write_requests, bio_write_bytes;
	/* Its requests issued in the window and not seen ending by its end: in flight still, or ended
	 * without the kernel running eBPF at their completion (bio.bpf.c); 0 in older snapshots. */
	uint64_t bio_read_unended_requests, bio_read_unended_bytes, bio_write_unended_requests, bio_write_unended_bytes;
};

/* Latency percentiles of a disk's requests (reads and writes together) completed in a span (eBPF). */
struct snap_latency {
	uint64_t count;                      /* requests completed; 0: none (the percentiles 0) */
	double p50_ns, p99_ns;               /* start to completion (await's span) */
	double device_p50_ns, device_p99_ns; /* issue to completion: the device's time */
	double queue_p50_ns, queue_p99_ns;   /* start to issue: waiting in the block layer */
};

/* A whole disk's /proc/diskstats at the start, the middle (when read) and the end of the window. */
struct snap_disk {
	struct disk_stats start, mid, end;
	bool mid_known;
	/* eBPF's latencies over the window, its first half and its second half (halves: with mid_known). */
	bool latency_known;
	struct snap_latency latency, first, second;
	/* The disk's saved capacity (bench --profile --save-capacity): its QD1 random 4 KiB latencies
	 * (bench's p50, ns; NaN when the file has none) and the window's load as a share of it. */
	bool capacity_known;
	double capacity_qd1_read_ns, capacity_qd1_write_ns, capacity_pct;
};

/* A process's block requests on one disk over the window (eBPF), most first. */
struct snap_bio_proc {
	pid_t pid;
	char comm[32];
	bool kernel;        /* a kernel thread (its parent kthreadd): writeback, a loop device's worker */
	uint64_t requests, bytes;
	unsigned disk_major, disk_minor; /* the disk (0:0 requests without one) */
	bool several_disks;              /* the process made requests on other disks too in the window */
	double p50_ns, p99_ns;           /* of its reads and writes completed in the window; 0 unknown */
	bool ops_known;                  /* its reads told apart (not in snapshots recorded before) */
	uint64_t read_requests, read_bytes; /* of requests and bytes: the rest are writes, flushes, discards */
	/* Reads' and writes' own figures, as live biotop's rows (not in snapshots recorded before) */
	bool op_figures_known;
	uint64_t write_requests, write_bytes;
	struct snap_bio_op {
		double avg_ns, p50_ns, p99_ns, max_ns; /* of those completed in the window; 0: none */
	} op[2]; /* [0] reads, [1] writes */
};

struct snap_psi {
	bool known;
	uint64_t start_us, end_us; /* total stall time */
};

/* A process's storage I/O over the window (those that did some), busiest first. */
struct snap_io_rate {
	pid_t pid;
	char comm[32];
	double read_rate, write_rate, rchar_rate; /* bytes per second */
};

/* A thread seen in uninterruptible sleep (D). */
struct snap_task {
	pid_t pid, tid;
	char comm[16], wchan[64];
	unsigned first, last, samples; /* sample indexes: first and last seen in D, and how many */
	uint64_t stuck_ns;             /* from the first sample it was seen in D to the last */
	bool switches_known;
	uint64_t switches_first, switches_last;
	unsigned throttled;            /* samples where it waited in balance_dirty_pages */
};

/* An op of a libvtrace server, as its segment said at the last two samples. */
struct snap_vtrace_op {
	char name[64];
	bool impossible;        /* counters no server writes */
	uint64_t begins, completions, service_ns; /* now */
	uint64_t oldest_age_ns; /* of the oldest request in flight; 0 none */
	uint64_t completions_before, service_ns_before; /* at the earlier sample */
};

struct snap_vtrace {
	char service[64];
	pid_t pid;
	bool uid_known;         /* (a snapshot recorded before doctor said whose a server is has no uid) */
	uint32_t uid;           /* the user it runs as: its segment's owner */
	char user[80];          /* that user's name, or the uid */
	char segment[512];
	struct snap_vtrace_op *ops;
	unsigned nops;
};

/* Page-cache accesses eBPF counted in the window, by process or by file. */
struct snap_cache_proc {
	pid_t pid;
	char comm[32];
	uint64_t memcg;    /* the memory cgroup's id, 0 unknown */
	uint64_t accesses, misses, refaults;
	bool cgroup_known; /* not in snapshots recorded before cachetop --at --cgroup */
	uint64_t cgroup;   /* its cgroup v2 id, named by a snap_cgroup */
};

/* A cgroup v2 of the processes above, by its id: its path under the cgroup2 mount. */
struct snap_cgroup {
	uint64_t id;
	char path[512];
};

struct snap_cache_file {
	unsigned major, minor;
	uint64_t ino;
	uint64_t accesses, misses, refaults;
	char name[512];    /* named when it mostly missed at a rate that matters; "" else */
};

/* A memory cgroup, found by a reader's pid or by its id. */
struct snap_memcg {
	pid_t pid;         /* 0: found by id */
	uint64_t id;
	char path[512];
	int version;
	uint64_t max, current, refaults;
	bool at_limit;
};

/* The container a process was in: found while it lived (or by its cgroup's id), by pid and command. */
struct snap_container {
	pid_t pid;
	char comm[32];
	char runtime[16];       /* "docker", "podman", ... (container_runtime_names) */
	char id[65];            /* 64 hex digits; "" for machine and lxc */
	char name[128];         /* "" unknown; a pod's container's name in its pod */
	char pod[128], namespace_[64]; /* Kubernetes; "" unknown */
	uint32_t uid;           /* whose: a rootless one's user, 0 for root's runtimes */
	char label[512];        /* as people read it: "web (3f2a9c1b0d4e)", "web (3f2a9c1b0d4e, user alice)" */
};

enum snap_mount_state { MOUNT_OK, MOUNT_TIMEOUT, MOUNT_BUSY, MOUNT_FAILED };

/* A writable mount, probed (stat and statfs, bounded). */
struct snap_mount {
	char dir[512], type[64], source[512];
	enum snap_mount_state state;
	bool duplicate;                  /* a bind mount of one seen before: its sizes are that one's */
	uint64_t blocks, bfree, bavail, files, ffree, favail, frsize;
	bool held;                       /* an iolens probe of it holds its mark */
	pid_t probe_pid;
	double probe_seconds;            /* -1 unknown */
	double probe_started;            /* seconds since the epoch, -1 unknown */
	char probe_asks[256];
};

struct doctor_snapshot {
	double seconds;       /* watched */
	uint64_t page_size;
	unsigned samples;
	unsigned walks; /* samples that walked the threads (or those in D alone; the others: none in D) */
	bool exits_ebpf; /* processes' I/O counted to their ends (eBPF at each exit), not as last seen */
	/* O_DIRECT */
	bool odirect_ebpf;
	struct snap_direct_file *direct_files;
	size_t ndirect_files;
	struct snap_direct_process *direct;
	size_t ndirect;
	/* disks and pressure */
	struct snap_disk *disks;
	size_t ndisks;
	double disk_seconds, disk_mid_seconds; /* between the start and the end, the middle (0: none) */
	struct snap_psi io_some, io_full, memory_some;
	struct snap_io_rate *rates;
	size_t nrates;
	bool bio_known;       /* eBPF timed block requests: disks' latencies, and bio_procs */
	char bio_mechanism[16]; /* ... their submitters seen at block_io_start or block_getrq ("" when not known) */
	struct snap_bio_proc *bio_procs;
	size_t nbio_procs;
	uint64_t bio_unattributed_bytes; /* completed in the window and charged to no process (eBPF) */
	/* memory */
	bool vm_known;
	uint64_t pswpin[2], pswpout[2], pgpgin[2], pgpgout[2]; /* at the start and the end */
	uint64_t refault_file[2];                              /* workingset_refault_file; PROCFS_UNKNOWN */
	bool mem_known;
	uint64_t mem_total, mem_available, cached;             /* bytes, at the end */
	unsigned swaps, swaps_zram;
	uint64_t dirty_peak, writeback_peak, dirty_thresh, dirty_bg_thresh; /* pages */
	unsigned writeback_samples;
	/* threads in D, and iolens's probes (never stuck) */
	struct snap_task *tasks;
	size_t ntasks;
	pid_t *probes;
	size_t nprobes;
	/* libvtrace servers */
	struct snap_vtrace *vtrace;
	size_t nvtrace;
	/* the page cache */
	bool cache_ebpf;
	char cache_mechanism[16]; /* with eBPF: tracepoints, fentry or kprobes ("" when not known) */
	struct snap_cache_proc *cache_procs;
	size_t ncache_procs;
	struct snap_cache_file *cache_files;
	size_t ncache_files;
	bool cache_files_known; /* per file counts (eBPF) */
	struct snap_memcg *memcgs;
	size_t nmemcgs;
	struct snap_cgroup *cgroups; /* of cache_procs, those found */
	size_t ncgroups;
	/* the containers of the processes above */
	struct snap_container *containers;
	size_t ncontainers;
	/* filesystems */
	struct snap_mount *mounts;
	size_t nmounts;
};

void doctor_snapshot_free(struct doctor_snapshot *s);

/*
 * A snapshot as text (doctor --record, --replay): a line "iolens-doctor-snapshot VERSION" (the
 * format's: older ones read, none meaning 1; later ones refused), then
 * one line per value or item, "KEY FIELD...", fields separated by one space; a text field
 * has its spaces, backslashes, control characters and bytes above 0x7e as \xNN, and is "-"
 * when empty (a "-" itself is \x2d). Lines starting with '#' and blank lines say nothing.
 * Described in iolens-doctor(1), FILES. Its lines and fields are the table `records` in
 * snapshot.c, from which the writer and the parser are both made.
 */
int doctor_snapshot_write(const struct doctor_snapshot *s, FILE *stream);
/*
 * The same lines packed (the flight recorder's frames: a busy window's text took longer to make
 * and to read than its judgement): its numbers in binary, the same checks when read back.
 */
int doctor_snapshot_pack(const struct doctor_snapshot *s, FILE *stream);
/* The snapshot in text or packed: 0, or -1 with why ("LINE: what is wrong"); out is freed on failure. */
int doctor_snapshot_parse(const char *text, size_t len, struct doctor_snapshot *out, char *why, size_t why_len);
/* The file at path (at most 64 MiB), parsed: 0, or -1 with why naming the file. */
int doctor_snapshot_load(const char *path, struct doctor_snapshot *out, char *why, size_t why_len);

#endif
