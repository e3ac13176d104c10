/* SPDX-License-Identifier: GPL-2.0-or-later */
/* files.h: the files a command looks at: paths, directory trees, or what a process has open or mapped. */
#ifndef IOLENS_FILES_H
#define IOLENS_FILES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

struct files_options {
	bool recursive;       /* -R: descend into directories */
	bool follow_symlinks; /* -L: follow symbolic links met inside directories */
	bool one_filesystem;  /* -x: do not cross into other filesystems */
	bool blocking;        /* the caller will read: clear O_NONBLOCK after the open */
	bool count_hard_links; /* visit a file again under each of its names (vmtouch -h) */
	/* vmtouch's filters, by fnmatch(3) on the last component of the name: */
	char *const *ignore;  /* -i: files and directories that match are skipped */
	size_t nignore;
	char *const *only;    /* -I: only files that match are visited */
	size_t nonly;
	uint64_t max_size;    /* -m: larger files are visited with skipped set (0: no limit) */
	uint64_t *directories; /* when not NULL, counts the directories walked */
};

/*
 * One file to look at, or one path that could not be looked at. A file comes open
 * read-only (never a FIFO, so never a hang); the walk closes it after the callback.
 */
struct files_entry {
	const char *path;   /* as the user should see it */
	int fd;             /* -1 for an error */
	struct stat st;
	uint64_t size;      /* st_size, or the size of a block device */
	int error;          /* errno, or 0 */
	const char *reason; /* a message instead of strerror(error), or NULL */
	bool skipped;       /* fd -1: left out as asked (-m), reason says why; not an error */
};

/* Returns 0 to go on, anything else to stop the walk. */
typedef int (*files_visit)(const struct files_entry *entry, void *context);

/*
 * Visits every regular file and block device among the paths, and with -R in the trees
 * below them. A file reached twice (hard links, and with -L symbolic links) is visited
 * once. Paths given by the user are followed when they are symbolic links. Returns what
 * the last callback returned.
 */
int files_walk(char *const *paths, int count, const struct files_options *opts,
	       files_visit visit, void *context);

/*
 * Visits the regular files and block devices a process has open (/proc/PID/fd) or mapped
 * (/proc/PID/map_files, under the sysroot), each once, opened through procfs so that mount
 * namespaces do not matter.
 */
int files_of_process(pid_t pid, files_visit visit, void *context);

#endif
