/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * taskrows.c: what doctor reads of every process and thread, from eBPF's task iterator
 * (collect/task_iter.c), or with --proc from /proc as tasks_scan and proc_io_sample_read read
 * it, for tests/cli/task_iter.sh to hold the one to the other. One line a process:
 *   proc PID PPID START_TICKS RCHAR READ_BYTES WRITE_BYTES COMM
 * one a thread:
 *   thread PID TID STATE COMM
 * and one a file a process has open with O_DIRECT (a regular file or a block device):
 *   direct PID FD
 * Exit status 0, 1 when the iterator could not be loaded or read (said on stderr).
 * taskrows --vfork SECONDS: a parent waiting in D (a vfork's, killable) for SECONDS, its child asleep.
 * taskrows --exits: loads the iterator, says "ready", reads a line of stdin, then prints the
 * processes that ended meanwhile as eBPF saw them end, one line each:
 *   exit PID PPID START_TICKS RCHAR READ_BYTES WRITE_BYTES REAP COMM
 * REAP: "parent" (its parent takes its counts as it reaps it), or "auto" (the parent ignores SIGCHLD).
 * taskrows --blocked: how many threads are in D now, as task_iter_blocked counts them.
 * taskrows --in-d: the thread lines of a run for the threads in D alone (task_iter_read_blocked).
 * taskrows --pages: the pages dirty and under writeback as task_iter_look counts them, each
 * between /proc/vmstat's nr_dirty and nr_writeback read (by stdio) just before and just after:
 *   dirty BEFORE LOOK AFTER
 *   writeback BEFORE LOOK AFTER
 */
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "collect/fdinfo.h"
#include "collect/procfs.h"
#include "collect/sysroot.h"
#include "collect/task_iter.h"
#include "collect/tasks.h"

static void print_proc(const struct proc_io_sample *p)
{
	printf("proc %d %d %llu %llu %llu %llu %s\n", (int)p->pid, (int)p->ppid, (unsigned long long)p->start_time,
	       (unsigned long long)p->io.rchar, (unsigned long long)p->io.read_bytes,
	       (unsigned long long)p->io.write_bytes, p->comm);
}

static void print_thread(pid_t pid, const struct proc_task *task, void *context)
{
	(void)context;
	printf("thread %d %d %c %s\n", (int)pid, task->pid, task->state, task->comm);
}

/* /proc/vmstat's nr_dirty and nr_writeback, read plainly: the truth task_iter_look is held to. */
static bool vmstat_pages(long long pages[2])
{
	FILE *f = fopen("/proc/vmstat", "r");
	char name[64];
	long long value;
	int found = 0;

	if (!f)
		return false;
	while (fscanf(f, "%63s %lld", name, &value) == 2) {
		if (!strcmp(name, "nr_dirty"))
			pages[0] = value, found |= 1;
		else if (!strcmp(name, "nr_writeback"))
			pages[1] = value, found |= 2;
	}
	fclose(f);
	return found == 3;
}

int main(int argc, char **argv)
{
	struct task_iter it;
	const char *why = NULL;
	bool in_d;
	int rc;

	if (argc > 2 && !strcmp(argv[1], "--vfork")) {
		struct timespec nap = { .tv_sec = atoi(argv[2]) };

		if (vfork() == 0) { /* the child borrows the parent's memory: a system call, then _exit */
			syscall(SYS_nanosleep, &nap, NULL);
			_exit(0);
		}
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--blocked")) {
		long blocked;

		if ((rc = task_iter_start(&why)) != 0 || (blocked = task_iter_blocked()) < 0) {
			fprintf(stderr, "taskrows: %s\n", why ? why : strerror(rc ? -rc : (int)-blocked));
			return 1;
		}
		printf("%ld\n", blocked);
		task_iter_stop();
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--pages")) {
		long long before[2], after[2];
		struct task_iter_look look;

		if ((rc = task_iter_start(&why)) != 0 || !vmstat_pages(before) || (rc = task_iter_look(&look)) != 0 ||
		    !vmstat_pages(after) || look.dirty < 0) {
			fprintf(stderr, "taskrows: %s\n", why ? why : rc ? strerror(-rc) : "no pages counted");
			return 1;
		}
		printf("dirty %lld %lld %lld\nwriteback %lld %lld %lld\n", before[0], (long long)look.dirty, after[0],
		       before[1], (long long)look.writeback, after[1]);
		task_iter_stop();
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--exits")) {
		char line[64];

		if ((rc = task_iter_start(&why)) != 0 || (rc = task_iter_read(&it)) != 0) {
			fprintf(stderr, "taskrows: %s\n", why ? why : strerror(-rc));
			return 1;
		}
		task_iter_free(&it); /* (the ends before it) */
		printf("ready\n");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin) || (rc = task_iter_read(&it)) != 0) {
			fprintf(stderr, "taskrows: %s\n", rc ? strerror(-rc) : "no line on stdin");
			return 1;
		}
		for (size_t i = 0; i < it.nexits; i++)
			printf("exit %d %d %llu %llu %llu %llu %s %s\n", (int)it.exits[i].pid, (int)it.exits[i].ppid,
			       (unsigned long long)it.exits[i].start_time, (unsigned long long)it.exits[i].io.rchar,
			       (unsigned long long)it.exits[i].io.read_bytes,
			       (unsigned long long)it.exits[i].io.write_bytes,
			       it.exits[i].reap == PROC_REAP_AUTO ? "auto" : it.exits[i].reap ? "parent" : "unknown",
			       it.exits[i].comm);
		if (it.exits_lost)
			printf("lost\n");
		task_iter_free(&it);
		task_iter_stop();
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--proc")) {
		struct proc_pids pids;
		pid_t pid;

		proc_pids_open(&pids, PROC_PIDS_NOT_SELF);
		while ((pid = proc_pids_next(&pids))) {
			struct proc_io_sample p;

			if (proc_io_sample_read(pid, &p) == 0)
				print_proc(&p);
		}
		proc_pids_close(&pids);
		tasks_scan(print_thread, NULL);
		proc_pids_open(&pids, PROC_PIDS_NOT_SELF);
		while ((pid = proc_pids_next(&pids))) {
			char path[64];
			struct dirent *e;
			DIR *dir;

			snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
			if (!(dir = opendir(path)))
				continue;
			while ((e = readdir(dir))) {
				struct fdinfo info;
				struct stat st;
				char link[400];

				snprintf(link, sizeof(link), "%s/%s", path, e->d_name);
				if (e->d_name[0] != '.' && fdinfo_read(pid, atoi(e->d_name), &info) == 0 &&
				    (info.flags & O_DIRECT) && stat(link, &st) == 0 &&
				    (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)))
					printf("direct %d %s\n", (int)pid, e->d_name);
			}
			closedir(dir);
		}
		proc_pids_close(&pids);
		return 0;
	}
	in_d = argc > 1 && !strcmp(argv[1], "--in-d");
	if ((rc = task_iter_start(&why)) != 0 || (rc = in_d ? task_iter_read_blocked(&it) : task_iter_read(&it)) != 0) {
		fprintf(stderr, "taskrows: %s\n", why ? why : strerror(-rc));
		return 1;
	}
	for (size_t i = 0; i < it.nprocs && !in_d; i++)
		print_proc(&it.procs[i]);
	for (size_t i = 0; i < it.nthreads; i++)
		print_thread(it.threads[i].pid, &it.threads[i].task, NULL);
	task_iter_free(&it);
	if (!in_d) {
		struct task_iter_fd *fds;
		size_t n;

		if ((rc = task_iter_direct_fds(&fds, &n)) != 0) {
			fprintf(stderr, "taskrows: %s\n", strerror(-rc));
			return 1;
		}
		for (size_t i = 0; i < n; i++)
			if (fds[i].pid != getpid())
				printf("direct %d %d\n", (int)fds[i].pid, fds[i].fd);
		free(fds);
	}
	task_iter_stop();
	return 0;
}
