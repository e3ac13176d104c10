/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * odirect.h: what odirect.bpf.c reports of a file opened with O_DIRECT, shared by the eBPF program
 * and the collector that reads it.
 */
#ifndef IOLENS_BPF_ODIRECT_H
#define IOLENS_BPF_ODIRECT_H

#define ODIRECT_PATH_MAX 256
#define ODIRECT_MAX_FILES 16384 /* (process, file) pairs remembered, so that each is reported once */

/* How the descriptor got O_DIRECT. */
enum odirect_call { ODIRECT_NONE, ODIRECT_OPEN, ODIRECT_OPENAT, ODIRECT_OPENAT2, ODIRECT_FCNTL, ODIRECT_URING };

/* A (process, file) pair, reported at its first O_DIRECT open; later opens only counted. */
struct odirect_key {
	__u32 tgid;
	__u32 dev;     /* the kernel's dev_t (major << 20 | minor): the filesystem's, or a block device's own */
	__u64 ino;     /* 0 for a block device */
};

struct odirect_event {
	__u64 ns;      /* CLOCK_MONOTONIC, when the call returned */
	__u64 ino;
	__u32 tgid, tid;
	__u32 dev;
	__u32 flags;   /* the file's f_flags once open, as /proc/PID/fdinfo prints them */
	__s32 fd;      /* the descriptor opened, or given O_DIRECT by fcntl */
	__s32 dirfd;   /* openat's and openat2's directory (AT_FDCWD: the working directory) */
	__u32 call;    /* enum odirect_call */
	__u32 block;   /* 1: a block device */
	__u32 name_only; /* 1: path is the file's own name, without its directory (fcntl and io_uring pass none) */
	__u32 pad;
	char comm[16];
	char path[ODIRECT_PATH_MAX]; /* as the program passed it (relative to dirfd), or the file's name */
};

#endif
