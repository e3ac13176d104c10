/* SPDX-License-Identifier: MIT */
/*
 * proc.c: a process's start time and state from /proc/PID/stat, read carefully (the command name
 * may hold anything), and a segment's lock.
 */
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int vtrace_parse_stat_start_time(const char *text, size_t len, uint64_t *start_time)
{
	return vtrace_parse_stat(text, len, start_time, NULL);
}

int vtrace_parse_stat(const char *text, size_t len, uint64_t *start_time, char *state)
{
	const char *end = text + len, *p = NULL;
	unsigned field = 2; /* the comm, in parentheses, is field 2 */
	uint64_t value = 0;
	int digits = 0;

	/* The last ')' ends the comm, whatever it contains. */
	for (const char *q = text; q < end; q++)
		if (*q == ')')
			p = q;
	if (!p)
		return -EINVAL;
	if (state) { /* ") S ": the letter after the comm */
		if (end - p < 3 || p[1] != ' ' || p[2] < 'A' || p[2] > 'z')
			return -EINVAL;
		*state = p[2];
	}
	for (p++; p < end && field < 22; p++)
		if (*p == ' ')
			field++;
	if (field != 22)
		return -EINVAL;
	for (; p < end && *p >= '0' && *p <= '9'; p++, digits++) {
		if (value > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		value = value * 10 + (uint64_t)(*p - '0');
	}
	if (!digits || (p < end && *p != ' ' && *p != '\n'))
		return -EINVAL;
	*start_time = value;
	return 0;
}

int vtrace_proc_start_time(const char *procfs_root, pid_t pid, uint64_t *start_time)
{
	return vtrace_proc_stat(procfs_root, pid, start_time, NULL);
}

int vtrace_proc_stat(const char *procfs_root, pid_t pid, uint64_t *start_time, char *state)
{
	char path[512], text[1024];
	ssize_t got;
	int fd, rc;

	snprintf(path, sizeof(path), "%s/%d/stat", procfs_root, (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	got = read(fd, text, sizeof(text));
	rc = got < 0 ? -errno : vtrace_parse_stat(text, (size_t)got, start_time, state);
	close(fd);
	return rc;
}

int vtrace_segment_unlocked(int fd)
{
	struct flock lock = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };

	if (fcntl(fd, F_OFD_GETLK, &lock) != 0)
		return -errno;
	/* Only the writer's write lock: a reader of a group-readable segment can take a read lock. */
	return lock.l_type != F_WRLCK;
}
