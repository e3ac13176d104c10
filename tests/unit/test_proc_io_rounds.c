/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_proc_io_rounds.c: deltas of /proc/PID/io round after round, held to what each process did
 * (the kernel's folding of a reaped child into its parent played by hand).
 */
#include "unit.h"

#include "collect/proc_io_rounds.h"

#include "proc_io_sample.h"

#define MIB (1024ull * 1024)

struct round {
	struct proc_io_delta deltas[8];
	bool known[8];
};

static void take(struct proc_io_rounds *r, struct proc_io_sample *now, size_t n, uint64_t ticks, struct round *out)
{
	assert_true(n <= 8);
	proc_io_rounds_take(r, now, n, ticks, NULL, NULL, out->deltas, out->known);
}

/*
 * A child reads 16 MiB: 8 seen while it runs, then it ends and the parent reaps it (the kernel
 * adds the child's 16 to the parent's counts). Child 8 + parent 8: the 16 the child read, not 24.
 */
static void test_reaped_child(void **state)
{
	struct proc_io_rounds r = {0};
	struct round out;
	(void)state;

	take(&r, (struct proc_io_sample[]){ proc(100, 1, 50, "sh", 0), proc(200, 100, 60, "reader", 0) }, 2, 70, &out);
	assert_false(out.known[0]); /* the first round is the baseline */
	take(&r, (struct proc_io_sample[]){ proc(100, 1, 50, "sh", 0), proc(200, 100, 60, "reader", 8 * MIB) }, 2, 80,
	     &out);
	assert_true(out.known[1]);
	assert_int_equal(out.deltas[1].missed_pages, 2048);
	assert_int_equal(out.deltas[0].missed_pages, 0);
	/* Reaped: 200 gone, 100 holds its own 0 and the child's 16. */
	take(&r, (struct proc_io_sample[]){ proc(100, 1, 50, "sh", 16 * MIB) }, 1, 90, &out);
	assert_true(out.known[0]);
	assert_int_equal(out.deltas[0].missed_pages, 2048); /* what the child read after it was last seen */
	assert_int_equal(out.deltas[0].read_pages, 2048);
	/* Nothing more after. */
	take(&r, (struct proc_io_sample[]){ proc(100, 1, 50, "sh", 16 * MIB + 4096) }, 1, 100, &out);
	assert_int_equal(out.deltas[0].missed_pages, 1);
	proc_io_rounds_free(&r);
}

/* The reap lands after the parent was read: the child's counts are taken off the next round. */
static void test_reap_seen_late(void **state)
{
	struct proc_io_rounds r = {0};
	struct round out;
	(void)state;

	take(&r, (struct proc_io_sample[]){ proc(100, 1, 50, "sh", 0), proc(200, 100, 60, "reader", 4 * MIB) }, 2, 70,
	     &out);
	/* Round 2: the child is gone, its parent read before the reap. */
	take(&r, (struct proc_io_sample[]){ proc(100, 1, 50, "sh", 4096) }, 1, 80, &out);
	assert_int_equal(out.deltas[0].missed_pages, 0); /* its one page taken against the child's */
	/* Round 3: the reap shows; 4 MiB of it was the child's, seen; the parent's 4096 taken once. */
	take(&r, (struct proc_io_sample[]){ proc(100, 1, 50, "sh", 4096 + 4 * MIB) }, 1, 90, &out);
	assert_int_equal(out.deltas[0].missed_pages, 1);
	/* Round 4: what is left owed is dropped, not taken from later reads. */
	take(&r, (struct proc_io_sample[]){ proc(100, 1, 50, "sh", 8192 + 4 * MIB) }, 1, 100, &out);
	assert_int_equal(out.deltas[0].missed_pages, 1);
	proc_io_rounds_free(&r);
}

/*
 * A child born since the last round began is counted from 0, and one born up to a second
 * before it (fork stamps the start before /proc lists the process: that round missed it); one
 * seen first but older is not. Ticks are USER_HZ's, 100 a second.
 */
static void test_born_within_round(void **state)
{
	struct proc_io_rounds r = {0};
	struct round out;
	(void)state;

	take(&r, (struct proc_io_sample[]){ proc(100, 1, 50, "sh", 0) }, 1, 1070, &out);
	take(&r,
	     (struct proc_io_sample[]){ proc(100, 1, 50, "sh", 0), proc(200, 100, 1071, "reader", 2 * MIB),
					proc(300, 100, 1069, "late", 2 * MIB), proc(400, 100, 900, "old", 2 * MIB) },
	     4, 1080, &out);
	assert_true(out.known[1]);
	assert_int_equal(out.deltas[1].missed_pages, 512);
	assert_true(out.known[2]); /* started 10 ms before the round began, not yet listed then */
	assert_int_equal(out.deltas[2].missed_pages, 512);
	assert_false(out.known[3]); /* started 1.7 s before: unseen then for another reason, its start unknown */
	/* All reaped: 200's and 300's 2 MiB were shown, 400's was its baseline: none again under 100. */
	take(&r, (struct proc_io_sample[]){ proc(100, 1, 50, "sh", 6 * MIB + 3 * MIB) }, 1, 1090, &out);
	assert_int_equal(out.deltas[0].missed_pages, 768); /* the 3 MiB the three read after they were last seen */
	proc_io_rounds_free(&r);
}

/* Child and parent both gone: each one's counts as last seen come off the grandparent. */
static void test_grandparent(void **state)
{
	struct proc_io_rounds r = {0};
	struct round out;
	(void)state;

	take(&r,
	     (struct proc_io_sample[]){ proc(10, 1, 5, "make", 0), proc(100, 10, 50, "sh", MIB),
					proc(200, 100, 60, "cc", 2 * MIB) },
	     3, 70, &out);
	take(&r, (struct proc_io_sample[]){ proc(10, 1, 5, "make", 3 * MIB + 4096) }, 1, 80, &out);
	assert_int_equal(out.deltas[0].missed_pages, 1);
	proc_io_rounds_free(&r);
}

/* Every parent's answer to whether it ignores SIGCHLD, and how many times one was asked. */
struct reapers_say {
	bool ignore;
	int asked;
};

static bool reapers_answer(pid_t pid, void *context)
{
	struct reapers_say *say = context;

	(void)pid;
	say->asked++;
	return say->ignore;
}

/* A parent that ignores SIGCHLD is not given its children's counts: nothing is taken off it. */

static void test_ignores_sigchld(void **state)
{
	struct proc_io_rounds r = {0};
	struct proc_io_delta deltas[2];
	bool known[2];
	struct reapers_say say = { .ignore = true };
	(void)state;

	proc_io_rounds_take(&r, (struct proc_io_sample[]){ proc(100, 1, 50, "srv", 0), proc(200, 100, 60, "w", MIB) },
			    2, 70, reapers_answer, &say, deltas, known);
	proc_io_rounds_take(&r, (struct proc_io_sample[]){ proc(100, 1, 50, "srv", MIB) }, 1, 80, reapers_answer, &say,
			    deltas, known);
	assert_int_equal(say.asked, 1);
	assert_int_equal(deltas[0].missed_pages, 256); /* its own reads, all of them */
	proc_io_rounds_free(&r);
}

/* A parent asked once a round whether it ignores SIGCHLD, however many of its children ended. */
static void test_reaper_asked_once(void **state)
{
	struct proc_io_rounds r = {0};
	struct proc_io_delta deltas[4];
	bool known[4];
	struct reapers_say say = { .ignore = false };
	(void)state;

	proc_io_rounds_take(&r,
			    (struct proc_io_sample[]){ proc(100, 1, 50, "sh", 0), proc(201, 100, 60, "a", MIB),
						       proc(202, 100, 60, "b", MIB), proc(203, 100, 60, "c", MIB) },
			    4, 70, reapers_answer, &say, deltas, known);
	proc_io_rounds_take(&r, (struct proc_io_sample[]){ proc(100, 1, 50, "sh", 3 * MIB) }, 1, 80, reapers_answer,
			    &say, deltas, known);
	assert_int_equal(say.asked, 1);
	assert_int_equal(deltas[0].missed_pages, 0); /* the three children's reads, taken off it */
	proc_io_rounds_take(&r,
			    (struct proc_io_sample[]){ proc(100, 1, 50, "sh", 3 * MIB), proc(204, 100, 75, "d", MIB) },
			    2, 90, reapers_answer, &say, deltas, known);
	proc_io_rounds_take(&r, (struct proc_io_sample[]){ proc(100, 1, 50, "sh", 4 * MIB) }, 1, 100, reapers_answer,
			    &say, deltas, known);
	assert_int_equal(say.asked, 2); /* asked again in another round: it may have changed */
	assert_int_equal(deltas[0].missed_pages, 0);
	proc_io_rounds_free(&r);
}

/* A pid reused, an exec's new name, counters gone back, a loop of parents in a recording. */
static void test_identity(void **state)
{
	struct proc_io_rounds r = {0};
	struct round out;
	(void)state;

	take(&r,
	     (struct proc_io_sample[]){ proc(100, 1, 50, "sh", MIB), proc(200, 300, 60, "a", MIB),
					proc(300, 200, 60, "b", MIB) },
	     3, 1070, &out);
	take(&r, (struct proc_io_sample[]){ proc(100, 1, 50, "dd", 2 * MIB), proc(200, 1, 65, "new", 0) }, 2, 1070,
	     &out);
	assert_true(out.known[0]); /* exec: same start, new name, counts go on */
	assert_int_equal(out.deltas[0].missed_pages, 256);
	assert_false(out.known[1]); /* another process, started long before the round began (1070) */
	take(&r, (struct proc_io_sample[]){ proc(100, 1, 50, "dd", MIB) }, 1, 1090, &out);
	assert_false(out.known[0]); /* went back: no delta rather than a made-up one */
	/* and the higher count stays the baseline: 3 MiB next is 1 MiB more, not 2 counted again */
	take(&r, (struct proc_io_sample[]){ proc(100, 1, 50, "dd", 3 * MIB) }, 1, 1100, &out);
	assert_true(out.known[0]);
	assert_int_equal(out.deltas[0].missed_pages, 256);
	proc_io_rounds_free(&r);
}

/*
 * An end that says whether its parent takes its counts (eBPF reads the parent's SIGCHLD action as
 * the child exits) is believed, and the parent not asked: a server that ignores SIGCHLD keeps all
 * its own reads; a shell gives up its child's. Each is asked nothing (the answer would be the
 * opposite: the two cases would fail).
 */
static void test_end_says_reaper(void **state)
{
	for (int autoreaped = 0; autoreaped <= 1; autoreaped++) {
		struct proc_io_rounds r = {0};
		struct proc_io_delta deltas[2];
		bool known[2];
		struct reapers_say say = { .ignore = !autoreaped };
		struct proc_io_sample end = proc(200, 100, 60, "w", MIB);
		(void)state;

		end.reap = autoreaped ? PROC_REAP_AUTO : PROC_REAP_PARENT;
		struct proc_io_sample first[] = { proc(100, 1, 50, "srv", 0), proc(200, 100, 60, "w", 0) };

		proc_io_rounds_take(&r, first, 2, 70, reapers_answer, &say, deltas, known);
		proc_io_rounds_exits(&r, &end, 1);
		/* the parent's own MiB, and the child's MiB too when it reaped it */
		proc_io_rounds_take(&r, (struct proc_io_sample[]){ proc(100, 1, 50, "srv", (2 - autoreaped) * MIB) }, 1,
				    80, reapers_answer, &say, deltas, known);
		assert_int_equal(say.asked, 0);
		assert_true(known[0]);
		assert_int_equal(deltas[0].missed_pages, 256);
		proc_io_rounds_free(&r);
	}
}

/* The ends handed before a round (exits), then the round. */
static void take_ending(struct proc_io_rounds *r, struct proc_io_sample *now, size_t n, uint64_t ticks,
			struct proc_io_sample *exits, size_t nexits, struct round *out)
{
	proc_io_rounds_exits(r, exits, nexits);
	take(r, now, n, ticks, out);
}

/*
 * The reaped child of test_reaped_child, its end known (eBPF at its exit): 8 MiB seen, 16 at its
 * end. The child's delta is its own 8 to its end, and the parent gives up the child's whole 16:
 * nothing of the child's stays with the parent.
 */
static void test_ended_child(void **state)
{
	struct proc_io_rounds r = {0};
	struct round out;
	(void)state;

	take(&r, (struct proc_io_sample[]){ proc(100, 1, 50, "sh", 0), proc(200, 100, 60, "reader", 0) }, 2, 70, &out);
	take(&r, (struct proc_io_sample[]){ proc(100, 1, 50, "sh", 0), proc(200, 100, 60, "reader", 8 * MIB) }, 2, 80,
	     &out);
	assert_int_equal(r.nended, 0);
	take_ending(&r, (struct proc_io_sample[]){ proc(100, 1, 50, "sh", 16 * MIB) }, 1, 90,
		    (struct proc_io_sample[]){ proc(200, 100, 60, "reader", 16 * MIB) }, 1, &out);
	assert_true(out.known[0]);
	assert_int_equal(out.deltas[0].read_pages, 0); /* the parent read nothing itself */
	assert_int_equal(r.nended, 1);
	assert_int_equal(r.ended[0].last.pid, 200);
	assert_int_equal(r.ended[0].delta.missed_pages, 2048); /* the child's 8 after it was last seen */
	assert_string_equal(r.ended[0].last.comm, "reader");
	/* The next round: the ended are the last round's only. */
	take(&r, (struct proc_io_sample[]){ proc(100, 1, 50, "sh", 16 * MIB + 4096) }, 1, 100, &out);
	assert_int_equal(out.deltas[0].missed_pages, 1);
	assert_int_equal(r.nended, 0);
	proc_io_rounds_free(&r);
}

/*
 * A child born and gone between two rounds, never seen (a short dd): its end makes it known,
 * all it did its own and not its parent's. Another's end, of a process older than the round
 * and never seen, is not counted (what it did before the round is not the round's).
 */
static void test_born_and_ended(void **state)
{
	struct proc_io_rounds r = {0};
	struct round out;
	(void)state;

	take(&r, (struct proc_io_sample[]){ proc(100, 1, 50, "sh", 0) }, 1, 1000, &out);
	take_ending(&r, (struct proc_io_sample[]){ proc(100, 1, 50, "sh", 4 * MIB) }, 1, 1100,
		    (struct proc_io_sample[]){ proc(300, 100, 1010, "dd", 4 * MIB), proc(400, 1, 500, "old", MIB) }, 2,
		    &out);
	assert_int_equal(out.deltas[0].read_pages, 0);
	assert_int_equal(r.nended, 1);
	assert_int_equal(r.ended[0].last.pid, 300);
	assert_int_equal(r.ended[0].delta.read_pages, 1024);
	proc_io_rounds_free(&r);
}

/*
 * An end of a process still in the round (a zombie not yet reaped, or one that ended after the
 * round read it) waits: the round it is gone from takes it, and its parent gives up its end's.
 */
static void test_end_waits(void **state)
{
	struct proc_io_rounds r = {0};
	struct round out;
	(void)state;

	take(&r, (struct proc_io_sample[]){ proc(100, 1, 50, "sh", 0), proc(200, 100, 60, "w", 0) }, 2, 70, &out);
	take_ending(&r, (struct proc_io_sample[]){ proc(100, 1, 50, "sh", 0), proc(200, 100, 60, "w", 2 * MIB) }, 2,
		    80, (struct proc_io_sample[]){ proc(200, 100, 60, "w", 3 * MIB) }, 1, &out);
	assert_int_equal(out.deltas[1].read_pages, 512);
	assert_int_equal(r.nended, 0);
	assert_int_equal(r.nexits, 1);
	take(&r, (struct proc_io_sample[]){ proc(100, 1, 50, "sh", 3 * MIB) }, 1, 90, &out);
	assert_int_equal(r.nended, 1);
	assert_int_equal(r.ended[0].delta.read_pages, 256); /* its last MiB, to its end */
	assert_int_equal(out.deltas[0].read_pages, 0);  /* none of it the parent's */
	assert_int_equal(r.nexits, 0);
	proc_io_rounds_free(&r);
}

/*
 * A shell started since the last round runs a dd that ends within the round: the shell is counted
 * from 0, its counts hold the dd's it reaped; the dd's are its own, not the shell's too.
 */
static void test_parent_born_within_round(void **state)
{
	struct proc_io_rounds r = {0};
	struct round out;
	(void)state;

	take(&r, (struct proc_io_sample[]){ proc(100, 1, 50, "sh", 0) }, 1, 1000, &out);
	take_ending(&r, (struct proc_io_sample[]){ proc(100, 1, 50, "sh", 0), proc(200, 100, 1010, "bash", 6 * MIB) },
		    2, 1100, (struct proc_io_sample[]){ proc(300, 200, 1020, "dd", 6 * MIB) }, 1, &out);
	assert_true(out.known[1]);
	assert_int_equal(out.deltas[1].read_pages, 0); /* bash read nothing itself */
	assert_int_equal(r.nended, 1);
	assert_int_equal(r.ended[0].delta.read_pages, 1536);
	proc_io_rounds_free(&r);
}

/*
 * A shell seen last round runs a dd that starts and ends within the round, then ends too: its end
 * holds the dd's, which go from its delta, not from the grandparent's (which read 2 MiB itself and
 * reaped the shell: its counts grew by 2 + the shell's 8).
 */
static void test_parent_ended_within_round(void **state)
{
	struct proc_io_rounds r = {0};
	struct round out;
	(void)state;

	take(&r, (struct proc_io_sample[]){ proc(100, 1, 50, "sh", 0), proc(200, 100, 60, "bash", 0) }, 2, 1000, &out);
	take_ending(&r, (struct proc_io_sample[]){ proc(100, 1, 50, "sh", 10 * MIB) }, 1, 1100,
		    (struct proc_io_sample[]){ proc(200, 100, 60, "bash", 8 * MIB),
					       proc(300, 200, 1010, "dd", 8 * MIB) },
		    2, &out);
	assert_int_equal(out.deltas[0].read_pages, 512); /* sh: its own 2 MiB */
	assert_int_equal(r.nended, 2);
	assert_int_equal(r.ended[0].last.pid, 200);
	assert_int_equal(r.ended[0].delta.read_pages, 0); /* bash: none of its own */
	assert_int_equal(r.ended[1].delta.read_pages, 2048); /* dd: its 8 MiB */
	proc_io_rounds_free(&r);
}

/* An end written twice (two threads saw the group dead): once in the same drain, once a drain later. */
static void test_end_twice(void **state)
{
	struct proc_io_rounds r = {0};
	struct round out;
	(void)state;

	take(&r, (struct proc_io_sample[]){ proc(100, 1, 50, "sh", 0) }, 1, 1000, &out);
	take_ending(&r, (struct proc_io_sample[]){ proc(100, 1, 50, "sh", 4 * MIB) }, 1, 1100,
		    (struct proc_io_sample[]){ proc(300, 100, 1010, "dd", 4 * MIB),
					       proc(300, 100, 1010, "dd", 4 * MIB) },
		    2, &out);
	assert_int_equal(r.nended, 1);
	assert_int_equal(out.deltas[0].read_pages, 0);
	take_ending(&r, (struct proc_io_sample[]){ proc(100, 1, 50, "sh", 4 * MIB) }, 1, 1200,
		    (struct proc_io_sample[]){ proc(300, 100, 1010, "dd", 4 * MIB) }, 1, &out);
	assert_int_equal(r.nended, 0); /* not counted again */
	assert_int_equal(out.deltas[0].read_pages, 0);
	proc_io_rounds_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reaped_child),     cmocka_unit_test(test_reap_seen_late),
		cmocka_unit_test(test_born_within_round), cmocka_unit_test(test_grandparent),
		cmocka_unit_test(test_ignores_sigchld),  cmocka_unit_test(test_reaper_asked_once),
		cmocka_unit_test(test_end_says_reaper),
		cmocka_unit_test(test_identity),
		cmocka_unit_test(test_ended_child),      cmocka_unit_test(test_born_and_ended),
		cmocka_unit_test(test_end_waits),        cmocka_unit_test(test_parent_born_within_round),
		cmocka_unit_test(test_parent_ended_within_round), cmocka_unit_test(test_end_twice),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
