/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_procmaps.c: /proc/PID/maps lines, and who maps a file, from a recorded /proc tree. */
#include "unit.h"

#include <sys/sysmacros.h>

#include "collect/procmaps.h"
#include "collect/sysroot.h"

#define FIXTURE_ROOT "tests/fixtures/proc-maps" /* a root: its proc/PID/maps and smaps */

static void test_parse_file_line(void **state)
{
	struct procmaps_entry e;
	(void)state;

	assert_true(
	    procmaps_parse_line("55d0c8a28000-55d0c8b9d000 r-xp 00028000 fd:01 1835030    /usr/bin/postgres\n", &e));
	assert_true(e.start == 0x55d0c8a28000ull && e.end == 0x55d0c8b9d000ull);
	assert_string_equal(e.perms, "r-xp");
	assert_int_equal(e.offset, 0x28000);
	assert_int_equal(e.major, 0xfd);
	assert_int_equal(e.minor, 1);
	assert_int_equal(e.inode, 1835030);
	assert_string_equal(e.path, "/usr/bin/postgres\n");
}

static void test_parse_other_lines(void **state)
{
	struct procmaps_entry e;
	(void)state;

	assert_true(procmaps_parse_line("7f1a2c000000-7f1a2c021000 rw-p 00000000 00:00 0 ", &e));
	assert_int_equal(e.inode, 0);
	assert_string_equal(e.path, "");
	assert_true(procmaps_parse_line("7f00-7f01 r--p 00000000 103:02 77 /mnt/nvme/db (deleted)", &e));
	assert_int_equal(e.major, 0x103);
	assert_string_equal(e.path, "/mnt/nvme/db (deleted)");
	assert_true(procmaps_parse_line("7f00-7f01 r--p 00000000 fd:01 12", &e)); /* no path, no space */

	assert_false(procmaps_parse_line("", &e));
	assert_false(procmaps_parse_line("Size:               1024 kB", &e));
	assert_false(procmaps_parse_line("AnonHugePages:         0 kB", &e));
	assert_false(procmaps_parse_line("VmFlags: rd sh mr", &e));
	assert_false(procmaps_parse_line("7f00-7f01 r--p", &e));
	assert_false(procmaps_parse_line("7f00-7f01 r-p 0 fd:01 12", &e));
	assert_false(procmaps_parse_line("7f00-7f01 r--p 0 fd01 12", &e));
	assert_false(procmaps_parse_line("7f00-7f01 r--p 0 fd:01 x12", &e));
	assert_false(procmaps_parse_line("7f00-7f01 r--p 0 fd:01 12x", &e));
	assert_false(procmaps_parse_line("11112222333344445-7f01 r--p 0 fd:01 12", &e)); /* 17 hex digits */
	assert_false(procmaps_parse_line("7f00-7f01 r--p 0 fd:01 123456789012345678901", &e));
	assert_false(procmaps_parse_line("7f00-7f01 r--p 0 1000:01 12", &e)); /* major past 12 bits */
}

static void test_find_mappers(void **state)
{
	struct mapped_files files;
	pid_t pids[2];
	(void)state;

	assert_int_equal(sysroot_set(FIXTURE_ROOT), 0);
	assert_int_equal(mapped_files_load(&files), 0);
	/* postgres: two mappings in one process count once. */
	assert_int_equal(mapped_files_find(&files, makedev(0xfd, 1), 1835030, pids, 2), 1);
	assert_int_equal(pids[0], 100);
	/* the big file: three processes; two fit, three are counted. */
	assert_int_equal(mapped_files_find(&files, makedev(0xfd, 1), 2000001, pids, 2), 3);
	assert_int_equal(pids[0], 100);
	assert_int_equal(pids[1], 200);
	assert_int_equal(mapped_files_find(&files, makedev(0x103, 2), 77, pids, 2), 1);
	assert_int_equal(pids[0], 200);
	assert_int_equal(mapped_files_find(&files, makedev(0xfd, 1), 99, pids, 2), 0);
	assert_int_equal(mapped_files_find(&files, makedev(0xfd, 2), 1835030, pids, 2), 0);
	mapped_files_free(&files);
	assert_int_equal(sysroot_set("tests/fixtures"), 0); /* a root with no proc */
	assert_true(mapped_files_load(&files) < 0);
	assert_int_equal(sysroot_set("/"), 0);
}

static void test_locked(void **state)
{
	(void)state;
	assert_int_equal(sysroot_set(FIXTURE_ROOT), 0);
	assert_true(procmaps_maps_locked(300, makedev(0xfd, 1), 2000001));
	assert_false(procmaps_maps_locked(300, makedev(0xfd, 1), 1835030));
	/* "lock" is not the "lo" flag */
	assert_false(procmaps_maps_locked(100, makedev(0xfd, 1), 2000001));
	assert_false(procmaps_maps_locked(999, makedev(0xfd, 1), 2000001));
	assert_int_equal(sysroot_set("/"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_file_line),
		cmocka_unit_test(test_parse_other_lines),
		cmocka_unit_test(test_find_mappers),
		cmocka_unit_test(test_locked),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
