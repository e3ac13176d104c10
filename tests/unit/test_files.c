/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_files.c: the walk: which files it visits, each once, and what it reports instead. */
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/files.h"

struct seen {
	char names[64][512];
	int errors[64];
	char reasons[64][128];
	int count;
};

static int record(const struct files_entry *entry, void *context)
{
	struct seen *seen = context;
	int i = seen->count++;

	assert_true(i < 64);
	snprintf(seen->names[i], sizeof(seen->names[i]), "%s", entry->path);
	seen->errors[i] = entry->fd < 0 ? (entry->error ? entry->error : -1) : 0;
	snprintf(seen->reasons[i], sizeof(seen->reasons[i]), "%s", entry->reason ? entry->reason : "");
	if (entry->fd >= 0) {
		/* Open, read-only, and what its stat says. */
		assert_true(S_ISREG(entry->st.st_mode) || S_ISBLK(entry->st.st_mode));
		assert_int_equal(fcntl(entry->fd, F_GETFL) & O_ACCMODE, O_RDONLY);
		assert_int_equal(entry->size, (uint64_t)entry->st.st_size);
	}
	return 0;
}

/* Index of the entry whose path ends with suffix, or -1. */
static int find(const struct seen *seen, const char *suffix)
{
	size_t n = strlen(suffix);
	for (int i = 0; i < seen->count; i++) {
		size_t len = strlen(seen->names[i]);
		if (len >= n && !strcmp(seen->names[i] + len - n, suffix))
			return i;
	}
	return -1;
}

static int count_files(const struct seen *seen)
{
	int files = 0;
	for (int i = 0; i < seen->count; i++)
		files += seen->errors[i] == 0;
	return files;
}

static void touch(const char *dir, const char *name, const char *text)
{
	char path[1024];
	FILE *file;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	file = fopen(path, "w");
	assert_non_null(file);
	fputs(text, file);
	fclose(file);
}

static char *make_tree(void)
{
	char *dir = unit_tmpdir(), path[1024], target[1024];

	snprintf(path, sizeof(path), "%s/sub", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/sub/deeper", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	touch(dir, "one", "1");
	touch(dir, "sub/two", "22");
	touch(dir, "sub/deeper/three", "333");
	snprintf(target, sizeof(target), "%s/one", dir);
	snprintf(path, sizeof(path), "%s/sub/hardlink", dir);
	assert_int_equal(link(target, path), 0);
	snprintf(path, sizeof(path), "%s/sub/symlink-to-two", dir);
	assert_int_equal(symlink("two", path), 0);
	snprintf(path, sizeof(path), "%s/sub/dangling", dir);
	assert_int_equal(symlink("nowhere", path), 0);
	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0644), 0);
	return dir;
}

static void test_tree(void **state)
{
	char *dir = make_tree();
	struct files_options opts = { .recursive = true };
	struct seen seen = {0};
	(void)state;

	assert_int_equal(files_walk(&dir, 1, &opts, record, &seen), 0);
	/* one (or its hard link, once), two, three; no symlink, no FIFO, no errors. */
	assert_int_equal(seen.count, 3);
	assert_int_equal(count_files(&seen), 3);
	assert_true((find(&seen, "/one") >= 0) != (find(&seen, "/sub/hardlink") >= 0));
	assert_true(find(&seen, "/sub/two") >= 0);
	assert_true(find(&seen, "/sub/deeper/three") >= 0);
	unit_rmtree(dir);
}

static void test_tree_follow(void **state)
{
	char *dir = make_tree(), path[1024];
	struct files_options opts = { .recursive = true, .follow_symlinks = true };
	struct seen seen = {0};
	(void)state;

	/* A link back up: a loop, reported; the dangling link: passed over. */
	snprintf(path, sizeof(path), "%s/sub/deeper/up", dir);
	assert_int_equal(symlink("../..", path), 0);
	files_walk(&dir, 1, &opts, record, &seen);
	assert_int_equal(count_files(&seen), 3); /* symlink-to-two is two: counted once */
	int loop = find(&seen, "/sub/deeper/up");
	assert_true(loop >= 0);
	assert_int_equal(seen.errors[loop], ELOOP);
	assert_non_null(strstr(seen.reasons[loop], "loop"));
	assert_int_equal(seen.count, 4);
	unit_rmtree(dir);
}

static void test_named_paths(void **state)
{
	char *dir = make_tree(), paths[6][1024];
	char *argv[6];
	struct files_options opts = {0};
	struct seen seen = {0};
	(void)state;

	snprintf(paths[0], sizeof(paths[0]), "%s/one", dir);
	snprintf(paths[1], sizeof(paths[1]), "%s/sub/hardlink", dir); /* named: shown, even as a hard link */
	snprintf(paths[2], sizeof(paths[2]), "%s/sub", dir);
	snprintf(paths[3], sizeof(paths[3]), "%s/fifo", dir);
	snprintf(paths[4], sizeof(paths[4]), "%s/sub/symlink-to-two", dir); /* named links are followed */
	snprintf(paths[5], sizeof(paths[5]), "%s/missing", dir);
	for (int i = 0; i < 6; i++)
		argv[i] = paths[i];
	files_walk(argv, 6, &opts, record, &seen);
	assert_int_equal(seen.count, 6);
	assert_int_equal(seen.errors[0], 0);
	assert_int_equal(seen.errors[1], 0);
	assert_non_null(strstr(seen.reasons[2], "use -R"));
	assert_non_null(strstr(seen.reasons[3], "FIFO"));
	assert_int_equal(seen.errors[4], 0);
	assert_int_equal(seen.errors[5], ENOENT);
	unit_rmtree(dir);
}

static int stop_at_first(const struct files_entry *entry, void *context)
{
	(void)entry;
	++*(int *)context;
	return 7;
}

static void test_stop(void **state)
{
	char *dir = make_tree();
	struct files_options opts = { .recursive = true };
	int calls = 0;
	(void)state;

	assert_int_equal(files_walk(&dir, 1, &opts, stop_at_first, &calls), 7);
	assert_int_equal(calls, 1);
	unit_rmtree(dir);
}

static void test_own_process(void **state)
{
	char *dir = make_tree(), path[1024];
	struct seen seen = {0};
	int open_fd, mapped_fd;
	void *map;
	(void)state;

	snprintf(path, sizeof(path), "%s/sub/two", dir);
	open_fd = open(path, O_RDONLY);
	snprintf(path, sizeof(path), "%s/sub/deeper/three", dir);
	mapped_fd = open(path, O_RDONLY);
	map = mmap(NULL, 3, PROT_READ, MAP_SHARED, mapped_fd, 0);
	assert_true(map != MAP_FAILED);
	close(mapped_fd);

	assert_int_equal(files_of_process(getpid(), record, &seen), 0);
	assert_true(find(&seen, "/sub/two") >= 0);
	if (geteuid() == 0)
		assert_true(find(&seen, "/sub/deeper/three") >= 0); /* map_files needs CAP_SYS_ADMIN */
	/* The test binary itself is mapped: listed once, whatever its mappings. */
	char exe[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(len > 0);
	exe[len] = '\0';
	int self = 0;
	for (int i = 0; i < seen.count; i++)
		self += strcmp(seen.names[i], exe) == 0;
	if (geteuid() == 0)
		assert_int_equal(self, 1);

	seen.count = 0;
	assert_int_equal(files_of_process(0x3fffffff, record, &seen), 0);
	assert_int_equal(seen.count, 1);
	assert_int_equal(seen.errors[0], ESRCH);
	munmap(map, 3);
	close(open_fd);
	unit_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree),
		cmocka_unit_test(test_tree_follow),
		cmocka_unit_test(test_named_paths),
		cmocka_unit_test(test_stop),
		cmocka_unit_test(test_own_process),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
