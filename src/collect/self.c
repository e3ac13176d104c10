/* SPDX-License-Identifier: GPL-2.0-or-later */
/* self.c: this process as Prometheus client libraries describe their own (process_*), from /proc/self and getrlimit. */
#include "collect/self.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "collect/sysroot.h"
#include "common/util.h"

static void note(int *first, int rc)
{
	if (rc && !*first)
		*first = rc;
}

int process_self_read(struct process_self *out)
{
	char text[4096]; /* a stat line is some 300 bytes */
	long ticks = sysconf(_SC_CLK_TCK);
	struct proc_task task;
	struct procstat stat;
	struct rlimit limit;
	struct dirent *de;
	ssize_t len;
	DIR *fds;
	int first = 0, rc;

	*out = (struct process_self){ .cpu_seconds = -1,
				      .resident_bytes = PROCFS_UNKNOWN,
				      .virtual_bytes = PROCFS_UNKNOWN,
				      .open_fds = PROCFS_UNKNOWN,
				      .max_fds = PROCFS_UNKNOWN,
				      .start_time_seconds = -1 };
	len = read_small_at(AT_FDCWD, "/proc/self/stat", text, sizeof(text)); /* this process, whatever the sysroot */
	if (len < 0 || proc_task_parse(text, (size_t)len, &task) != 0) {
		note(&first, len < 0 ? (int)len : -EINVAL);
	} else {
		if (ticks > 0)
			out->cpu_seconds = (double)(task.utime + task.stime) / (double)ticks;
		if (task.rss != PROCFS_UNKNOWN)
			out->resident_bytes = task.rss * page_size();
		out->virtual_bytes = task.vsize;
		if ((rc = procstat_read(&stat)) != 0) {
			note(&first, rc);
		} else {
			if (stat.btime != PROCFS_UNKNOWN && task.start_time != PROCFS_UNKNOWN && ticks > 0)
				out->start_time_seconds = (double)stat.btime + (double)task.start_time / (double)ticks;
			procstat_free(&stat);
		}
	}
	if ((fds = opendir("/proc/self/fd"))) {
		out->open_fds = 0;
		while ((de = readdir(fds)))
			if (de->d_name[0] != '.' && atoi(de->d_name) != dirfd(fds))
				out->open_fds++;
		closedir(fds);
	} else {
		note(&first, -errno);
	}
	if (getrlimit(RLIMIT_NOFILE, &limit) == 0)
		out->max_fds = limit.rlim_cur == RLIM_INFINITY ? PROCFS_UNKNOWN : (uint64_t)limit.rlim_cur;
	else
		note(&first, -errno);
	return first;
}
