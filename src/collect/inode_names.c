/* inode_names.c: a path for a (device, inode) that eBPF counted (cachetop --files, doctor), from what processes have open or mapped, within a time budget. */
#include "collect/inode_names.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collect/procfs.h"
#include "collect/sysroot.h"
#include "common/util.h"

#define BESIDE_DIRS 64 /* directories of known files read for unnamed inodes, at most */

/* Open addressing on (device, inode): a machine has open and mapped files by the hundred thousand. */
static size_t slot_of(const struct inode_names *t, dev_t dev, uint64_t ino)
{
	uint64_t hash = (ino ^ ((uint64_t)dev << 32 | (uint64_t)dev >> 32)) * 0x9e3779b97f4a7c15ull;
	size_t slot = (size_t)(hash >> 17) & (t->capacity - 1);

	while (t->names[slot].path && (t->names[slot].dev != dev || t->names[slot].ino != ino))
		slot = (slot + 1) & (t->capacity - 1);
	return slot;
}

/* The path for a file, the newest said: a file renamed while open is known by its new name. */
static void remember_path(struct inode_names *t, dev_t dev, uint64_t ino, const char *path)
{
	struct inode_name *name;

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
	name = &t->names[slot_of(t, dev, ino)];
	if (name->path) {
		if (strcmp(name->path, path) != 0) {
			free(name->path);
			name->path = xstrdup(path);
		}
		return;
	}
	*name = (struct inode_name){ dev, ino, xstrdup(path) };
	t->count++;
}

static const char *known_path(const struct inode_names *t, dev_t dev, uint64_t ino)
{
	return t->capacity ? t->names[slot_of(t, dev, ino)].path : NULL;
}

/* Files a process maps (programs, libraries, data files): "start-end perms offset MAJ:MIN inode path". */
static void learn_mapped_files(struct inode_names *t, const char *pid)
{
	char path[4200], line[4400];
	FILE *maps;

	if (!sysroot_path(path, sizeof(path), "/proc/%s/maps", pid) || !(maps = fopen(path, "re")))
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

/* The regular files one process has open. */
static void learn_open_files(struct inode_names *t, const char *pid)
{
	char dir_path[4200], link_path[4500], target[4096];
	struct dirent *entry;
	DIR *fds;

	if (!sysroot_path(dir_path, sizeof(dir_path), "/proc/%s/fd", pid) || !(fds = opendir(dir_path)))
		return;
	while ((entry = readdir(fds))) {
		struct statx st;
		ssize_t length;

		if (entry->d_name[0] == '.')
			continue;
		snprintf(link_path, sizeof(link_path), "%s/%s", dir_path, entry->d_name);
		/* What the kernel has: a file on a hung FUSE or NFS server is not asked. */
		if (statx(AT_FDCWD, link_path, AT_STATX_DONT_SYNC, STATX_TYPE | STATX_INO, &st) != 0 || !S_ISREG(st.stx_mode))
			continue;
		length = readlink(link_path, target, sizeof(target) - 1);
		if (length <= 0)
			continue;
		target[length] = '\0';
		if (strstr(target, " (deleted)"))
			continue;
		remember_path(t, makedev(st.stx_dev_major, st.stx_dev_minor), st.stx_ino, target);
	}
	closedir(fds);
}

static int compare_pids(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;

	return (x > y) - (x < y);
}

/*
 * Every process's open and mapped files, in pid order from where the last round stopped,
 * until the deadline or a stop; where it stopped is where the next round begins.
 */
static void scan_processes(struct inode_names *t, uint64_t deadline, volatile sig_atomic_t *stop)
{
	unsigned long *pids = NULL;
	size_t npids = 0, capacity = 0, start;
	struct proc_pids proc;
	pid_t found;

	if (proc_pids_open(&proc, 0) != 0)
		return;
	while ((found = proc_pids_next(&proc))) {
		if (npids == capacity) {
			capacity = capacity ? 2 * capacity : 1024;
			pids = xrealloc(pids, capacity * sizeof(*pids));
		}
		pids[npids++] = (unsigned long)found;
	}
	proc_pids_close(&proc);
	qsort(pids, npids, sizeof(*pids), compare_pids);
	for (start = 0; start < npids && pids[start] < t->scan_from; start++)
		;
	t->scan_from = 0;
	for (size_t k = 0; k < npids; k++) {
		size_t i = (start + k) % npids;
		char pid[24];

		if ((stop && *stop) || monotonic_ns() >= deadline) {
			t->scan_from = pids[i];
			break;
		}
		snprintf(pid, sizeof(pid), "%lu", pids[i]);
		learn_open_files(t, pid);
		learn_mapped_files(t, pid);
	}
	free(pids);
}

/* ---- Beside known files: one child reads the directories, the answers come down a pipe ---- */

struct wanted {
	struct file_id *ids; /* a hash table of the unnamed, capacity a power of two */
	size_t capacity;
};

static size_t wanted_slot(const struct wanted *w, dev_t dev, uint64_t ino)
{
	uint64_t hash = (ino ^ (uint64_t)dev << 40) * 0x9e3779b97f4a7c15ull;
	size_t slot = (size_t)(hash >> 13) & (w->capacity - 1);

	while (w->ids[slot].ino && (w->ids[slot].dev != dev || w->ids[slot].ino != ino))
		slot = (slot + 1) & (w->capacity - 1);
	return slot;
}

/* In the child: each directory's entries against the wanted inodes; "MAJ MIN INO PATH\n" for each found. */
static void read_beside(const struct wanted *w, char (*dirs)[512], const dev_t *dir_devs, size_t ndirs, int out)
{
	for (size_t i = 0; i < ndirs; i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *entry;

		while (d && (entry = readdir(d))) {
			char path[4096 + 600], line[sizeof(path) + 64];
			struct stat st;
			int length;

			if (!entry->d_ino || !w->ids[wanted_slot(w, dir_devs[i], entry->d_ino)].ino)
				continue;
			snprintf(path, sizeof(path), "%s/%s", strcmp(dirs[i], "/") ? dirs[i] : "", entry->d_name);
			/* The entry, checked to be the file: a name may have moved on. */
			if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != dir_devs[i])
				continue;
			length = snprintf(line, sizeof(line), "%u %u %llu %s\n", major(st.st_dev), minor(st.st_dev),
					  (unsigned long long)st.st_ino, path);
			if (length > 0 && (size_t)length < sizeof(line) && !strchr(path, '\n') &&
			    write(out, line, (size_t)length) != length)
				_exit(1);
		}
		if (d)
			closedir(d);
	}
}

static void reap_children(struct inode_names *t)
{
	for (size_t i = 0; i < sizeof(t->children) / sizeof(t->children[0]); i++)
		if (t->children[i] > 0 && waitpid(t->children[i], NULL, WNOHANG) != 0)
			t->children[i] = 0;
}

static void keep_child(struct inode_names *t, pid_t child)
{
	for (size_t i = 0; i < sizeof(t->children) / sizeof(t->children[0]); i++) {
		if (t->children[i] <= 0) {
			t->children[i] = child;
			return;
		}
	}
	/* Eight stuck already: this one is left to init. */
}

/* What the child said, line by line, until EOF, the deadline or a stop. */
static void take_answers(struct inode_names *t, int in, uint64_t deadline, volatile sig_atomic_t *stop)
{
	char buffer[65536];
	size_t used = 0;

	for (;;) {
		uint64_t now = monotonic_ns();
		struct pollfd p = { .fd = in, .events = POLLIN };
		ssize_t got;
		char *line, *newline;

		if ((stop && *stop) || now >= deadline)
			return;
		if (poll(&p, 1, (int)((deadline - now) / 1000000ull) + 1) <= 0)
			continue;
		got = read(in, buffer + used, sizeof(buffer) - used);
		if (got <= 0)
			return;
		used += (size_t)got;
		line = buffer;
		while ((newline = memchr(line, '\n', used - (size_t)(line - buffer)))) {
			unsigned major_number, minor_number;
			unsigned long long ino;
			int path_at = 0;

			*newline = '\0';
			if (sscanf(line, "%u %u %llu %n", &major_number, &minor_number, &ino, &path_at) == 3 && path_at)
				remember_path(t, makedev(major_number, minor_number), ino, line + path_at);
			line = newline + 1;
		}
		used -= (size_t)(line - buffer);
		memmove(buffer, line, used);
		if (used == sizeof(buffer))
			used = 0; /* a line longer than any path: dropped */
	}
}

static void look_beside(struct inode_names *t, const struct wanted *w, uint64_t deadline, volatile sig_atomic_t *stop)
{
	char (*dirs)[512] = xcalloc(BESIDE_DIRS, sizeof(*dirs));
	dev_t *dir_devs = xcalloc(BESIDE_DIRS, sizeof(*dir_devs)), devices[16];
	size_t ndirs = 0, ndevices = 0;
	int pipe_ends[2];
	pid_t child;

	/* The devices with unnamed files (a few), then the directories of known files on them. */
	for (size_t i = 0; i < w->capacity; i++) {
		size_t j;

		for (j = 0; j < ndevices && devices[j] != w->ids[i].dev; j++)
			;
		if (w->ids[i].ino && j == ndevices && ndevices < sizeof(devices) / sizeof(devices[0]))
			devices[ndevices++] = w->ids[i].dev;
	}
	for (size_t i = 0; i < t->capacity && ndirs < BESIDE_DIRS; i++) {
		const struct inode_name *name = &t->names[i];
		char dir[512], *slash;
		size_t j;

		if (!name->path || name->path[0] != '/' || strlen(name->path) >= sizeof(dir))
			continue;
		for (j = 0; j < ndevices && devices[j] != name->dev; j++)
			;
		if (j == ndevices)
			continue;
		snprintf(dir, sizeof(dir), "%s", name->path);
		slash = strrchr(dir, '/');
		slash[slash == dir] = '\0';
		for (j = 0; j < ndirs && (dir_devs[j] != name->dev || strcmp(dirs[j], dir)); j++)
			;
		if (j == ndirs) {
			memcpy(dirs[ndirs], dir, sizeof(dir));
			dir_devs[ndirs++] = name->dev;
		}
	}
	if (ndirs && pipe2(pipe_ends, O_CLOEXEC) == 0) {
		child = fork();
		if (child == 0) {
			/* Nothing of the parent's stays open here: a child stuck for good must not hold its stdout. */
			dup2(pipe_ends[1], 3);
			for (int fd = 0; fd < 3; fd++)
				close(fd);
			syscall(SYS_close_range, 4u, ~0u, 0u);
			read_beside(w, dirs, dir_devs, ndirs, 3);
			_exit(0);
		}
		close(pipe_ends[1]);
		if (child > 0) {
			take_answers(t, pipe_ends[0], deadline, stop);
			/* Done or out of time: it goes when the kernel lets it (a FUSE request may hold it). */
			kill(child, SIGKILL);
			if (waitpid(child, NULL, WNOHANG) == 0)
				keep_child(t, child);
		}
		close(pipe_ends[0]);
	}
	free(dirs);
	free(dir_devs);
}

/*
 * A block device read through the page cache (buffered reads of /dev/loop7, a filesystem's
 * metadata) has its pages in its inode on the kernel's bdev pseudo filesystem: never mounted,
 * an anonymous device (0:N), its inode numbered by the device it is (bdev_add: i_ino = dev, the
 * kernel's MAJOR << 20 | MINOR). Named /dev/NAME when sysfs knows that device and no mount of
 * ours is on 0:N; the node, when there, must be that block device.
 */
static bool block_device_path(const struct mountinfo *mounts, dev_t dev, uint64_t ino, char *path, size_t len)
{
	unsigned block_major = (unsigned)(ino >> 20), block_minor = (unsigned)(ino & 0xfffff);
	char sys[64], uevent[512], *name;
	struct stat st;

	if (major(dev) != 0 || ino >> 32 || !block_major)
		return false;
	for (size_t i = 0; i < mounts->count; i++)
		if (mounts->mount[i].major == major(dev) && mounts->mount[i].minor == minor(dev))
			return false; /* a filesystem of files (tmpfs ...), not the bdev one */
	snprintf(sys, sizeof(sys), "/sys/dev/block/%u:%u/uevent", block_major, block_minor);
	if (sysroot_read_small(sys, uevent, sizeof(uevent)) <= 0 || !(name = strstr(uevent, "DEVNAME=")))
		return false;
	name += strlen("DEVNAME=");
	name[strcspn(name, "\n")] = '\0';
	if (!name[0] || strstr(name, ".."))
		return false;
	snprintf(path, len, "/dev/%s", name);
	if (stat(path, &st) == 0 && !(S_ISBLK(st.st_mode) && st.st_rdev == makedev(block_major, block_minor)))
		return false;
	return true;
}

void inode_names_resolve(struct inode_names *t, const struct file_id *ids, size_t n, uint64_t budget_ns,
			 volatile sig_atomic_t *stop)
{
	uint64_t deadline = monotonic_ns() + budget_ns;
	struct wanted w = {0};
	size_t unnamed = 0;

	reap_children(t);
	if (!n)
		return;
	/* Block devices' own page cache: named by the device, from sysfs. */
	struct mountinfo mounts;
	if (mountinfo_read(&mounts) == 0) {
		for (size_t i = 0; i < n; i++) {
			char path[300];

			if (!known_path(t, ids[i].dev, ids[i].ino) &&
			    block_device_path(&mounts, ids[i].dev, ids[i].ino, path, sizeof(path)))
				remember_path(t, ids[i].dev, ids[i].ino, path);
		}
		mountinfo_free(&mounts);
	}
	/* Open and mapped files first: the newest names of files still open, renamed or not. */
	scan_processes(t, deadline, stop);
	for (size_t i = 0; i < n; i++)
		unnamed += ids[i].ino && !known_path(t, ids[i].dev, ids[i].ino);
	if (!unnamed || (stop && *stop) || monotonic_ns() >= deadline)
		return;
	for (w.capacity = 16; w.capacity < 2 * unnamed; w.capacity *= 2)
		;
	w.ids = xcalloc(w.capacity, sizeof(*w.ids));
	for (size_t i = 0; i < n; i++)
		if (ids[i].ino && !known_path(t, ids[i].dev, ids[i].ino))
			w.ids[wanted_slot(&w, ids[i].dev, ids[i].ino)] = ids[i];
	look_beside(t, &w, deadline, stop);
	free(w.ids);
}

const char *inode_names_get(const struct inode_names *t, dev_t dev, uint64_t ino, char *fallback, size_t len)
{
	const char *path = known_path(t, dev, ino);

	if (path)
		return path;
	snprintf(fallback, len, "dev %u:%u inode %llu", major(dev), minor(dev), (unsigned long long)ino);
	return fallback;
}

void inode_names_free(struct inode_names *t)
{
	reap_children(t);
	for (size_t i = 0; i < t->capacity; i++)
		free(t->names[i].path);
	free(t->names);
	*t = (struct inode_names){0};
}
