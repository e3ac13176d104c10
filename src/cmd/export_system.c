/* SPDX-License-Identifier: GPL-2.0-or-later */
/* export_system.c: iolens export's filesystem, vmstat and process_* metrics: what node_exporter and client_golang publish, from iolens's collectors. */
#include "cmd/export.h"

#include <errno.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/procfs.h"
#include "collect/self.h"
#include "common/util.h"

/* ---- Filesystems ------------------------------------------------------------------------------ */

struct mount_entry {
	char *dir, *type, *source;
	bool readonly;
	int rc;               /* 0, or why it has no numbers: -ETIMEDOUT (hung), -errno of stat or statvfs */
	struct statvfs vfs;
};

/* The mounts to report, each mount point once: the last mounted there, the one a path reaches. */
static size_t list_mounts(struct mount_entry **list, const regex_t *exclude)
{
	FILE *mounts = setmntent("/proc/self/mounts", "re");
	struct mount_entry *entries = NULL;
	size_t count = 0;
	struct mntent *m;

	while (mounts && (m = getmntent(mounts))) {
		size_t k;

		if (filesystem_pseudo(m->mnt_type) || (exclude && regexec(exclude, m->mnt_dir, 0, NULL, 0) == 0))
			continue;
		for (k = 0; k < count && strcmp(entries[k].dir, m->mnt_dir); k++)
			;
		if (k == count) {
			entries = xrealloc(entries, (count + 1) * sizeof(*entries));
			entries[count++].dir = xstrdup(m->mnt_dir);
		} else { /* mounted over: the later one replaces it */
			free(entries[k].type);
			free(entries[k].source);
		}
		entries[k].type = xstrdup(m->mnt_type);
		entries[k].source = xstrdup(m->mnt_fsname);
		entries[k].readonly = hasmntopt(m, "ro") != NULL;
	}
	if (mounts)
		endmntent(mounts);
	*list = entries;
	return count;
}

void filesystem_metrics(struct prom *p, struct fs_watch *watch, const regex_t *mount_points_exclude)
{
	enum { SIZE, FREE, AVAIL, FILES, FILES_FREE, READONLY, DEVICE_ERROR, NFAMILIES };
	static const struct {
		const char *name, *help;
	} families[NFAMILIES] = {
		{ "iolens_filesystem_size_bytes", "Filesystem size in bytes (statvfs f_blocks * f_frsize, df's 1B-blocks)." },
		{ "iolens_filesystem_free_bytes", "Free bytes, the root-reserved ones included (f_bfree)." },
		{ "iolens_filesystem_avail_bytes", "Bytes free to non-root users (f_bavail, df's Avail)." },
		{ "iolens_filesystem_files", "Inodes (f_files, df -i's Inodes)." },
		{ "iolens_filesystem_files_free", "Free inodes (f_ffree, df -i's IFree)." },
		{ "iolens_filesystem_readonly", "1 when the filesystem is mounted read-only." },
		{ "iolens_filesystem_device_error",
		  "1 when stat or statvfs of the mount point failed or did not return within a second (a hung mount): "
		  "no numbers for it then." },
	};
	struct mount_entry *mounts;
	size_t count = list_mounts(&mounts, mount_points_exclude);
	struct mountinfo devices = {0};
	bool have_devices = count && mountinfo_read(&devices) == 0;

	for (size_t i = 0; i < count; i++) {
		struct fs_probe probe = {0};
		unsigned device[2];
		int rc;

		snprintf(probe.dir, sizeof(probe.dir), "%s", mounts[i].dir);
		/* Marked by its device, as doctor marks its probes: one probe of a filesystem at a time, of either. */
		rc = filesystem_probe_watched(watch, &probe, have_devices && mountinfo_device(&devices, probe.dir, &device[0],
											&device[1]) ? device : NULL);
		mounts[i].rc = rc ? rc : probe.rc;
		mounts[i].vfs = probe.vfs;
	}
	for (unsigned f = 0; f < NFAMILIES && count; f++) {
		prom_family(p, families[f].name, PROM_GAUGE, families[f].help);
		for (size_t i = 0; i < count; i++) {
			const struct mount_entry *m = &mounts[i];
			const struct statvfs *v = &m->vfs;
			uint64_t value;

			if (m->rc != 0 && f != DEVICE_ERROR && f != READONLY)
				continue;
			switch (f) {
			case SIZE: value = (uint64_t)v->f_blocks * v->f_frsize; break;
			case FREE: value = (uint64_t)v->f_bfree * v->f_frsize; break;
			case AVAIL: value = (uint64_t)v->f_bavail * v->f_frsize; break;
			case FILES: value = v->f_files; break;
			case FILES_FREE: value = v->f_ffree; break;
			case READONLY: value = m->readonly; break;
			default: value = m->rc != 0; break;
			}
			prom_u64(p, families[f].name, value, "device", m->source, "fstype", m->type, "mountpoint", m->dir, NULL);
		}
	}
	if (have_devices)
		mountinfo_free(&devices);
	for (size_t i = 0; i < count; i++) {
		free(mounts[i].dir);
		free(mounts[i].type);
		free(mounts[i].source);
	}
	free(mounts);
}

/* ---- /proc/vmstat ----------------------------------------------------------------------------- */

void vmstat_metrics(struct prom *p)
{
	static const struct {
		const char *name, *help;
		size_t offset;
	} counters[] = {
#define C(n, h, f) { "iolens_vmstat_" n, h, offsetof(struct vmstat, f) }
		C("pgpgin", "KiB read from block devices (pgpgin in /proc/vmstat).", pgpgin),
		C("pgpgout", "KiB written to block devices (pgpgout).", pgpgout),
		C("pswpin", "Pages swapped in (pswpin).", pswpin),
		C("pswpout", "Pages swapped out (pswpout).", pswpout),
		C("pgfault", "Page faults, minor and major (pgfault).", pgfault),
		C("pgmajfault", "Major page faults: the page had to be read (pgmajfault).", pgmajfault),
		C("pgsteal_file", "File pages reclaimed (the sum of pgsteal_*_file; 5.8+).", pgsteal_file),
		C("pgscan_file", "File pages scanned by reclaim (the sum of pgscan_*_file; 5.8+).", pgscan_file),
		C("workingset_refault_file",
		  "File pages read back soon after reclaim evicted them: a working set larger than memory "
		  "(workingset_refault_file; workingset_refault before 5.9).", workingset_refault_file),
		C("workingset_refault_anon", "Anonymous pages swapped back in soon after their eviction (5.9+).",
		  workingset_refault_anon),
#undef C
	};
	struct vmstat vm;

	if (vmstat_read(&vm) != 0)
		return;
	for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
		uint64_t value = *(const uint64_t *)((const char *)&vm + counters[i].offset);
		char sample[96];

		if (value == PROCFS_UNKNOWN) /* this kernel does not count it: no line, not a made-up 0 */
			continue;
		prom_family(p, counters[i].name, PROM_COUNTER, counters[i].help);
		snprintf(sample, sizeof(sample), "%s_total", counters[i].name);
		prom_u64(p, sample, value, NULL);
	}
}

/* ---- The exporter's own process ------------------------------------------------------------------ */

void process_metrics(struct prom *p)
{
	struct process_self self;

	process_self_read(&self);
	const struct {
		const char *name, *help;
		enum prom_type type;
		double value;
		bool known;
	} metrics[] = {
		{ "process_cpu_seconds", "Total user and system CPU time spent in seconds.", PROM_COUNTER,
		  self.cpu_seconds, self.cpu_seconds >= 0 },
		{ "process_open_fds", "Number of open file descriptors.", PROM_GAUGE, (double)self.open_fds,
		  self.open_fds != PROCFS_UNKNOWN },
		{ "process_max_fds", "Maximum number of open file descriptors.", PROM_GAUGE, (double)self.max_fds,
		  self.max_fds != PROCFS_UNKNOWN },
		{ "process_virtual_memory_bytes", "Virtual memory size in bytes.", PROM_GAUGE, (double)self.virtual_bytes,
		  self.virtual_bytes != PROCFS_UNKNOWN },
		{ "process_resident_memory_bytes", "Resident memory size in bytes.", PROM_GAUGE,
		  (double)self.resident_bytes, self.resident_bytes != PROCFS_UNKNOWN },
		{ "process_start_time_seconds", "Start time of the process since unix epoch in seconds.", PROM_GAUGE,
		  self.start_time_seconds, self.start_time_seconds >= 0 },
	};

	for (size_t i = 0; i < sizeof(metrics) / sizeof(metrics[0]); i++) {
		char sample[64];

		if (!metrics[i].known)
			continue;
		prom_family(p, metrics[i].name, metrics[i].type, metrics[i].help);
		snprintf(sample, sizeof(sample), "%s%s", metrics[i].name, metrics[i].type == PROM_COUNTER ? "_total" : "");
		prom_real(p, sample, metrics[i].value, NULL); /* whole numbers below 2^53 print as such */
	}
}
