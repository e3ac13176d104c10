/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * direct_reads.c: what processes holding an O_DIRECT descriptor read from storage, from /proc:
 * pages pgpgin counts that no cache took.
 */
#include "collect/direct_reads.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>

#include "collect/fdinfo.h"
#include "collect/sysroot.h"
#include "common/util.h"

bool proc_holds_direct(pid_t pid)
{
	char path[64];
	struct dirent *entry;
	bool direct = false;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if (!(dir = sysroot_opendir(path)))
		return false;
	while (!direct && (entry = readdir(dir))) {
		struct fdinfo info;
		/* a descriptor's name is a number as a pid's is; 0 is not one */
		pid_t fd = proc_pid_name(entry->d_name);

		if (fd > 0 || (entry->d_name[0] == '0' && !entry->d_name[1]))
			direct = fdinfo_read(pid, fd, &info) == 0 && (info.flags & O_DIRECT);
	}
	closedir(dir);
	return direct;
}

int direct_reads_update(struct direct_reads *d)
{
	struct proc_io_sample *now = NULL;
	struct proc_io_delta *deltas;
	size_t n = 0, capacity = 0;
	struct proc_pids pids;
	bool *known;
	pid_t pid;
	uint64_t ticks = proc_io_rounds_ticks_now(); /* the round's start: before its listing */
	int rc = proc_pids_open(&pids, PROC_PIDS_NOT_SELF);

	if (rc != 0)
		return rc;
	while ((pid = proc_pids_next(&pids))) {
		if (n == capacity) {
			capacity = capacity ? 2 * capacity : 256;
			now = xrealloc(now, capacity * sizeof(*now));
		}
		if (proc_io_sample_read(pid, &now[n]) == 0)
			n++;
	}
	proc_pids_close(&pids);
	if (n > 1)
		qsort(now, n, sizeof(*now), proc_io_sample_by_pid);
	deltas = xcalloc(n ? n : 1, sizeof(*deltas));
	known = xcalloc(n ? n : 1, sizeof(*known));
	/* A reaped child's counts are taken off its parent, which may hold no O_DIRECT descriptor. */
	proc_io_rounds_take(&d->rounds, now, n, ticks, proc_ignores_sigchld, NULL, deltas, known);
	for (size_t i = 0; i < n; i++) /* fdinfo only for those that read from storage */
		if (known[i] && deltas[i].read_bytes && proc_holds_direct(now[i].pid))
			d->bytes += deltas[i].read_bytes;
	free(known);
	free(deltas);
	free(now);
	return 0;
}

void direct_reads_free(struct direct_reads *d)
{
	proc_io_rounds_free(&d->rounds);
	d->bytes = 0;
}
