/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * uring_open.c: opens files with O_DIRECT through io_uring (IORING_OP_OPENAT, no open system call),
 * reads each once, closes it: the opens the doctor tests hold odirect's eBPF to.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One IORING_OP_OPENAT of path with flags, waited for: the descriptor, or -errno. */
static int uring_openat(struct io_uring *ring, const char *path, int flags)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	int rc;

	if (!sqe)
		return -EBUSY;
	io_uring_prep_openat(sqe, AT_FDCWD, path, flags, 0);
	if ((rc = io_uring_submit(ring)) < 0 || (rc = io_uring_wait_cqe(ring, &cqe)) < 0)
		return rc;
	rc = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return rc;
}

/*
 * uring_open DONE FILE...: each FILE opened O_DIRECT through io_uring (relative paths from the
 * working directory), its first 4 KiB read, closed; then DONE created, and the program waits
 * for its standard input to close (so that the test looks while it lives).
 */
int main(int argc, char **argv)
{
	struct io_uring ring;
	void *buf;
	int rc, done;

	if (argc < 3) {
		fprintf(stderr, "usage: uring_open DONE FILE...\n");
		return 2;
	}
	if ((rc = io_uring_queue_init(4, &ring, 0)) < 0) {
		fprintf(stderr, "uring_open: io_uring_queue_init: %s\n", strerror(-rc));
		return 1;
	}
	if (posix_memalign(&buf, 4096, 4096) != 0) /* O_DIRECT wants aligned memory */
		return 1;
	for (int i = 2; i < argc; i++) {
		int fd = uring_openat(&ring, argv[i], O_RDONLY | O_DIRECT);

		if (fd < 0) {
			fprintf(stderr, "uring_open: %s: %s\n", argv[i], strerror(-fd));
			return 1;
		}
		if (pread(fd, buf, 4096, 0) < 0) {
			fprintf(stderr, "uring_open: %s: %s\n", argv[i], strerror(errno));
			return 1;
		}
		close(fd);
	}
	io_uring_queue_exit(&ring);
	if ((done = open(argv[1], O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) >= 0)
		close(done);
	while (read(0, buf, 4096) > 0)
		;
	return 0;
}
