/* inode_names.c: a path for a (device, inode) that eBPF counted (cachetop --files, doctor), from what processes have open or mapped. */
#include "collect/inode_names.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "common/bounded.h"
#include "common/util.h"

/* How long the directories beside known files may take to read. */
#define LOOK_MS 2000u

/* Open addressing on (device, inode): a machine has open and mapped files by the hundred thousand. */
static size_t slot_of(const struct inode_names *t, dev_t dev, uint64_t ino)
{
	uint64_t hash = (ino ^ ((uint64_t)dev << 32 | (uint64_t)dev >> 32)) * 0x9e3779b97f4a7c15ull;
	size_t slot = (size_t)(hash >> 17) & (t->capacity - 1);

	while (t->names[slot].path && (t->names[slot].dev != dev || t->names[slot].ino != ino))
		slot = (slot + 1) & (t->capacity - 1);
	return slot;
}

static void remember_path(struct inode_names *t, dev_t dev, uint64_t ino, const char *path)
{
	size_t slot;

	if (2 * (t->count + 1) > t->capacity) {
		struct inode_names grown = { .capacity = t->capacity ? 2 * t->capacity : 1024 };

		grown.names = xcalloc(grown.capacity, sizeof(*grown.names));
		for (size_t i = 0; i < t->capacity; i++)
			if (t->names[i].path)
				grown.names[slot_of(&grown, t->names[i].dev, t->names[i].ino)] = t->names[i];
		free(t->names);
		t->names = grown.names;
		t->capacity = grown.capacity;
	}
	slot = slot_of(t, dev, ino);
	if (t->names[slot].path)
		return;
	t->names[slot] = (struct inode_name){ dev, ino, xstrdup(path) };
	t->count++;
}

static const char *known_path(const struct inode_names *t, dev_t dev, uint64_t ino)
{
	return t->capacity ? t->names[slot_of(t, dev, ino)].path : NULL;
}

/* Files a process maps (programs, libraries, data files): "start-end perms offset MAJ:MIN inode path". */
static void learn_mapped_files(struct inode_names *t, const char *pid)
{
	char path[300], line[4400];
	FILE *maps;

	snprintf(path, sizeof(path), "/proc/%s/maps", pid);
	if (!(maps = fopen(path, "re")))
		return;
	while (fgets(line, sizeof(line), maps)) {
		unsigned major_number, minor_number;
		unsigned long long ino;
		int name_at = 0;

		if (sscanf(line, "%*s %*s %*s %x:%x %llu %n", &major_number, &minor_number, &ino, &name_at) != 3 ||
		    !ino || !name_at || line[name_at] != '/')
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (strstr(line + name_at, " (deleted)"))
			continue;
		remember_path(t, makedev(major_number, minor_number), ino, line + name_at);
	}
	fclose(maps);
}

/* Files open in any process: where a (device, inode) can be given a path. */
static void learn_open_files(struct inode_names *t)
{
	DIR *proc = opendir("/proc");
	struct dirent *entry;

	if (!proc)
		return;
	while ((entry = readdir(proc))) {
		char dir_path[300], link_path[600], target[4096];
		DIR *fds;
		struct dirent *fd_entry;

		if (entry->d_name[0] < '1' || entry->d_name[0] > '9')
			continue;
		snprintf(dir_path, sizeof(dir_path), "/proc/%s/fd", entry->d_name);
		fds = opendir(dir_path);
		if (!fds)
			continue;
		while ((fd_entry = readdir(fds))) {
			struct statx st;
			ssize_t length;

			if (fd_entry->d_name[0] == '.')
				continue;
			snprintf(link_path, sizeof(link_path), "%s/%s", dir_path, fd_entry->d_name);
			/* What the kernel has: a file on a hung FUSE or NFS server is not asked. */
			if (statx(AT_FDCWD, link_path, AT_STATX_DONT_SYNC, STATX_TYPE | STATX_INO, &st) != 0 ||
			    !S_ISREG(st.stx_mode))
				continue;
			length = readlink(link_path, target, sizeof(target) - 1);
			if (length <= 0)
				continue;
			target[length] = '\0';
			remember_path(t, makedev(st.stx_dev_major, st.stx_dev_minor), st.stx_ino, target);
		}
		closedir(fds);
		learn_mapped_files(t, entry->d_name);
	}
	closedir(proc);
}

/*
 * A file closed before it was looked for: often next to one that is known (a log beside
 * its rotated twin, a table beside its index). The directories of known files on the same
 * device are read for the inode, at most 64 of them, in a child process for a bounded
 * time: a directory of a hung FUSE or NFS server never answers.
 */
struct beside {
	dev_t dev;
	uint64_t ino;
	unsigned ndirs;
	char dirs[64][512];
	char found[4096 + 512];
};

static void look_beside(void *arg)
{
	struct beside *job = arg;

	for (unsigned i = 0; i < job->ndirs && !job->found[0]; i++) {
		DIR *d = opendir(job->dirs[i]);
		struct dirent *entry;

		while (d && (entry = readdir(d))) {
			char path[sizeof(job->found)];
			struct stat st;

			if (entry->d_ino != job->ino)
				continue;
			snprintf(path, sizeof(path), "%s/%s", strcmp(job->dirs[i], "/") ? job->dirs[i] : "", entry->d_name);
			/* The entry, checked to be the file: a name may have moved on. */
			if (stat(path, &st) == 0 && st.st_dev == job->dev && st.st_ino == job->ino) {
				memcpy(job->found, path, sizeof(path));
				break;
			}
		}
		if (d)
			closedir(d);
	}
}

static const char *find_beside_known(struct inode_names *t, dev_t dev, uint64_t ino)
{
	struct beside *job = xcalloc(1, sizeof(*job));
	const char *found = NULL;

	job->dev = dev;
	job->ino = ino;
	for (size_t i = 0; i < t->capacity && job->ndirs < 64; i++) {
		char dir[512], *slash;
		unsigned j;

		if (!t->names[i].path || t->names[i].dev != dev || t->names[i].path[0] != '/' ||
		    strlen(t->names[i].path) >= sizeof(dir))
			continue;
		snprintf(dir, sizeof(dir), "%s", t->names[i].path);
		slash = strrchr(dir, '/');
		slash[slash == dir] = '\0';
		for (j = 0; j < job->ndirs && strcmp(job->dirs[j], dir); j++)
			;
		if (j == job->ndirs)
			memcpy(job->dirs[job->ndirs++], dir, sizeof(dir));
	}
	if (job->ndirs && bounded_call(look_beside, job, sizeof(*job), LOOK_MS) == 0 && job->found[0]) {
		remember_path(t, dev, ino, job->found);
		found = known_path(t, dev, ino);
	}
	free(job);
	return found;
}

const char *inode_names_find(struct inode_names *t, dev_t dev, uint64_t ino, char *fallback, size_t len)
{
	const char *path = known_path(t, dev, ino);

	/* Open files by their attributes as the kernel has them, mappings by a killable lock: no hang there. */
	if (!path && !t->looked) {
		learn_open_files(t);
		t->looked = true;
		path = known_path(t, dev, ino);
	}
	if (!path)
		path = find_beside_known(t, dev, ino);
	if (path)
		return path;
	snprintf(fallback, len, "dev %u:%u inode %llu", major(dev), minor(dev), (unsigned long long)ino);
	return fallback;
}

void inode_names_round(struct inode_names *t)
{
	t->looked = false;
}

void inode_names_free(struct inode_names *t)
{
	for (size_t i = 0; i < t->capacity; i++)
		free(t->names[i].path);
	free(t->names);
	*t = (struct inode_names){0};
}
