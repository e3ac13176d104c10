/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sysroot.h: every collector reads /proc and /sys through one root directory, so tests can replay recorded trees. */
#ifndef IOLENS_SYSROOT_H
#define IOLENS_SYSROOT_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * The root is "/" unless set: by --sysroot DIR (sysroot_set) or by the environment
 * variable IOLENS_SYSROOT. Paths given below are absolute ("/proc/stat") and read as
 * ROOT/proc/stat.
 */
int sysroot_set(const char *directory); /* 0, or -errno when it is not a directory */
const char *sysroot_get(void);
/* The same root opened again, in a child that closed the descriptors it inherited: 0, or -errno. */
int sysroot_reopen(void);

/*
 * A file read again and again, sample after sample: opened once, read from the start
 * each time with pread (procfs and sysfs regenerate on every read), into a buffer that
 * grows as needed and is always NUL-terminated.
 */
struct sysroot_file {
	const char *path; /* absolute, under the root */
	int fd;           /* -1 until opened; set by SYSROOT_FILE */
	char *buf;
	size_t capacity;
	int error;        /* the last failure, as -errno, for messages */
	unsigned generation; /* the root it was opened under: sysroot_set makes it open again */
};
#define SYSROOT_FILE(p) { .path = (p), .fd = -1 }

/* Reads the whole file; 0 with *text and *len set (valid until the next read), or -errno. */
int sysroot_file_read(struct sysroot_file *file, const char **text, size_t *len);
void sysroot_file_close(struct sysroot_file *file);

/*
 * The one reader of a small file read once (/proc/PID/io, comm, fdinfo/N, a sysfs
 * attribute): the whole of ROOT/path into buf, NUL-terminated, read until end of file (a
 * short read is not the end). Its length, or -errno. A file longer than size - 1 bytes is
 * cut there: what callers want comes first (fdinfo's pos and flags before an epoll's list).
 */
ssize_t sysroot_read_small(const char *path, char *buf, size_t size);
/* The same under a directory of the caller's (AT_FDCWD: the live system, for iolens itself). */
ssize_t read_small_at(int dir, const char *path, char *buf, size_t size);
/* sysroot_read_small with the trailing newline and spaces removed: 0, or -errno. */
int sysroot_read_string(const char *path, char *buf, size_t size);
/*
 * ROOT/path as a path to hand to what takes one (fopen, opendir, statx and readlink of
 * /proc/PID/fd's magic links): path itself when the root is "/". printf's format; false
 * when it does not fit in buf.
 */
bool sysroot_path(char *buf, size_t size, const char *format, ...) __attribute__((format(printf, 3, 4)));
/* Whether ROOT/path exists. */
int sysroot_exists(const char *path);
/* Opens a directory under the root for readdir; NULL with errno set (a tree in memory has none). */
DIR *sysroot_opendir(const char *path);
/* Whether a directory under the root has an entry (but . and ..): also in a tree in memory. */
bool sysroot_dir_has_entries(const char *path);
/*
 * The root becomes a recorded tree in memory (collect/sysroot_tree.h, as the recorder kept it):
 * files, paths found and directories' entries answered from it until sysroot_set (NULL: off; the
 * tree must stay until then). 0, or -EINVAL when it is no tree (then an empty one).
 */
int sysroot_memory_set(const unsigned char *tree, size_t len);


/*
 * The one walk over the processes: the pids of ROOT/proc in readdir's order (a process
 * that ends meanwhile may or may not be in it), entries that are not a pid ("self", "net",
 * "123abc") passed over, and iolens itself too with PROC_PIDS_NOT_SELF.
 */
enum { PROC_PIDS_NOT_SELF = 1u << 0 };
struct proc_pids {
	DIR *dir;
	pid_t skip; /* 0: none */
};
/* 0, or -errno when the directory cannot be read (the walk then yields nothing). */
int proc_pids_open(struct proc_pids *pids, unsigned flags);
/* The same over a procfs directory of the caller's (libvtrace's segments are the live system's). */
int proc_pids_open_dir(struct proc_pids *pids, const char *procfs, unsigned flags);
/* The next pid, or 0 at the end. */
pid_t proc_pids_next(struct proc_pids *pids);
void proc_pids_close(struct proc_pids *pids);
/* A pid directory's name as a pid ("1234"), or 0 for any other name (also a task's tid). */
pid_t proc_pid_name(const char *name);

#endif
