/* inode_names.c: a path for a (device, inode) that eBPF counted (cachetop --files, doctor), from what processes have open or mapped. */
#include "collect/inode_names.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "common/util.h"

static void remember_path(struct inode_names *t, dev_t dev, uint64_t ino, const char *path)
{
	for (size_t i = 0; i < t->count; i++)
		if (t->names[i].dev == dev && t->names[i].ino == ino)
			return;
	t->names = xrealloc(t->names, (t->count + 1) * sizeof(*t->names));
	t->names[t->count].dev = dev;
	t->names[t->count].ino = ino;
	t->names[t->count].path = xstrdup(path);
	t->count++;
}

static const char *known_path(const struct inode_names *t, dev_t dev, uint64_t ino)
{
	for (size_t i = 0; i < t->count; i++)
		if (t->names[i].dev == dev && t->names[i].ino == ino)
			return t->names[i].path;
	return NULL;
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
			struct stat st;
			ssize_t length;

			if (fd_entry->d_name[0] == '.')
				continue;
			snprintf(link_path, sizeof(link_path), "%s/%s", dir_path, fd_entry->d_name);
			if (stat(link_path, &st) != 0 || !S_ISREG(st.st_mode))
				continue;
			length = readlink(link_path, target, sizeof(target) - 1);
			if (length <= 0)
				continue;
			target[length] = '\0';
			remember_path(t, st.st_dev, st.st_ino, target);
		}
		closedir(fds);
		learn_mapped_files(t, entry->d_name);
	}
	closedir(proc);
}

/*
 * A file closed before it was looked for: often next to one that is known (a log beside
 * its rotated twin, a table beside its index). The directories of known files on the same
 * device are read for the inode; at most 64 of them, once per interval.
 */
static const char *find_beside_known(struct inode_names *t, dev_t dev, uint64_t ino)
{
	char **dirs = NULL;
	size_t ndirs = 0;
	const char *found = NULL;

	for (size_t i = 0; i < t->count && ndirs < 64; i++) {
		char *dir, *slash;
		size_t j;

		if (t->names[i].dev != dev || t->names[i].path[0] != '/')
			continue;
		dir = xstrdup(t->names[i].path);
		slash = strrchr(dir, '/');
		slash[slash == dir] = '\0';
		for (j = 0; j < ndirs && strcmp(dirs[j], dir); j++)
			;
		if (j < ndirs) {
			free(dir);
			continue;
		}
		dirs = xrealloc(dirs, (ndirs + 1) * sizeof(*dirs));
		dirs[ndirs++] = dir;
	}
	for (size_t i = 0; i < ndirs && !found; i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *entry;

		while (d && (entry = readdir(d))) {
			char path[4096 + 256];
			struct stat st;

			if (entry->d_ino != ino)
				continue;
			snprintf(path, sizeof(path), "%s/%s", strcmp(dirs[i], "/") ? dirs[i] : "", entry->d_name);
			if (stat(path, &st) == 0 && st.st_dev == dev && st.st_ino == ino) {
				remember_path(t, dev, ino, path);
				found = known_path(t, dev, ino);
				break;
			}
		}
		if (d)
			closedir(d);
	}
	for (size_t i = 0; i < ndirs; i++)
		free(dirs[i]);
	free(dirs);
	return found;
}

const char *inode_names_find(struct inode_names *t, dev_t dev, uint64_t ino, char *fallback, size_t len)
{
	const char *path = known_path(t, dev, ino);

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
	for (size_t i = 0; i < t->count; i++)
		free(t->names[i].path);
	free(t->names);
	*t = (struct inode_names){0};
}
