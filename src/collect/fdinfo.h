/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fdinfo.h: /proc/PID/fdinfo/N, how a process has a file open (its flags tell O_DIRECT, O_RDWR ...). */
#ifndef IOLENS_FDINFO_H
#define IOLENS_FDINFO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct fdinfo {
	uint64_t pos;
	unsigned flags;  /* open(2) flags, as the kernel prints them in octal */
	uint64_t mnt_id;
	uint64_t ino;    /* 0 when the kernel does not say (before 5.14) */
};

/* Parses the text of an fdinfo file; 0, or -EINVAL when pos or flags is missing or malformed. */
int fdinfo_parse(const char *text, size_t len, struct fdinfo *out);
/* Reads ROOT/proc/PID/fdinfo/FD; 0 or -errno. */
int fdinfo_read(pid_t pid, int fd, struct fdinfo *out);

#endif
