/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_bench.c: iolens bench's block-size lists, durations, knee, latency target, chart, and the
 * engine on a real file.
 */
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <unistd.h>

#include "workload/bench.h"
#include "workload/engine.h"

static void test_parse_sizes(void **state)
{
	uint64_t bs[BENCH_MAX_POINTS];
	(void)state;

	assert_int_equal(bench_parse_sizes("4k", bs, BENCH_MAX_POINTS), 1);
	assert_int_equal(bs[0], 4096);
	assert_int_equal(bench_parse_sizes("4k,64k,1m", bs, BENCH_MAX_POINTS), 3);
	assert_int_equal(bs[1], 65536);
	assert_int_equal(bs[2], 1 << 20);
	/* Lists are put in order, each size once. */
	assert_int_equal(bench_parse_sizes("1m,4k,64k,4k", bs, BENCH_MAX_POINTS), 3);
	assert_int_equal(bs[0], 4096);
	assert_int_equal(bs[1], 65536);
	assert_int_equal(bs[2], 1 << 20);
	assert_int_equal(bench_parse_sizes("8k,8k,8k", bs, 1), 1);
	/* The default sweep: 4k to 4m doubling, eleven sizes. */
	assert_int_equal(bench_parse_sizes("4k-4m", bs, BENCH_MAX_POINTS), 11);
	assert_int_equal(bs[0], 4096);
	assert_int_equal(bs[5], 128 << 10);
	assert_int_equal(bs[10], 4 << 20);
	/* A bound that is not a doubling still ends the range. */
	assert_int_equal(bench_parse_sizes("4k-48k", bs, BENCH_MAX_POINTS), 5);
	assert_int_equal(bs[3], 32 << 10);
	assert_int_equal(bs[4], 48 << 10);
	assert_int_equal(bench_parse_sizes("8k-8k", bs, BENCH_MAX_POINTS), 1);
	/* Refused: empty parts, reversed ranges, too small or too large, too many. */
	assert_int_equal(bench_parse_sizes("", bs, BENCH_MAX_POINTS), -EINVAL);
	assert_int_equal(bench_parse_sizes("4k,", bs, BENCH_MAX_POINTS), -EINVAL);
	assert_int_equal(bench_parse_sizes(",4k", bs, BENCH_MAX_POINTS), -EINVAL);
	assert_int_equal(bench_parse_sizes("1m-4k", bs, BENCH_MAX_POINTS), -EINVAL);
	assert_int_equal(bench_parse_sizes("100", bs, BENCH_MAX_POINTS), -EINVAL);
	assert_int_equal(bench_parse_sizes("128m", bs, BENCH_MAX_POINTS), -EINVAL);
	assert_int_equal(bench_parse_sizes("4x", bs, BENCH_MAX_POINTS), -EINVAL);
	assert_int_equal(bench_parse_sizes("4k-", bs, BENCH_MAX_POINTS), -EINVAL);
	assert_int_equal(bench_parse_sizes("4k-4m", bs, 10), -EINVAL);
	assert_int_equal(bench_parse_sizes("4k,8k,16k", bs, 2), -EINVAL);
}

static void test_parse_duration(void **state)
{
	uint64_t ns;
	(void)state;

	assert_int_equal(bench_parse_duration("500us", &ns), 0);
	assert_int_equal(ns, 500000);
	assert_int_equal(bench_parse_duration("2ms", &ns), 0);
	assert_int_equal(ns, 2000000);
	assert_int_equal(bench_parse_duration("0.1s", &ns), 0);
	assert_int_equal(ns, 100000000);
	assert_int_equal(bench_parse_duration("1500ns", &ns), 0);
	assert_int_equal(ns, 1500);
	assert_int_equal(bench_parse_duration("3", &ns), 0); /* a bare number is ms */
	assert_int_equal(ns, 3000000);
	assert_int_equal(bench_parse_duration("2 ms", &ns), -EINVAL);
	assert_int_equal(bench_parse_duration("ms", &ns), -EINVAL);
	assert_int_equal(bench_parse_duration("-1ms", &ns), -EINVAL);
	assert_int_equal(bench_parse_duration("nanms", &ns), -EINVAL);
	assert_int_equal(bench_parse_duration("1e30s", &ns), -EINVAL);
}

/* A sweep for bench_find_knee: each point's MB/s, and the spread of its runs (NULL: single runs). */
struct sweep {
	const double *mbps, *spread;
};

static double sweep_value(unsigned index, void *context)
{
	return ((const struct sweep *)context)->mbps[index];
}

static double sweep_spread(unsigned index, void *context)
{
	const struct sweep *s = context;

	return s->spread ? s->spread[index] : NAN;
}

static struct bench_knee knee_of(unsigned count, const double *mbps, const double *spread)
{
	struct sweep s = { mbps, spread };

	return bench_find_knee(count, sweep_value, sweep_spread, &s, 0.95);
}

static void test_knee(void **state)
{
	/* A dd sweep (4K..64K, MB/s): flat from 48K at about 390. */
	double dd_sweep[] = { 50, 100, 200, 300, 340, 380, 390, 392, 391 };
	double flat[] = { 10, 10, 10 };
	double rising[] = { 1, 2, 4, 8 };
	double fall[] = { 100, 200, 400, 300 };         /* a larger size fell: the peak stands alone */
	double level[] = { 100, 200, 400, 390 };        /* the peak, and a larger size within 95 % of it */
	double plateau[] = { 100, 300, 380, 400 };      /* the last still rose, within 95 %: a plateau */
	double quiet[] = { 0, 0, 0.02, 0 }, noisy[] = { 0, 0, 0.12, 0 }; /* the runs' spreads, as fractions */
	struct bench_knee knee;
	(void)state;

	knee = knee_of(9, dd_sweep, NULL);
	assert_int_equal(knee.peak, 7);
	assert_int_equal(knee.index, 5); /* 380 >= 0.95 * 392 = 372.4; 340 is not */
	assert_false(knee.unconfirmed);  /* below the peak: the plateau confirms it */
	knee = knee_of(3, flat, NULL);
	assert_int_equal(knee.index, 0);
	assert_int_equal(knee.peak, 0);
	assert_false(knee.unconfirmed);
	/* The issue's --bs 4k-64k: still rising at the largest size swept: the knee is the last point. */
	knee = knee_of(4, rising, NULL);
	assert_int_equal(knee.index, 3);
	assert_int_equal(knee.peak, 3);
	assert_true(knee.unconfirmed);
	assert_int_equal(knee.why, KNEE_LAST);
	knee = knee_of(4, rising, quiet); /* however quiet its runs */
	assert_int_equal(knee.why, KNEE_LAST);
	/* The peak itself as the knee, single runs: confirmed by a larger size near it, else noise. */
	knee = knee_of(4, fall, NULL);
	assert_int_equal(knee.index, 2);
	assert_true(knee.unconfirmed);
	assert_int_equal(knee.why, KNEE_NOISE);
	knee = knee_of(4, level, NULL);
	assert_int_equal(knee.index, 2);
	assert_false(knee.unconfirmed);
	/* With --repeat: the spread of the peak's runs decides, over the 5 % margin or not. */
	knee = knee_of(4, fall, quiet);
	assert_false(knee.unconfirmed);
	knee = knee_of(4, level, noisy);
	assert_true(knee.unconfirmed);
	assert_int_equal(knee.why, KNEE_NOISE);
	knee = knee_of(4, plateau, NULL);
	assert_int_equal(knee.index, 2);
	assert_int_equal(knee.peak, 3);
	assert_false(knee.unconfirmed);
	knee = knee_of(4, plateau, noisy); /* below the peak: no spread makes it unconfirmed */
	assert_false(knee.unconfirmed);
	knee = knee_of(0, rising, NULL);
	assert_int_equal(knee.index, -1);
	assert_int_equal(knee.peak, -1);
}

static uint64_t p99_of(unsigned index, void *context)
{
	return ((const uint64_t *)context)[index];
}

static void test_latency_target(void **state)
{
	uint64_t p99[] = { 100000, 150000, 400000, 900000, 2500000 };
	(void)state;

	assert_int_equal(bench_latency_target(5, p99_of, p99, 1000000), 3);
	assert_int_equal(bench_latency_target(5, p99_of, p99, 900000), 3); /* within: at or under */
	assert_int_equal(bench_latency_target(5, p99_of, p99, 3000000), 4);
	assert_int_equal(bench_latency_target(5, p99_of, p99, 50000), -1);
}

static void svg_values(unsigned index, void *context, struct bench_svg_value *out)
{
	(void)context;
	out->x = 4096ull << index;
	out->mb_per_s = 100.0 * (index + 1);
	out->iops = 1000.0 / (index + 1);
}

static void test_svg(void **state)
{
	char *text = NULL;
	size_t length = 0;
	FILE *out = open_memstream(&text, &length);
	(void)state;

	assert_int_equal(bench_svg(out, 4, BENCH_SVG_BS, svg_values, NULL, 2), 0);
	fclose(out);
	assert_non_null(strstr(text, "<svg "));
	assert_non_null(strstr(text, "</svg>"));
	assert_non_null(strstr(text, "class=\"mb_per_s\""));
	assert_non_null(strstr(text, "class=\"iops\""));
	assert_non_null(strstr(text, "knee: 16K")); /* the third point */
	assert_non_null(strstr(text, ">4K<"));
	assert_non_null(strstr(text, ">32K<"));
	free(text);
}

static void mode_values(unsigned index, void *context, struct bench_svg_value *out)
{
	static const char *const modes[] = { "direct", "cold", "warm" };
	(void)context;
	out->x = 1 << 20; /* one block size: only the label tells them apart */
	out->label = modes[index];
	out->mb_per_s = index == 2 ? 5000 : 500;
	out->iops = out->mb_per_s;
}

/* --compare-cache's chart: a pair of bars per mode, each labelled, the tallest reaching the top of its axis. */
static void test_svg_modes(void **state)
{
	char *text = NULL, *p;
	size_t length = 0;
	FILE *out = open_memstream(&text, &length);
	unsigned bars = 0;
	(void)state;

	assert_int_equal(bench_svg(out, 3, BENCH_SVG_MODES, mode_values, NULL, -1), 0);
	fclose(out);
	for (p = text; (p = strstr(p, "<rect class=\"")); p++)
		bars++;
	assert_int_equal(bars, 6);
	assert_null(strstr(text, "<polyline"));
	assert_non_null(strstr(text, ">direct<"));
	assert_non_null(strstr(text, ">cold<"));
	assert_non_null(strstr(text, ">warm<"));
	assert_non_null(strstr(text, "<title>warm: 5000.0 MB/s</title>"));
	assert_non_null(strstr(text, "MB/s and IOPS by mode"));
	assert_null(strstr(text, "knee"));
	free(text);
}

static void odd_values(unsigned index, void *context, struct bench_svg_value *out)
{
	(void)context;
	out->x = 1 << 20;
	out->label = index ? "a<b & \"c\">" : "plain";
	out->mb_per_s = out->iops = 100;
}

/* A bar's label is text of the document: render/svg.c escapes it, and the document stays XML. */
static void test_svg_escapes(void **state)
{
	char *text = NULL;
	size_t length = 0;
	FILE *out = open_memstream(&text, &length);
	(void)state;

	assert_int_equal(bench_svg(out, 2, BENCH_SVG_MODES, odd_values, NULL, -1), 0);
	fclose(out);
	assert_null(strstr(text, "a<b"));
	assert_non_null(strstr(text, ">a&lt;b &amp; &quot;c&quot;&gt;</text>"));
	assert_non_null(strstr(text, "<title>a&lt;b &amp; &quot;c&quot;&gt;: 100.0 MB/s</title>"));
	assert_non_null(strstr(text, ">plain<"));
	free(text);
}

/* A file of n MiB in a scratch directory. */
static char *make_file(char *dir, unsigned mib)
{
	char *path;
	int fd;
	static char chunk[1 << 20];

	if (asprintf(&path, "%s/data", dir) < 0)
		abort();
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	memset(chunk, 'x', sizeof(chunk));
	for (unsigned i = 0; i < mib; i++)
		assert_int_equal(write(fd, chunk, sizeof(chunk)), (ssize_t)sizeof(chunk));
	close(fd);
	return path;
}

static uint64_t histogram_total(const struct bench_dir_stats *s)
{
	uint64_t total = 0;

	for (unsigned b = 0; b < VTRACE_HISTOGRAM_BUCKETS; b++)
		total += s->hist[b];
	return total;
}

static void check_consistent(const struct bench_dir_stats *s)
{
	assert_int_equal(histogram_total(s), s->ios);
	assert_true(s->lat_min <= s->lat_sum / s->ios);
	assert_true(s->lat_sum / s->ios <= s->lat_max);
	assert_true(bench_quantile(s, 0.5) <= bench_quantile(s, 0.99));
	assert_true(bench_quantile(s, 0.99) <= s->lat_max);
	assert_true(bench_quantile(s, 0.01) >= s->lat_min);
}

static void test_engine_size_bound(void **state)
{
	char *dir = unit_tmpdir(), *path = make_file(dir, 4);
	int fd = open(path, O_RDWR | O_CLOEXEC);
	struct bench_spec spec = {
		.fd = fd, .read_percent = 100, .bs = 4096, .span = 4 << 20, .qd = 1, .jobs = 1,
		.engine = ENGINE_PSYNC, .bytes_limit = 4 << 20, .runtime_ns = 60000000000ull,
	};
	struct bench_result *result = calloc(1, sizeof(*result));
	(void)state;

	/* Sequential psync reads of the whole file: exactly size / bs requests, no writes. */
	assert_int_equal(bench_run(&spec, result), 0);
	assert_int_equal(result->dir[BENCH_READ].ios, 1024);
	assert_int_equal(result->dir[BENCH_READ].bytes, 4 << 20);
	assert_int_equal(result->dir[BENCH_WRITE].ios, 0);
	assert_false(result->synced);
	assert_true(result->elapsed_ns > 0);
	check_consistent(&result->dir[BENCH_READ]);

	/* io_uring, 8 in flight, two jobs, random: the budget split over the jobs, still exact. */
	spec.engine = ENGINE_IO_URING;
	spec.qd = 8;
	spec.jobs = 2;
	spec.random = true;
	spec.bytes_limit = 3 << 20;
	assert_int_equal(bench_run(&spec, result), 0);
	assert_int_equal(result->dir[BENCH_READ].ios, 768);
	assert_int_equal(result->dir[BENCH_READ].bytes, 3 << 20);
	check_consistent(&result->dir[BENCH_READ]);

	/* A mix: reads and writes both, in about the asked proportion, buffered writes synced. */
	spec.read_percent = 70;
	spec.sync_writes = true;
	spec.bytes_limit = 4 << 20;
	assert_int_equal(bench_run(&spec, result), 0);
	assert_int_equal(result->dir[BENCH_READ].ios + result->dir[BENCH_WRITE].ios, 1024);
	assert_in_range(result->dir[BENCH_READ].ios, 600, 830);
	assert_true(result->synced);
	check_consistent(&result->dir[BENCH_WRITE]);
	/* Every write counted in written, the measured ones and no others here (no ramp). */
	assert_int_equal(result->written, result->dir[BENCH_WRITE].bytes);
	assert_int_equal(result->write_requests, result->dir[BENCH_WRITE].ios);
	close(fd);
	free(result);
	unlink(path);
	free(path);
	unit_rmtree(dir);
}

static void test_engine_time_bound(void **state)
{
	char *dir = unit_tmpdir(), *path = make_file(dir, 1);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct bench_spec spec = {
		.fd = fd, .read_percent = 100, .bs = 4096, .span = 1 << 20, .qd = 1, .jobs = 1,
		.engine = ENGINE_PSYNC, .runtime_ns = 200000000, .ramp_ns = 50000000,
	};
	struct bench_result *result = calloc(1, sizeof(*result));
	(void)state;

	/* Time-based: round and round the 1 MiB file; the measured time is the runtime, the ramp left out. */
	assert_int_equal(bench_run(&spec, result), 0);
	assert_true(result->dir[BENCH_READ].ios > 256);
	assert_int_equal(result->elapsed_ns, 200000000);
	check_consistent(&result->dir[BENCH_READ]);
	close(fd);
	free(result);
	unlink(path);
	free(path);
	unit_rmtree(dir);
}

static void test_engine_errors(void **state)
{
	char *dir = unit_tmpdir(), *path = make_file(dir, 1);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct bench_spec spec = {
		.fd = fd, .read_percent = 100, .bs = 4096, .span = 1 << 20, .qd = 4, .jobs = 1,
		.engine = ENGINE_IO_URING, .bytes_limit = 1 << 20,
	};
	struct bench_result *result = calloc(1, sizeof(*result));
	volatile sig_atomic_t stop = 1;
	(void)state;

	/* Reading past the end of the file is an error that says where, not a hang. */
	spec.span = 2 << 20;
	spec.bytes_limit = 2 << 20;
	assert_int_equal(bench_run(&spec, result), -ENODATA);
	assert_int_equal(result->error, ENODATA);
	assert_non_null(strstr(result->error_what, "offset"));
	/* No file: a descriptor that is not open. */
	spec.span = 1 << 20;
	spec.fd = -1;
	assert_int_equal(bench_run(&spec, result), -ENOENT);
	assert_string_equal(result->error_what, "open");
	/* A stop asked before the start: interrupted, nothing measured. */
	spec.fd = fd;
	spec.stop = &stop;
	spec.runtime_ns = 10000000000ull;
	spec.bytes_limit = 0;
	assert_int_equal(bench_run(&spec, result), 0);
	assert_true(result->interrupted);
	close(fd);
	free(result);
	unlink(path);
	free(path);
	unit_rmtree(dir);
}

/* Whether every byte of path is c. */
static bool all_bytes(const char *path, char c)
{
	char buffer[65536];
	ssize_t got;
	bool same = true;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	while (same && (got = read(fd, buffer, sizeof(buffer))) > 0)
		for (ssize_t i = 0; i < got; i++)
			same &= buffer[i] == c;
	close(fd);
	return same;
}

static void test_engine_writes_what_it_holds(void **state)
{
	char *dir = unit_tmpdir(), *path = make_file(dir, 1), *moved, *decoy;
	int fd = open(path, O_RDWR | O_CLOEXEC), decoy_fd;
	struct bench_spec spec = {
		.fd = fd, .read_percent = 0, .bs = 4096, .span = 1 << 20, .qd = 4, .jobs = 2,
		.engine = ENGINE_IO_URING, .bytes_limit = 1 << 20, .ramp_ns = 20000000, .pattern = PATTERN_ZERO,
	};
	struct bench_result *result = calloc(1, sizeof(*result));
	(void)state;

	/*
	 * The file moved away and another put in its place after it was opened (what another user
	 * who can write the directory does): the jobs write the file opened, never the name's.
	 */
	assert_true(asprintf(&moved, "%s/moved", dir) > 0 && asprintf(&decoy, "%s/decoy", dir) > 0);
	assert_int_equal(rename(path, moved), 0);
	decoy_fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(decoy_fd >= 0);
	assert_int_equal(write(decoy_fd, "decoy", 5), 5);
	close(decoy_fd);
	assert_int_equal(bench_run(&spec, result), 0);
	assert_true(all_bytes(moved, 0)); /* zeros where 'x' was: written */
	decoy_fd = open(path, O_RDONLY);
	{
		char text[8] = "";

		assert_int_equal(read(decoy_fd, text, sizeof(text)), 5);
		assert_memory_equal(text, "decoy", 5);
	}
	close(decoy_fd);
	/* The ramp's writes are counted in written too: more than the measured ones, every one whole. */
	assert_true(result->written >= result->dir[BENCH_WRITE].bytes);
	assert_int_equal(result->written, result->write_requests * 4096);
	assert_true(result->written > 0);
	close(fd);
	free(result);
	unlink(path);
	unlink(moved);
	free(moved);
	free(decoy);
	free(path);
	unit_rmtree(dir);
}

static void test_fill(void **state)
{
	unsigned char buffer[8192];
	uint64_t seed = 1;
	size_t zeros = 0;
	(void)state;

	bench_fill(buffer, sizeof(buffer), PATTERN_ZERO, &seed);
	for (size_t i = 0; i < sizeof(buffer); i++)
		zeros += !buffer[i];
	assert_int_equal(zeros, sizeof(buffer));
	bench_fill(buffer, sizeof(buffer), PATTERN_COMPRESSIBLE, &seed);
	zeros = 0;
	for (size_t i = 0; i < sizeof(buffer); i++)
		zeros += !buffer[i];
	assert_in_range(zeros, sizeof(buffer) / 2, sizeof(buffer) / 2 + 64);
	bench_fill(buffer, sizeof(buffer), PATTERN_RANDOM, &seed);
	zeros = 0;
	for (size_t i = 0; i < sizeof(buffer); i++)
		zeros += !buffer[i];
	assert_true(zeros < 128); /* about 1 in 256 */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_sizes),
		cmocka_unit_test(test_parse_duration),
		cmocka_unit_test(test_knee),
		cmocka_unit_test(test_latency_target),
		cmocka_unit_test(test_svg),
		cmocka_unit_test(test_svg_modes),
		cmocka_unit_test(test_svg_escapes),
		cmocka_unit_test(test_fill),
		cmocka_unit_test(test_engine_size_bound),
		cmocka_unit_test(test_engine_time_bound),
		cmocka_unit_test(test_engine_errors),
		cmocka_unit_test(test_engine_writes_what_it_holds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
