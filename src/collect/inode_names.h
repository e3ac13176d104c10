/* inode_names.h: a path for a (device, inode) that eBPF counted, found among the files processes have open or mapped. */
#ifndef IOLENS_COLLECT_INODE_NAMES_H
#define IOLENS_COLLECT_INODE_NAMES_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct file_id {
	dev_t dev;
	uint64_t ino;
};

struct inode_names {
	struct inode_name {
		dev_t dev;
		uint64_t ino;
		char *path;
	} *names;               /* a hash table: capacity slots, a path in count of them */
	size_t count, capacity;
	unsigned long scan_from; /* the pid the scan of open files goes on from next round */
	pid_t children[8];       /* directory readers killed for their time, reaped later */
};

/*
 * Looks for paths for these files, each round (an interval), for at most budget_ns or until
 * *stop is set (Ctrl-C): the files processes have open and mapped (read again each round, so
 * a file renamed while open gets its new path; where the budget ends the next round goes on),
 * then, for what is still unnamed, the directories beside known files on the same device (a
 * log beside its rotated twin, small files read one after another), in one child process
 * that is killed when its time is up (a directory of a hung FUSE or NFS server never answers).
 * Names found later are given later; inode_names_get says what is known now.
 */
void inode_names_resolve(struct inode_names *names, const struct file_id *ids, size_t n, uint64_t budget_ns,
			 volatile sig_atomic_t *stop);
/* The path known for a file, or "dev MAJ:MIN inode N" in fallback, which is returned. No I/O. */
const char *inode_names_get(const struct inode_names *names, dev_t dev, uint64_t ino, char *fallback, size_t len);
void inode_names_free(struct inode_names *names);

#endif
