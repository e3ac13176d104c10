/* SPDX-License-Identifier: GPL-2.0-or-later */
/* inode_names.h: a path for a (device, inode) that eBPF counted, looked for in the background by a child process. */
#ifndef IOLENS_COLLECT_INODE_NAMES_H
#define IOLENS_COLLECT_INODE_NAMES_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct file_id {
	dev_t dev;
	uint64_t ino;
};

/* One slot of a table on (device, inode); the child's own fields are unused by the caller's table. */
struct inode_name {
	dev_t dev;
	uint64_t ino;
	char *path;          /* NULL: not named (yet) */
	bool wanted, sent;   /* child: asked for; its path said */
	bool given_up;       /* child: a whole walk that began after it was asked did not find it */
	bool gone;           /* caller: the child found no such inode now (deleted): nothing to wait for */
	bool checked;        /* child: its path, on a block device, was that file when learnt: looked at again */
	bool hinted;         /* child: its path is a hint's, not looked at yet */
	unsigned asked_walk; /* child: its device's walks begun when it was asked */
};

struct inode_table {
	struct inode_name *slots; /* open addressing, capacity a power of two */
	size_t count, capacity;
};

/* A path a file had (an earlier look's answer), for the next child to try first. */
struct inode_name_hint {
	dev_t dev;
	uint64_t ino;
	const char *path;
};

/*
 * What the caller knows, and the child that looks (started by the first inode_names_ask):
 * answers come down a pipe that a thread of the caller's drains into names as they come,
 * so looking never takes the caller's time, however long it lasts or wherever it hangs.
 */
struct inode_names {
	struct inode_table names; /* under lock once the child runs */
	struct inode_table asked; /* the caller's own: what was said to the child */
	char **retired;           /* paths replaced by newer ones: kept until inode_names_free */
	size_t nretired;
	pthread_mutex_t lock;
	pthread_t reader;
	pid_t child;
	int to_child, from_child, quit[2];
	bool started, failed;
	unsigned char *pending; /* asks not written to the child yet (it is busy, the pipe is full) */
	size_t pending_length;
	const struct inode_name_hint *hints; /* the caller's, set before the first ask: inode_names_resolve */
	size_t nhints;
};

/*
 * Asks for paths for these files, without waiting: the child looks, in this order, among the
 * files processes have open and mapped (/proc/PID/fd and maps, again every second while it has
 * something to look for: a file renamed while open gets its new path; the paths given to files
 * on block devices are looked at again then, and one no longer theirs is taken back, an empty
 * answer, and the file looked for again), in the directories of
 * the files it knows on the same device, then through the whole filesystem from there
 * outwards (a file closed before it was looked for is found by its inode number in its
 * directory's entries). On ext2/3/4 a file is first opened by its inode number (a file handle,
 * as root): one deleted is known gone at once, and one whose name the kernel has cached is
 * named by it. Only filesystems on block devices are read (major number not 0): a
 * FUSE, NFS or tmpfs file is named while it is open or mapped. A file that one whole walk
 * begun after it was asked for did not find (deleted, or out of reach) is not looked for
 * again until some process opens it. Never blocks; false when no child could be started
 * (said once by the caller's inode_names_get falling back).
 */
bool inode_names_ask(struct inode_names *names, const struct file_id *ids, size_t n);
/*
 * inode_names_ask, then waits for the names for at most budget_ns or until *stop is set; the
 * child it starts runs at the caller's priority (it is waited for), not in the background's.
 * Hints set before (names->hints) are tried first: a hint's path that is still its file, on a
 * block device, names it; when every file asked has a name so, the child reads neither the
 * processes nor any directory.
 */
void inode_names_resolve(struct inode_names *names, const struct file_id *ids, size_t n, uint64_t budget_ns,
			 volatile sig_atomic_t *stop);
/*
 * The path known now for a file (valid until inode_names_free), or "dev MAJ:MIN inode N" in
 * fallback, which is returned.
 */
const char *inode_names_get(struct inode_names *names, dev_t dev, uint64_t ino, char *fallback, size_t len);
/* Ends the child (killed, never waited for: it may be stuck in a filesystem) and the thread. */
void inode_names_free(struct inode_names *names);

#endif
