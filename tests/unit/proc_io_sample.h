/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proc_io_sample.h: a process's /proc/PID/io as a round of it reads it, for the tests of
 * proc_io_rounds and doctor's io_window.
 */
#ifndef IOLENS_UNIT_PROC_IO_SAMPLE_H
#define IOLENS_UNIT_PROC_IO_SAMPLE_H

#include <stdio.h>

#include "collect/procfs.h"

/*
 * pid, child of ppid, started at start (clock ticks), named comm, that read read_bytes from storage
 * (and as many by calls).
 */
static inline struct proc_io_sample proc(pid_t pid, pid_t ppid, uint64_t start, const char *comm, uint64_t read_bytes)
{
	struct proc_io_sample s = { .pid = pid, .ppid = ppid, .start_time = start };

	snprintf(s.comm, sizeof(s.comm), "%s", comm);
	s.io.rchar = read_bytes;
	s.io.read_bytes = read_bytes;
	return s;
}

#endif
