/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_mounts.c: the mount table parsed (escapes undone, options, bad lines), held to getmntent(3)
 * on this machine's own table, and read through a recorded tree.
 */
#include "unit.h"

#include <errno.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/mounts.h"
#include "collect/sysroot.h"

static void test_parse(void **state)
{
	static const char table[] =
		"sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0\n"
		"/dev/vda1 / ext4 rw,relatime 0 0\n"
		"server:/export /mnt/a\\040b\\134c nfs4 ro,vers=4.2 0 0\n"
		"half a line\n"
		"\n"
		"tmpfs /tmp\\011tab tmpfs rw 0 0"; /* the last line without a newline */
	struct mounts m;
	(void)state;

	assert_int_equal(mounts_parse(table, strlen(table), &m), 0);
	assert_int_equal(m.count, 4);
	assert_string_equal(m.list[0].type, "sysfs");
	assert_string_equal(m.list[1].source, "/dev/vda1");
	assert_string_equal(m.list[1].dir, "/");
	/* A space and a backslash of a name, as the kernel escapes them. */
	assert_string_equal(m.list[2].dir, "/mnt/a b\\c");
	assert_string_equal(m.list[2].source, "server:/export");
	assert_string_equal(m.list[3].dir, "/tmp\ttab");
	/* Options are whole words among the commas. */
	assert_true(mount_option(&m.list[2], "ro"));
	assert_false(mount_option(&m.list[1], "ro"));
	assert_true(mount_option(&m.list[0], "relatime"));
	assert_false(mount_option(&m.list[0], "rel"));
	assert_false(mount_option(&m.list[0], "nosuid,nodev"));
	mounts_free(&m);
	assert_int_equal(m.count, 0);

	/* No line well formed: an error, nothing kept; an empty table is none. */
	assert_int_equal(mounts_parse("junk\nmore junk\n", 15, &m), -EINVAL);
	assert_int_equal(m.count, 0);
	assert_int_equal(mounts_parse("", 0, &m), 0);
	assert_int_equal(m.count, 0);
	/* A cut escape is taken as it is; a mount point that is no path is no mount. */
	assert_int_equal(mounts_parse("a /x\\04 t o 0 0\nb rel t o 0 0\n", 30, &m), 0);
	assert_int_equal(m.count, 1);
	assert_string_equal(m.list[0].dir, "/x\\04");
	mounts_free(&m);
}

/* This machine's table, read both ways: the same mounts, fields and order as getmntent's. */
static void test_same_as_getmntent(void **state)
{
	FILE *f = setmntent("/proc/self/mounts", "re");
	struct mounts m;
	struct mntent *e;
	size_t i = 0;
	(void)state;

	assert_non_null(f);
	assert_int_equal(mounts_read(&m), 0);
	while ((e = getmntent(f))) {
		assert_true(i < m.count);
		assert_string_equal(m.list[i].source, e->mnt_fsname);
		assert_string_equal(m.list[i].dir, e->mnt_dir);
		assert_string_equal(m.list[i].type, e->mnt_type);
		assert_string_equal(m.list[i].options, e->mnt_opts);
		assert_int_equal(mount_option(&m.list[i], "ro"), hasmntopt(e, "ro") != NULL);
		i++;
	}
	endmntent(f);
	assert_int_equal(i, m.count);
	mounts_free(&m);
}

/* Under a recorded root, its table. */
static void test_sysroot(void **state)
{
	char *dir = unit_tmpdir(), path[512];
	struct mounts m;
	FILE *f;
	(void)state;

	snprintf(path, sizeof(path), "%s/proc", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/proc/self", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/proc/self/mounts", dir);
	assert_non_null(f = fopen(path, "w"));
	fputs("cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid 0 0\n", f);
	fclose(f);
	assert_int_equal(sysroot_set(dir), 0);
	assert_int_equal(mounts_read(&m), 0);
	assert_int_equal(m.count, 1);
	assert_string_equal(m.list[0].dir, "/sys/fs/cgroup");
	mounts_free(&m);
	/* A root without the file: its error, an empty table. */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mounts_read(&m), -ENOENT);
	assert_int_equal(m.count, 0);
	assert_int_equal(sysroot_set("/"), 0);
	unit_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_same_as_getmntent),
		cmocka_unit_test(test_sysroot),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
