/* SPDX-License-Identifier: GPL-2.0-or-later */
/* target.h: the file or block device a benchmark runs on: made and laid out, checked for safety, removed after. */
#ifndef IOLENS_BENCH_TARGET_H
#define IOLENS_BENCH_TARGET_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "workload/engine.h"

struct target_request {
	const char *arg;       /* a directory (a new file in it), a new or existing file, a block device; NULL: "." */
	bool writes;           /* the runs write */
	bool force;            /* an existing file or a block device may be written */
	bool direct;           /* O_DIRECT will be used */
	uint64_t size;         /* bytes to use; 0: the default for a new file, the whole of an existing one */
	enum bench_pattern pattern; /* of the data a new file is laid out with */
	volatile sig_atomic_t *stop;
	void (*on_layout)(uint64_t done, uint64_t total, void *context); /* progress, may be NULL */
	void *context;
};

struct bench_target {
	char *path;         /* the file or device, as named: for messages only, never opened again */
	int fd;             /* the file or device, opened once (and checked): the runs open it again through
			       /proc/self/fd (fd_reopen), never by name */
	bool created;       /* made by bench: removed by bench_target_remove, if its name still names it */
	int dir_fd;         /* with created: the directory it was made in, and its name there */
	char name[256];
	dev_t file_dev;     /* the file or device opened */
	ino_t file_ino;
	bool extended;      /* an existing file bench made longer: put back to original_size by bench_target_remove */
	uint64_t original_size;
	bool block_device;
	int hold_fd;        /* a block device bench writes, open O_EXCL for the whole run; -1 otherwise */
	uint64_t size;      /* bytes the runs may use, from offset 0 */
	dev_t disk;         /* the block device whose /proc/diskstats line shows the I/O; 0 when none */
	uint32_t dio_mem_align, dio_offset_align; /* statx's O_DIRECT alignment; 0 when unknown */
	char fs_type[16];   /* "ext4", "tmpfs", ...: for messages */
};

#define BENCH_DEFAULT_SIZE (1ull << 30)

/*
 * Finds or makes the target and lays a new file out (written whole, synced, dropped from
 * the cache), refusing what must not be written. The path is resolved once (path_walk):
 * who else can change where it leads is said, and a write is refused where they could lead
 * it somewhere they could not write themselves. 0, or EXIT_FAIL after saying why on stderr,
 * with nothing left behind. A file being made is published to bench_target_signal_remove
 * as it is made, so a second Ctrl-C still removes it.
 */
int bench_target_prepare(const struct target_request *request, struct bench_target *target);
/*
 * Before and after each run on a block device it writes: 0 while no signature (filesystem,
 * partition table, RAID member...) appeared on it; else says so and EXIT_FAIL, and the run stops.
 */
int bench_target_recheck(const struct bench_target *target);
/*
 * Removes the file when bench made it and its name still names it (else empties it, and says
 * so); puts an extended file back to its size; closes and frees the target.
 */
void bench_target_remove(struct bench_target *target);
/* For a signal handler (async-signal-safe): removes the file being made, if its name still names it. */
void bench_target_signal_remove(void);

/*
 * What the filesystem of fd (O_PATH will do) calls itself, from its statfs magic: "tmpfs",
 * "ext4", "xfs", "btrfs", ...; "unknown" otherwise. tmpfs is set when it keeps files in memory.
 */
const char *bench_fs_type(int fd, bool *tmpfs);

#endif
