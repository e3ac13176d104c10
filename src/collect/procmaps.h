/* SPDX-License-Identifier: GPL-2.0-or-later */
/* procmaps.h: which processes map a file, from /proc/PID/maps (and smaps for locking). */
#ifndef IOLENS_PROCMAPS_H
#define IOLENS_PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One line of /proc/PID/maps, or a mapping header line of /proc/PID/smaps. */
struct procmaps_entry {
	uint64_t start, end;
	char perms[5];
	uint64_t offset;
	unsigned major, minor;
	uint64_t inode;
	const char *path; /* points into the line; "" for anonymous mappings */
};

/* Parses one line (without or with its newline); false when it is not a mapping line. */
bool procmaps_parse_line(const char *line, struct procmaps_entry *out);

/* Every file mapping of every process, sorted by file. */
struct mapped_file {
	dev_t dev;
	ino_t ino;
	pid_t pid;
};

struct mapped_files {
	struct mapped_file *items;
	size_t count;
	size_t unreadable; /* processes whose maps we may not read */
};

/*
 * Reads ROOT/proc/PID/maps of every process. Processes that vanish are passed over; those that deny
 * access are counted.
 */
int mapped_files_load(struct mapped_files *out);
/* The processes mapping (dev, ino), each once: up to max of them in pids; returns how many in all. */
size_t mapped_files_find(const struct mapped_files *files, dev_t dev, ino_t ino, pid_t *pids, size_t max);
void mapped_files_free(struct mapped_files *files);

/* True when process pid maps (dev, ino) with VM_LOCKED (mlock), from ROOT/proc/PID/smaps. */
bool procmaps_maps_locked(pid_t pid, dev_t dev, ino_t ino);

#endif
