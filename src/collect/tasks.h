/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tasks.h: every thread of the live system, from /proc/PID/task/TID: state, what it waits on, its context switches. */
#ifndef IOLENS_COLLECT_TASKS_H
#define IOLENS_COLLECT_TASKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect/procfs.h"

/*
 * Calls found(pid, task) for every thread of every process (pid: the thread group, task->pid:
 * the thread). Threads that end while they are read are passed over. Returns how many were seen.
 */
size_t tasks_scan(void (*found)(pid_t pid, const struct proc_task *task, void *context), void *context);
/* Where a sleeping thread waits (/proc/PID/task/TID/wchan: a kernel function), "" when the kernel does not say. */
void task_wchan(pid_t pid, pid_t tid, char *name, size_t size);
/* Its voluntary + involuntary context switches: 0, or -errno (it is gone). */
int task_switches(pid_t pid, pid_t tid, uint64_t *switches);

#endif
