/* SPDX-License-Identifier: GPL-2.0-or-later */
/* filesystem.c: export's filesystem collector: each mounted filesystem's sizes and inodes, iolens_filesystem_*. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/export.h"
#include "collect/mounts.h"
#include "collect/procfs.h"
#include "common/util.h"

struct mount_entry {
	char *dir, *type, *source;
	bool readonly;
	int rc;               /* 0, or why it has no numbers: -ETIMEDOUT (hung), -errno of stat or statvfs */
	struct statvfs vfs;
};

/* The mounts to report, each mount point once: the last mounted there, the one a path reaches. */
static size_t list_mounts(struct mount_entry **list, const regex_t *exclude)
{
	struct mount_entry *entries = NULL;
	struct mounts table;
	size_t count = 0;

	if (mounts_read(&table) != 0)
		table = (struct mounts){ 0 };
	for (size_t i = 0; i < table.count; i++) {
		const struct mount *m = &table.list[i];
		size_t k;

		if (filesystem_pseudo(m->type) || (exclude && regexec(exclude, m->dir, 0, NULL, 0) == 0))
			continue;
		for (k = 0; k < count && strcmp(entries[k].dir, m->dir); k++)
			;
		if (k == count) {
			entries = xrealloc(entries, (count + 1) * sizeof(*entries));
			entries[count++].dir = xstrdup(m->dir);
		} else { /* mounted over: the later one replaces it */
			free(entries[k].type);
			free(entries[k].source);
		}
		entries[k].type = xstrdup(m->type);
		entries[k].source = xstrdup(m->source);
		entries[k].readonly = mount_option(m, "ro");
	}
	mounts_free(&table);
	*list = entries;
	return count;
}

/* Its probes marked where doctor's are (as root; unmarked where there is no such directory). */
static void filesystem_start(struct exporter *e)
{
	filesystem_watch_start(&e->filesystems);
}

/*
 * iolens_filesystem_*: size, free and available bytes, files and free files of each mounted
 * filesystem, as df counts them, labelled device, fstype and mountpoint; the pseudo ones
 * (filesystem_pseudo) and the mount points --collector.filesystem.mount-points-exclude matches
 * left out. A mount that does not answer in time gets iolens_filesystem_device_error 1 and no
 * numbers, and is not asked again until the probe left waiting on it has its answer.
 */
static void filesystem_metrics(struct prom *p, struct exporter *e)
{
	enum { SIZE, FREE, AVAIL, FILES, FILES_FREE, READONLY, DEVICE_ERROR, NFAMILIES };
	static const struct {
		const char *name, *help;
	} families[NFAMILIES] = {
		{ "iolens_filesystem_size_bytes",
		  "Filesystem size in bytes (statvfs f_blocks * f_frsize, df's 1B-blocks)." },
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
	size_t count = list_mounts(&mounts, &e->mount_points_exclude);
	struct mountinfo devices = {0};
	bool have_devices = count && mountinfo_read(&devices) == 0;

	for (size_t i = 0; i < count; i++) {
		struct fs_probe probe = {0};
		unsigned device[2];
		bool known;
		int rc;

		snprintf(probe.dir, sizeof(probe.dir), "%s", mounts[i].dir);
		/* Marked by its device, as doctor marks its probes: one probe of a filesystem at a time, of either. */
		known = have_devices && mountinfo_device(&devices, probe.dir, &device[0], &device[1]);
		if (have_devices && filesystem_probe_safe(&devices, mounts[i].type, probe.dir)) {
			filesystem_probe_here(&probe); /* no child: it can wait on nothing */
			rc = 0;
		} else {
			rc = filesystem_probe_watched(&e->filesystems, &probe, known ? device : NULL);
		}
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
			prom_u64(p, families[f].name, value, "device", m->source, "fstype", m->type, "mountpoint",
				 m->dir, NULL);
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

const struct export_collector collector_filesystem = {
	.name = "filesystem",
	.help = "iolens_filesystem_*: each mounted filesystem's size, free and available bytes and inodes, as df",
	.rank = 30,
	.start = filesystem_start,
	.render = filesystem_metrics,
};
