/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tasks.c: every thread of the live system, from /proc/PID/task/TID (doctor's D-state and throttled-writer rules). */
#include "collect/tasks.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/sysroot.h"

/* A small /proc file of one thread into buf (NUL-terminated): its length, or -errno. */
static ssize_t read_task_file(pid_t pid, pid_t tid, const char *name, char *buf, size_t size)
{
	char path[96];

	snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", (int)pid, (int)tid, name);
	return sysroot_read_small(path, buf, size);
}

size_t tasks_scan(void (*found)(pid_t pid, const struct proc_task *task, void *context), void *context)
{
	struct proc_pids pids;
	size_t count = 0;
	pid_t pid;

	proc_pids_open(&pids, 0);
	while ((pid = proc_pids_next(&pids))) {
		char path[64], text[1024];
		struct dirent *thread;
		DIR *threads;

		snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
		if (!(threads = sysroot_opendir(path)))
			continue;
		while ((thread = readdir(threads))) {
			pid_t tid = proc_pid_name(thread->d_name);
			struct proc_task task;
			ssize_t length;

			if (!tid || (length = read_task_file(pid, tid, "stat", text, sizeof(text))) <= 0 ||
			    proc_task_parse(text, (size_t)length, &task) != 0)
				continue;
			found(pid, &task, context);
			count++;
		}
		closedir(threads);
	}
	proc_pids_close(&pids);
	return count;
}

void task_wchan(pid_t pid, pid_t tid, char *name, size_t size)
{
	char text[128];
	ssize_t length = read_task_file(pid, tid, "wchan", text, sizeof(text));

	/* "0" when it runs or the kernel hides it (kptr_restrict, no CONFIG_KALLSYMS). */
	if (length <= 0 || !strcmp(text, "0"))
		text[0] = '\0';
	text[strcspn(text, "\n")] = '\0';
	snprintf(name, size, "%s", text);
}

int task_switches(pid_t pid, pid_t tid, uint64_t *switches)
{
	char text[16384]; /* the switches come last, after masks that grow with the machine */
	ssize_t length = read_task_file(pid, tid, "status", text, sizeof(text));

	if (length < 0)
		return (int)length;
	return proc_switches_parse(text, (size_t)length, switches);
}
