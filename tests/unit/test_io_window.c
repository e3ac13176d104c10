/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_io_window.c: each process's I/O over doctor's window, its deltas added up round after round,
 * held to what each process did (the kernel's folding of a reaped child into its parent played by
 * hand).
 */
#include "unit.h"

#include "doctor/io_window.h"

#include "proc_io_sample.h"

#define MIB (1024ull * 1024)

/* The process pid with start time start in the window, alive or not; NULL when it is not kept. */
static const struct window_io *find(const struct io_window *w, pid_t pid, uint64_t start)
{
	for (size_t i = 0; i < w->count; i++)
		if (w->procs[i].pid == pid && w->procs[i].start_time == start)
			return &w->procs[i];
	return NULL;
}

#define TAKE(w, ns, ticks, ...)                                                                                       \
	do {                                                                                                          \
		struct proc_io_sample now_[] = { __VA_ARGS__ };                                                       \
		io_window_take(w, now_, sizeof(now_) / sizeof(now_[0]), ns, ticks, NULL, NULL);                       \
	} while (0)

/*
 * The parent had read 2 MiB and its child 30 before the window; the child reads 4 more in it,
 * seen, then 2 more and ends, reaped (the kernel adds its 36 to the parent's). A second child,
 * born in the window, reads 8: 6 seen, 2 after. The window: child 4, parent 2 + 2, second 6:
 * the 14 read in it, not the 30 from before again, nor the 36 and 8 twice.
 */
static void test_reaped_children(void **state)
{
	struct io_window w = {0};
	const struct window_io *p;
	(void)state;

	TAKE(&w, 1000, 70, proc(100, 1, 50, "sh", 2 * MIB), proc(200, 100, 60, "reader", 30 * MIB));
	assert_int_equal(w.count, 2);
	assert_int_equal(find(&w, 100, 50)->total.read_bytes, 0); /* the baseline */
	assert_int_equal(find(&w, 100, 50)->from_ns, 1000);
	TAKE(&w, 2000, 80, proc(100, 1, 50, "sh", 2 * MIB), proc(200, 100, 60, "reader", 34 * MIB),
	     proc(300, 100, 75, "reader", 6 * MIB));
	assert_int_equal(find(&w, 200, 60)->total.read_bytes, 4 * MIB);
	p = find(&w, 300, 75);
	assert_int_equal(p->total.read_bytes, 6 * MIB); /* born since the round before: from 0 */
	assert_int_equal(p->from_ns, 1000);
	/* Both reaped: 100 holds 2 + 36 + 8. */
	TAKE(&w, 3000, 90, proc(100, 1, 50, "sh", 46 * MIB));
	assert_int_equal(find(&w, 100, 50)->total.read_bytes, 4 * MIB); /* what they did after they were last seen */
	assert_int_equal(find(&w, 200, 60)->total.read_bytes, 4 * MIB);
	assert_false(find(&w, 200, 60)->alive);
	assert_int_equal(find(&w, 300, 75)->total.read_bytes, 6 * MIB);
	assert_int_equal(find(&w, 100, 50)->total.read_bytes + find(&w, 200, 60)->total.read_bytes +
				 find(&w, 300, 75)->total.read_bytes,
			 14 * MIB);
	assert_ptr_equal(io_window_alive(&w, 100), find(&w, 100, 50));
	assert_null(io_window_alive(&w, 200));
	io_window_free(&w);
}

/*
 * test_reaped_children with the children's ends known (eBPF at their exits): the first ended at
 * 36, the second at 8, and a third, born and gone between two rounds (never seen), read 5. Each
 * its own: first 6, second 8, third 5, the parent none (it read nothing itself).
 */
static void test_ended_children(void **state)
{
	struct io_window w = {0};
	const struct window_io *p;
	(void)state;

	TAKE(&w, 1000, 70, proc(100, 1, 50, "sh", 2 * MIB), proc(200, 100, 60, "reader", 30 * MIB));
	TAKE(&w, 2000, 80, proc(100, 1, 50, "sh", 2 * MIB), proc(200, 100, 60, "reader", 34 * MIB),
	     proc(300, 100, 75, "reader", 6 * MIB));
	proc_io_rounds_exits(&w.rounds,
			     (struct proc_io_sample[]){ proc(200, 100, 60, "reader", 36 * MIB),
							proc(300, 100, 75, "reader", 8 * MIB),
							proc(400, 100, 85, "dd", 5 * MIB) },
			     3);
	TAKE(&w, 3000, 90, proc(100, 1, 50, "sh", 51 * MIB));
	assert_int_equal(find(&w, 100, 50)->total.read_bytes, 0);
	assert_int_equal(find(&w, 200, 60)->total.read_bytes, 6 * MIB);
	assert_int_equal(find(&w, 300, 75)->total.read_bytes, 8 * MIB);
	p = find(&w, 400, 85);
	assert_non_null(p);
	assert_int_equal(p->total.read_bytes, 5 * MIB);
	assert_string_equal(p->comm, "dd");
	assert_false(p->alive);
	assert_int_equal(p->from_ns, 2000);
	for (size_t i = 1; i < w.count; i++) /* still in order, for io_window_alive */
		assert_true(w.procs[i - 1].pid < w.procs[i].pid);
	assert_null(io_window_alive(&w, 400));
	io_window_free(&w);
}

/* A process gone without I/O is dropped; a pid reused is another process; an exec goes on counting. */
static void test_identity(void **state)
{
	struct io_window w = {0};
	(void)state;

	TAKE(&w, 1000, 70, proc(100, 1, 50, "sh", MIB), proc(200, 1, 60, "idle", 0), proc(300, 1, 60, "cat", 0));
	TAKE(&w, 2000, 80, proc(100, 1, 50, "sh", MIB), proc(200, 1, 60, "idle", 0), proc(300, 1, 60, "cat", MIB));
	TAKE(&w, 3000, 90, proc(100, 1, 50, "dd", 3 * MIB), proc(300, 1, 85, "cat", MIB));
	assert_null(find(&w, 200, 60)); /* gone, nothing done */
	assert_int_equal(find(&w, 100, 50)->total.read_bytes, 2 * MIB); /* exec: same start, new name */
	assert_string_equal(find(&w, 100, 50)->comm, "dd");
	assert_int_equal(find(&w, 300, 60)->total.read_bytes, MIB); /* the first 300, gone */
	assert_false(find(&w, 300, 60)->alive);
	assert_int_equal(find(&w, 300, 85)->total.read_bytes, MIB); /* the second, born since */
	assert_ptr_equal(io_window_alive(&w, 300), find(&w, 300, 85));
	assert_int_equal(w.count, 3);
	io_window_free(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reaped_children), cmocka_unit_test(test_ended_children),
		cmocka_unit_test(test_identity),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
