/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_sysroot.c: the one small-file reader, the pid iterator and the /proc/PID/io estimate, on trees made here. */
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/procfs.h"
#include "collect/sysroot.h"
#include "collect/sysroot_tree.h"

static void write_file(const char *root, const char *name, const char *text, const char *mode)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, name);
	assert_non_null(f = fopen(path, mode));
	fputs(text, f);
	fclose(f);
}

static void test_read_small(void **state)
{
	char *root = unit_tmpdir(), buf[8], big[64];
	(void)state;

	assert_int_equal(sysroot_set(root), 0);
	/* ENOENT, as -errno. */
	assert_int_equal(sysroot_read_small("/missing", buf, sizeof(buf)), -ENOENT);
	/* An empty file: length 0, an empty string. */
	write_file(root, "empty", "", "w");
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(sysroot_read_small("/empty", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	/* Larger than the limit: cut at size - 1, still a string. */
	write_file(root, "large", "0123456789abcdef", "w");
	assert_int_equal(sysroot_read_small("/large", buf, sizeof(buf)), 7);
	assert_string_equal(buf, "0123456");
	/* A file that grows is read whole again: each read sees what is there now. */
	write_file(root, "grows", "one\n", "w");
	assert_int_equal(sysroot_read_small("grows", big, sizeof(big)), 4);
	write_file(root, "grows", "two\n", "a");
	assert_int_equal(sysroot_read_small("/grows", big, sizeof(big)), 8);
	assert_string_equal(big, "one\ntwo\n");
	/* The string form takes off the line's end. */
	assert_int_equal(sysroot_read_string("/grows", big, sizeof(big)), 0);
	assert_string_equal(big, "one\ntwo");
	/* A directory is not a small file. */
	assert_int_equal(sysroot_read_small("/", big, sizeof(big)), -EISDIR);
	/* The live system, past the root. */
	assert_true(read_small_at(AT_FDCWD, "/proc/self/comm", big, sizeof(big)) > 0);
	assert_int_equal(sysroot_set("/"), 0);
	unit_rmtree(root);
}

static void make_dir(const char *root, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", root, name);
	assert_int_equal(mkdir(path, 0755), 0);
}

/* The pids a walk yields, summed and counted (readdir's order is no order). */
static void walk(unsigned flags, long *sum, int *count)
{
	struct proc_pids pids;
	pid_t pid;

	*sum = 0;
	*count = 0;
	assert_int_equal(proc_pids_open(&pids, flags), 0);
	while ((pid = proc_pids_next(&pids))) {
		*sum += pid;
		(*count)++;
	}
	assert_int_equal(proc_pids_next(&pids), 0);
	proc_pids_close(&pids);
}

static void test_pids(void **state)
{
	char *root = unit_tmpdir(), self[32];
	struct proc_pids pids;
	long sum;
	int count;
	(void)state;

	assert_int_equal(sysroot_set(root), 0);
	/* No proc directory: an error, and a walk of nothing. */
	assert_int_equal(proc_pids_open(&pids, 0), -ENOENT);
	assert_int_equal(proc_pids_next(&pids), 0);
	proc_pids_close(&pids);
	make_dir(root, "proc");
	make_dir(root, "proc/1");
	make_dir(root, "proc/4194304");
	make_dir(root, "proc/self");
	make_dir(root, "proc/12x");
	make_dir(root, "proc/-3");
	make_dir(root, "proc/0");
	make_dir(root, "proc/99999999999");
	snprintf(self, sizeof(self), "proc/%d", (int)getpid());
	make_dir(root, self);
	walk(0, &sum, &count);
	assert_int_equal(count, 3);
	assert_int_equal(sum, 1 + 4194304 + (long)getpid());
	walk(PROC_PIDS_NOT_SELF, &sum, &count);
	assert_int_equal(count, 2);
	assert_int_equal(sum, 1 + 4194304);
	assert_int_equal(proc_pid_name("123"), 123);
	assert_int_equal(proc_pid_name(""), 0);
	assert_int_equal(proc_pid_name("2147483648"), 0);
	assert_int_equal(sysroot_set("/"), 0);
	unit_rmtree(root);
}

static const char stat_line[] = "42 (reader) S 1 42 42 0 -1 4194304 100 0 0 0 5 6 0 0 20 0 1 0 %s 1000 10\n";
static const char io_text[] = "rchar: %s\nwchar: 0\nsyscr: 1\nsyscw: 0\nread_bytes: %s\nwrite_bytes: %s\n"
			      "cancelled_write_bytes: 0\n";

static void write_process(const char *root, const char *start, const char *rchar, const char *read_bytes,
			  const char *write_bytes)
{
	char text[512];

	snprintf(text, sizeof(text), stat_line, start);
	write_file(root, "proc/42/stat", text, "w");
	snprintf(text, sizeof(text), io_text, rchar, read_bytes, write_bytes);
	write_file(root, "proc/42/io", text, "w");
}

static void test_io_delta(void **state)
{
	char *root = unit_tmpdir();
	struct proc_io_sample before, after;
	struct proc_io_delta delta;
	(void)state;

	assert_int_equal(sysroot_set(root), 0);
	make_dir(root, "proc");
	make_dir(root, "proc/42");
	assert_int_equal(proc_io_sample_read(43, &before), -ENOENT);
	write_process(root, "777", "40960", "8192", "0");
	assert_int_equal(proc_io_sample_read(42, &before), 0);
	assert_int_equal(before.start_time, 777);
	assert_string_equal(before.comm, "reader");
	/* 10 pages read, 4 of them from storage, 1 written: 6 hits, an estimate. */
	write_process(root, "777", "81920", "24576", "4096");
	assert_int_equal(proc_io_sample_read(42, &after), 0);
	assert_true(proc_io_delta(&before, &after, &delta));
	assert_int_equal(delta.rchar, 40960);
	assert_int_equal(delta.read_pages, 10);
	assert_int_equal(delta.missed_pages, 4);
	assert_int_equal(delta.hit_pages, 6);
	assert_int_equal(delta.written_pages, 1);
	/* More missed than read (readahead, a read that mmap's faults did): no negative hits. */
	after.io.rchar = before.io.rchar;
	assert_true(proc_io_delta(&before, &after, &delta));
	assert_int_equal(delta.hit_pages, 0);
	/* The pid reused: another start time with larger counters is another process, no delta. */
	write_process(root, "900", "999999", "99999", "9999");
	assert_int_equal(proc_io_sample_read(42, &after), 0);
	assert_false(proc_io_delta(&before, &after, &delta));
	assert_int_equal(delta.rchar, 0);
	/* The same start time but another command (a start time unknown to both, say). */
	after = before;
	snprintf(after.comm, sizeof(after.comm), "other");
	after.io.rchar += 4096;
	assert_false(proc_io_delta(&before, &after, &delta));
	/* A counter that goes backwards (wrapped or reset): no delta, not 2^64 - something. */
	after = before;
	after.io.rchar += 4096;
	after.io.read_bytes -= 1;
	assert_false(proc_io_delta(&before, &after, &delta));
	after = before;
	after.io.rchar -= 1;
	assert_false(proc_io_delta(&before, &after, &delta));
	assert_int_equal(delta.read_pages, 0);
	/* Another pid. */
	after = before;
	after.pid = 43;
	assert_false(proc_io_delta(&before, &after, &delta));
	assert_int_equal(sysroot_set("/"), 0);
	unit_rmtree(root);
}

/* Reads through the root of what the collectors read: a file, a small file, a path found, a directory's names. */
static void read_all(char *text, size_t size)
{
	static struct sysroot_file stat_file = SYSROOT_FILE("/proc/stat");
	const char *got;
	size_t len;
	int n = 0;

	text[0] = '\0';
	if (sysroot_file_read(&stat_file, &got, &len) == 0)
		n += snprintf(text + n, size - (size_t)n, "stat=%s|", got);
	char small[64];
	if (sysroot_read_small("sys/block/vda/size", small, sizeof(small)) >= 0)
		n += snprintf(text + n, size - (size_t)n, "size=%s|", small);
	n += snprintf(text + n, size - (size_t)n, "part=%d dir=%d none=%d|", sysroot_exists("/sys/block/vda/vda1"),
		      sysroot_exists("/sys/block/vda/holders"), sysroot_exists("/sys/block/vda/missing"));
	n += snprintf(text + n, size - (size_t)n, "above=%d holders=%d slaves=%d", sysroot_exists("/sys/block"),
		      sysroot_dir_has_entries("/sys/block/vda/holders"),
		      sysroot_dir_has_entries("/sys/block/vda/slaves"));
}

/* What is read with a capture on, laid out again, reads the same: the recorder's frame and its replay. */
static void test_capture_round_trip(void **state)
{
	char *root = unit_tmpdir(), live[512], replayed[512], path[4096];
	struct sysroot_capture cap = {0};
	(void)state;

	make_dir(root, "proc");
	make_dir(root, "sys");
	make_dir(root, "sys/block");
	make_dir(root, "sys/block/vda");
	make_dir(root, "sys/block/vda/vda1");
	make_dir(root, "sys/block/vda/holders");
	make_dir(root, "sys/block/vda/slaves");
	write_file(root, "proc/stat", "cpu 1 2 3 4\n", "w");
	write_file(root, "sys/block/vda/size", "2048\n", "w");
	write_file(root, "sys/block/vda/holders/dm-0", "", "w");
	write_file(root, "sys/block/vda/holders/dm-1", "", "w");
	assert_int_equal(sysroot_set(root), 0);
	sysroot_capture_set(&cap);
	read_all(live, sizeof(live));
	sysroot_capture_set(NULL);
	assert_string_equal(live, "stat=cpu 1 2 3 4\n|size=2048\n|part=1 dir=1 none=0|above=1 holders=1 slaves=0");
	assert_non_null(cap.data);

	/* The tree answered from memory: the same, and the tree nothing more (a file no one read). */
	assert_int_equal(sysroot_memory_set(cap.data, cap.len), 0);
	read_all(replayed, sizeof(replayed));
	assert_string_equal(replayed, live);
	assert_int_equal(sysroot_read_small("/sys/block/vda/dev", path, sizeof(path)), -ENOENT);
	assert_int_equal(sysroot_exists("/sys/block/vd"), 0); /* a prefix of a name is no directory */
	assert_null(sysroot_opendir("/sys/block/vda/holders"));
	assert_false(sysroot_path(path, sizeof(path), "/proc/stat"));
	/* Cut short, as read_small cuts a file. */
	assert_int_equal(sysroot_read_small("/proc/stat", path, 5), 4);
	assert_string_equal(path, "cpu ");
	/* Back to a directory: the memory forgotten. */
	assert_int_equal(sysroot_set("/"), 0);
	assert_true(sysroot_read_small("/proc/self/comm", path, sizeof(path)) > 0);
	sysroot_capture_free(&cap);
	unit_rmtree(root);
}

/* A tree from elsewhere (a store another user wrote): paths that leave it, and damage, refused. */
static void test_tree_refusals(void **state)
{
	static const char *const bad[] = { "/../etc/x", "/proc/../../x", "proc/stat", "/proc//stat", "/proc/./stat",
					   "/" };
	struct sysroot_capture cap = {0};
	struct tree_entry e;
	size_t at;
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		unsigned char raw[64];
		size_t n = strlen(bad[i]);
		raw[0] = 'F';
		raw[1] = (unsigned char)n;
		raw[2] = 0;
		memcpy(raw + 3, bad[i], n);
		memset(raw + 3 + n, 0, 4);
		at = 0;
		assert_int_equal(tree_next(raw, 7 + n, &at, &e), -EINVAL);
	}
	/* The capture leaves out what a tree cannot hold, and makes relative paths absolute. */
	sysroot_capture_add(&cap, 'F', "/proc/../x", "a", 1);
	assert_int_equal(cap.len, 0);
	sysroot_capture_add(&cap, 'F', "proc/stat", "a", 1);
	at = 0;
	assert_int_equal(tree_next(cap.data, cap.len, &at, &e), 1);
	assert_string_equal(e.path, "/proc/stat");
	/* Cut anywhere: refused, never read past the end. */
	for (size_t len = 1; len < cap.len; len++) {
		at = 0;
		assert_int_equal(tree_next(cap.data, len, &at, &e), -EINVAL);
	}
	/* A directory's names with a slash or a "..": refused. */
	at = cap.len;
	sysroot_capture_add(&cap, 'D', "/sys", "a/b\0", 4);
	assert_int_equal(tree_next(cap.data, cap.len, &at, &e), -EINVAL);
	sysroot_capture_free(&cap);
	sysroot_capture_add(&cap, 'D', "/sys", "..\0", 3);
	at = 0;
	assert_int_equal(tree_next(cap.data, cap.len, &at, &e), -EINVAL);
	sysroot_capture_free(&cap);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_small),
		cmocka_unit_test(test_pids),
		cmocka_unit_test(test_io_delta),
		cmocka_unit_test(test_capture_round_trip),
		cmocka_unit_test(test_tree_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
