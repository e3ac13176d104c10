/* SPDX-License-Identifier: GPL-2.0-or-later */
/* system.c: reads the sources a monitor needs, each through its collector, into one sample. */
#include "collect/system.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collect/cache_events.h"
#include "collect/sysroot.h"
#include "common/util.h"

static const char *const source_names[SYS_SOURCES] = {
	"/proc/stat", "/proc/meminfo", "/proc/vmstat", "/proc/loadavg", "/proc/net/dev", "/proc/diskstats",
	"/proc/swaps", "/proc/interrupts", "/proc/pressure", "/proc/net/sockstat", "/proc/sys/fs",
	"/proc/locks", "/proc/sysvipc", "/proc/uptime", "page cache events (eBPF)",
	"/proc/vmstat", "/proc/zoneinfo", "/proc", "/proc/net/tcp", "/proc/net/udp", "/proc/net/raw", "/proc/net/unix",
	"/proc/PID/stat", "/proc/PID/io", "/proc/PID/schedstat", "/proc/PID/oom_score",
	"block I/O per process (eBPF)", "block I/O latency per disk (eBPF)",
};

unsigned system_source_index(unsigned flag)
{
	return flag ? (unsigned)__builtin_ctz(flag) : 0;
}

const char *system_source_name(unsigned flag)
{
	return source_names[system_source_index(flag)];
}

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Reads one source when asked; records its failure. */
static void take(struct system_sample *s, unsigned what, unsigned flag, int rc, unsigned *failed)
{
	if (!(what & flag))
		return;
	if (rc == 0) {
		s->have |= flag;
	} else {
		s->error[system_source_index(flag)] = rc;
		*failed |= flag;
	}
}

unsigned system_sample_read(struct system_sample *s, unsigned what)
{
	unsigned failed = 0;

	memset(s, 0, sizeof(*s));
	s->mono_ns = clock_ns(CLOCK_MONOTONIC);
	s->real_ns = clock_ns(CLOCK_REALTIME);
	if (what & SYS_UPTIME)
		take(s, what, SYS_UPTIME, uptime_read(&s->uptime), &failed);
	if (what & SYS_PROCSTAT)
		take(s, what, SYS_PROCSTAT, procstat_read(&s->procstat), &failed);
	if (what & SYS_MEMINFO)
		take(s, what, SYS_MEMINFO, meminfo_read(&s->meminfo), &failed);
	if (what & SYS_VMSTAT)
		take(s, what, SYS_VMSTAT, vmstat_read(&s->vmstat), &failed);
	if (what & SYS_LOADAVG)
		take(s, what, SYS_LOADAVG, loadavg_read(&s->loadavg), &failed);
	if (what & SYS_NETDEV)
		take(s, what, SYS_NETDEV, netdev_read(&s->netdev), &failed);
	if (what & SYS_DISKSTATS)
		take(s, what, SYS_DISKSTATS, diskstats_read(&s->disks), &failed);
	if (what & SYS_SWAPS)
		take(s, what, SYS_SWAPS, swaps_read(&s->swaps), &failed);
	if (what & SYS_INTERRUPTS)
		take(s, what, SYS_INTERRUPTS, interrupts_read(&s->interrupts), &failed);
	if (what & SYS_PSI) {
		/* Each resource on its own: a kernel may lack one (cpu "full" came later). */
		int rc = psi_read("io", &s->psi_io);
		psi_read("memory", &s->psi_memory);
		psi_read("cpu", &s->psi_cpu);
		take(s, what, SYS_PSI, rc, &failed);
	}
	/* Only the socket tables the groups shown need: /proc/net/tcp alone can cost milliseconds. */
	if (what & SYS_SOCKETS)
		take(s, what, SYS_SOCKETS, sockets_read_some(&s->sockets, SOCKETS_STAT), &failed);
	if (what & SYS_TCP)
		take(s, what, SYS_TCP, sockets_read_some(&s->sockets, SOCKETS_TCP), &failed);
	if (what & SYS_UDP)
		take(s, what, SYS_UDP, sockets_read_some(&s->sockets, SOCKETS_UDP), &failed);
	if (what & SYS_RAW)
		take(s, what, SYS_RAW, sockets_read_some(&s->sockets, SOCKETS_RAW), &failed);
	if (what & SYS_UNIX)
		take(s, what, SYS_UNIX, sockets_read_some(&s->sockets, SOCKETS_UNIX), &failed);
	if (what & SYS_FSSTAT)
		take(s, what, SYS_FSSTAT, fsstat_read(&s->fs), &failed);
	if (what & SYS_LOCKS)
		take(s, what, SYS_LOCKS, locks_read(&s->locks), &failed);
	if (what & SYS_IPC)
		take(s, what, SYS_IPC, ipc_read(&s->ipc), &failed);
	if (what & SYS_CACHE_EVENTS)
		take(s, what, SYS_CACHE_EVENTS, cache_events_read(&s->cache_added, &s->cache_removed), &failed);
	if (what & SYS_VM_ADV)
		take(s, what, SYS_VM_ADV, vm_adv_read(&s->vm_adv), &failed);
	if (what & SYS_ZONES)
		take(s, what, SYS_ZONES, zones_read(&s->zones), &failed);
	if (what & SYS_PROC_COUNT)
		take(s, what, SYS_PROC_COUNT, proc_count_read(&s->proc_count), &failed);
	if (what & (SYS_PROC_STAT | SYS_PROC_IO | SYS_PROC_SCHED | SYS_PROC_OOM)) {
		unsigned parts = ((what & SYS_PROC_IO) ? PROCS_IO : 0) | ((what & SYS_PROC_SCHED) ? PROCS_SCHED : 0) |
				 ((what & SYS_PROC_OOM) ? PROCS_OOM : 0);
		int rc = proc_table_read(&s->procs, parts);
		unsigned asked = what & (SYS_PROC_STAT | SYS_PROC_IO | SYS_PROC_SCHED | SYS_PROC_OOM);
		for (unsigned bit = 0; bit < SYS_SOURCES; bit++)
			if (asked & (1u << bit))
				take(s, what, 1u << bit, rc, &failed);
	}
	if (what & SYS_BIO)
		take(s, what, SYS_BIO, bio_read(&s->bio), &failed);
	if (what & SYS_BIO_DISKS)
		take(s, what, SYS_BIO_DISKS, bio_read_disks(&s->bio_disks), &failed);
	return failed;
}

void system_sample_free(struct system_sample *s)
{
	if (s->have & SYS_PROCSTAT)
		procstat_free(&s->procstat);
	if (s->have & SYS_NETDEV)
		netdev_free(&s->netdev);
	if (s->have & SYS_DISKSTATS)
		diskstats_free(&s->disks);
	if (s->have & SYS_SWAPS)
		swaps_free(&s->swaps);
	if (s->have & SYS_INTERRUPTS)
		interrupts_free(&s->interrupts);
	proc_table_free(&s->procs);
	bio_table_free(&s->bio);
	bio_disks_free(&s->bio_disks);
	memset(s, 0, sizeof(*s));
}

int block_device_value(const char *name, const char *attribute, uint64_t *value)
{
	char path[128], text[32], *end;
	size_t used;
	int rc;

	used = (size_t)snprintf(path, sizeof(path), "/sys/class/block/");
	for (const char *p = name; *p && used + 16 < sizeof(path); p++)
		path[used++] = *p == '/' ? '!' : *p; /* cciss/c0d0 is cciss!c0d0 in sysfs */
	snprintf(path + used, sizeof(path) - used, "/%s", attribute);
	rc = sysroot_read_string(path, text, sizeof(text));
	if (rc)
		return rc;
	errno = 0;
	*value = strtoull(text, &end, 10);
	return errno || end == text || *end ? -EINVAL : 0;
}

/*
 * What sysfs says of each interface is remembered by name, under one root: a device does
 * not become virtual while it exists, and a monitor asks of every interface every sample.
 * Forgotten when the root changes, and when the cache fills (interfaces come and go).
 */
int netdev_is_physical(const char *name)
{
	static struct {
		char name[32];
		int physical;
	} cache[64];
	static unsigned used;
	static char root[4096];
	char path[128];
	int physical;

	if (strcmp(root, sysroot_get())) {
		snprintf(root, sizeof(root), "%s", sysroot_get());
		used = 0;
	}
	for (unsigned i = 0; i < used; i++)
		if (!strcmp(cache[i].name, name))
			return cache[i].physical;
	snprintf(path, sizeof(path), "/sys/class/net/%s/device", name);
	physical = sysroot_exists(path);
	if (strlen(name) < sizeof(cache[0].name)) {
		if (used == sizeof(cache) / sizeof(cache[0]))
			used = 0;
		snprintf(cache[used].name, sizeof(cache[used].name), "%s", name);
		cache[used++].physical = physical;
	}
	return physical;
}
