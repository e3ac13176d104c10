/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_memcg.c: the memory cgroup of a process: /proc/PID/cgroup, limits and memory.stat parsed,
 * and read through a recorded tree.
 */
#include "unit.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/memcg.h"
#include "collect/sysroot.h"

static int parse(const char *text, char *v2, char *v1)
{
	return memcg_cgroup_parse(text, strlen(text), v2, 256, v1, 256);
}

static void test_cgroup_parse(void **state)
{
	char v2[256], v1[256];
	(void)state;

	/* A hybrid machine: memory on v1, the rest of v2 at its root. */
	assert_int_equal(parse("9:name=systemd:/\n4:memory:/process_api/0811\n1:cpu,cpuacct:/\n0::/\n", v2, v1), 0);
	assert_string_equal(v2, "/");
	assert_string_equal(v1, "/process_api/0811");
	/* v2 only, the path to the end of the line (it may hold ':' and spaces). */
	assert_int_equal(parse("0::/system.slice/a b:c.service\n", v2, v1), 0);
	assert_string_equal(v2, "/system.slice/a b:c.service");
	assert_string_equal(v1, "");
	/* memory among other controllers of one hierarchy, last line without a newline. */
	assert_int_equal(parse("3:cpuset,memory,blkio:/jobs/7", v2, v1), 0);
	assert_string_equal(v1, "/jobs/7");
	assert_string_equal(v2, "");
	/* Not "memory" itself: a controller named alike is not it. */
	assert_int_equal(parse("3:memoryx:/no\n", v2, v1), 0);
	assert_string_equal(v1, "");
	/* Malformed lines are skipped; none well formed is an error. */
	assert_int_equal(parse("", v2, v1), -EINVAL);
	assert_int_equal(parse("garbage\n4:memory\n:::\n", v2, v1), -EINVAL);
	/* A path longer than the buffer is not cut: left empty. */
	{
		char line[400], small2[8], small1[8];

		snprintf(line, sizeof(line), "4:memory:/%0300d\n", 0);
		assert_int_equal(memcg_cgroup_parse(line, strlen(line), small2, sizeof(small2), small1, sizeof(small1)),
				 0);
		assert_string_equal(small1, "");
	}
}

static void test_stat_and_limits(void **state)
{
	const char *stat = "anon 10\nfile 20\nworkingset_refault_file 42\nworkingset_refault_anon 1\n";
	uint64_t value = 0;
	(void)state;

	assert_int_equal(memcg_stat_value(stat, strlen(stat), "workingset_refault_file", &value), 0);
	assert_int_equal(value, 42);
	assert_int_equal(memcg_stat_value(stat, strlen(stat), "file", &value), 0);
	assert_int_equal(value, 20);
	assert_int_equal(memcg_stat_value(stat, strlen(stat), "workingset", &value), -ENOENT);
	assert_int_equal(memcg_stat_value("x 1x\n", 5, "x", &value), -EINVAL);
	assert_int_equal(memcg_stat_value("x 99999999999999999999\n", 23, "x", &value), -EINVAL);

	assert_int_equal(memcg_limit_parse("max\n", 4, &value), 0);
	assert_true(value == MEMCG_UNLIMITED);
	assert_int_equal(memcg_limit_parse("33554432\n", 9, &value), 0);
	assert_int_equal(value, 33554432);
	/* v1's "no limit": PAGE_COUNTER_MAX pages in bytes. */
	assert_int_equal(memcg_limit_parse("9223372036854771712\n", 20, &value), 0);
	assert_true(value == MEMCG_UNLIMITED);
	assert_int_equal(memcg_limit_parse("-1\n", 3, &value), -EINVAL);
	assert_int_equal(memcg_limit_parse("", 0, &value), -EINVAL);
}

static void write_file(const char *root, const char *path, const char *text)
{
	char full[1024], dir[1100];
	FILE *f;

	snprintf(full, sizeof(full), "%s%s", root, path);
	snprintf(dir, sizeof(dir), "mkdir -p \"$(dirname '%s')\"", full);
	assert_int_equal(system(dir), 0);
	f = fopen(full, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A recorded tree: a v1 memory cgroup at its limit, read as iolens would read the machine. */
static void test_of_pid_recorded(void **state)
{
	char root[] = "/tmp/iolens-memcg-XXXXXX", cleanup[64];
	struct memcg cgroup;
	(void)state;

	assert_non_null(mkdtemp(root));
	write_file(root, "/proc/self/mounts",
		   "cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n"
		   "cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0\n");
	write_file(root, "/proc/42/cgroup", "4:memory:/jobs/reader\n0::/\n");
	write_file(root, "/sys/fs/cgroup/memory/jobs/reader/memory.limit_in_bytes", "33554432\n");
	write_file(root, "/sys/fs/cgroup/memory/jobs/reader/memory.usage_in_bytes", "33300480\n");
	write_file(root, "/sys/fs/cgroup/memory/jobs/reader/memory.stat", "cache 1\nworkingset_refault_file 16384\n");
	assert_int_equal(sysroot_set(root), 0);
	assert_int_equal(memcg_of_pid(42, &cgroup), 0);
	assert_int_equal(cgroup.version, 1);
	assert_string_equal(cgroup.path, "/jobs/reader");
	assert_int_equal(cgroup.max, 33554432);
	assert_int_equal(cgroup.current, 33300480);
	assert_int_equal(cgroup.refaults, 16384);
	assert_true(memcg_at_limit(&cgroup));
	assert_int_equal(memcg_of_pid(43, &cgroup), -ENOENT);
	/* By the id eBPF gives (the directory's inode number): for a process that has ended. */
	{
		char dir[256];
		struct stat st;

		snprintf(dir, sizeof(dir), "%s/sys/fs/cgroup/memory/jobs/reader", root);
		assert_int_equal(stat(dir, &st), 0);
		memset(&cgroup, 0, sizeof(cgroup));
		assert_int_equal(memcg_of_id(st.st_ino, &cgroup), 0);
		assert_string_equal(cgroup.path, "/jobs/reader");
		assert_int_equal(cgroup.version, 1);
		assert_int_equal(cgroup.max, 33554432);
		assert_int_equal(memcg_of_id(1, &cgroup), -ENOENT);
		/*
		 * Its path is kept from the last look, and given only while that directory has its
		 * id: moved, it is looked for again; another made where it was is not it.
		 */
		char moved[300];

		snprintf(moved, sizeof(moved), "%s/sys/fs/cgroup/memory/jobs/moved", root);
		assert_int_equal(rename(dir, moved), 0);
		assert_int_equal(mkdir(dir, 0755), 0);
		assert_int_equal(memcg_of_id(st.st_ino, &cgroup), 0);
		assert_string_equal(cgroup.path, "/jobs/moved");
		assert_int_equal(cgroup.max, 33554432);
		assert_int_equal(memcg_of_id(st.st_ino, &cgroup), 0); /* kept again, and still true */
		assert_string_equal(cgroup.path, "/jobs/moved");
		assert_int_equal(rmdir(dir), 0);
		assert_int_equal(rename(moved, dir), 0);
	}
	sysroot_set("/");
	snprintf(cleanup, sizeof(cleanup), "rm -rf %s", root);
	assert_int_equal(system(cleanup), 0);
}

/* This process, live: a cgroup is found, its limit a number or none. */
static void test_live(void **state)
{
	struct memcg cgroup;
	(void)state;

	if (access("/proc/self/cgroup", R_OK) != 0)
		skip();
	assert_int_equal(memcg_of_pid(getpid(), &cgroup), 0);
	assert_true(cgroup.path[0] == '/');
	assert_true(cgroup.version == 1 || cgroup.version == 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cgroup_parse),
		cmocka_unit_test(test_stat_and_limits),
		cmocka_unit_test(test_of_pid_recorded),
		cmocka_unit_test(test_live),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
