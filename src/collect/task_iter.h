/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * task_iter.h: every thread of the live system in one read, from eBPF's task iterator
 * (tasks.bpf.c): what tasks_scan and each process's /proc/PID/io say, without opening a file
 * a thread. Root, a kernel with BTF, and this process's pid namespace the kernel's first.
 */
#ifndef IOLENS_COLLECT_TASK_ITER_H
#define IOLENS_COLLECT_TASK_ITER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "collect/procfs.h"

struct task_iter {
	/* Every thread: its group (pid) and, in task, what its /proc/PID/task/TID/stat says of
	 * pid (the thread), comm, state and ppid, with its process's start_time (ticks); the other
	 * fields unknown. */
	struct task_iter_thread {
		pid_t pid;
		struct proc_task task;
	} *threads;
	size_t nthreads;
	/* Every process but this one, by pid: what proc_io_sample_read says of it (none when the
	 * kernel keeps no I/O accounting). */
	struct proc_io_sample *procs;
	size_t nprocs;
	/* The processes that ended since the last run, by pid: their counts as they ended (an end
	 * after this run's rows is one of a process in them). exits_lost: the ring buffer had no
	 * room for some since. */
	struct proc_io_sample *exits;
	size_t nexits;
	bool exits_lost;
};

/* Loads the iterator: 0, or -errno with why said (the caller reads /proc instead). */
int task_iter_start(const char **why);
/* One run: 0, or -errno (not started, or the ids are not /proc's); task_iter_free after. */
int task_iter_read(struct task_iter *out);
/*
 * One run that keeps only the threads in uninterruptible sleep (the kernel's task walk the same,
 * a row for a few): threads and procs are theirs alone, exits all of them as task_iter_read's.
 */
int task_iter_read_blocked(struct task_iter *out);
void task_iter_free(struct task_iter *it);
/* A file a process has open with O_DIRECT, a regular file or a block device. */
struct task_iter_fd {
	pid_t pid;
	int fd;
};
/*
 * Every process's files open with O_DIRECT (what /proc/PID/fdinfo/FD's flags say), by pid, in
 * one read: 0 with *out to free, or -errno (not started, or the ids are not /proc's).
 */
int task_iter_direct_fds(struct task_iter_fd **out, size_t *n);
/*
 * How many threads sleep in D now (every CPU's runqueue count summed, as the load average counts
 * them; one system call), or -errno when this kernel cannot say (the walk is then the only way).
 * A sum read CPU after CPU may miss a thread that went to sleep during it, never one asleep since.
 */
long task_iter_blocked(void);
/*
 * One look at the system, in one system call: the threads in D (as task_iter_blocked; -errno
 * when not known) and the pages dirty and under writeback (/proc/vmstat's nr_dirty and
 * nr_writeback; -1 when not known). 0, or -errno when there is no look at all.
 */
struct task_iter_look {
	long blocked;
	int64_t dirty, writeback;
};
int task_iter_look(struct task_iter_look *out);
void task_iter_stop(void);

#endif
