/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * filesystems.h: the mounted filesystems and their usage as df counts it (statvfs), asked in a
 * child process so that a hung mount is said, never waited on.
 */
#ifndef IOLENS_COLLECT_FILESYSTEMS_H
#define IOLENS_COLLECT_FILESYSTEMS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>

#include "common/bounded.h"

/*
 * Filesystems with no usage worth a number: the kernel's own (proc, sysfs, cgroup, ...),
 * read-only images (squashfs, iso9660, erofs) and overlays (their upper layer is counted
 * where it lives). Shared by doctor's "full" rule and export's filesystem metrics.
 */
bool filesystem_pseudo(const char *type);
/*
 * ext2, ext3 and ext4 (ext4's driver, or ext2's): statfs reads the superblock's counters in
 * memory, and a file handle is the inode number with a generation that 0 leaves unchecked.
 */
bool filesystem_ext_family(const char *type);

/* What a mount says of itself. */
struct fs_probe {
	char dir[4096];      /* in: the mount point */
	struct stat st;      /* out: stat(2) of it (st_dev tells bind mounts of one filesystem) */
	struct statvfs vfs;  /* out: statvfs(2), as df reads it */
	int rc;              /* out: 0, or -errno of stat or statvfs */
};

/*
 * Asks stat and statvfs of probe->dir in a child process, waited for BOUNDED_FS_MS: 0 with
 * probe->rc set, -ETIMEDOUT when the filesystem did not answer in time (a hung FUSE or NFS
 * server), or -errno when no child could be made.
 */
int filesystem_probe(struct fs_probe *probe);

struct mountinfo;

/*
 * Whether stat and statvfs of the mount point dir (of type) can be asked by the caller itself,
 * not in a child: the filesystem answers them from memory, and so does what is mounted on top
 * at dir now (mounts, /proc/self/mountinfo): a tmpfs, ramfs or devtmpfs, whose statfs waits on
 * nothing, or an ext2, ext3 or ext4 on a block device, whose counters are its superblock's in
 * memory (not one enforcing project quotas, prjquota: its statfs of a root inheriting a project
 * counts that project's quota, which may be read from the disk). Every mount the path to it
 * crosses is in memory, the kernel's own (proc, sysfs, cgroup...) or on a block device, not FUSE
 * nor a cluster's, and none covers dir (mounted on a prefix after it): no server or disk is asked
 * on the way (a mount point's parents are held in the dentry cache; only a network, FUSE,
 * cluster, overlay or autofs mount checks them again). Not under another root (sysroot).
 */
bool filesystem_probe_safe(const struct mountinfo *mounts, const char *type, const char *dir);
/* stat and statvfs of probe->dir, here (filesystem_probe_safe): probe->rc says. */
void filesystem_probe_here(struct fs_probe *probe);

/*
 * filesystem_probe marked (common/bounded.h) as a probe of device MAJOR:MINOR in the directory
 * marks: -EBUSY, not asked, while an earlier probe of that filesystem still waits (of this
 * process or another: a doctor run before, a bind mount of it); *mark names the probe's mark.
 */
int filesystem_probe_marked(struct fs_probe *probe, const char *marks, unsigned major, unsigned minor,
			    struct bounded_mark *mark);

/*
 * For a caller that probes again and again (export, at every scrape): the mounts whose probe
 * did not return in time, each with its child, left waiting for the answer. Such a mount is
 * not asked again (-ETIMEDOUT at once, no wait) until that child has its answer: a hung
 * mount costs one waiting process, not one per scrape, and no scrape waits on it twice.
 */
struct fs_watch {
	struct { char *dir; struct bounded_child child; } *stuck;
	size_t count;
	char marks[512]; /* bounded_mark_dir's: the probes are marked as doctor's are; "" unmarked */
};

/* An empty watch, its probes marked where doctor's are: 0, or bounded_mark_dir's -errno (then they go unmarked). */
int filesystem_watch_start(struct fs_watch *watch);
/*
 * A probe of the mount of device (major, minor; NULL when unknown), marked: a mount whose
 * probe of this process or another (a doctor's) still waits is -ETIMEDOUT at once, not asked.
 */
int filesystem_probe_watched(struct fs_watch *watch, struct fs_probe *probe, const unsigned *device);
/* Kills the children still waiting (they go when the kernel lets them) and forgets them. */
void fs_watch_free(struct fs_watch *watch);

#endif
