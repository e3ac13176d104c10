/* SPDX-License-Identifier: MIT */
/* passthrough.h: what the parts of fuse-passthrough share: its state, its inode table and its traced ops. */
#ifndef FUSE_PASSTHROUGH_H
#define FUSE_PASSTHROUGH_H

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "vtrace.h"

/* The ops traced, in the order of their FUSE opcode; optable.c names and numbers them. */
enum pt_op {
	PT_LOOKUP, PT_FORGET, PT_GETATTR, PT_SETATTR, PT_READLINK, PT_SYMLINK, PT_MKNOD, PT_MKDIR,
	PT_UNLINK, PT_RMDIR, PT_RENAME, PT_LINK, PT_OPEN, PT_READ, PT_WRITE, PT_STATFS, PT_RELEASE,
	PT_FSYNC, PT_SETXATTR, PT_GETXATTR, PT_LISTXATTR, PT_REMOVEXATTR, PT_FLUSH, PT_OPENDIR,
	PT_READDIR, PT_RELEASEDIR, PT_FSYNCDIR, PT_GETLK, PT_SETLK, PT_SETLKW, PT_ACCESS, PT_CREATE,
	PT_BATCH_FORGET, PT_FALLOCATE, PT_READDIRPLUS, PT_RENAME2, PT_LSEEK, PT_COPY_FILE_RANGE,
	PT_OP_COUNT
};

extern const struct vtrace_op pt_op_table[PT_OP_COUNT];
/* The op called NAME ("FUSE_MKNOD", "fuse_mknod" or "mknod"), or -1. */
int pt_op_find(const char *name);

/* A file or directory of the source tree, held open with O_PATH while the kernel knows it. */
struct pt_inode {
	int fd;
	dev_t dev;
	ino_t ino;
	uint64_t nlookup;      /* lookups the kernel has not forgotten yet; under the table's lock */
	struct pt_inode *next; /* in its hash chain */
};

struct pt_inodes {
	pthread_mutex_t lock;
	struct pt_inode **buckets;
	size_t bucket_count, count;
	struct pt_inode root;  /* FUSE_ROOT_ID: never forgotten */
};

struct passthrough {
	struct pt_inodes inodes;
	struct vtrace *vt;     /* NULL with --no-vtrace: vtrace_begin and vtrace_end do nothing */
	double timeout;        /* how long the kernel may cache entries and attributes, in seconds */
	bool xattr;            /* pass extended attributes through, rather than ENOSYS */
	int hang_op;           /* --hang-op: the first request of this op waits for SIGUSR1; -1 for none */
	bool hang_taken;       /* that first request came */
	unsigned hang_count;   /* the requests of hang_op held so far, each said on stderr */
	bool hang_all;         /* --hang-all: every request of hang_op waits, until SIGUSR1 */
	int slow_op;           /* --slow-op: while SIGUSR2 has turned it on, this op is slower; -1 for none */
	unsigned slow_ms;      /* by this many milliseconds */
	int slow_seen;         /* the state of --slow-op the last request of that op saw, to say when it changes */
};

/* inodes.c */
int pt_inodes_init(struct pt_inodes *inodes, const char *source);
void pt_inodes_free(struct pt_inodes *inodes);
struct pt_inode *pt_inode(struct passthrough *pt, fuse_ino_t ino);
/* Looks NAME up in PARENT and counts one more lookup of what it finds: 0, or an errno. */
int pt_inode_lookup(struct passthrough *pt, struct pt_inode *parent, const char *name, struct fuse_entry_param *e);
void pt_inode_forget(struct passthrough *pt, struct pt_inode *inode, uint64_t nlookup);

/* ops.c */
extern const struct fuse_lowlevel_ops pt_ops;
/* Async-signal-safe: ends every request that waits for a lock or for --hang-op's release. */
void pt_wake_waiters(void);
/*
 * What the server sends one of its threads to make a blocked fcntl() or flock() return
 * EINTR. Not SIGUSR2, which is --slow-op's toggle and may come from outside at any time.
 */
#define PT_WAKE_SIGNAL SIGRTMIN

/* main.c: set by signal handlers. */
extern volatile sig_atomic_t pt_stopping;     /* SIGINT, SIGTERM or SIGHUP came */
extern volatile sig_atomic_t pt_hang_released; /* SIGUSR1 came */
extern volatile sig_atomic_t pt_slow_on;       /* --slow-op is on: each SIGUSR2 turns it on or off */

#endif
