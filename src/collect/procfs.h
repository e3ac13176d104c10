/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * procfs.h: the system-wide counters of /proc that iolens stat, doctor and export read: plain
 * structs and their parsers.
 */
#ifndef IOLENS_PROCFS_H
#define IOLENS_PROCFS_H

/*
 * Each source has a pure parser (text in, struct out: what the unit tests and the
 * libFuzzer targets call) and a reader that goes through the sysroot (collect/sysroot.h).
 * Parsers never fail on unknown lines or fields (kernels add them); they fail (-EINVAL)
 * only when what they need is missing or malformed. A count the kernel does not give is
 * marked unknown (a has_* flag or UINT64_MAX, as said per field), never zero.
 *
 * A parser or reader overwrites *out: free what an earlier call allocated in it first.
 * On failure *out holds no allocation and no number to use (counts unknown or zero).
 * The readers keep their files open between samples (a monitor reads them every
 * second) and reopen them when the sysroot changes; procfs_close() closes them all.
 * Not thread-safe: one sampling thread.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PROCFS_UNKNOWN UINT64_MAX

/* ---- /proc/stat -------------------------------------------------------------------- */

/* Jiffies (USER_HZ) spent in each state since boot; columns an older kernel does not print are
 * PROCFS_UNKNOWN (2.4 had only the first four; steal came in 2.6.11, guest 2.6.24, guest_nice 2.6.33). */
struct cpu_times {
	uint64_t user, nice, system, idle, iowait, irq, softirq, steal, guest, guest_nice;
};

struct procstat {
	struct cpu_times total;     /* the "cpu" line */
	unsigned ncpu;              /* entries in cpu[]: highest cpu number + 1 */
	struct cpu_times *cpu;      /* indexed by cpu number */
	bool *cpu_present;          /* cpus missing from the file (offline) are false, their times unknown */
	/* The counters below are PROCFS_UNKNOWN when their line is absent. */
	uint64_t intr;              /* interrupts since boot (first number of "intr") */
	uint64_t ctxt;              /* context switches */
	uint64_t btime;             /* boot time, seconds since the epoch */
	uint64_t processes;         /* forks since boot */
	uint64_t procs_running, procs_blocked;
};

/* -EINVAL without the "cpu" line (or with a malformed known line); procstat_free after success. */
int procstat_parse(const char *text, size_t len, struct procstat *out);
int procstat_read(struct procstat *out);
void procstat_free(struct procstat *stat);

/* ---- /proc/meminfo (bytes; PROCFS_UNKNOWN when the line is absent) ------------------- */

struct meminfo {
	uint64_t mem_total, mem_free, mem_available, buffers, cached, swap_cached;
	uint64_t active, inactive, active_file, inactive_file, mlocked;
	uint64_t swap_total, swap_free, dirty, writeback, anon_pages, mapped, shmem;
	uint64_t slab, sreclaimable, sunreclaim, page_tables, commit_limit, committed_as;
};

/* -EINVAL without MemTotal, or with one of these lines malformed (its value, or a unit other than kB). */
int meminfo_parse(const char *text, size_t len, struct meminfo *out);
int meminfo_read(struct meminfo *out);

/* ---- /proc/vmstat (counts since boot, or gauges in pages; PROCFS_UNKNOWN when absent) -- */

struct vmstat {
	uint64_t pgpgin, pgpgout;      /* KiB read from and written to block devices */
	uint64_t pswpin, pswpout;      /* pages swapped in and out */
	uint64_t pgfault, pgmajfault;  /* page faults, major ones */
	uint64_t pgalloc;              /* pages allocated: the sum of every pgalloc_* */
	uint64_t pgfree;
	uint64_t pgsteal_file, pgscan_file; /* file pages reclaimed and scanned (sums over kswapd, direct, ...);
					       unknown before 5.8, where pgsteal_* mixed anon and file pages */
	uint64_t workingset_refault_file;   /* file pages read back soon after their eviction
					       ("workingset_refault" before 5.9, which counted only file pages) */
	uint64_t workingset_refault_anon;   /* anonymous pages swapped back in soon after their eviction (5.9+) */
	uint64_t nr_file_pages, nr_dirty, nr_writeback; /* gauges, in pages */
	uint64_t nr_dirtied;                /* pages dirtied since boot */
	uint64_t nr_dirty_threshold, nr_dirty_background_threshold; /* the kernel's dirty limits now, in pages */
};

/* -EINVAL when none of these counters is there, or one of them is malformed. */
int vmstat_parse(const char *text, size_t len, struct vmstat *out);
int vmstat_read(struct vmstat *out);

/* ---- /proc/PID/io (bytes; needs the same user or root) ---------------------------------- */

struct proc_io {
	uint64_t rchar;       /* read by system calls, whatever the source (cache, disk, pipe, socket) */
	uint64_t read_bytes;  /* fetched from storage for this process */
	uint64_t write_bytes; /* sent to storage for this process (when written back) */
};

/* -EINVAL unless rchar, read_bytes and write_bytes are all there, each a whole number. */
int proc_io_parse(const char *text, size_t len, struct proc_io *out);
/* Reads /proc/PID/io of the live system: 0, or -errno (another user's process without privilege: -EACCES). */
int proc_io_read(pid_t pid, struct proc_io *out);
/* The command name of a live process (/proc/PID/comm without its newline); false, name untouched, when it is gone. */
bool proc_comm_read(pid_t pid, char *name, size_t size);

/*
 * A process's /proc/PID/io at one moment, with what tells it from a later process given
 * the same pid: its start time and command name (from /proc/PID/stat).
 */
struct proc_io_sample {
	pid_t pid;
	pid_t ppid;          /* its parent (the real parent, which a reaped child's counts go to) */
	uint64_t start_time; /* clock ticks after boot; PROCFS_UNKNOWN when stat did not say */
	char comm[16];
	struct proc_io io;
	unsigned char reap;  /* an end's (eBPF): PROC_REAP_PARENT, PROC_REAP_AUTO, or 0 when not known */
};
enum { PROC_REAP_PARENT = 1 /* its parent takes its counts */, PROC_REAP_AUTO /* it ignores SIGCHLD */ };
/* 0, or -errno (gone, or another user's without privilege) / -EINVAL. */
int proc_io_sample_read(pid_t pid, struct proc_io_sample *out);

/*
 * The one estimate of what a process did between two samples of /proc/PID/io. rchar counts
 * every read (cache, storage, pipes, sockets), read_bytes what came from storage: reads
 * less misses are the cache's hits, an estimate (rchar also counts what no page cache held).
 */
struct proc_io_delta {
	uint64_t rchar, read_bytes, write_bytes;          /* bytes */
	uint64_t read_pages, missed_pages, written_pages; /* the same in 4 KiB pages, as cachestat counts */
	uint64_t hit_pages;                               /* read_pages - missed_pages, 0 when more missed */
};
/*
 * false, *out zeroed, when before and after are not one process (another pid, start time or
 * command name: the pid was reused) or a counter went backwards (wrapped or reset): no
 * delta rather than a made-up one.
 */
bool proc_io_delta(const struct proc_io_sample *before, const struct proc_io_sample *after, struct proc_io_delta *out);
/* The pages of a delta again from its bytes (after they were changed). */
void proc_io_delta_pages(struct proc_io_delta *d);

/* ---- /proc/PID/task/TID/stat and status: one thread's state ----------------------------- */

struct proc_task {
	int pid;                   /* field 1: the thread id */
	char comm[16];             /* field 2, without its parentheses (it may hold spaces and ')') */
	char state;                /* field 3: R, S, D, T, t, Z, X, I, ... */
	int ppid;                  /* field 4 */
	uint64_t utime, stime;     /* fields 14, 15: clock ticks */
	/* Fields 22-24, PROCFS_UNKNOWN when the line ends before them. */
	uint64_t start_time;       /* clock ticks after boot when it started */
	uint64_t vsize;            /* virtual memory, bytes */
	uint64_t rss;              /* resident set, pages */
	uint64_t blkio_ticks;      /* field 42, delayacct_blkio_ticks: PROCFS_UNKNOWN when absent */
};

/* -EINVAL unless the fields up to stime are there and well formed. */
int proc_task_parse(const char *text, size_t len, struct proc_task *out);
/* voluntary_ctxt_switches + nonvoluntary_ctxt_switches of a status file: -EINVAL without both. */
int proc_switches_parse(const char *text, size_t len, uint64_t *switches);

/* Who a process is, from its status file. */
struct proc_ids {
	int ns_pid;                /* the last NSpid field: the pid it knows itself by, in its own namespace */
	uint32_t uid[4];           /* Uid: real, effective, saved, filesystem */
	uint64_t signals_ignored;  /* SigIgn: bit N-1 for signal N; 0 when the line is missing */
};
/*
 * -EINVAL without a well-formed Uid line; ns_pid is pid_here when there is no NSpid line (a
 * kernel before 4.1 has no pid namespaces to tell), -EINVAL when the line is there but bad.
 */
int proc_ids_parse(const char *text, size_t len, int pid_here, struct proc_ids *out);

/* ---- /proc/loadavg ------------------------------------------------------------------- */

struct loadavg {
	double load1, load5, load15;
	uint64_t running, total; /* scheduling entities now */
	uint64_t last_pid;
};

int loadavg_parse(const char *text, size_t len, struct loadavg *out);
int loadavg_read(struct loadavg *out);

/* ---- /proc/uptime --------------------------------------------------------------------- */

/* Seconds since boot (the first number). */
int uptime_parse(const char *text, size_t len, double *seconds);
int uptime_read(double *seconds);

/* ---- /proc/net/dev -------------------------------------------------------------------- */

struct netdev_stats {
	char name[32];
	uint64_t rx_bytes, rx_packets, rx_errs, rx_drop;
	uint64_t tx_bytes, tx_packets, tx_errs, tx_drop;
};

struct netdev {
	unsigned count;
	struct netdev_stats *dev;
};

int netdev_parse(const char *text, size_t len, struct netdev *out);
int netdev_read(struct netdev *out);
void netdev_free(struct netdev *net);

/* ---- /proc/swaps (bytes) -------------------------------------------------------------- */

struct swap_area {
	char name[256]; /* as the kernel escapes it (" " is "\040"); a longer path is cut to fit */
	char type[16];
	uint64_t size, used;
	int priority;
};

struct swaps {
	unsigned count;
	struct swap_area *area;
};

int swaps_parse(const char *text, size_t len, struct swaps *out);
int swaps_read(struct swaps *out);
void swaps_free(struct swaps *swaps);

/* ---- /proc/interrupts ----------------------------------------------------------------- */

struct irq_line {
	char name[32];    /* "0", "24", "NMI", "LOC" ... */
	uint64_t count;   /* summed over the cpus (the online ones: the file has no column for the others) */
	char what[128];   /* the rest of the line: the chip, and the devices ("eth0", "virtio1-input.0"),
			     blanks squeezed to one, cut to fit */
};

struct interrupts {
	unsigned count;
	struct irq_line *line;
};

int interrupts_parse(const char *text, size_t len, struct interrupts *out);
int interrupts_read(struct interrupts *out);
void interrupts_free(struct interrupts *irqs);

/* ---- /proc/pressure/{cpu,memory,io} ---------------------------------------------------- */

struct psi_line {
	bool present;
	double avg10, avg60, avg300; /* percent */
	uint64_t total_us;           /* stall time since boot, microseconds */
};

struct psi {
	bool available;   /* the file exists (CONFIG_PSI and not psi=0) */
	struct psi_line some, full; /* full: absent for cpu on older kernels */
};

/* -EINVAL without a well-formed "some" or "full" line; sets available on success. */
int psi_parse(const char *text, size_t len, struct psi *out);
/* resource: "cpu", "memory", "io" or "irq" (6.1+, "full" only); -EINVAL for another. A missing file
 * (no CONFIG_PSI, psi=0, kernel before 4.20) is no error: 0 with available false. */
int psi_read(const char *resource, struct psi *out);

/* ---- sockets: /proc/net/{tcp,tcp6,udp,udp6,raw,raw6,unix}, /proc/net/sockstat ----------- */

struct sockets {
	/* tcp and tcp6 by state */
	/* close: CLOSE_WAIT, LAST_ACK, FIN_WAIT*, CLOSING, CLOSE */
	uint64_t tcp_listen, tcp_established, tcp_syn, tcp_time_wait, tcp_close;
	/* udp and udp6: bound to a port and not connected (listen), connected (active) */
	uint64_t udp_listen, udp_active;
	/* unix: datagram, stream, listening, connected (active); listening (the __SO_ACCEPTCON flag) and
	 * connected (St 03) count every type, seqpacket included */
	uint64_t unix_datagram, unix_stream, unix_listen, unix_active;
	uint64_t unix_seqpacket;
	uint64_t raw; /* raw and raw6 sockets */
	/* /proc/net/sockstat: "sockets: used N" and TCP/UDP/RAW/FRAG inuse, plus TCP6/UDP6/RAW6/FRAG6 inuse
	 * from sockstat6; PROCFS_UNKNOWN when sockstat cannot be read */
	uint64_t used, tcp_inuse, udp_inuse, raw_inuse, frag_inuse;
};

/* Parsers for each file, adding into out (so tcp and tcp6 add up); they add nothing when they fail
 * (-EINVAL: no header line, or a malformed socket line; in unix, lines that are not a socket are
 * passed over, since a socket's path may hold a newline). */
int sockets_parse_tcp(const char *text, size_t len, struct sockets *out);
int sockets_parse_udp(const char *text, size_t len, struct sockets *out);
int sockets_parse_unix(const char *text, size_t len, struct sockets *out);
int sockets_parse_raw(const char *text, size_t len, struct sockets *out);
int sockets_parse_sockstat(const char *text, size_t len, struct sockets *out);
/* All of them; files that are missing (no IPv6) count nothing. Returns the first error of a file
 * that is there but could not be read or parsed, after counting all the others. */
int sockets_read(struct sockets *out);
/* Which socket files sockets_read_some reads. */
enum {
	SOCKETS_TCP = 1u << 0,  /* /proc/net/tcp, tcp6 */
	SOCKETS_UDP = 1u << 1,  /* /proc/net/udp, udp6 */
	SOCKETS_RAW = 1u << 2,  /* /proc/net/raw, raw6 */
	SOCKETS_UNIX = 1u << 3, /* /proc/net/unix */
	SOCKETS_STAT = 1u << 4, /* /proc/net/sockstat, sockstat6: used, tcp/udp/raw/frag inuse */
};
/*
 * sockets_read's counts, of the files in `which` only, added into out (which the caller zeroes
 * once a sample); the others' fields are left as they are. As sockets_read: a missing file (no
 * IPv6) counts nothing; the first error of a file that is there, after reading the others.
 */
int sockets_read_some(struct sockets *out, unsigned which);

/* ---- files, inodes, aio, locks, ipc ----------------------------------------------------- */

/* Each PROCFS_UNKNOWN when its file is missing (aio-nr without CONFIG_AIO) or unreadable. */
struct fsstat {
	uint64_t files_open;  /* /proc/sys/fs/file-nr: allocated minus free */
	uint64_t inodes_used; /* /proc/sys/fs/inode-nr: inodes minus free ones */
	uint64_t aio_nr, aio_max_nr; /* /proc/sys/fs/aio-nr, aio-max-nr */
};

struct locks {
	uint64_t posix, flock, lease; /* by kind, from /proc/locks */
	uint64_t read, write;         /* by access */
	uint64_t blocked;             /* waiters blocked behind a lock ("->" lines), not counted above */
};

/* Each PROCFS_UNKNOWN when its file is missing (no CONFIG_SYSVIPC). */
struct ipc {
	uint64_t msg_queues, sem_arrays, shm_segments; /* lines of /proc/sysvipc/{msg,sem,shm} */
};

/* 0, or the first error of a file that is there but could not be read; a missing file is none. */
int fsstat_read(struct fsstat *out);
/* -EINVAL on a line that is not a lock; an empty file is no lock, not an error. */
int locks_parse(const char *text, size_t len, struct locks *out);
int locks_read(struct locks *out);
/* As fsstat_read. */
int ipc_read(struct ipc *out);
/* The number of data lines (all but the header) of a /proc/sysvipc file. */
uint64_t ipc_count_lines(const char *text, size_t len);

/* The numbers of a /proc/sys file ("169\t0\t2466177"), up to max of them: how many, or -EINVAL. */
int procfs_parse_numbers(const char *text, size_t len, uint64_t *values, unsigned max);

/* ---- /proc/self/mountinfo: which device each mount point is --------------------------------- */

/* One mount, from what the kernel knows of it: reading this never asks a filesystem anything. */
struct mount_device {
	unsigned major, minor;     /* field 3: the st_dev of the filesystem mounted (0:N for FUSE, NFS, tmpfs) */
	char *dir;                 /* field 5, the mount point, its octal escapes (\040 ...) undone */
	char *type;                /* the field after the " - " separator ("ext4", "fuse.sshfs"), or "" */
	bool project_quota;        /* its superblock's options (the last field) hold prjquota */
};

struct mountinfo {
	struct mount_device *mount; /* in the kernel's order: a mount comes after those it covers */
	size_t count;
};

/*
 * -EINVAL on a line without the fields up to the mount point, or with a malformed device;
 * mountinfo_free after success.
 */
int mountinfo_parse(const char *text, size_t len, struct mountinfo *out);
int mountinfo_read(struct mountinfo *out);
void mountinfo_free(struct mountinfo *mounts);
/* The device of what is mounted on dir now (the last mount there); false when nothing is. */
bool mountinfo_device(const struct mountinfo *mounts, const char *dir, unsigned *major, unsigned *minor);
/* What is mounted on dir now (the last mount there), or NULL. */
const struct mount_device *mountinfo_find(const struct mountinfo *mounts, const char *dir);

/* Closes the files the readers keep open (they reopen on next use): at exit, or after a recorded
 * tree was changed in place under the same root. */
void procfs_close(void);

#endif
