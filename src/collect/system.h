/* SPDX-License-Identifier: GPL-2.0-or-later */
/* system.h: one sample of the whole system: the procfs sources a monitor asked for, read at one moment. */
#ifndef IOLENS_SYSTEM_H
#define IOLENS_SYSTEM_H

#include <stdint.h>

#include "collect/bio.h"
#include "collect/diskstats.h"
#include "collect/procfs.h"
#include "collect/system_extra.h"

enum {
	SYS_PROCSTAT = 1u << 0,
	SYS_MEMINFO = 1u << 1,
	SYS_VMSTAT = 1u << 2,
	SYS_LOADAVG = 1u << 3,
	SYS_NETDEV = 1u << 4,
	SYS_DISKSTATS = 1u << 5,
	SYS_SWAPS = 1u << 6,
	SYS_INTERRUPTS = 1u << 7,
	SYS_PSI = 1u << 8,
	SYS_SOCKETS = 1u << 9,  /* /proc/net/sockstat and sockstat6: the kernel's counts (--socket) */
	SYS_FSSTAT = 1u << 10,
	SYS_LOCKS = 1u << 11,
	SYS_IPC = 1u << 12,
	SYS_UPTIME = 1u << 13,
	SYS_CACHE_EVENTS = 1u << 14, /* needs cache_events_start first */
	SYS_VM_ADV = 1u << 15,
	SYS_ZONES = 1u << 16,
	SYS_PROC_COUNT = 1u << 17,
	SYS_TCP = 1u << 18,     /* /proc/net/tcp and tcp6 */
	SYS_UDP = 1u << 19,     /* /proc/net/udp and udp6 */
	SYS_RAW = 1u << 20,     /* /proc/net/raw and raw6 */
	SYS_UNIX = 1u << 21,    /* /proc/net/unix */
	SYS_PROC_STAT = 1u << 22,  /* every /proc/PID/stat (the top plugins) */
	SYS_PROC_IO = 1u << 23,    /* with /proc/PID/io */
	SYS_PROC_SCHED = 1u << 24, /* with /proc/PID/schedstat */
	SYS_PROC_OOM = 1u << 25,   /* with /proc/PID/oom_score */
	SYS_BIO = 1u << 26,        /* block I/O per process (eBPF): needs bio_start first */
	SYS_BIO_DISKS = 1u << 27,  /* latency histograms per disk (eBPF): needs bio_start first */
	SYS_SOURCES = 28
};

struct system_sample {
	unsigned have;         /* the sources read */
	int error[SYS_SOURCES]; /* -errno of each source that failed */
	uint64_t mono_ns;      /* CLOCK_MONOTONIC when it was read */
	uint64_t real_ns;      /* CLOCK_REALTIME, for the time column */
	double uptime;
	struct procstat procstat;
	struct meminfo meminfo;
	struct vmstat vmstat;
	struct loadavg loadavg;
	struct netdev netdev;
	struct diskstats disks;
	struct swaps swaps;
	struct interrupts interrupts;
	struct psi psi_cpu, psi_memory, psi_io;
	struct sockets sockets;
	struct fsstat fs;
	struct locks locks;
	struct ipc ipc;
	uint64_t cache_added, cache_removed; /* pages, since cache_events_start */
	struct vm_adv vm_adv;
	struct zones zones;
	uint64_t proc_count;
	struct proc_table procs; /* with SYS_PROC_* */
	struct bio_table bio;    /* with SYS_BIO: every process's block I/O since bio_start */
	struct bio_disks bio_disks; /* with SYS_BIO_DISKS: every disk's latency histograms since bio_start */
};

/*
 * Reads the sources in `what` (SYS_* flags) under the sysroot. Returns the flags of the
 * sources that failed (their error[] says why); what was read is in `have`. The sample
 * must be freed; it may be read into again only after system_sample_free.
 */
unsigned system_sample_read(struct system_sample *sample, unsigned what);
void system_sample_free(struct system_sample *sample);

/* The bit number of a SYS_* flag, for error[]. */
unsigned system_source_index(unsigned flag);
/* "/proc/stat" and so on: what a source reads, for messages. */
const char *system_source_name(unsigned flag);

/*
 * A number sysfs says of a block device (/sys/class/block/NAME/ATTRIBUTE): "size", its sectors
 * of 512 bytes (0 for one without a medium: a detached loop device, an empty drive); "diskseq"
 * (Linux 5.15 on), a number the kernel makes anew each time the device gets a medium (a loop
 * device attached again). 0 or -errno.
 */
int block_device_value(const char *name, const char *attribute, uint64_t *value);

/* Whether a network interface is a device of its own (sysfs: /sys/class/net/NAME/device), not a virtual one. */
int netdev_is_physical(const char *name);

#endif
