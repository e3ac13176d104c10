/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * filesystems.c: the mounted filesystems' usage as df counts it, asked in a child process
 * (common/bounded.c) so that a hung mount is said, never waited on.
 */
#include "collect/filesystems.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/procfs.h"
#include "collect/sysroot.h"
#include "common/bounded.h"
#include "common/util.h"

/*
 * The filesystems of filesystem_pseudo, each with whether it is the kernel's own, its names its
 * objects' (no disk, no server, no automount): a path crosses it without waiting on anything.
 */
static const struct pseudo_fs {
	const char *type;
	bool kernel_own;
} pseudo[] = {
	{ "proc", true },      { "sysfs", true },     { "cgroup", true },      { "cgroup2", true },
	{ "devpts", true },    { "mqueue", true },    { "debugfs", true },     { "tracefs", true },
	{ "securityfs", true }, { "pstore", true },   { "bpf", true },         { "configfs", true },
	{ "fusectl", false },  { "binfmt_misc", true }, { "hugetlbfs", true }, { "autofs", false },
	{ "rpc_pipefs", false }, { "nsfs", true },    { "efivarfs", false },   { "selinuxfs", true },
	{ "squashfs", false }, { "iso9660", false },  { "erofs", false },      { "overlay", false },
	{ "devtmpfs", false }, { "ramfs", false },
};

static const struct pseudo_fs *pseudo_of(const char *type)
{
	for (size_t i = 0; i < sizeof(pseudo) / sizeof(pseudo[0]); i++)
		if (!strcmp(type, pseudo[i].type))
			return &pseudo[i];
	return NULL;
}

bool filesystem_pseudo(const char *type)
{
	return pseudo_of(type) != NULL;
}

static void probe_in_child(void *arg)
{
	struct fs_probe *p = arg;

	p->rc = stat(p->dir, &p->st) == 0 && statvfs(p->dir, &p->vfs) == 0 ? 0 : -errno;
}

static bool in_memory(const char *type)
{
	return !strcmp(type, "tmpfs") || !strcmp(type, "ramfs") || !strcmp(type, "devtmpfs");
}

bool filesystem_ext_family(const char *type)
{
	return !strcmp(type, "ext4") || !strcmp(type, "ext3") || !strcmp(type, "ext2");
}

/*
 * Whether stat and statfs of m's root are answered from memory (see filesystem_probe_safe): an
 * ext4 whose project quotas are enforced (prjquota) has statfs of a root inheriting a project
 * count that project's quota, whose entry may be read from the disk.
 */
static bool answers_alone(const struct mount_device *m)
{
	return in_memory(m->type) || (filesystem_ext_family(m->type) && m->major && !m->project_quota);
}

/*
 * Whether a path can cross the mount m without a server asked: in memory or the kernel's own, or
 * on a block device and not FUSE (fuseblk is on one) nor a cluster filesystem (gfs2 and ocfs2
 * check their names again under a lock of the cluster's).
 */
static bool crossed_alone(const struct mount_device *m)
{
	const struct pseudo_fs *p = pseudo_of(m->type);

	return in_memory(m->type) || (p && p->kernel_own) ||
	       (m->major && strncmp(m->type, "fuse", 4) && strcmp(m->type, "gfs2") && strcmp(m->type, "ocfs2"));
}

bool filesystem_probe_safe(const struct mountinfo *mounts, const char *type, const char *dir)
{
	char prefix[sizeof(((struct fs_probe *)0)->dir)];
	size_t len = strlen(dir);
	const struct mount_device *top;

	if (!(in_memory(type) || filesystem_ext_family(type)) || dir[0] != '/' || len >= sizeof(prefix) ||
	    strcmp(sysroot_get(), "/"))
		return false;
	/* What a stat of dir reaches: the last mount there, which may cover this one. */
	if (!(top = mountinfo_find(mounts, dir)) || !answers_alone(top))
		return false;
	/*
	 * "/", then each of dir's proper prefixes that is a mount point ("/" must be one): each
	 * crossed alone, and mounted before top: one mounted after it on a prefix hides it, and the
	 * path looks dir up in that mount's directory, which may have to read it from its disk.
	 */
	for (size_t end = 1; end < len; end++) {
		const struct mount_device *m;

		if (end > 1 && dir[end] != '/')
			continue;
		memcpy(prefix, dir, end);
		prefix[end] = '\0';
		m = mountinfo_find(mounts, prefix);
		if (!m ? end == 1 : !crossed_alone(m) || m > top)
			return false;
	}
	return true;
}

void filesystem_probe_here(struct fs_probe *probe)
{
	probe_in_child(probe);
}

int filesystem_probe(struct fs_probe *probe)
{
	return bounded_call(probe_in_child, probe, sizeof(*probe), BOUNDED_FS_MS);
}

int filesystem_probe_marked(struct fs_probe *probe, const char *marks, unsigned major, unsigned minor,
			    struct bounded_mark *mark)
{
	char what[256];

	snprintf(what, sizeof(what), "stat and statfs of %.230s", probe->dir); /* a longer mount point is cut */
	return bounded_call_device(marks, major, minor, what, probe_in_child, probe, sizeof(*probe), BOUNDED_FS_MS,
				   mark, NULL);
}

int filesystem_watch_start(struct fs_watch *watch)
{
	*watch = (struct fs_watch){0};
	return bounded_mark_dir(watch->marks, sizeof(watch->marks));
}

int filesystem_probe_watched(struct fs_watch *watch, struct fs_probe *probe, const unsigned *device)
{
	struct bounded_child child = {0};
	struct bounded_mark mark;
	char what[256];
	size_t i;
	int rc;

	for (i = 0; i < watch->count && strcmp(watch->stuck[i].dir, probe->dir); i++)
		;
	if (i < watch->count) {
		if (!bounded_child_ended(&watch->stuck[i].child))
			return -ETIMEDOUT; /* still waiting for its answer: asking again would only wait beside it */
		free(watch->stuck[i].dir); /* answered: asked afresh below */
		watch->stuck[i] = watch->stuck[--watch->count];
	}
	snprintf(what, sizeof(what), "stat and statfs of %.230s", probe->dir);
	if (device)
		rc = bounded_call_device(watch->marks, device[0], device[1], what, probe_in_child, probe,
					 sizeof(*probe), BOUNDED_FS_MS, &mark, &child);
	else /* not in mountinfo (unmounted since): unmarked */
		rc = bounded_call_keep(probe_in_child, probe, sizeof(*probe), BOUNDED_FS_MS, &child);
	if (rc == -EBUSY) /* another run's probe (a doctor's) still waits on it: not asked beside it */
		return -ETIMEDOUT;
	if (rc == -ETIMEDOUT && child.pid > 0) {
		watch->stuck = xrealloc(watch->stuck, (watch->count + 1) * sizeof(*watch->stuck));
		watch->stuck[watch->count].dir = xstrdup(probe->dir);
		watch->stuck[watch->count++].child = child;
	}
	return rc;
}

void fs_watch_free(struct fs_watch *watch)
{
	for (size_t i = 0; i < watch->count; i++) {
		bounded_child_abandon(&watch->stuck[i].child);
		free(watch->stuck[i].dir);
	}
	free(watch->stuck);
	*watch = (struct fs_watch){0};
}
