/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_pagecache.c: cachestat and mincore agree, page by page, on a real file; ranges; maps; refusals. */
#include "unit.h"

#include <stdbool.h>

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collect/pagecache.h"
#include "common/util.h"

#define PAGES 64

struct fixture {
	char *dir;
	char path[4096];
	int fd;
	uint64_t page;
	bool on_tmpfs; /* its pages are the file: they cannot be evicted, tests skip */
};

/* The fixture, or a skip where the scratch directory cannot show page-cache states. */
static struct fixture *fixture(void **state)
{
	struct fixture *f = *state;

	if (f->on_tmpfs)
		skip();
	return f;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char *data;
	struct statfs fs;

	f->dir = unit_tmpdir();
	f->page = page_size();
	snprintf(f->path, sizeof(f->path), "%s/data", f->dir);
	f->fd = open(f->path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert_true(f->fd >= 0);
	data = malloc(PAGES * f->page);
	for (size_t i = 0; i < PAGES * f->page; i++)
		data[i] = (char)(i * 2654435761u >> 13);
	assert_int_equal(pwrite(f->fd, data, PAGES * f->page, 0), (ssize_t)(PAGES * f->page));
	free(data);
	assert_int_equal(fsync(f->fd), 0);
	assert_int_equal(posix_fadvise(f->fd, 0, 0, POSIX_FADV_DONTNEED), 0);
	assert_int_equal(posix_fadvise(f->fd, 0, 0, POSIX_FADV_RANDOM), 0);
	assert_int_equal(fstatfs(f->fd, &fs), 0);
	f->on_tmpfs = fs.f_type == 0x01021994;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	close(f->fd);
	unit_rmtree(f->dir);
	free(f);
	pagecache_set_method(PAGECACHE_CACHESTAT);
	return 0;
}

static void read_page(struct fixture *f, uint64_t page)
{
	char buf[65536];
	assert_true(f->page <= sizeof(buf));
	assert_int_equal(pread(f->fd, buf, f->page, (off_t)(page * f->page)), (ssize_t)f->page);
}

static struct pagecache_stat query(struct fixture *f, uint64_t offset, uint64_t length)
{
	struct pagecache_stat stat;
	assert_int_equal(pagecache_query(f->fd, offset, length, &stat), 0);
	return stat;
}

static void check_both_methods(struct fixture *f, uint64_t offset, uint64_t length, uint64_t pages, uint64_t cached)
{
	for (int m = PAGECACHE_CACHESTAT; m <= PAGECACHE_MINCORE; m++) {
		pagecache_set_method((enum pagecache_method)m);
		struct pagecache_stat stat = query(f, offset, length);
		assert_int_equal(stat.pages, pages);
		assert_int_equal(stat.cached, cached);
		assert_int_equal(stat.detail_known, m == PAGECACHE_CACHESTAT);
	}
	pagecache_set_method(PAGECACHE_CACHESTAT);
}

static void test_evicted_then_pages(void **state)
{
	struct fixture *f = fixture(state);

	check_both_methods(f, 0, PAGES * f->page, PAGES, 0);
	read_page(f, 0);
	read_page(f, 1);
	read_page(f, 10);
	read_page(f, 63);
	check_both_methods(f, 0, PAGES * f->page, PAGES, 4);
	check_both_methods(f, 10 * f->page, f->page, 1, 1);
	check_both_methods(f, 11 * f->page, 52 * f->page, 52, 0);
	/* Unaligned ranges count every page they touch. */
	check_both_methods(f, 10 * f->page + 100, 10, 1, 1);
	check_both_methods(f, 9 * f->page + f->page - 1, 2, 2, 1);
	check_both_methods(f, 1, 2 * f->page, 3, 2);
	/* Past the end: the pages are counted, none cached. */
	check_both_methods(f, 63 * f->page, 4 * f->page, 4, 1);
}

static void test_empty_range(void **state)
{
	struct fixture *f = fixture(state);
	struct pagecache_stat stat = query(f, 5 * f->page, 0);

	assert_int_equal(stat.pages, 0);
	assert_int_equal(stat.cached, 0);
	assert_true(stat.detail_known);
}

static void test_dirty_and_map(void **state)
{
	struct fixture *f = fixture(state);
	char map[17], byte = 'x';
	struct pagecache_stat stat;

	read_page(f, 0);
	read_page(f, 1);
	read_page(f, 2);
	read_page(f, 3);
	assert_int_equal(pwrite(f->fd, &byte, 1, (off_t)(40 * f->page)), 1);
	stat = query(f, 0, PAGES * f->page);
	assert_true(stat.dirty >= 1);
	assert_true(stat.cached >= 5);

	/* 16 cells of 4 pages: cell 0 all cached, cell 10 dirty, the rest empty. */
	assert_int_equal(pagecache_map(f->fd, 0, PAGES * f->page, 16, map), 0);
	assert_string_equal(map, "O.........D.....");
	assert_int_equal(fdatasync(f->fd), 0);
	assert_int_equal(posix_fadvise(f->fd, 0, 0, POSIX_FADV_DONTNEED), 0);
	read_page(f, 5);
	assert_int_equal(pagecache_map(f->fd, 0, PAGES * f->page, 16, map), 0);
	assert_string_equal(map, ".o..............");
	/* More cells than pages: neighbours show the same page. */
	assert_int_equal(pagecache_map(f->fd, 4 * f->page, 2 * f->page, 6, map), 0);
	assert_string_equal(map, "...OOO");
	assert_int_equal(pagecache_map(f->fd, 0, 0, 6, map), 0);
	assert_string_equal(map, "");
}

static void test_glyphs(void **state)
{
	(void)state;
	struct pagecache_stat s = { .pages = 4, .cached = 4, .detail_known = true };
	assert_int_equal(pagecache_map_glyph(&s), 'O');
	s.cached = 1;
	assert_int_equal(pagecache_map_glyph(&s), 'o');
	s.cached = 0;
	assert_int_equal(pagecache_map_glyph(&s), '.');
	s.evicted = 2;
	assert_int_equal(pagecache_map_glyph(&s), 'e');
	s.writeback = 1;
	assert_int_equal(pagecache_map_glyph(&s), 'W');
	s.dirty = 1;
	assert_int_equal(pagecache_map_glyph(&s), 'D');
	s.detail_known = false; /* mincore: only cached is known */
	s.cached = 4;
	assert_int_equal(pagecache_map_glyph(&s), 'O');
}

static void test_resident_vector(void **state)
{
	struct fixture *f = fixture(state);
	unsigned char resident[8];

	read_page(f, 2);
	read_page(f, 5);
	assert_int_equal(pagecache_resident(f->fd, 0, 8, resident), 0);
	assert_memory_equal(resident, "\0\0\1\0\0\1\0\0", 8);
}

/* Another user who neither owns the file nor may write it is told nothing: -EPERM. */
static void test_refused_to_others(void **state)
{
	struct fixture *f = fixture(state);
	pid_t child;
	int status;

	if (geteuid() != 0)
		skip();
	read_page(f, 0);
	assert_int_equal(chmod(f->dir, 0755), 0); /* mkdtemp made it 0700 */
	child = fork();
	if (child == 0) {
		struct pagecache_stat stat;
		int fd;
		unsigned char resident[4];
		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			_exit(10);
		pagecache_ids_changed();
		fd = open(f->path, O_RDONLY);
		if (fd < 0)
			_exit(11);
		if (pagecache_query(fd, 0, PAGES * f->page, &stat) != -EPERM)
			_exit(12);
		pagecache_set_method(PAGECACHE_MINCORE);
		if (pagecache_query(fd, 0, PAGES * f->page, &stat) != -EPERM)
			_exit(13);
		if (pagecache_resident(fd, 0, 4, resident) != -EPERM)
			_exit(14);
		_exit(0);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_evicted_then_pages, setup, teardown),
		cmocka_unit_test_setup_teardown(test_empty_range, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dirty_and_map, setup, teardown),
		cmocka_unit_test(test_glyphs),
		cmocka_unit_test_setup_teardown(test_resident_vector, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused_to_others, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
