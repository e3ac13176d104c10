/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * odirect_reader.c: the O_DIRECT service for the doctor tests: reads a file with O_DIRECT in a
 * loop, as it read its data, until killed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(unsigned long ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* One pass over the file: 0, or 1 with the error said. */
static int read_whole(int fd, const char *path, void *buf, size_t block)
{
	ssize_t got;
	off_t at = 0;

	while ((got = pread(fd, buf, block, at)) > 0)
		at += got;
	if (got < 0) {
		fprintf(stderr, "odirect_reader: %s: %s\n", path, strerror(errno));
		return 1;
	}
	return 0;
}

/*
 * odirect_reader FILE READY [BLOCK [PAUSE_MS [HOLD_MS]]]: after the first pass, creates READY;
 * BLOCK bytes a read (default 1 MiB). Without PAUSE_MS the file stays open, read over and over;
 * with it, as the O_DIRECT service: open, read it whole, keep it open HOLD_MS more (default 0),
 * close, sleep PAUSE_MS, again.
 */
int main(int argc, char **argv)
{
	size_t block = argc > 3 ? strtoul(argv[3], NULL, 10) : 1u << 20;
	bool cycle = argc > 4;
	unsigned long pause_ms = cycle ? strtoul(argv[4], NULL, 10) : 0,
		      hold_ms = argc > 5 ? strtoul(argv[5], NULL, 10) : 0;
	void *buf;
	int fd = -1, ready;

	if (argc < 3 || block == 0 || block % 4096) {
		fprintf(stderr, "usage: odirect_reader FILE READY [BLOCK, a multiple of 4096 [PAUSE_MS [HOLD_MS]]]\n");
		return 2;
	}
	if (posix_memalign(&buf, 4096, block) != 0) /* O_DIRECT wants aligned memory */
		return 1;
	for (unsigned long pass = 0;; pass++) {
		if (fd < 0 && (fd = open(argv[1], O_RDONLY | O_DIRECT)) < 0) {
			fprintf(stderr, "odirect_reader: %s: %s\n", argv[1], strerror(errno));
			return 1;
		}
		if (read_whole(fd, argv[1], buf, block) != 0)
			return 1;
		if (pass == 0 && (ready = open(argv[2], O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) >= 0)
			close(ready);
		if (cycle) {
			sleep_ms(hold_ms);
			close(fd);
			fd = -1;
			sleep_ms(pause_ms);
		}
	}
}
