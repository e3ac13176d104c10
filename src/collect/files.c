/* SPDX-License-Identifier: GPL-2.0-or-later */
/* files.c: walks paths and trees with openat and d_type, so a file costs one open and one fstat. */
#include "collect/files.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "collect/sysroot.h"
#include "common/inode_set.h"
#include "common/util.h"

struct walk {
	const struct files_options *opts;
	files_visit visit;
	void *context;
	int stop;                  /* what the callback returned, when not 0 */
	struct inode_set seen;     /* files visited, to visit each once */
	bool dedupe_all;           /* every file goes into seen, not only those with several names */
	char *path;                /* the path being visited, built as the walk descends */
	size_t path_len, path_capacity;
	dev_t root_dev;
	/* The directories from the root down to the current one, to catch cycles (-L). */
	struct { dev_t dev; ino_t ino; } *ancestors;
	size_t depth, ancestors_capacity;
};

static int report(struct walk *walk, const char *path, int error, const char *reason)
{
	struct files_entry entry = { .path = path, .fd = -1, .error = error, .reason = reason };

	walk->stop = walk->visit(&entry, walk->context);
	return walk->stop;
}

/* Appends "/name" to the current path; returns the old length, to cut back to. */
static size_t path_push(struct walk *walk, const char *name)
{
	size_t old = walk->path_len, name_len = strlen(name);
	bool slash = old && walk->path[old - 1] != '/';

	if (old + slash + name_len + 1 > walk->path_capacity) {
		walk->path_capacity = (old + slash + name_len + 1) * 2;
		walk->path = xrealloc(walk->path, walk->path_capacity);
	}
	if (slash)
		walk->path[walk->path_len++] = '/';
	memcpy(walk->path + walk->path_len, name, name_len + 1);
	walk->path_len += name_len;
	return old;
}

static void path_pop(struct walk *walk, size_t old)
{
	walk->path_len = old;
	walk->path[old] = '\0';
}

/* What a path is, when it is not something with a page cache to look at. */
static const char *unsupported_type(mode_t mode)
{
	if (S_ISDIR(mode))
		return "is a directory (use -R to scan it)";
	if (S_ISFIFO(mode))
		return "is a FIFO: not opened, it has no page cache";
	if (S_ISSOCK(mode))
		return "is a socket: it has no page cache";
	if (S_ISCHR(mode))
		return "is a character device: it has no page cache";
	if (S_ISREG(mode) || S_ISBLK(mode))
		return NULL;
	return "is not a regular file or block device";
}

/* Whether the last component of path (as basename(3) takes it) matches one of the patterns. */
static bool name_matches(char *const *patterns, size_t count, const char *path)
{
	char name[256];
	size_t len = strlen(path), start;

	while (len > 1 && path[len - 1] == '/')
		len--;
	for (start = len; start > 0 && path[start - 1] != '/'; start--)
		;
	if (len - start >= sizeof(name))
		return false;
	memcpy(name, path + start, len - start);
	name[len - start] = '\0';
	for (size_t i = 0; i < count; i++)
		if (fnmatch(patterns[i], name, 0) == 0)
			return true;
	return false;
}

static int block_device_size(int fd, uint64_t *size)
{
	return ioctl(fd, BLKGETSIZE64, size) == 0 ? 0 : -errno;
}

/*
 * Opens name (relative to dirfd) and hands it to the callback. The type was checked
 * before the open; it is checked again after, on the open file, in case the path
 * changed in between (a FIFO opened O_NONBLOCK does not block, and is then refused).
 */
static int visit_file(struct walk *walk, int dirfd, const char *name, const char *path,
		      bool follow, bool dedupe)
{
	int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | (follow ? 0 : O_NOFOLLOW);
	struct files_entry entry = { .path = path };
	const char *reason;
	int rc;

	if (walk->opts->nonly && !name_matches(walk->opts->only, walk->opts->nonly, path))
		return 0;
	entry.fd = openat(dirfd, name, flags);
	if (entry.fd < 0)
		return report(walk, path, errno, NULL);
	if (fstat(entry.fd, &entry.st) != 0) {
		rc = report(walk, path, errno, NULL);
		goto cleanup;
	}
	reason = unsupported_type(entry.st.st_mode);
	if (reason) {
		rc = report(walk, path, 0, reason);
		goto cleanup;
	}
	/* Only a file with several names, or one reached by a link, can be met twice. */
	dedupe = dedupe && (entry.st.st_nlink > 1 || walk->dedupe_all) && !walk->opts->count_hard_links;
	if (dedupe && !inode_set_add(&walk->seen, entry.st.st_dev, entry.st.st_ino)) {
		rc = 0; /* a hard link (or a symbolic link) to a file already counted */
		goto cleanup;
	}
	entry.size = (uint64_t)entry.st.st_size;
	if (S_ISBLK(entry.st.st_mode)) {
		rc = block_device_size(entry.fd, &entry.size);
		if (rc) {
			rc = report(walk, path, -rc, NULL);
			goto cleanup;
		}
	}
	if (walk->opts->max_size && entry.size > walk->opts->max_size) {
		close(entry.fd);
		entry.fd = -1;
		entry.skipped = true;
		entry.reason = "larger than the maximum size given: skipped";
		rc = walk->stop = walk->visit(&entry, walk->context);
		return rc;
	}
	/* Of the open's flags, F_SETFL changes O_NONBLOCK only (the others are not status flags it
	 * sets, or were not given): no F_GETFL, a system call a file fewer. */
	if (walk->opts->blocking)
		fcntl(entry.fd, F_SETFL, flags & ~O_NONBLOCK);
	rc = walk->stop = walk->visit(&entry, walk->context);
cleanup:
	close(entry.fd);
	return rc;
}

static bool is_ancestor(const struct walk *walk, const struct stat *st)
{
	for (size_t i = 0; i < walk->depth; i++)
		if (walk->ancestors[i].dev == st->st_dev && walk->ancestors[i].ino == st->st_ino)
			return true;
	return false;
}

static int walk_directory(struct walk *walk, int parentfd, const char *name, bool follow);

static unsigned char dirent_type(mode_t mode)
{
	return S_ISDIR(mode) ? DT_DIR : S_ISREG(mode) ? DT_REG : S_ISLNK(mode) ? DT_LNK : DT_UNKNOWN;
}

/* One directory entry; d_type saves a stat for everything but followed links and DT_UNKNOWN. */
static int walk_entry(struct walk *walk, int dirfd, const char *name, unsigned char type)
{
	bool via_symlink = false;
	struct stat st;

	if (walk->opts->nignore && name_matches(walk->opts->ignore, walk->opts->nignore, name))
		return 0;
	if (type == DT_UNKNOWN) {
		if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			return errno == ENOENT ? 0 : report(walk, walk->path, errno, NULL);
		type = dirent_type(st.st_mode);
	}
	if (type == DT_LNK) {
		if (!walk->opts->follow_symlinks)
			return 0;
		if (fstatat(dirfd, name, &st, 0) != 0)
			return errno == ENOENT ? 0 /* dangling */ : report(walk, walk->path, errno, NULL);
		type = dirent_type(st.st_mode);
		via_symlink = true;
	}
	switch (type) {
	case DT_DIR:
		return walk_directory(walk, dirfd, name, via_symlink);
	case DT_REG:
		return visit_file(walk, dirfd, name, walk->path, via_symlink, true);
	default:
		/* Devices, FIFOs, sockets: skipped in trees, as du and vmtouch do. */
		return 0;
	}
}

/* Entries are read with getdents64 into this much memory per open directory. */
#define DIRENT_BUFFER (32u << 10)

/* One getdents64 record: the kernel's struct linux_dirent64. */
struct linux_dirent64 {
	ino64_t d_ino;
	off64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static int walk_directory(struct walk *walk, int parentfd, const char *name, bool follow)
{
	int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW);
	char *buffer = NULL;
	struct stat st;
	int fd, rc = 0;

	fd = openat(parentfd, name, flags);
	if (fd < 0)
		return report(walk, walk->path, errno, NULL);
	/* st_dev and st_ino: for -x, and to catch loops (-L, or a bind mount of an ancestor). */
	if (fstat(fd, &st) != 0) {
		rc = report(walk, walk->path, errno, NULL);
		goto cleanup;
	}
	if (walk->opts->one_filesystem && walk->depth && st.st_dev != walk->root_dev)
		goto cleanup;
	if (is_ancestor(walk, &st)) {
		rc = report(walk, walk->path, ELOOP, "symbolic link loop: leads back to a directory above it");
		goto cleanup;
	}
	if (walk->depth == walk->ancestors_capacity) {
		walk->ancestors_capacity = walk->ancestors_capacity ? walk->ancestors_capacity * 2 : 32;
		walk->ancestors = xrealloc(walk->ancestors, walk->ancestors_capacity * sizeof(*walk->ancestors));
	}
	if (walk->opts->directories)
		(*walk->opts->directories)++;
	walk->ancestors[walk->depth].dev = st.st_dev;
	walk->ancestors[walk->depth].ino = st.st_ino;
	walk->depth++;

	/* getdents64 itself rather than readdir: fdopendir costs a system call per directory. */
	buffer = xrealloc(NULL, DIRENT_BUFFER);
	while (!rc) {
		ssize_t got = getdents64(fd, buffer, DIRENT_BUFFER);

		if (got <= 0) {
			if (got < 0)
				rc = report(walk, walk->path, errno, NULL);
			break;
		}
		for (ssize_t at = 0; at < got && !rc;) {
			struct linux_dirent64 *de = (struct linux_dirent64 *)(buffer + at);
			size_t old;

			at += de->d_reclen;
			if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
				continue;
			old = path_push(walk, de->d_name);
			rc = walk_entry(walk, fd, de->d_name, de->d_type);
			path_pop(walk, old);
		}
	}
	walk->depth--;
cleanup:
	free(buffer);
	close(fd);
	return rc;
}

/* Deep trees keep one directory open per level: take the file limit the system allows. */
static void raise_open_file_limit(void)
{
	struct rlimit limit;

	if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
		limit.rlim_cur = limit.rlim_max;
		setrlimit(RLIMIT_NOFILE, &limit);
	}
}

static int walk_path(struct walk *walk, const char *path)
{
	struct stat st;
	const char *reason;

	walk->path_len = 0;
	path_push(walk, path);
	if (walk->opts->nignore && name_matches(walk->opts->ignore, walk->opts->nignore, path))
		return 0;
	if (stat(path, &st) != 0)
		return report(walk, path, errno, NULL);
	if (S_ISDIR(st.st_mode) && walk->opts->recursive) {
		walk->root_dev = st.st_dev;
		walk->depth = 0;
		return walk_directory(walk, AT_FDCWD, path, true);
	}
	reason = unsupported_type(st.st_mode);
	if (reason)
		return report(walk, path, 0, reason);
	/* Named files are each shown, as asked; within a -R run they count once. */
	return visit_file(walk, AT_FDCWD, path, path, true, walk->opts->recursive);
}

int files_walk(char *const *paths, int count, const struct files_options *opts,
	       files_visit visit, void *context)
{
	struct walk walk = { .opts = opts, .visit = visit, .context = context };

	/* With -L one file can be reached by a link and by its name, both with one link count. */
	walk.dedupe_all = opts->follow_symlinks;
	if (opts->recursive)
		raise_open_file_limit();
	for (int i = 0; i < count && !walk.stop; i++)
		walk_path(&walk, paths[i]);
	inode_set_free(&walk.seen);
	free(walk.path);
	free(walk.ancestors);
	return walk.stop;
}

/*
 * The entries of /proc/PID/fd or /proc/PID/map_files, each opened through its magic link.
 * *exists is false when the directory is not there (no such process).
 */
static int walk_proc_links(struct walk *walk, const char *directory, bool *exists, bool *denied)
{
	char link[4096 + 16], target[4096];
	struct dirent *de;
	DIR *dir = opendir(directory);
	int rc = 0;

	*exists = dir || errno != ENOENT;
	if (!dir) {
		if (errno == EACCES || errno == EPERM)
			*denied = true;
		return 0;
	}
	while (!rc && (de = readdir(dir))) {
		struct stat st;
		ssize_t len;

		if (de->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s", directory, de->d_name);
		if (stat(link, &st) != 0) {
			if (errno == EACCES || errno == EPERM)
				*denied = true;
			continue; /* closed or unmapped since readdir, or not ours to see */
		}
		if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
			continue; /* sockets, pipes, anonymous inodes */
		if (inode_set_contains(&walk->seen, st.st_dev, st.st_ino))
			continue;
		len = readlink(link, target, sizeof(target) - 1);
		if (len < 0)
			continue;
		target[len] = '\0';
		rc = visit_file(walk, AT_FDCWD, link, target, true, true);
	}
	closedir(dir);
	return rc;
}

int files_of_process(pid_t pid, files_visit visit, void *context)
{
	static const struct files_options opts = {0};
	struct walk walk = { .opts = &opts, .visit = visit, .context = context, .dedupe_all = true };
	char directory[4096], what[64];
	bool exists, denied = false;
	int rc;

	snprintf(what, sizeof(what), "pid %d", (int)pid);
	if (!sysroot_path(directory, sizeof(directory), "/proc/%d/fd", (int)pid)) {
		report(&walk, what, ENAMETOOLONG, NULL);
		goto cleanup;
	}
	rc = walk_proc_links(&walk, directory, &exists, &denied);
	if (!exists) {
		report(&walk, what, ESRCH, NULL);
		goto cleanup;
	}
	if (!rc) {
		sysroot_path(directory, sizeof(directory), "/proc/%d/map_files", (int)pid); /* fits: fd did */
		rc = walk_proc_links(&walk, directory, &exists, &denied);
	}
	if (denied)
		report(&walk, what, EPERM,
		       "some open or mapped files are not shown: reading another process's "
		       "files needs the same user (fd) or CAP_SYS_ADMIN (map_files)");
cleanup:
	inode_set_free(&walk.seen);
	return walk.stop;
}
