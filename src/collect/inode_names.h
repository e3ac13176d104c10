/* inode_names.h: a path for a (device, inode) that eBPF counted, found among the files processes have open or mapped. */
#ifndef IOLENS_COLLECT_INODE_NAMES_H
#define IOLENS_COLLECT_INODE_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct inode_names {
	struct inode_name {
		dev_t dev;
		uint64_t ino;
		char *path;
	} *names;               /* a hash table: capacity slots, a path in count of them */
	size_t count, capacity;
	bool looked; /* the open and mapped files were read in this round */
};

/*
 * The path of a file: known already, or found among every process's open files and
 * mappings (read once a round), or beside a file known on the same device (a log beside
 * its rotated twin). Else "dev MAJ:MIN inode N" in fallback, which is returned.
 */
const char *inode_names_find(struct inode_names *names, dev_t dev, uint64_t ino, char *fallback, size_t len);
/* A new round (an interval): files opened since may be looked for again. */
void inode_names_round(struct inode_names *names);
void inode_names_free(struct inode_names *names);

#endif
