/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_fdinfo.c: /proc/PID/fdinfo/N as the kernel writes it, and what it must refuse. */
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "collect/fdinfo.h"

static void test_parse(void **state)
{
	static const char text[] = "pos:\t4096\nflags:\t0140002\nmnt_id:\t24\nino:\t1234\n";
	struct fdinfo info;
	(void)state;

	assert_int_equal(fdinfo_parse(text, sizeof(text) - 1, &info), 0);
	assert_int_equal(info.pos, 4096);
	assert_int_equal(info.flags, 0140002);
	assert_true(info.flags & O_DIRECT);
	assert_int_equal(info.flags & O_ACCMODE, O_RDWR);
	assert_int_equal(info.mnt_id, 24);
	assert_int_equal(info.ino, 1234);
}

static void test_extra_lines(void **state)
{
	/* eventfd, inotify and epoll add lines of their own; old kernels have no ino. */
	static const char text[] = "pos:\t0\nflags:\t02\nmnt_id:\t15\neventfd-count:   0\ntfd:  5 events: 19\n";
	struct fdinfo info;
	(void)state;

	assert_int_equal(fdinfo_parse(text, sizeof(text) - 1, &info), 0);
	assert_int_equal(info.flags, 2);
	assert_int_equal(info.ino, 0);
}

static void test_refused(void **state)
{
	struct fdinfo info;
	(void)state;

#define REFUSED(text) assert_int_equal(fdinfo_parse(text, sizeof(text) - 1, &info), -EINVAL)
	REFUSED("");
	REFUSED("pos:\t0\n");                       /* no flags */
	REFUSED("flags:\t02\n");                    /* no pos */
	REFUSED("pos:\t0\nflags:\t08\n");           /* 8 is not octal */
	REFUSED("pos:\tx\nflags:\t02\n");
	REFUSED("pos:\t\nflags:\t02\n");
	REFUSED("pos:\t0\nflags:\t0777777777777\n"); /* more than 32 bits */
	REFUSED("pos:\t99999999999999999999999\nflags:\t02\n");
	/* A line with no end is read up to the end of the text. */
	assert_int_equal(fdinfo_parse("pos:\t1\nflags:\t01", 16, &info), 0);
	assert_int_equal(info.flags, 1);
}

static void test_read_own(void **state)
{
	struct fdinfo info;
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	(void)state;

	assert_true(fd >= 0);
	assert_int_equal(fdinfo_read(getpid(), fd, &info), 0);
	assert_int_equal(info.flags & O_ACCMODE, O_RDONLY);
	assert_true(info.flags & O_CLOEXEC);
	close(fd);
	assert_int_equal(fdinfo_read(getpid(), 999999, &info), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_extra_lines),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_read_own),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
