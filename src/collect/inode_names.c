/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * inode_names.c: a path for a (device, inode) that eBPF counted (cachetop --files, doctor), found
 * by a child process in the background.
 */
#include "collect/inode_names.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collect/filesystems.h"
#include "collect/procfs.h"
#include "collect/sysroot.h"
#include "common/util.h"

#define SECOND_NS 1000000000ull
#define PENDING_MAX (1u << 22) /* bytes of asks kept while the child does not read: 262,144 files */
#define DEVICES_MAX 16         /* devices whose directories the child reads */
#define NEAR_DIRS 4096         /* directories a near walk reads, at most */
#define STEP_DIRS 32           /* directories a walk reads before the child looks at new asks */

/* ---- Tables on (device, inode): a machine has open and mapped files by the hundred thousand ---- */

static size_t slot_of(const struct inode_table *t, dev_t dev, uint64_t ino)
{
	uint64_t hash = (ino ^ ((uint64_t)dev << 32 | (uint64_t)dev >> 32)) * 0x9e3779b97f4a7c15ull;
	size_t slot = (size_t)(hash >> 17) & (t->capacity - 1);

	/* An inode number is never 0: a slot with none is free. */
	while (t->slots[slot].ino && (t->slots[slot].dev != dev || t->slots[slot].ino != ino))
		slot = (slot + 1) & (t->capacity - 1);
	return slot;
}

static struct inode_name *table_find(const struct inode_table *t, dev_t dev, uint64_t ino)
{
	struct inode_name *slot;

	if (!t->capacity)
		return NULL;
	slot = &t->slots[slot_of(t, dev, ino)];
	return slot->ino ? slot : NULL;
}

/* The slot of (dev, ino), made when it was not there; ino is not 0. */
static struct inode_name *table_add(struct inode_table *t, dev_t dev, uint64_t ino)
{
	struct inode_name *slot;

	if (2 * (t->count + 1) > t->capacity) {
		struct inode_table grown = { .capacity = t->capacity ? 2 * t->capacity : 1024, .count = t->count };

		grown.slots = xcalloc(grown.capacity, sizeof(*grown.slots));
		for (size_t i = 0; i < t->capacity; i++)
			if (t->slots[i].ino)
				grown.slots[slot_of(&grown, t->slots[i].dev, t->slots[i].ino)] = t->slots[i];
		free(t->slots);
		*t = grown;
	}
	slot = &t->slots[slot_of(t, dev, ino)];
	if (!slot->ino) {
		*slot = (struct inode_name){ .dev = dev, .ino = ino };
		t->count++;
	}
	return slot;
}

static void table_free(struct inode_table *t)
{
	for (size_t i = 0; i < t->capacity; i++)
		free(t->slots[i].path);
	free(t->slots);
	*t = (struct inode_table){0};
}

/* ---- The child: looks for paths, says each one found ("MAJ MIN INO PATH", NUL-ended) ---- */

/* A breadth-first walk of directories: each read once, its subdirectories on the device queued. */
struct dir_walk {
	char **queue;
	size_t queue_head, queue_length, queue_capacity;
	struct inode_table visited; /* the directories read (by inode) */
	size_t dirs_read;
};

struct device_walk {
	dev_t dev;
	size_t pending;          /* asked for, not named, not given up */
	unsigned walks;          /* whole walks begun */
	bool walking;
	struct dir_walk whole;   /* out from the known directories to the whole filesystem */
	char **ancestors;        /* the level it goes up to next, once the queue is done */
	size_t nancestors;
	bool at_mounts;          /* the last level: every mount point of the device */
	uint64_t begun_ns, rest_until_ns, near_after_ns;
	int handle_fd;           /* an ext2/3/4 of the device, to open files by handle (by_handle) */
	bool handle_tried;
};

struct child {
	struct inode_table files; /* every path known: open, mapped and found, asked for or not */
	size_t wanted;
	size_t unnamed;           /* wanted and not named */
	struct device_walk devices[DEVICES_MAX];
	size_t ndevices;
	int socket;
	char answers[65536];
	size_t answers_length;
	unsigned char asks[65536];
	size_t asks_length;
	uint64_t proc_after_ns;
	char **cwds;              /* the working directories of processes: where files closed since may be */
	size_t ncwds;
};

static void flush_answers(struct child *c)
{
	size_t done = 0;

	while (done < c->answers_length) {
		ssize_t sent = send(c->socket, c->answers + done, c->answers_length - done, MSG_NOSIGNAL);

		if (sent < 0 && errno == EINTR)
			continue;
		if (sent <= 0)
			_exit(0); /* the caller has gone */
		done += (size_t)sent;
	}
	c->answers_length = 0;
}

/* "MAJ MIN INO PATH", or "MAJ MIN INO " when the path it was given is no longer its. */
static void say_as(struct child *c, struct inode_name *file, const char *path)
{
	char line[64 + 4096];
	int length = snprintf(line, sizeof(line), "%u %u %llu %s", major(file->dev), minor(file->dev),
			      (unsigned long long)file->ino, path);

	if (length < 0 || (size_t)length >= sizeof(line))
		return;
	if (c->answers_length + (size_t)length + 1 > sizeof(c->answers))
		flush_answers(c);
	memcpy(c->answers + c->answers_length, line, (size_t)length + 1);
	c->answers_length += (size_t)length + 1;
	file->sent = true;
}

/* A file's path said (empty: taken back); "-": no such inode now. */
static void say(struct child *c, struct inode_name *file)
{
	say_as(c, file, file->path ? file->path : "");
}

static void say_gone(struct child *c, struct inode_name *file)
{
	say_as(c, file, "-");
}

static struct device_walk *device_of(struct child *c, dev_t dev, bool make)
{
	for (size_t i = 0; i < c->ndevices; i++)
		if (c->devices[i].dev == dev)
			return &c->devices[i];
	/* Directories are read only on block devices: never on a FUSE or NFS server that may hang. */
	if (!make || !major(dev) || c->ndevices == DEVICES_MAX)
		return NULL;
	c->devices[c->ndevices] = (struct device_walk){ .dev = dev };
	return &c->devices[c->ndevices++];
}

/* Whether path is that file now, on a block device (a FUSE or NFS server is never asked). */
static bool is_file(dev_t dev, uint64_t ino, const char *path)
{
	struct statx st;

	return major(dev) &&
	       statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_STATX_DONT_SYNC, STATX_INO, &st) == 0 &&
	       makedev(st.stx_dev_major, st.stx_dev_minor) == dev && st.stx_ino == ino;
}

/*
 * The device's filesystem opened, to ask for files by handle, when it is ext2, ext3 or ext4 (their
 * handles are the inode number and a generation that 0 leaves unchecked: ext4_nfs_get_inode);
 * -1 otherwise. Its first mount that is that filesystem still.
 */
static int handle_mount(struct device_walk *d)
{
	struct mountinfo mounts;

	if (d->handle_tried)
		return d->handle_fd;
	d->handle_tried = true;
	d->handle_fd = -1;
	if (mountinfo_read(&mounts) != 0)
		return -1;
	for (size_t i = 0; i < mounts.count && d->handle_fd < 0; i++) {
		const struct mount_device *m = &mounts.mount[i];
		struct stat st;
		int fd;

		if (makedev(m->major, m->minor) != d->dev || !filesystem_ext_family(m->type))
			continue;
		fd = open(m->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC); /* (not O_PATH: EBADF) */
		if (fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == d->dev)
			d->handle_fd = fd;
		else if (fd >= 0)
			close(fd);
	}
	mountinfo_free(&mounts);
	return d->handle_fd;
}

/*
 * A file asked by its handle: 1 when the kernel names it (its dentry cached: /proc/self/fd's link,
 * checked to be that file), in path; 0 when it has no name (deleted: ESTALE, or no link left); -1
 * when this way cannot tell (not ext2/3/4, not root, a name not cached).
 */
static int by_handle(struct device_walk *d, uint64_t ino, char *path, size_t size)
{
	_Alignas(struct file_handle) unsigned char room[sizeof(struct file_handle) + 8];
	struct file_handle *handle = (struct file_handle *)room;
	uint32_t id[2] = { (uint32_t)ino, 0 /* any generation */ };
	int mount_fd = handle_mount(d), fd, rc = -1;
	char link[64];
	struct stat st;
	ssize_t n;

	if (mount_fd < 0 || ino > UINT32_MAX)
		return -1;
	handle->handle_bytes = sizeof(id);
	handle->handle_type = 1; /* FILEID_INO32_GEN */
	memcpy(handle->f_handle, id, sizeof(id));
	if ((fd = open_by_handle_at(mount_fd, handle, O_PATH | O_CLOEXEC)) < 0)
		return errno == ESTALE ? 0 : -1;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if (fstat(fd, &st) == 0 && st.st_nlink == 0) { /* deleted, still open (so still in memory) */
		rc = 0;
	} else if ((n = readlink(link, path, size - 1)) > 0 && path[0] == '/') {
		path[n] = '\0';
		rc = is_file(d->dev, ino, path) ? 1 : -1;
	}
	close(fd);
	return rc;
}

/* A path for a file, the newest said: a file renamed while open is known by its new name. */
static void learn(struct child *c, dev_t dev, uint64_t ino, const char *path)
{
	struct inode_name *file;
	bool unnamed;

	if (!ino || strlen(path) >= 4096)
		return;
	file = table_add(&c->files, dev, ino);
	if (file->path && !strcmp(file->path, path)) {
		file->hinted = false; /* (a process's path now: said even where it is not that file here) */
		return;
	}
	unnamed = !file->path;
	free(file->path);
	file->path = xstrdup(path);
	file->hinted = false;
	/* A path that is not that file here (another mount namespace's) is kept, not checked again. */
	file->checked = file->wanted && is_file(dev, ino, path);
	if (!file->wanted)
		return;
	if (unnamed)
		c->unnamed--;
	if (unnamed && !file->given_up) {
		struct device_walk *d = device_of(c, dev, false);

		if (d)
			d->pending--;
	}
	file->given_up = false;
	say(c, file);
}

static void asked(struct child *c, dev_t dev, uint64_t ino)
{
	struct inode_name *file;
	struct device_walk *d;

	if (!ino)
		return;
	file = table_add(&c->files, dev, ino);
	if (file->wanted)
		return;
	file->wanted = true;
	c->wanted++;
	if (file->path) {
		file->checked = is_file(dev, ino, file->path);
		if (file->checked || !file->hinted) {
			file->hinted = false;
			say(c, file);
			return;
		}
		free(file->path); /* a hint no longer true: looked for */
		file->path = NULL;
		file->hinted = false;
	}
	c->unnamed++;
	if ((d = device_of(c, dev, true))) {
		char path[4096];
		int known = by_handle(d, ino, path, sizeof(path));

		if (known == 0) { /* deleted: said, so that no one waits for it; never looked for */
			file->given_up = true;
			c->unnamed--;
			say_gone(c, file);
			return;
		}
		file->asked_walk = d->walks;
		d->pending++;
		if (known == 1)
			learn(c, dev, ino, path);
	} else {
		file->given_up = true; /* only an open or mapped file names it */
	}
}

static int compare_strings(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted, each once (the strings freed that were twice). */
static size_t unique_strings(char **strings, size_t n)
{
	size_t kept = 0;

	if (n > 1)
		qsort(strings, n, sizeof(*strings), compare_strings);
	for (size_t i = 0; i < n; i++) {
		if (kept && !strcmp(strings[kept - 1], strings[i]))
			free(strings[i]);
		else
			strings[kept++] = strings[i];
	}
	return kept;
}

static void free_strings(char **strings, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(strings[i]);
	free(strings);
}

static void add_string(char ***strings, size_t *n, size_t *capacity, char *string)
{
	if (*n == *capacity) {
		*capacity = *capacity ? 2 * *capacity : 64;
		*strings = xrealloc(*strings, *capacity * sizeof(**strings));
	}
	(*strings)[(*n)++] = string;
}

/* Files a process maps (programs, libraries, data files): "start-end perms offset MAJ:MIN inode path". */
static void learn_mapped_files(struct child *c, const char *pid)
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
		learn(c, makedev(major_number, minor_number), ino, line + name_at);
	}
	fclose(maps);
}

/* The regular files one process has open. */
static void learn_open_files(struct child *c, const char *pid)
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
		if (statx(AT_FDCWD, link_path, AT_STATX_DONT_SYNC, STATX_TYPE | STATX_INO, &st) != 0 ||
		    !S_ISREG(st.stx_mode))
			continue;
		length = readlink(link_path, target, sizeof(target) - 1);
		if (length <= 0)
			continue;
		target[length] = '\0';
		if (strstr(target, " (deleted)"))
			continue;
		learn(c, makedev(st.stx_dev_major, st.stx_dev_minor), st.stx_ino, target);
	}
	closedir(fds);
}

static void scan_processes(struct child *c)
{
	size_t capacity = 0;
	struct proc_pids proc;
	pid_t found;

	if (proc_pids_open(&proc, PROC_PIDS_NOT_SELF) != 0)
		return;
	free_strings(c->cwds, c->ncwds);
	c->cwds = NULL;
	c->ncwds = 0;
	while ((found = proc_pids_next(&proc))) {
		char pid[24], path[64], cwd[4096];
		ssize_t length;

		snprintf(pid, sizeof(pid), "%d", (int)found);
		learn_open_files(c, pid);
		learn_mapped_files(c, pid);
		if (sysroot_path(path, sizeof(path), "/proc/%s/cwd", pid) &&
		    (length = readlink(path, cwd, sizeof(cwd) - 1)) > 0 && cwd[0] == '/') {
			cwd[length] = '\0';
			if (!strstr(cwd, " (deleted)"))
				add_string(&c->cwds, &c->ncwds, &capacity, xstrdup(cwd));
		}
	}
	proc_pids_close(&proc);
	c->ncwds = unique_strings(c->cwds, c->ncwds);
}

/* dir/name, or false when too long. */
static bool join_path(char *out, size_t size, const char *dir, const char *name)
{
	int length = snprintf(out, size, "%s/%s", strcmp(dir, "/") ? dir : "", name);

	return length > 0 && (size_t)length < size;
}

static void push_dir(struct dir_walk *w, const char *path)
{
	if (w->queue_head > 0 && w->queue_head >= w->queue_length / 2) {
		memmove(w->queue, w->queue + w->queue_head, (w->queue_length - w->queue_head) * sizeof(*w->queue));
		w->queue_length -= w->queue_head;
		w->queue_head = 0;
	}
	if (w->queue_length == w->queue_capacity) {
		w->queue_capacity = w->queue_capacity ? 2 * w->queue_capacity : 256;
		w->queue = xrealloc(w->queue, w->queue_capacity * sizeof(*w->queue));
	}
	w->queue[w->queue_length++] = xstrdup(path);
}

static void dir_walk_free(struct dir_walk *w)
{
	for (size_t i = w->queue_head; i < w->queue_length; i++)
		free(w->queue[i]);
	free(w->queue);
	table_free(&w->visited);
	*w = (struct dir_walk){0};
}

/*
 * A subdirectory on the same device, not read yet. What the kernel has (AT_STATX_DONT_SYNC, no
 * automount): the root of a FUSE or NFS mount is not asked, nor opened, whatever its server does.
 */
static bool below_on_device(const struct device_walk *d, const struct dir_walk *w, int dir_fd, const char *name)
{
	struct statx st;

	return statx(dir_fd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_STATX_DONT_SYNC, STATX_TYPE | STATX_INO,
		     &st) == 0 &&
	       S_ISDIR(st.stx_mode) && makedev(st.stx_dev_major, st.stx_dev_minor) == d->dev &&
	       !table_find(&w->visited, 1, st.stx_ino);
}

/*
 * One directory's entries against the files asked for on its device (d_ino: no stat but of a
 * match, checked to be that file still); in a walk, its subdirectories queued, once each.
 */
static void read_dir(struct child *c, struct device_walk *d, struct dir_walk *w, const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct dirent *entry;
	struct stat st;
	DIR *dir;

	if (fd < 0)
		return;
	if (fstat(fd, &st) != 0 || st.st_dev != d->dev || (w && table_find(&w->visited, 1, st.st_ino)) ||
	    !(dir = fdopendir(fd))) {
		close(fd);
		return;
	}
	if (w) {
		table_add(&w->visited, 1, st.st_ino);
		w->dirs_read++;
	}
	while ((entry = readdir(dir))) {
		struct inode_name *file;
		char child_path[4096];

		if (!strcmp(entry->d_name, ".") || !strcmp(entry->d_name, ".."))
			continue;
		file = entry->d_ino ? table_find(&c->files, d->dev, entry->d_ino) : NULL;
		if (file && file->wanted && !file->path &&
		    join_path(child_path, sizeof(child_path), path, entry->d_name) &&
		    fstatat(dirfd(dir), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
		    st.st_dev == d->dev && st.st_ino == entry->d_ino)
			learn(c, d->dev, st.st_ino, child_path);
		if (w && (entry->d_type == DT_DIR || entry->d_type == DT_UNKNOWN) &&
		    below_on_device(d, w, dirfd(dir), entry->d_name) &&
		    join_path(child_path, sizeof(child_path), path, entry->d_name))
			push_dir(w, child_path);
	}
	closedir(dir);
}

/*
 * Where files closed since are most often found: the directories of the files known on the
 * device (a log beside its rotated twin, the small files of a directory read one after
 * another) and the working directories of processes (read_dir leaves out those elsewhere).
 * Near: only those of files asked for, where the I/O is now (not every library's).
 */
static char **seed_dirs(const struct child *c, dev_t dev, bool near, size_t *n)
{
	char **dirs = NULL;
	size_t count = 0, capacity = 0;

	for (size_t i = 0; i < c->files.capacity; i++) {
		const struct inode_name *file = &c->files.slots[i];
		char *dir, *slash;

		if (!file->ino || !file->path || file->dev != dev || file->path[0] != '/' || (near && !file->wanted))
			continue;
		dir = xstrdup(file->path);
		slash = strrchr(dir, '/');
		slash[slash == dir] = '\0';
		add_string(&dirs, &count, &capacity, dir);
	}
	for (size_t i = 0; i < c->ncwds; i++)
		if (strcmp(c->cwds[i], "/")) /* a daemon's: the whole walk's last level */
			add_string(&dirs, &count, &capacity, xstrdup(c->cwds[i]));
	*n = unique_strings(dirs, count);
	return dirs;
}

/*
 * The near walk: the directories of the files asked for that are known, the working
 * directories, and what is below them, breadth first, NEAR_DIRS directories at most (the whole
 * walk may have passed a directory before its files were asked for).
 */
static void walk_near(struct child *c, struct device_walk *d)
{
	struct dir_walk near = {0};
	size_t n;
	char **dirs = seed_dirs(c, d->dev, true, &n);

	for (size_t i = 0; i < n; i++)
		push_dir(&near, dirs[i]);
	free_strings(dirs, n);
	while (d->pending && near.queue_head < near.queue_length && near.dirs_read < NEAR_DIRS) {
		char *path = near.queue[near.queue_head++];

		read_dir(c, d, &near, path);
		free(path);
	}
	dir_walk_free(&near);
}

/* The whole walk's queue done: the next level up (the parents of the last, each once), then the mount points. */
static bool next_level(struct device_walk *d)
{
	size_t n = 0;

	for (size_t i = 0; i < d->nancestors; i++) {
		char *slash = strrchr(d->ancestors[i], '/');

		if (!slash || !strcmp(d->ancestors[i], "/")) {
			free(d->ancestors[i]);
			continue;
		}
		slash[slash == d->ancestors[i]] = '\0';
		d->ancestors[n++] = d->ancestors[i];
	}
	d->nancestors = unique_strings(d->ancestors, n);
	for (size_t i = 0; i < d->nancestors; i++)
		push_dir(&d->whole, d->ancestors[i]);
	if (d->nancestors)
		return true;
	if (!d->at_mounts) {
		struct mountinfo mounts;

		d->at_mounts = true;
		if (mountinfo_read(&mounts) == 0) {
			for (size_t i = 0; i < mounts.count; i++)
				if (makedev(mounts.mount[i].major, mounts.mount[i].minor) == d->dev)
					push_dir(&d->whole, mounts.mount[i].dir);
			mountinfo_free(&mounts);
		}
		return d->whole.queue_head < d->whole.queue_length;
	}
	return false;
}

static void end_walk(struct child *c, struct device_walk *d, bool whole)
{
	uint64_t now = monotonic_ns(), took = now - d->begun_ns;

	/* What a whole walk begun after it was asked for did not find is out of reach: deleted, or hidden. */
	for (size_t i = 0; whole && i < c->files.capacity; i++) {
		struct inode_name *file = &c->files.slots[i];

		if (file->ino && file->dev == d->dev && file->wanted && !file->path && !file->given_up &&
		    file->asked_walk < d->walks) {
			file->given_up = true;
			d->pending--;
		}
	}
	dir_walk_free(&d->whole);
	free_strings(d->ancestors, d->nancestors);
	d->ancestors = NULL;
	d->nancestors = 0;
	d->walking = false;
	/* A walk again no sooner than it took: never more than half of a CPU at walking, on a busy system. */
	d->rest_until_ns = now + (took > SECOND_NS ? took : SECOND_NS);
}

/*
 * Some directories of the device's whole walk: out from the known directories (what is below
 * them, then below their parents ...) to the whole filesystem. True when it did work.
 */
static bool walk_step(struct child *c, struct device_walk *d)
{
	if (!d->walking) {
		if (!d->pending || monotonic_ns() < d->rest_until_ns)
			return false;
		d->walks++;
		d->walking = true;
		d->at_mounts = false;
		d->begun_ns = monotonic_ns();
		d->ancestors = seed_dirs(c, d->dev, false, &d->nancestors);
		for (size_t i = 0; i < d->nancestors; i++)
			push_dir(&d->whole, d->ancestors[i]);
	}
	for (int k = 0; k < STEP_DIRS && d->pending; k++) {
		char *path;

		if (d->whole.queue_head == d->whole.queue_length && !next_level(d)) {
			end_walk(c, d, true);
			return true;
		}
		path = d->whole.queue[d->whole.queue_head++];
		read_dir(c, d, &d->whole, path);
		free(path);
	}
	if (!d->pending)
		end_walk(c, d, false);
	return true;
}

/*
 * The paths given to files asked for, looked at again: a file renamed or moved once closed (a
 * rotated log) is no longer at the path it was named by. That name is taken back (the caller
 * shows its device and inode) and the file looked for again: first in that directory (a log
 * rotated beside itself), then as any file not named yet. Only paths checked when learnt.
 */
static void check_names(struct child *c)
{
	for (size_t i = 0; i < c->files.capacity; i++) {
		struct inode_name *file = &c->files.slots[i];
		struct device_walk *d;
		char *dir, *slash;

		if (!file->ino || !file->path || !file->wanted || !file->checked ||
		    is_file(file->dev, file->ino, file->path))
			continue;
		dir = file->path;
		file->path = NULL;
		file->checked = false;
		c->unnamed++;
		say(c, file);
		if (!(d = device_of(c, file->dev, true))) {
			file->given_up = true;
			free(dir);
			continue;
		}
		file->given_up = false;
		file->asked_walk = d->walks;
		d->pending++;
		slash = strrchr(dir, '/');
		slash[slash == dir] = '\0';
		read_dir(c, d, NULL, dir);
		free(dir);
	}
}

/* Whole (device, inode) records from the caller; false when it has gone. */
static bool take_asks(struct child *c)
{
	for (;;) {
		ssize_t got = recv(c->socket, c->asks + c->asks_length, sizeof(c->asks) - c->asks_length, MSG_DONTWAIT);
		size_t whole;

		if (got < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
		if (got == 0)
			return false;
		c->asks_length += (size_t)got;
		whole = c->asks_length / sizeof(struct file_id) * sizeof(struct file_id);
		for (size_t at = 0; at < whole; at += sizeof(struct file_id)) {
			struct file_id id;

			memcpy(&id, c->asks + at, sizeof(id));
			asked(c, id.dev, id.ino);
		}
		memmove(c->asks, c->asks + whole, c->asks_length - whole);
		c->asks_length -= whole;
	}
}

/*
 * When a task begun then and done now is done again: a second after, or more, so that it takes a
 * quarter of a CPU at most.
 */
static uint64_t next_time(uint64_t begun, uint64_t done)
{
	uint64_t took = done - begun;

	return begun + (4 * took > SECOND_NS ? 4 * took : SECOND_NS);
}

static _Noreturn void child_main(int socket_fd, bool waited_for, const struct inode_name_hint *hints, size_t nhints)
{
	struct child *c = xcalloc(1, sizeof(*c));

	c->socket = socket_fd;
	/* Hints: paths for files on block devices, each looked at when its file is asked for. */
	for (size_t i = 0; i < nhints; i++) {
		struct inode_name *file;

		if (!major(hints[i].dev) || !hints[i].ino || !hints[i].path || strlen(hints[i].path) >= 4096)
			continue;
		file = table_add(&c->files, hints[i].dev, hints[i].ino);
		if (!file->path) {
			file->path = xstrdup(hints[i].path);
			file->hinted = true;
		}
	}
	/*
	 * In the background, looking costs the machine little: after everything else for the CPU,
	 * the lowest of best effort for the disks. A caller that waits for the names (doctor)
	 * is not kept waiting behind the rest of a busy machine.
	 */
	if (!waited_for) {
		(void)!setpriority(PRIO_PROCESS, 0, 10);
		syscall(SYS_ioprio_set, 1 /* IOPRIO_WHO_PROCESS */, 0, 2 << 13 | 7 /* IOPRIO_CLASS_BE, level 7 */);
	}
	for (;;) {
		uint64_t now = monotonic_ns();
		struct pollfd p = { .fd = c->socket, .events = POLLIN };
		int timeout = 1000;
		bool busy = false;

		/* (one that waits for the names wants none but those not named yet) */
		if (c->wanted && now >= c->proc_after_ns && (c->unnamed || !waited_for)) {
			scan_processes(c);
			check_names(c);
			flush_answers(c); /* what it found, said before the walks begin */
			c->proc_after_ns = next_time(now, monotonic_ns());
			now = monotonic_ns();
		}
		for (size_t i = 0; i < c->ndevices; i++) {
			struct device_walk *d = &c->devices[i];

			if (d->pending && now >= d->near_after_ns) {
				uint64_t begun = monotonic_ns();

				walk_near(c, d);
				flush_answers(c);
				d->near_after_ns = next_time(begun, monotonic_ns());
			}
			busy |= walk_step(c, d);
		}
		flush_answers(c);
		if (busy) {
			timeout = 0;
		} else if (c->wanted) {
			now = monotonic_ns();
			timeout = c->proc_after_ns > now ? (int)((c->proc_after_ns - now) / 1000000u) + 1 : 0;
		}
		if (poll(&p, 1, timeout) > 0 && !take_asks(c))
			break;
	}
	_exit(0);
}

/* In the child, just forked: nothing of the caller's kept open, signals as the default says. */
static _Noreturn void become_child(int socket_fd, pid_t parent, bool waited_for, const struct inode_names *t)
{
	static const int signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD };
	sigset_t all;
	int null_fd;

	for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
		signal(signals[i], SIG_DFL);
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);
	/* A child stuck for good (a disk that does not answer) holds none of the caller's pipes. */
	if (dup2(socket_fd, 3) != 3)
		_exit(1);
	syscall(SYS_close_range, 4u, ~0u, 0u);
	null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (int fd = 0; fd < 3; fd++)
		if (null_fd < 0 || dup2(null_fd, fd) != fd)
			close(fd);
	if (null_fd > 2)
		close(null_fd);
	if (sysroot_reopen() != 0)
		_exit(1);
	child_main(3, waited_for, t->hints, t->nhints);
}

/* ---- The caller's side ---- */

/* A file's path, or none (NULL: the one it had is no longer its). */
static void remember(struct inode_names *t, dev_t dev, uint64_t ino, const char *path)
{
	struct inode_name *name = path ? table_add(&t->names, dev, ino) : table_find(&t->names, dev, ino);

	if (!name || (name->path && path && !strcmp(name->path, path)))
		return;
	if (name->path) {
		/* Someone may hold the old one (inode_names_get): kept till the end. */
		t->retired = xrealloc(t->retired, (t->nretired + 1) * sizeof(*t->retired));
		t->retired[t->nretired++] = name->path;
	}
	name->path = path ? xstrdup(path) : NULL;
}

/* The thread that drains the child's answers into the table, as they come. */
static void *read_answers(void *context)
{
	struct inode_names *t = context;
	static const size_t size = 65536;
	char *buffer = xcalloc(size, 1);
	size_t used = 0;

	for (;;) {
		struct pollfd p[2] = { { .fd = t->from_child, .events = POLLIN },
				       { .fd = t->quit[0], .events = POLLIN } };
		ssize_t got;
		char *record, *end;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;
		got = recv(t->from_child, buffer + used, size - used, MSG_DONTWAIT);
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (got <= 0)
			break;
		used += (size_t)got;
		record = buffer;
		pthread_mutex_lock(&t->lock);
		while ((end = memchr(record, '\0', used - (size_t)(record - buffer)))) {
			unsigned major_number, minor_number;
			unsigned long long ino;
			int path_at = 0;

			if (sscanf(record, "%u %u %llu %n", &major_number, &minor_number, &ino, &path_at) != 3 ||
			    !path_at || !ino) {
				/* (malformed: dropped) */
			} else if (record[path_at] == '/' || !record[path_at]) {
				remember(t, makedev(major_number, minor_number), ino,
					 record[path_at] ? record + path_at : NULL);
			} else if (!strcmp(record + path_at, "-")) {
				table_add(&t->names, makedev(major_number, minor_number), ino)->gone = true;
			}
			record = end + 1;
		}
		pthread_mutex_unlock(&t->lock);
		used -= (size_t)(record - buffer);
		memmove(buffer, record, used);
		if (used == size)
			used = 0; /* longer than any path: dropped */
	}
	free(buffer);
	return NULL;
}

static bool start(struct inode_names *t, bool waited_for)
{
	int ends[2];
	sigset_t all, old;
	pid_t parent = getpid();

	if (t->started)
		return !t->failed;
	t->started = true;
	t->failed = true;
	t->child = -1;
	t->to_child = t->from_child = t->quit[0] = t->quit[1] = -1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0)
		return false;
	if (pipe2(t->quit, O_CLOEXEC) != 0) {
		close(ends[0]);
		close(ends[1]);
		return false;
	}
	t->child = fork_light();
	if (t->child == 0)
		become_child(ends[1], parent, waited_for, t);
	close(ends[1]);
	t->to_child = t->from_child = ends[0];
	if (t->child < 0)
		return false;
	pthread_mutex_init(&t->lock, NULL);
	/* Signals go to the main thread, whose waits they must end (Ctrl-C). */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&t->reader, NULL, read_answers, t) == 0)
		t->failed = false;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (t->failed) {
		kill(t->child, SIGKILL);
		waitpid(t->child, NULL, 0);
		t->child = -1;
		pthread_mutex_destroy(&t->lock);
	}
	return !t->failed;
}

/* As much of the asks as the child takes now, never waiting. */
static void flush_pending(struct inode_names *t)
{
	while (t->pending_length) {
		ssize_t sent = send(t->to_child, t->pending, t->pending_length, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (sent < 0 && errno == EINTR)
			continue;
		if (sent <= 0)
			return; /* full (busy, or stuck: the asks wait), or gone */
		memmove(t->pending, t->pending + sent, t->pending_length - (size_t)sent);
		t->pending_length -= (size_t)sent;
	}
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

/* The asks of inode_names_ask, the child started for a caller that waits or not. */
static bool ask(struct inode_names *t, const struct file_id *ids, size_t n, bool waited_for)
{
	struct mountinfo mounts;
	int have_mounts = -1; /* read at the first block device's cache asked for */

	if (!start(t, waited_for))
		return false;
	for (size_t i = 0; i < n; i++) {
		char path[300];

		if (!ids[i].ino || table_find(&t->asked, ids[i].dev, ids[i].ino))
			continue;
		/* A block device's own page cache: named here, from sysfs, not by the child. */
		if (!major(ids[i].dev) && have_mounts < 0)
			have_mounts = mountinfo_read(&mounts) == 0;
		if (!major(ids[i].dev) && have_mounts > 0 &&
		    block_device_path(&mounts, ids[i].dev, ids[i].ino, path, sizeof(path))) {
			pthread_mutex_lock(&t->lock);
			remember(t, ids[i].dev, ids[i].ino, path);
			pthread_mutex_unlock(&t->lock);
			table_add(&t->asked, ids[i].dev, ids[i].ino);
			continue;
		}
		if (t->pending_length + sizeof(ids[i]) > PENDING_MAX)
			break; /* asked again next time */
		if (!t->pending)
			t->pending = xcalloc(PENDING_MAX, 1);
		memcpy(t->pending + t->pending_length, &ids[i], sizeof(ids[i]));
		t->pending_length += sizeof(ids[i]);
		table_add(&t->asked, ids[i].dev, ids[i].ino);
	}
	if (have_mounts > 0)
		mountinfo_free(&mounts);
	flush_pending(t);
	return true;
}

bool inode_names_ask(struct inode_names *t, const struct file_id *ids, size_t n)
{
	return ask(t, ids, n, false);
}

void inode_names_resolve(struct inode_names *t, const struct file_id *ids, size_t n, uint64_t budget_ns,
			 volatile sig_atomic_t *stop)
{
	uint64_t deadline = monotonic_ns() + budget_ns;

	if (!n || !ask(t, ids, n, true))
		return;
	while (!(stop && *stop) && monotonic_ns() < deadline) {
		struct timespec pause = { 0, 10000000 };
		size_t unnamed = 0;

		flush_pending(t);
		pthread_mutex_lock(&t->lock);
		for (size_t i = 0; i < n && !unnamed; i++) {
			const struct inode_name *name = table_find(&t->names, ids[i].dev, ids[i].ino);

			unnamed += ids[i].ino && !(name && (name->path || name->gone));
		}
		pthread_mutex_unlock(&t->lock);
		if (!unnamed)
			return;
		nanosleep(&pause, NULL);
	}
}

const char *inode_names_get(struct inode_names *t, dev_t dev, uint64_t ino, char *fallback, size_t len)
{
	const struct inode_name *name;
	const char *path = NULL;

	if (t->started && !t->failed) {
		pthread_mutex_lock(&t->lock);
		name = table_find(&t->names, dev, ino);
		path = name ? name->path : NULL;
		pthread_mutex_unlock(&t->lock);
	}
	if (path)
		return path;
	snprintf(fallback, len, "dev %u:%u inode %llu", major(dev), minor(dev), (unsigned long long)ino);
	return fallback;
}

void inode_names_free(struct inode_names *t)
{
	if (t->started && !t->failed) {
		/* Killed, and waited for only if already gone: a child in a stuck filesystem is left to init. */
		kill(t->child, SIGKILL);
		for (int tries = 0; tries < 50 && waitpid(t->child, NULL, WNOHANG) == 0; tries++)
			nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
		if (write(t->quit[1], "", 1) == 1)
			pthread_join(t->reader, NULL);
		else
			pthread_detach(t->reader);
		pthread_mutex_destroy(&t->lock);
	}
	if (t->started) {
		int fds[] = { t->to_child, t->quit[0], t->quit[1] };

		for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
			if (fds[i] >= 0)
				close(fds[i]);
	}
	table_free(&t->names);
	table_free(&t->asked);
	free_strings(t->retired, t->nretired);
	free(t->pending);
	*t = (struct inode_names){0};
}
