/* odirect_reader.c: the seed's application for tests/cli/doctor.sh: reads a file with O_DIRECT in a loop, as it read its data, until killed. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* odirect_reader FILE READY [BLOCK]: after the first pass, creates READY; BLOCK bytes a read (default 1 MiB). */
int main(int argc, char **argv)
{
	size_t block = argc > 3 ? strtoul(argv[3], NULL, 10) : 1u << 20;
	void *buf;
	int fd, ready;

	if (argc < 3 || block == 0 || block % 4096) {
		fprintf(stderr, "usage: odirect_reader FILE READY [BLOCK, a multiple of 4096]\n");
		return 2;
	}
	if ((fd = open(argv[1], O_RDONLY | O_DIRECT)) < 0) {
		fprintf(stderr, "odirect_reader: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (posix_memalign(&buf, 4096, block) != 0) /* O_DIRECT wants aligned memory */
		return 1;
	for (unsigned long pass = 0;; pass++) {
		ssize_t got;
		off_t at = 0;

		while ((got = pread(fd, buf, block, at)) > 0)
			at += got;
		if (got < 0) {
			fprintf(stderr, "odirect_reader: %s: %s\n", argv[1], strerror(errno));
			return 1;
		}
		if (pass == 0 && (ready = open(argv[2], O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) >= 0)
			close(ready);
	}
}
