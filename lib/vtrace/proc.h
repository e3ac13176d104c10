/* SPDX-License-Identifier: MIT */
/* proc.h: a process's start time from /proc/PID/stat, which tells a live writer from a reused pid. */
#ifndef VTRACE_PROC_H
#define VTRACE_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Field 22 (starttime) of a /proc/PID/stat line, and field 3 (the state letter: Z for a
 * zombie) when state is not NULL; 0, or -EINVAL when the text is not one.
 */
int vtrace_parse_stat_start_time(const char *text, size_t len, uint64_t *start_time);
int vtrace_parse_stat(const char *text, size_t len, uint64_t *start_time, char *state);
/* The same, read from procfs_root/PID/stat; -errno (ENOENT: no such process). */
int vtrace_proc_start_time(const char *procfs_root, pid_t pid, uint64_t *start_time);
int vtrace_proc_stat(const char *procfs_root, pid_t pid, uint64_t *start_time, char *state);

/* Whether nobody holds a segment's write lock (VT_FLAG_LOCKED): 1 nobody (stale), 0 held, -errno. */
int vtrace_segment_unlocked(int fd);

#endif
