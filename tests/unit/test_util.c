/* test_util.c: size and range parsing, human sizes, page arithmetic, bounded calls, escaping. */
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/bounded.h"
#include "common/util.h"

static void test_parse_size(void **state)
{
	uint64_t v;
	(void)state;

	assert_int_equal(parse_size("4096", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(parse_size("4k", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(parse_size("4K", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(parse_size("4KiB", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(parse_size("1.5M", &v), 0);
	assert_int_equal(v, 1572864);
	assert_int_equal(parse_size("2g", &v), 0);
	assert_int_equal(v, 2ull << 30);
	assert_int_equal(parse_size("1T", &v), 0);
	assert_int_equal(v, 1ull << 40);
	assert_int_equal(parse_size("16E", &v), -ERANGE);
	assert_int_equal(parse_size("15E", &v), 0);
	assert_int_equal(v, 15ull << 60);
	assert_int_equal(parse_size("0", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(parse_size("7b", &v), 0);
	assert_int_equal(v, 7);
}

static void test_parse_size_rejects(void **state)
{
	uint64_t v = 42;
	(void)state;

	assert_int_equal(parse_size("", &v), -EINVAL);
	assert_int_equal(parse_size("-1", &v), -EINVAL);
	assert_int_equal(parse_size("k", &v), -EINVAL);
	assert_int_equal(parse_size("12x", &v), -EINVAL);
	assert_int_equal(parse_size("1.3", &v), -EINVAL); /* not a whole number of bytes */
	assert_int_equal(parse_size("4KB7", &v), -EINVAL);
	assert_int_equal(parse_size("4 k", &v), -EINVAL);
	assert_int_equal(parse_size("nan", &v), -EINVAL);
	assert_int_equal(parse_size("inf", &v), -EINVAL);
	assert_int_equal(parse_size("1e400", &v), -ERANGE);
	assert_int_equal(parse_size(NULL, &v), -EINVAL);
	assert_int_equal(v, 42); /* untouched on error */
}

static void test_parse_range(void **state)
{
	uint64_t offset, length;
	(void)state;

	assert_int_equal(parse_range("1G:256M", &offset, &length), 0);
	assert_int_equal(offset, 1ull << 30);
	assert_int_equal(length, 256ull << 20);
	assert_int_equal(parse_range("4096", &offset, &length), 0);
	assert_int_equal(offset, 4096);
	assert_int_equal(length, 0);
	assert_int_equal(parse_range(":4k", &offset, &length), -EINVAL);
	assert_int_equal(parse_range("4k:", &offset, &length), -EINVAL);
	assert_int_equal(parse_range("4k:8k:1", &offset, &length), -EINVAL);
	assert_int_equal(parse_range("123456789012345678901234567890123456789012345678901234567890123456789:1", &offset,
				     &length),
			 -EINVAL);
}

static void test_parse_u64(void **state)
{
	uint64_t v;
	(void)state;

	assert_int_equal(parse_u64("18446744073709551615", &v), 0);
	assert_true(v == UINT64_MAX);
	assert_int_equal(parse_u64("18446744073709551616", &v), -ERANGE);
	assert_int_equal(parse_u64("+1", &v), -EINVAL);
	assert_int_equal(parse_u64(" 1", &v), -EINVAL);
	assert_int_equal(parse_u64("1 ", &v), -EINVAL);
}

static void test_human_size(void **state)
{
	char buf[16];
	(void)state;

	assert_string_equal(human_size(0, buf, sizeof(buf)), "0B");
	assert_string_equal(human_size(1023, buf, sizeof(buf)), "1023B");
	assert_string_equal(human_size(1024, buf, sizeof(buf)), "1K");
	assert_string_equal(human_size(1536, buf, sizeof(buf)), "1.5K");
	assert_string_equal(human_size(8388608, buf, sizeof(buf)), "8M");
	assert_string_equal(human_size(1048575, buf, sizeof(buf)), "1M"); /* 1023.999K rounds up */
	assert_string_equal(human_size(133792, buf, sizeof(buf)), "130.7K");
	assert_string_equal(human_size(UINT64_MAX, buf, sizeof(buf)), "16E");
}

static void test_pages_for(void **state)
{
	(void)state;
	assert_int_equal(pages_for(0, 4096), 0);
	assert_int_equal(pages_for(1, 4096), 1);
	assert_int_equal(pages_for(4096, 4096), 1);
	assert_int_equal(pages_for(4097, 4096), 2);
	assert_int_equal(pages_for(1ull << 40, 4096), 268435456);
}

struct doubling {
	int in, out;
	pid_t pid;
};

static void double_it(void *arg)
{
	struct doubling *d = arg;

	d->out = 2 * d->in;
	d->pid = getpid();
}

static void never_returns(void *arg)
{
	(void)arg;
	for (;;)
		pause();
}

/* A child that would hold the caller's descriptors open forever: it must have closed them. */
static void check_closed(void *arg)
{
	int *open_fds = arg;

	*open_fds = 0;
	for (int fd = 0; fd < 64; fd++)
		*open_fds += fcntl(fd, F_GETFD) >= 0;
}

static void test_bounded_call(void **state)
{
	struct doubling d = { .in = 21 };
	int open_fds = -1;
	(void)state;

	/* In time: the result comes back, computed in another process. */
	assert_int_equal(bounded_call(double_it, &d, sizeof(d), 5000), 0);
	assert_int_equal(d.out, 42);
	assert_true(d.pid != getpid() && d.pid > 0);
	/* Never: -ETIMEDOUT, and the caller goes on. */
	d.out = 0;
	assert_int_equal(bounded_call(never_returns, &d, sizeof(d), 50), -ETIMEDOUT);
	assert_int_equal(d.out, 0);
	assert_int_equal(bounded_call(check_closed, &open_fds, sizeof(open_fds), 5000), 0);
	assert_int_equal(open_fds, 0);
}

static void test_bounded_call_keep(void **state)
{
	struct bounded_child left;
	pid_t pid;
	struct doubling d = { .in = 4 };
	(void)state;

	/* In time: as bounded_call, nothing left. */
	assert_int_equal(bounded_call_keep(double_it, &d, sizeof(d), 5000, &left), 0);
	assert_int_equal(d.out, 8);
	assert_int_equal(left.pid, 0);
	assert_true(bounded_child_ended(&left));
	/* Late: left waiting, not killed, and not ended until it ends (here by a signal: a hung
	 * mount's answer, as it were); then reaped. */
	assert_int_equal(bounded_call_keep(never_returns, &d, sizeof(d), 50, &left), -ETIMEDOUT);
	assert_true(left.pid > 0);
	pid = left.pid;
	assert_false(bounded_child_ended(&left));
	assert_int_equal(kill(pid, 0), 0); /* alive, waiting */
	kill(pid, SIGTERM);                /* its answer, as it were: it ends */
	for (int i = 0; i < 500 && !bounded_child_ended(&left); i++)
		usleep(10000);
	assert_int_equal(left.pid, 0);
	assert_int_equal(kill(pid, 0), -1); /* reaped: no zombie left */
	/* Abandoned: killed, for init to reap after we exit (here: the test reaps it). */
	assert_int_equal(bounded_call_keep(never_returns, &d, sizeof(d), 50, &left), -ETIMEDOUT);
	pid = left.pid;
	bounded_child_abandon(&left);
	assert_int_equal(left.pid, 0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
}

/* What another process sees of a marked call while it runs: asked from a grandchild, since a lock's holder never conflicts with itself. */
struct mark_seen {
	struct bounded_mark mark;
	pid_t child, holder;
	double seconds;
	char what[256], comm[16];
	int holder_rc, again_rc, listed;
};

static void nothing(void *arg)
{
	(void)arg;
}

static void look_at_own_mark(void *arg)
{
	struct mark_seen *seen = arg;
	pid_t grandchild;

	seen->child = getpid();
	prctl(PR_GET_NAME, seen->comm);
	grandchild = fork();
	if (grandchild == 0) {
		struct bounded_holder holder;
		char dir[512];
		pid_t *pids;
		size_t count;

		seen->holder_rc = bounded_mark_holder(seen->mark.path, &holder);
		seen->holder = holder.pid;
		seen->seconds = holder.seconds;
		snprintf(seen->what, sizeof(seen->what), "%s", holder.what);
		seen->again_rc = bounded_call_marked(nothing, &count, sizeof(count), 5000, &seen->mark, NULL);
		snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(seen->mark.path, '/') - seen->mark.path), seen->mark.path);
		count = bounded_mark_holders(dir, &pids);
		seen->listed = count == 1 && pids[0] == seen->child;
		free(pids);
		_exit(0);
	}
	if (grandchild > 0)
		waitpid(grandchild, NULL, 0);
}

static void test_bounded_call_marked(void **state)
{
	char dir[] = "/tmp/test_util.XXXXXX";
	struct mark_seen seen = {0};
	struct bounded_holder holder;
	struct doubling d = { .in = 4 };
	struct bounded_child left;
	pid_t *pids, pid;
	(void)state;

	assert_non_null(mkdtemp(dir));
	bounded_mark_path(seen.mark.path, sizeof(seen.mark.path), dir, 0, 4242);
	snprintf(seen.mark.what, sizeof(seen.mark.what), "statfs of /mnt/a b");
	assert_int_equal(bounded_mark_holder(seen.mark.path, &holder), 0); /* no file yet */

	/* While it runs: held by the child, with when and what; a second call is refused, not made. */
	assert_int_equal(bounded_call_marked(look_at_own_mark, &seen, sizeof(seen), 5000, &seen.mark, NULL), 0);
	assert_string_equal(seen.comm, BOUNDED_MARK_NAME);
	assert_int_equal(seen.holder_rc, 1);
	assert_int_equal(seen.holder, seen.child);
	assert_true(seen.seconds >= 0 && seen.seconds < 5);
	assert_string_equal(seen.what, "statfs of /mnt/a b");
	assert_int_equal(seen.again_rc, -EBUSY);
	assert_true(seen.listed);

	/* Once it has ended: free, the file left for the next (no one else could have made it). */
	assert_int_equal(bounded_mark_holder(seen.mark.path, &holder), 0);
	assert_int_equal(bounded_mark_holders(dir, &pids), 0);
	free(pids);
	assert_int_equal(bounded_call_marked(double_it, &d, sizeof(d), 5000, &seen.mark, NULL), 0);
	assert_int_equal(d.out, 8);
	/* Kept (as bounded_call_keep): the child late, left waiting, holds the mark until it ends. */
	assert_int_equal(bounded_call_marked(never_returns, &d, sizeof(d), 50, &seen.mark, &left), -ETIMEDOUT);
	assert_true(left.pid > 0);
	for (int i = 0; i < 500 && bounded_mark_holder(seen.mark.path, &holder) != 1; i++)
		usleep(10000); /* a child not yet scheduled has not taken it yet */
	assert_int_equal(bounded_mark_holder(seen.mark.path, &holder), 1);
	assert_int_equal(holder.pid, left.pid);
	pid = left.pid;
	bounded_child_abandon(&left);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	assert_int_equal(bounded_mark_holder(seen.mark.path, &holder), 0);
	/* A mark that cannot be made: said, fn not called. */
	d.out = 0;
	snprintf(seen.mark.path, sizeof(seen.mark.path), "%s/missing/dev-0:1", dir);
	assert_int_equal(bounded_call_marked(double_it, &d, sizeof(d), 5000, &seen.mark, NULL), -ENOENT);
	assert_int_equal(d.out, 0);

	bounded_mark_path(seen.mark.path, sizeof(seen.mark.path), dir, 0, 4242);
	unlink(seen.mark.path);
	rmdir(dir);
}

static void expect_escaped(const char *text, unsigned what, const char *expected)
{
	char *out = escape_text(text, what);

	assert_string_equal(out, expected);
	free(out);
}

/* What reaches a terminal, a CSV or a JSON parser of a name another user chose. */
static void test_escape_text(void **state)
{
	(void)state;

	/* An OSC title sequence, a colour, a bell, a line break, DEL: all as \xNN with ESCAPE_CONTROL. */
	expect_escaped("a\x1b]0;t\x07\x1b[31mb\nc\x7f", ESCAPE_CONTROL, "a\\x1b]0;t\\x07\\x1b[31mb\\x0ac\\x7f");
	/* Bytes that are not UTF-8 always: a lone continuation, a cut sequence, an overlong one, a surrogate. */
	expect_escaped("\x80x\xe2\x82y\xc0\xafz\xed\xa0\x80", 0, "\\x80x\\xe2\\x82y\\xc0\\xafz\\xed\\xa0\\x80");
	/* Valid UTF-8 kept whole; control characters kept without ESCAPE_CONTROL (JSON escapes them itself). */
	expect_escaped("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\n", 0, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\n");
	/* The backslash only with ESCAPE_BACKSLASH: then the result reads back unambiguously. */
	expect_escaped("a\\x41", ESCAPE_CONTROL, "a\\x41");
	expect_escaped("a\\x41", ESCAPE_CONTROL | ESCAPE_BACKSLASH, "a\\x5cx41");
	expect_escaped("", ESCAPE_CONTROL, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_size),
		cmocka_unit_test(test_parse_size_rejects),
		cmocka_unit_test(test_parse_range),
		cmocka_unit_test(test_parse_u64),
		cmocka_unit_test(test_human_size),
		cmocka_unit_test(test_pages_for),
		cmocka_unit_test(test_bounded_call),
		cmocka_unit_test(test_bounded_call_keep),
		cmocka_unit_test(test_bounded_call_marked),
		cmocka_unit_test(test_escape_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
