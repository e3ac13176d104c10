/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench/stat-cpu.sh's floor: the least a monitor does per sample (sleep, pread each file whole,
 * print one line), to tell iolens's own cost from the kernel's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_FILES 32

static const char usage[] =
	"usage: stat-cpu-floor DELAY COUNT FILE...\n"
	"  COUNT times, DELAY seconds apart (the first at once), reads each FILE whole with pread on\n"
	"  a descriptor kept open, as iolens does, and prints the bytes read on one line. No parsing,\n"
	"  no formatting: what is left is what the kernel charges for the wake-up and the files.\n";

int main(int argc, char **argv)
{
	static char buffer[1 << 16];
	int fds[MAX_FILES];
	char *end;

	if (argc < 3 || argc - 3 > MAX_FILES) {
		fputs(usage, stderr);
		return 2;
	}
	double delay = strtod(argv[1], &end);
	if (*end || !(delay > 0)) {
		fputs(usage, stderr);
		return 2;
	}
	long count = strtol(argv[2], &end, 10);
	if (*end || count < 1) {
		fputs(usage, stderr);
		return 2;
	}
	int file_count = argc - 3;
	for (int i = 0; i < file_count; i++) {
		fds[i] = open(argv[3 + i], O_RDONLY | O_CLOEXEC);
		if (fds[i] < 0) {
			fprintf(stderr, "stat-cpu-floor: %s: %s\n", argv[3 + i], strerror(errno));
			return 1;
		}
	}

	long long step_ns = (long long)(delay * 1e9);
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (long sample = 0; sample < count; sample++) {
		if (sample > 0) {
			long long ns = next.tv_nsec + step_ns;
			next.tv_sec += ns / 1000000000;
			next.tv_nsec = ns % 1000000000;
			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
				;
		}
		long long total = 0;
		for (int i = 0; i < file_count; i++) {
			ssize_t got;
			off_t offset = 0;
			while ((got = pread(fds[i], buffer, sizeof(buffer), offset)) > 0)
				offset += got;
			if (got < 0) {
				fprintf(stderr, "stat-cpu-floor: %s: %s\n", argv[3 + i], strerror(errno));
				return 1;
			}
			total += offset;
		}
		printf("%lld\n", total);
		if (fflush(stdout) != 0)
			return 1;
	}
	return 0;
}
