/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_util.c: size and range parsing, human sizes, page arithmetic, bounded calls, escaping names
 * for terminals, CSV and JSON, messages said once.
 */
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
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

/*
 * What another process sees of a marked call while it runs: asked from a grandchild, since a lock's
 * holder never conflicts with itself.
 */
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
		snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(seen->mark.path, '/') - seen->mark.path),
			 seen->mark.path);
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

static void crashes(void *arg)
{
	struct doubling *d = arg;

	d->out = -1;
	_exit(1);
}

/* Whether pid has ended and awaits its parent's wait (Z in /proc/PID/stat). */
static bool is_zombie(pid_t pid)
{
	char path[64], text[512], *end;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "r")))
		return false;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	end = strrchr(text, ')');
	return end && end[1] == ' ' && end[2] == 'Z';
}

/* bounded_prober_keep: one child makes the calls, one after the other; a late one is replaced. */
/* A marked call saying what, made by the prober: it held the mark during the call only. */
static void marked_by_prober(struct mark_seen *seen, const char *what, pid_t prober)
{
	struct bounded_holder holder;

	snprintf(seen->mark.what, sizeof(seen->mark.what), "%s", what);
	assert_int_equal(bounded_call_marked(look_at_own_mark, seen, sizeof(*seen), 5000, &seen->mark, NULL), 0);
	assert_int_equal(seen->child, prober);
	assert_string_equal(seen->comm, BOUNDED_MARK_NAME);
	assert_int_equal(seen->holder_rc, 1);
	assert_int_equal(seen->holder, prober);
	assert_string_equal(seen->what, what);
	assert_int_equal(seen->again_rc, -EBUSY);
	assert_int_equal(bounded_mark_holder(seen->mark.path, &holder), 0);
}

static void test_bounded_prober(void **state)
{
	char dir[] = "/tmp/test_util.XXXXXX";
	struct doubling d = { .in = 5 };
	struct mark_seen seen = {0};
	struct bounded_holder holder;
	pid_t prober, stuck;
	int open_fds = -1;
	(void)state;

	assert_non_null(mkdtemp(dir));
	bounded_prober_keep(true);
	assert_int_equal(bounded_call(double_it, &d, sizeof(d), 5000), 0);
	assert_int_equal(d.out, 10);
	prober = d.pid;
	assert_true(prober > 0 && prober != getpid());
	d.in = 6;
	assert_int_equal(bounded_call(double_it, &d, sizeof(d), 5000), 0);
	assert_int_equal(d.out, 12);
	assert_int_equal(d.pid, prober); /* the same child: no fork for the second call */
	assert_int_equal(bounded_call(check_closed, &open_fds, sizeof(open_fds), 5000), 0);
	assert_int_equal(open_fds, 1); /* its socket to us, nothing else */

	/* Marked: held by it during the call, and let go after, though it lives on. */
	bounded_mark_path(seen.mark.path, sizeof(seen.mark.path), dir, 0, 4343);
	marked_by_prober(&seen, "statfs of /mnt/c", prober);
	assert_int_equal(kill(prober, 0), 0);
	/* Again, with shorter words (its mark file kept open): held again, and says only these. */
	marked_by_prober(&seen, "stat of /c", prober);

	/* Late: -ETIMEDOUT, killed; the next call is another child's. */
	assert_int_equal(bounded_call_marked(never_returns, &d, sizeof(d), 50, &seen.mark, NULL), -ETIMEDOUT);
	for (int i = 0; i < 500 && !is_zombie(prober); i++)
		usleep(10000); /* killed: it ends, and its mark goes with it */
	assert_true(is_zombie(prober));
	assert_int_equal(bounded_mark_holder(seen.mark.path, &holder), 0);
	assert_int_equal(bounded_call(double_it, &d, sizeof(d), 5000), 0);
	assert_int_equal(d.out, 12);
	assert_true(d.pid != prober && d.pid != getpid());
	assert_int_equal(kill(prober, 0), -1); /* reaped as the next one started */
	/* Dead between calls (killed by someone): reaped, and another makes the call. */
	stuck = d.pid;
	kill(stuck, SIGKILL);
	for (int i = 0; i < 500 && !is_zombie(stuck); i++)
		usleep(10000);
	assert_int_equal(bounded_call(double_it, &d, sizeof(d), 5000), 0);
	assert_true(d.pid != stuck && d.pid != getpid());
	assert_int_equal(kill(stuck, 0), -1);
	/* Dead in the call (fn crashed): 0 with arg as it was, as a one-off child that died. */
	prober = d.pid;
	d.out = 7;
	assert_int_equal(bounded_call(crashes, &d, sizeof(d), 5000), 0);
	assert_int_equal(d.out, 7);
	assert_int_equal(kill(prober, 0), -1); /* reaped */
	assert_int_equal(bounded_call(double_it, &d, sizeof(d), 5000), 0); /* and the next call's another */
	assert_true(d.pid != prober && d.pid != getpid());
	/* Not kept: it ends, reaped; calls are one-off children again. */
	prober = d.pid;
	bounded_prober_keep(false);
	assert_int_equal(kill(prober, 0), -1);
	assert_int_equal(bounded_call(double_it, &d, sizeof(d), 5000), 0);
	assert_true(d.pid != prober);

	unlink(seen.mark.path);
	rmdir(dir);
}

static void expect_escaped(const char *text, unsigned what, const char *expected)
{
	char *out = escape_text(text, what);

	assert_string_equal(out, expected);
	free(out);
}

/* The documented way back (iolens(1), NAMES IN OUTPUT): each \xNN is the byte NN. */
static char *unescape(const char *text)
{
	char *out = malloc(strlen(text) + 1), *o = out;

	assert_non_null(out);
	for (const char *p = text; *p;) {
		unsigned byte;

		if (p[0] == '\\' && p[1] == 'x' && sscanf(p + 2, "%2x", &byte) == 1 &&
		    strspn(p + 2, "0123456789abcdef") >= 2) {
			*o++ = (char)byte;
			p += 4;
		} else {
			*o++ = *p++;
		}
	}
	*o = '\0';
	return out;
}

/* iolens sets LC_CTYPE from the environment; the tests of what a locale shows choose theirs. */
static void use_locale(const char *name)
{
	if (!setlocale(LC_CTYPE, name))
		fail_msg("locale %s is not there (glibc >= 2.35 has C.UTF-8 built in)", name);
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
	/* ESCAPE_BACKSLASH_X (util-linux's rule): only a backslash before an x, which reads back as well. */
	expect_escaped("a\\b\\x41\\", ESCAPE_BACKSLASH_X, "a\\b\\x5cx41\\");
	expect_escaped("", ESCAPE_CONTROL, "");
}

/*
 * C1 controls: a terminal takes U+009B for CSI and U+009D for OSC, encoded in UTF-8 (c2 9b)
 * or, on an 8-bit terminal, as the raw byte. Both are escaped, every byte as \xNN, as C0 is.
 */
static void test_escape_c1(void **state)
{
	(void)state;

	expect_escaped("a\xc2\x9b"
		       "31mb\xc2\x9d"
		       "0;t\xc2\x9c",
		       ESCAPE_CONTROL, "a\\xc2\\x9b31mb\\xc2\\x9d0;t\\xc2\\x9c");
	/* The edges: DEL and U+0080 in, U+009F in, U+00A0 (no-break space) and U+00A1 out. */
	expect_escaped("\x7f|\xc2\x80|\xc2\x9f|\xc2\xa0|\xc2\xa1", ESCAPE_CONTROL,
		       "\\x7f|\\xc2\\x80|\\xc2\\x9f|\xc2\xa0|\xc2\xa1");
	/* Raw bytes 0x80..0x9f are not UTF-8 on their own: escaped with any flags, or none. */
	expect_escaped("\x9b" "31m\x9d" "0;t", 0, "\\x9b31m\\x9d0;t");
	expect_escaped("\x9b", ESCAPE_CONTROL, "\\x9b");
	/* Without ESCAPE_CONTROL (JSON's strings) a C1 character is kept: the JSON writer escapes it. */
	expect_escaped("\xc2\x9b", 0, "\xc2\x9b");
	/* CSV keeps line feeds and tabs, not C1 (U+0085, NEXT LINE, is a line break to some). */
	expect_escaped("a\nb\tc\xc2\x85" "d\r", ESCAPE_CONTROL | ESCAPE_KEEP_BREAKS, "a\nb\tc\\xc2\\x85d\\x0d");
}

/* Bidirectional controls (CVE-2021-42574, "Trojan Source") and characters that show nothing. */
static void test_escape_bidi_and_invisible(void **state)
{
	(void)state;

	/* RIGHT-TO-LEFT OVERRIDE: "evil\u202Etxt.exe" would show as "evilexe.txt". */
	expect_escaped("evil\xe2\x80\xaetxt.exe", ESCAPE_CONTROL, "evil\\xe2\\x80\\xaetxt.exe");
	/* U+202A..U+202E in; U+2029 (PARAGRAPH SEPARATOR) in; U+202F (NARROW NO-BREAK SPACE) out. */
	expect_escaped("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad", ESCAPE_CONTROL,
		       "\\xe2\\x80\\xaa\\xe2\\x80\\xab\\xe2\\x80\\xac\\xe2\\x80\\xad");
	expect_escaped("\xe2\x80\xa9|\xe2\x80\xaf", ESCAPE_CONTROL, "\\xe2\\x80\\xa9|\xe2\x80\xaf");
	/* The isolates U+2066..U+2069 in; U+2070 (SUPERSCRIPT ZERO) out. */
	expect_escaped("\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9\xe2\x81\xb0", ESCAPE_CONTROL,
		       "\\xe2\\x81\\xa6\\xe2\\x81\\xa7\\xe2\\x81\\xa8\\xe2\\x81\\xa9\xe2\x81\xb0");
	/* LRM, RLM and ALM (U+200E, U+200F, U+061C) in; U+061B (ARABIC SEMICOLON) out. */
	expect_escaped("\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c\xd8\x9b", ESCAPE_CONTROL,
		       "\\xe2\\x80\\x8e\\xe2\\x80\\x8f\\xd8\\x9c\xd8\x9b");
	/* ZERO WIDTH SPACE, BOM, HANGUL FILLER, a tag (U+E0041, an unseen 'A') in. */
	expect_escaped("\xe2\x80\x8b\xef\xbb\xbf\xe3\x85\xa4\xf3\xa0\x81\x81", ESCAPE_CONTROL,
		       "\\xe2\\x80\\x8b\\xef\\xbb\\xbf\\xe3\\x85\\xa4\\xf3\\xa0\\x81\\x81");
	/* Kept: the joiners (Persian "mi-khaham" with ZWNJ; a family emoji with ZWJ), a variation selector. */
	expect_escaped("\xd9\x85\xdb\x8c\xe2\x80\x8c\xd8\xae\xd9\x88\xd8\xa7\xd9\x87\xd9\x85", ESCAPE_CONTROL,
		       "\xd9\x85\xdb\x8c\xe2\x80\x8c\xd8\xae\xd9\x88\xd8\xa7\xd9\x87\xd9\x85");
	expect_escaped("\xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91\xa7 \xe2\x9d\xa4\xef\xb8\x8f", ESCAPE_CONTROL,
		       "\xf0\x9f\x91\xa8\xe2\x80\x8d\xf0\x9f\x91\xa7 \xe2\x9d\xa4\xef\xb8\x8f");
	/* Accented letters, CJK and combining marks as they are. */
	expect_escaped("\xc3\xa9t\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 e\xcc\x81", ESCAPE_TERMINAL & ~ESCAPE_LOCALE,
		       "\xc3\xa9t\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 e\xcc\x81");
}

/* Sequences cut short or too long: each byte as \xNN, and what follows still read as UTF-8. */
static void test_escape_broken_utf8(void **state)
{
	(void)state;

	/* Cut at the end, and before an ASCII byte or another sequence. */
	expect_escaped("a\xe2\x80", ESCAPE_CONTROL, "a\\xe2\\x80");
	expect_escaped("\xf0\x9f\x98x", 0, "\\xf0\\x9f\\x98x");
	expect_escaped("\xe2\x80\xc3\xa9", 0, "\\xe2\\x80\xc3\xa9");
	/* A cut U+202E is no override, but not UTF-8 either: escaped all the same. */
	expect_escaped("\xe2\x80", 0, "\\xe2\\x80");
	/* Overlong forms: of DEL (c1 bf), of '/' (e0 80 af), of U+009B (e0 82 9b), of the euro sign. */
	expect_escaped("\xc1\xbf|\xe0\x80\xaf|\xe0\x82\x9b|\xf0\x82\x82\xac", 0,
		       "\\xc1\\xbf|\\xe0\\x80\\xaf|\\xe0\\x82\\x9b|\\xf0\\x82\\x82\\xac");
	/* A surrogate (ed b2 80), past U+10FFFF (f4 90 80 80), bytes that never start one (f5, fe, ff). */
	expect_escaped("\xed\xb2\x80|\xf4\x90\x80\x80|\xf5\x80|\xfe\xff", 0,
		       "\\xed\\xb2\\x80|\\xf4\\x90\\x80\\x80|\\xf5\\x80|\\xfe\\xff");
	/* The largest code point is fine (a noncharacter, unassigned: ESCAPE_LOCALE's business). */
	expect_escaped("\xf4\x8f\xbf\xbf", ESCAPE_CONTROL, "\xf4\x8f\xbf\xbf");
}

/* ESCAPE_LOCALE: in a UTF-8 locale what iswprint() rejects; in any other every byte beyond ASCII. */
static void test_escape_locale(void **state)
{
	(void)state;

	use_locale("C.UTF-8");
	assert_true(locale_is_utf8());
	expect_escaped("\xc3\xa9t\xc3\xa9 \xe4\xb8\xad", ESCAPE_TERMINAL, "\xc3\xa9t\xc3\xa9 \xe4\xb8\xad");
	/* U+0378 is unassigned, U+FFFE a noncharacter: escaped for a terminal, kept in CSV. */
	expect_escaped("\xcd\xb8|\xef\xbf\xbe", ESCAPE_TERMINAL, "\\xcd\\xb8|\\xef\\xbf\\xbe");
	expect_escaped("\xcd\xb8|\xef\xbf\xbe", ESCAPE_CONTROL, "\xcd\xb8|\xef\xbf\xbe");
	use_locale("C");
	assert_false(locale_is_utf8());
	/* An 8-bit terminal takes the c4 9b of U+011B for 'A' and CSI: every byte beyond ASCII escaped. */
	expect_escaped("\xc4\x9b \xc3\xa9 a\\b", ESCAPE_TERMINAL, "\\xc4\\x9b \\xc3\\xa9 a\\x5cb");
	expect_escaped("\xc3\xa9", ESCAPE_CONTROL | ESCAPE_BACKSLASH, "\xc3\xa9"); /* CSV: not the locale's */
	use_locale("C.UTF-8");
}

/* Whatever the input and the flags: valid UTF-8 out, nothing hidden left, and the way back exact. */
static void test_escape_round_trip(void **state)
{
	static const char *const names[] = {
		"plain", "a\\x41\\", "\x1b[31m\xc2\x9b\xc2\x9d\xe2\x80\xae\xe2\x81\xa6\xff\x80\xe2\x80",
		"\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80\xf3\xa0\x81\x81\xed\xa0\x80\xc0\xaf", "\n\t\r\x7f",
	};
	static const unsigned flags[] = {
		ESCAPE_BACKSLASH,
		ESCAPE_CONTROL | ESCAPE_BACKSLASH,
		ESCAPE_TERMINAL,
		ESCAPE_CONTROL | ESCAPE_KEEP_BREAKS | ESCAPE_BACKSLASH,
		ESCAPE_CONTROL | ESCAPE_LOCALE | ESCAPE_BACKSLASH_X,
	};
	(void)state;

	use_locale("C.UTF-8");
	for (size_t n = 0; n < sizeof(names) / sizeof(names[0]); n++)
		for (size_t f = 0; f < sizeof(flags) / sizeof(flags[0]); f++) {
			char *out = escape_text(names[n], flags[f]), *back = unescape(out);

			for (const char *p = out; *p;) {
				uint32_t c;
				size_t len = utf8_decode(p, &c);

				assert_true(len > 0);
				if (flags[f] & ESCAPE_CONTROL)
					assert_true(!char_hidden(c) ||
						    ((flags[f] & ESCAPE_KEEP_BREAKS) && (c == '\n' || c == '\t')));
				p += len;
			}
			assert_string_equal(back, names[n]);
			free(back);
			free(out);
		}
}

static void test_char_hidden(void **state)
{
	static const uint32_t in[] = { 0x00,   0x1f,   0x7f,   0x80,   0x85,    0x9b,    0x9d,    0x9f,
				       0x61c,  0x115f, 0x1160, 0x180e, 0x200b,  0x200e,  0x200f,  0x2028,
				       0x2029, 0x202a, 0x202e, 0x2060, 0x2066,  0x2069,  0x206f,  0x3164,
				       0xfeff, 0xffa0, 0xfff9, 0xfffb, 0x1bca0, 0x1d173, 0xe0001, 0xe007f };
	static const uint32_t out[] = { 0x20, 0x7e, 0xa0, 0xad, 0xe9, 0x61b, 0x61d, 0x1161, 0x200a, 0x200c, 0x200d,
					0x2027, 0x202f, 0x205f, 0x2070, 0x3163, 0x3165, 0xfe0f, 0xfefe, 0xfffc, 0xfffd,
					0x1f600, 0xe0080, 0xe0100, 0x10ffff };
	(void)state;

	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		if (!char_hidden(in[i]))
			fail_msg("U+%04X should be hidden", in[i]);
	for (size_t i = 0; i < sizeof(out) / sizeof(out[0]); i++)
		if (char_hidden(out[i]))
			fail_msg("U+%04X should be shown", out[i]);
}

static void test_utf8_decode(void **state)
{
	uint32_t c;
	(void)state;

	assert_int_equal(utf8_decode("A", &c), 1);
	assert_int_equal(c, 'A');
	assert_int_equal(utf8_decode("", &c), 0);
	assert_int_equal(utf8_decode("\xc2\x9b", &c), 2);
	assert_int_equal(c, 0x9b);
	assert_int_equal(utf8_decode("\xe2\x80\xae", &c), 3);
	assert_int_equal(c, 0x202e);
	assert_int_equal(utf8_decode("\xf4\x8f\xbf\xbf", &c), 4);
	assert_int_equal(c, 0x10ffff);
	/* Not UTF-8: a continuation, a cut one, overlong, a surrogate, too large. */
	assert_int_equal(utf8_decode("\x9b", &c), 0);
	assert_int_equal(utf8_decode("\xe2\x80", &c), 0);
	assert_int_equal(utf8_decode("\xc1\x9b", &c), 0);
	assert_int_equal(utf8_decode("\xe0\x9f\xbf", &c), 0);
	assert_int_equal(utf8_decode("\xed\xa0\x80", &c), 0);
	assert_int_equal(utf8_decode("\xf4\x90\x80\x80", &c), 0);
}

/* Terminal columns: a wide character two, a combining one none; never half a character. */
static void test_text_fit(void **state)
{
	size_t width;
	(void)state;

	use_locale("C.UTF-8");
	assert_int_equal(text_width("abc"), 3);
	assert_int_equal(text_width("\xe4\xb8\xad\xe6\x96\x87"), 4);
	assert_int_equal(text_width("e\xcc\x81t\xc3\xa9"), 3);
	assert_int_equal(text_width("\\xe2\\x80\\xae"), 12);
	assert_int_equal(text_fit("\xe4\xb8\xad\xe6\x96\x87", 3, &width), 3); /* 中 fits, 文 would not */
	assert_int_equal(width, 2);
	assert_int_equal(text_fit("e\xcc\x81x", 1, &width), 3); /* the accent goes with its e */
	assert_int_equal(width, 1);
	assert_int_equal(text_fit("io\\xc2\\x9b\\xc2", 5, &width), 2); /* an escape whole, or not at all */
	assert_int_equal(width, 2);
	assert_int_equal(text_fit("io\\xc2\\x9b\\xc2", 12, &width), 10);
	assert_int_equal(width, 10);
	assert_int_equal(text_fit("a\\xz", 3, &width), 3); /* not an escape: a backslash and letters */
	assert_int_equal(text_fit("abc", 0, &width), 0);
	assert_int_equal(width, 0);
}

/* Four names in one message: each its own. */
static void test_printable_name(void **state)
{
	const char *a, *b, *c, *d;
	(void)state;

	use_locale("C.UTF-8");
	a = printable_name("a\xc2\x9b");
	b = printable_name("b\xe2\x80\xae");
	c = printable_name("c\\");
	d = printable_name("d\xc3\xa9");
	assert_string_equal(a, "a\\xc2\\x9b");
	assert_string_equal(b, "b\\xe2\\x80\\xae");
	assert_string_equal(c, "c\\x5c");
	assert_string_equal(d, "d\xc3\xa9");
}

/* What warn_msg and warn_detail write to stderr while fn runs, read back from a file. */
static char *stderr_of(void (*fn)(void))
{
	static char text[1024];
	FILE *file = tmpfile();
	int saved = dup(STDERR_FILENO);
	size_t len;

	assert_non_null(file);
	assert_true(saved >= 0);
	fflush(stderr);
	assert_true(dup2(fileno(file), STDERR_FILENO) >= 0);
	fn();
	fflush(stderr);
	assert_true(dup2(saved, STDERR_FILENO) >= 0);
	close(saved);
	rewind(file);
	len = fread(text, 1, sizeof(text) - 1, file);
	text[len] = '\0';
	fclose(file);
	return text;
}

static void say_repeats(void)
{
	for (int disk = 0; disk < 3; disk++) /* once per disk, as a collector would */
		warn_msg("no eBPF (%s): estimating from /proc", "needs root");
	warn_msg("interval %d: late", 1);
	warn_msg("interval %d: late", 2); /* a text that differs is said */
	warn_msg("interval %d: late", 1);
	warn_errno("/x", ENOENT);
	warn_errno("/x", ENOENT);
	warn_detail("what the estimate misses"); /* not without -v */
	warn_verbose = true;
	warn_detail("what the estimate misses");
	warn_detail("what the estimate misses");
	warn_verbose = false;
}

static void test_warn_once(void **state)
{
	(void)state;

	program_name = "iolens test";
	assert_string_equal(stderr_of(say_repeats),
			    "iolens test: no eBPF (needs root): estimating from /proc\n"
			    "iolens test: interval 1: late\n"
			    "iolens test: interval 2: late\n"
			    "iolens test: /x: No such file or directory\n"
			    "iolens test: what the estimate misses\n");
	/* Said once per run: not again later either. */
	assert_string_equal(stderr_of(say_repeats), "");
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
		cmocka_unit_test(test_bounded_prober),
		cmocka_unit_test(test_escape_text),
		cmocka_unit_test(test_escape_c1),
		cmocka_unit_test(test_escape_bidi_and_invisible),
		cmocka_unit_test(test_escape_broken_utf8),
		cmocka_unit_test(test_escape_locale),
		cmocka_unit_test(test_escape_round_trip),
		cmocka_unit_test(test_char_hidden),
		cmocka_unit_test(test_utf8_decode),
		cmocka_unit_test(test_text_fit),
		cmocka_unit_test(test_printable_name),
		cmocka_unit_test(test_warn_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
