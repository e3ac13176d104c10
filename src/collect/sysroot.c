/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sysroot.c: reads files under the root directory (/ or a recorded tree), keeping hot files open between samples. */
#include "collect/sysroot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/sysroot_tree.h"
#include "common/util.h"

static int root_fd = -1;
static char *root_path;
static unsigned root_generation = 1; /* a file opened under another root is opened again */
static struct sysroot_capture *capture; /* the recorder's: what is read, kept */

/* A recorded tree read from memory (sysroot_memory_set): its entries sorted by path. */
struct memory_entry {
	size_t path; /* in names */
	char type;
	const unsigned char *data;
	size_t len;
};
static struct memory_root {
	struct memory_entry *entries;
	size_t count, capacity;
	char *names; /* the paths, NUL-terminated */
	size_t names_len, names_capacity;
	bool on;
	char name[40]; /* what sysroot_get says: another name for each tree, as another root's */
} memory;

static int by_path(const void *a, const void *b)
{
	const struct memory_entry *x = a, *y = b;
	int c = strcmp(memory.names + x->path, memory.names + y->path);

	return c ? c : (x->data > y->data) - (x->data < y->data); /* one path read twice: in the order read */
}

static void memory_add(const struct tree_entry *e)
{
	size_t n = strlen(e->path) + 1;

	if (memory.count == memory.capacity) {
		memory.capacity = memory.capacity ? 2 * memory.capacity : 256;
		memory.entries = xrealloc(memory.entries, memory.capacity * sizeof(*memory.entries));
	}
	while (memory.names_len + n > memory.names_capacity) {
		memory.names_capacity = memory.names_capacity ? 2 * memory.names_capacity : 16384;
		memory.names = xrealloc(memory.names, memory.names_capacity);
	}
	memcpy(memory.names + memory.names_len, e->path, n);
	memory.entries[memory.count++] =
	    (struct memory_entry){ .path = memory.names_len, .type = e->type, .data = e->data, .len = e->len };
	memory.names_len += n;
}

int sysroot_memory_set(const unsigned char *tree, size_t len)
{
	static unsigned trees;
	static struct tree_entry entry;
	size_t at = 0;
	int rc = 0;

	memory.count = memory.names_len = 0;
	memory.on = tree != NULL;
	root_generation++;
	if (!tree)
		return 0;
	snprintf(memory.name, sizeof(memory.name), "(recorded tree %u)", ++trees);
	while ((rc = tree_next(tree, len, &at, &entry)) > 0)
		memory_add(&entry);
	if (rc < 0) {
		memory.count = 0;
		return rc;
	}
	qsort(memory.entries, memory.count, sizeof(*memory.entries), by_path);
	return 0;
}

/* The entry of path in the memory root (of type, 0 any: also a directory above an entry), or NULL. */
static const struct memory_entry *memory_find(const char *path, char type)
{
	char full[4096];
	size_t lo = 0, hi = memory.count, n;

	snprintf(full, sizeof(full), "%s%s", path[0] == '/' ? "" : "/", path);
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (strcmp(memory.names + memory.entries[mid].path, full) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* The last of equal paths: the last read. */
	while (lo + 1 < memory.count && !strcmp(memory.names + memory.entries[lo + 1].path, full))
		lo++;
	if (lo < memory.count && !strcmp(memory.names + memory.entries[lo].path, full))
		return !type || memory.entries[lo].type == type ? &memory.entries[lo] : NULL;
	n = strlen(full);
	/* "/sys/a" is a directory of "/sys/a/b" ("/sys/a-x" sorts between them). */
	for (size_t i = lo; !type && i < memory.count && !strncmp(memory.names + memory.entries[i].path, full, n); i++)
		if (memory.names[memory.entries[i].path + n] == '/')
			return &memory.entries[i];
	return NULL;
}

/* A file of the memory root into buf (size bytes, NUL-terminated, cut there): its length, or -ENOENT. */
static ssize_t memory_read(const char *path, char *buf, size_t size)
{
	const struct memory_entry *e = memory_find(path, 'F');
	size_t n;

	if (!e)
		return -ENOENT;
	n = e->len < size ? e->len : size ? size - 1 : 0;
	memcpy(buf, e->data, n);
	if (size)
		buf[n] = '\0';
	return (ssize_t)n;
}

void sysroot_capture_set(struct sysroot_capture *c)
{
	capture = c;
}

/* The root's directory fd, opened on first use from IOLENS_SYSROOT or "/". */
static int root(void)
{
	if (root_fd < 0) {
		const char *env = getenv("IOLENS_SYSROOT");
		if (sysroot_set(env && *env ? env : "/") != 0)
			return -1;
	}
	return root_fd;
}

int sysroot_set(const char *directory)
{
	int fd = open(directory, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (root_fd >= 0)
		close(root_fd);
	free(root_path);
	root_fd = fd;
	root_path = xstrdup(directory);
	root_generation++;
	memory.on = false;
	return 0;
}

int sysroot_reopen(void)
{
	char *path = root_path ? xstrdup(root_path) : NULL;
	int rc = 0;

	root_fd = -1; /* closed already, its number perhaps another file's now: never closed here */
	root_generation++;
	if (path)
		rc = sysroot_set(path);
	free(path);
	return rc;
}

const char *sysroot_get(void)
{
	if (memory.on)
		return memory.name;
	root();
	return root_path ? root_path : "/";
}

/* "/proc/stat" relative to the root: "proc/stat". */
static const char *relative(const char *path)
{
	while (*path == '/')
		path++;
	return *path ? path : ".";
}

static int open_under_root(const char *path, int flags)
{
	int dir = root();

	if (dir < 0)
		return -1;
	return openat(dir, relative(path), flags | O_CLOEXEC);
}

/* sysroot_file_read of the memory root: the entry's bytes into the file's buffer. */
static int memory_file_read(struct sysroot_file *file, const char **text, size_t *len)
{
	const struct memory_entry *e = memory_find(file->path, 'F');

	if (!e)
		return file->error = -ENOENT;
	if (e->len + 1 > file->capacity) {
		file->capacity = e->len + 1;
		file->buf = xrealloc(file->buf, file->capacity);
	}
	memcpy(file->buf, e->data, e->len);
	file->buf[e->len] = '\0';
	*text = file->buf;
	*len = e->len;
	return file->error = 0;
}

int sysroot_file_read(struct sysroot_file *file, const char **text, size_t *len)
{
	size_t used = 0;

	if (memory.on)
		return memory_file_read(file, text, len);
	root();
	if (file->fd >= 0 && file->generation != root_generation) {
		close(file->fd);
		file->fd = -1;
	}
	if (file->fd < 0) {
		file->generation = root_generation;
		file->fd = open_under_root(file->path, O_RDONLY | O_NONBLOCK);
		if (file->fd < 0)
			return file->error = -errno;
	}
	for (;;) {
		ssize_t got;

		if (used + 1 >= file->capacity) {
			file->capacity = file->capacity ? file->capacity * 2 : 8192;
			file->buf = xrealloc(file->buf, file->capacity);
		}
		got = pread(file->fd, file->buf + used, file->capacity - used - 1, (off_t)used);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			return file->error = -errno;
		}
		if (got == 0)
			break;
		used += (size_t)got;
	}
	file->buf[used] = '\0';
	if (capture)
		sysroot_capture_add(capture, 'F', file->path, file->buf, used);
	*text = file->buf;
	*len = used;
	file->error = 0;
	return 0;
}

void sysroot_file_close(struct sysroot_file *file)
{
	if (file->fd >= 0)
		close(file->fd);
	free(file->buf);
	file->fd = -1;
	file->buf = NULL;
	file->capacity = 0;
}

ssize_t read_small_at(int dir, const char *path, char *buf, size_t size)
{
	int fd = openat(dir, path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	size_t used = 0;

	if (fd < 0)
		return -errno;
	while (used + 1 < size) {
		ssize_t got = read(fd, buf + used, size - 1 - used);

		if (got < 0) {
			int err = errno;

			if (err == EINTR)
				continue;
			close(fd);
			return -err;
		}
		if (got == 0)
			break;
		used += (size_t)got;
	}
	close(fd);
	if (size)
		buf[used] = '\0';
	return (ssize_t)used;
}

ssize_t sysroot_read_small(const char *path, char *buf, size_t size)
{
	int dir;
	ssize_t got;

	if (memory.on)
		return memory_read(path, buf, size);
	dir = root();
	if (dir < 0)
		return -errno;
	got = read_small_at(dir, relative(path), buf, size);
	if (capture && got >= 0)
		sysroot_capture_add(capture, 'F', path, buf, (size_t)got);
	return got;
}

int sysroot_read_string(const char *path, char *buf, size_t size)
{
	ssize_t got = sysroot_read_small(path, buf, size);

	if (got < 0)
		return (int)got;
	while (got > 0 && (buf[got - 1] == '\n' || buf[got - 1] == ' '))
		buf[--got] = '\0';
	return 0;
}

bool sysroot_path(char *buf, size_t size, const char *format, ...)
{
	const char *root_dir = sysroot_get();
	size_t used = 0;
	va_list args;
	int len;

	if (memory.on)
		return false; /* no path leads into a tree in memory */
	if (strcmp(root_dir, "/") != 0) {
		len = snprintf(buf, size, "%s", root_dir);
		if (len < 0 || (size_t)len >= size)
			return false;
		used = (size_t)len;
		while (used > 0 && buf[used - 1] == '/') /* "/tmp/tree/" and "/proc": one slash between */
			buf[--used] = '\0';
	}
	va_start(args, format);
	len = vsnprintf(buf + used, size - used, format, args);
	va_end(args);
	return len >= 0 && (size_t)len < size - used;
}

int sysroot_exists(const char *path)
{
	struct stat st;
	int dir;

	if (memory.on)
		return memory_find(path, 0) != NULL;
	dir = root();
	if (dir < 0 || fstatat(dir, relative(path), &st, 0) != 0)
		return 0;
	if (capture)
		sysroot_capture_add(capture, 'E', path, S_ISDIR(st.st_mode) ? "d" : "f", 1);
	return 1;
}

/* A directory's names, kept for the recorder (read from a descriptor of its own). */
static void capture_names(int fd, const char *path)
{
	struct sysroot_capture names = {0};
	DIR *dir = fdopendir(fd);
	struct dirent *e;

	if (!dir) {
		close(fd);
		return;
	}
	while ((e = readdir(dir)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			sysroot_capture_bytes(&names, e->d_name, strlen(e->d_name) + 1);
	closedir(dir);
	sysroot_capture_add(capture, 'D', path, names.data, names.len);
	sysroot_capture_free(&names);
}

DIR *sysroot_opendir(const char *path)
{
	int fd;
	DIR *dir;

	if (memory.on) { /* a recorded tree keeps directories' names only: sysroot_dir_has_entries */
		errno = ENOENT;
		return NULL;
	}
	fd = open_under_root(path, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return NULL;
	if (capture) {
		int again = open_under_root(path, O_RDONLY | O_DIRECTORY);
		if (again >= 0)
			capture_names(again, path);
	}
	dir = fdopendir(fd);
	if (!dir)
		close(fd);
	return dir;
}

pid_t proc_pid_name(const char *name)
{
	long value = 0;

	if (!*name)
		return 0;
	for (; *name; name++) {
		if (*name < '0' || *name > '9')
			return 0;
		value = value * 10 + (*name - '0');
		if (value > 0x7fffffff) /* pid_max is at most 2^22, a tid the same */
			return 0;
	}
	return (pid_t)value;
}

static int pids_begin(struct proc_pids *pids, DIR *dir, unsigned flags)
{
	*pids = (struct proc_pids){ .dir = dir, .skip = flags & PROC_PIDS_NOT_SELF ? getpid() : 0 };
	return dir ? 0 : -errno;
}

int proc_pids_open(struct proc_pids *pids, unsigned flags)
{
	return pids_begin(pids, sysroot_opendir("/proc"), flags);
}

int proc_pids_open_dir(struct proc_pids *pids, const char *procfs, unsigned flags)
{
	return pids_begin(pids, opendir(procfs), flags);
}

pid_t proc_pids_next(struct proc_pids *pids)
{
	struct dirent *entry;

	while (pids->dir && (entry = readdir(pids->dir))) {
		pid_t pid = proc_pid_name(entry->d_name);

		if (pid > 0 && pid != pids->skip)
			return pid;
	}
	return 0;
}

void proc_pids_close(struct proc_pids *pids)
{
	if (pids->dir)
		closedir(pids->dir);
	pids->dir = NULL;
}

bool sysroot_dir_has_entries(const char *path)
{
	const struct memory_entry *e;
	struct dirent *entry;
	bool found = false;
	DIR *dir;

	if (memory.on)
		return (e = memory_find(path, 'D')) && e->len > 0;
	if (!(dir = sysroot_opendir(path)))
		return false;
	while (!found && (entry = readdir(dir)))
		found = strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0;
	closedir(dir);
	return found;
}
