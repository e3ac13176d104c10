/* SPDX-License-Identifier: GPL-2.0-or-later */
/* odirect.h: files opened with O_DIRECT as it happens, by any process (eBPF on the raw syscall tracepoints). */
#ifndef IOLENS_ODIRECT_H
#define IOLENS_ODIRECT_H

#include <linux/types.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/odirect.h"

/* A process's first O_DIRECT open of a file (or fcntl(F_SETFL) that gave it O_DIRECT). */
struct odirect_open {
	uint64_t ns;        /* CLOCK_MONOTONIC, when the call returned */
	pid_t pid, tid;
	int fd;             /* the descriptor it got */
	int dirfd;          /* what a relative path is relative to (AT_FDCWD: the working directory) */
	unsigned flags;     /* the file's flags once open, as fdinfo's "flags:" */
	const char *call;   /* "open", "openat", "openat2", "fcntl" */
	bool block;         /* a block device (ino 0) */
	dev_t dev;          /* the filesystem's, or the block device's own */
	uint64_t ino;
	char comm[16];
	bool name_only;     /* path is the file's own name (fcntl passes no path) */
	char path[ODIRECT_PATH_MAX]; /* as the process passed it: maybe relative; "" when unreadable */
};

typedef void (*odirect_fn)(const struct odirect_open *open, void *context);

/*
 * Starts watching: loads the program and attaches it to raw_syscalls sys_enter and sys_exit
 * (tp_btf: no tracefs needed). fn is called, from odirect_wait and odirect_drain, once for each
 * process and file: later opens of the same file by the same process are only counted. 0, or
 * -errno with *why saying what is missing (root or CAP_BPF and CAP_PERFMON, BTF, a build with eBPF).
 */
int odirect_start(odirect_fn fn, void *context, const char **why);
/*
 * Until deadline_ns (CLOCK_MONOTONIC) or *stop, calling fn for each open as it comes; a plain sleep
 * when not watching.
 */
void odirect_wait(uint64_t deadline_ns, volatile sig_atomic_t *stop);
/* Calls fn for the opens reported and not yet seen, without waiting. */
void odirect_drain(void);
/* O_DIRECT opens of the file by the process since the start or odirect_forget (0 when not known). */
uint64_t odirect_opens(pid_t pid, dev_t dev, uint64_t ino);
/* First opens that were not reported: the buffer between the kernel and us was full. */
uint64_t odirect_lost(void);
/*
 * Forgets the opens counted so far, as a recorder's next window begins: each file's next open by
 * a process is an event again, and odirect_opens counts from here.
 */
void odirect_forget(void);
void odirect_stop(void);

#endif
