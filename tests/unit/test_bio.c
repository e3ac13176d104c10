/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_bio.c: the per-process latency scale of bio.bpf.c (bio_small_bucket), the figures the
 * collector reads from it, and the request flags' bits it finds in a kernel's BTF (or refuses to
 * guess).
 */
#include "unit.h"

#include "collect/bio.h"

#ifdef IOLENS_BPF
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>

#include "collect/ebpf.h"
#endif

/* Each value falls in the bucket whose bounds hold it; the buckets tile 0 to UINT64_MAX with 4 per power of two. */
static void test_small_buckets(void **state)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;

	(void)state;
	assert_int_equal(bio_small_bucket(0), 0);
	assert_int_equal(bio_small_bucket(1023), 0);
	assert_int_equal(bio_small_bucket(1024), 1);
	assert_int_equal(bio_small_bucket(1279), 1);
	assert_int_equal(bio_small_bucket(1280), 2);
	assert_int_equal(bio_small_bucket(2047), 4);
	assert_int_equal(bio_small_bucket(2048), 5);
	assert_int_equal(bio_small_bucket((1ull << 34) - 1), BIO_SMALL_BUCKETS - 2);
	assert_int_equal(bio_small_bucket(1ull << 34), BIO_SMALL_BUCKETS - 1);
	assert_int_equal(bio_small_bucket(UINT64_MAX), BIO_SMALL_BUCKETS - 1);
	for (unsigned b = 0; b < BIO_SMALL_BUCKETS; b++) {
		assert_int_equal(bio_small_bucket(bio_small_lower(b)), b);
		assert_int_equal(bio_small_bucket(bio_small_upper(b)), b);
		if (b + 1 < BIO_SMALL_BUCKETS)
			assert_true(bio_small_upper(b) + 1 == bio_small_lower(b + 1));
		/* The precision said: a bucket from 1.024 us on spans at most a quarter of its lower bound. */
		if (b > 0 && b + 1 < BIO_SMALL_BUCKETS)
			assert_true((bio_small_upper(b) - bio_small_lower(b) + 1) * 4 <= bio_small_lower(b));
	}
	for (unsigned i = 0; i < 100000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint64_t v = x >> (x % 64);
		unsigned b = bio_small_bucket(v);
		assert_true(bio_small_lower(b) <= v && v <= bio_small_upper(b));
	}
}

static void add(struct bio_latency *l, uint64_t ns, unsigned times)
{
	l->bucket[bio_small_bucket(ns)] += times;
	l->sum_ns += ns * times;
	if (ns > l->max_ns)
		l->max_ns = ns;
}

/*
 * Percentiles within a bucket (25 %) of the truth, interpolated, the average and the longest exact;
 * an interval's own.
 */
static void test_figures(void **state)
{
	struct bio_latency then = {0}, now;
	struct bio_latency_figures f;
	uint64_t x = 0x9e3779b97f4a7c15ull;

	(void)state;
	bio_latency_figures(&then, NULL, &f);
	assert_int_equal(f.requests, 0);
	add(&then, 100000, 98); /* 100 us */
	add(&then, 3000000, 2); /* 3 ms */
	bio_latency_figures(&then, NULL, &f);
	assert_int_equal(f.requests, 100);
	assert_int_equal(f.average_ns, (98 * 100000 + 2 * 3000000) / 100);
	assert_true(f.p50_ns >= 87500 && f.p50_ns <= 112500);
	assert_true(f.p99_ns >= 2625000 && f.p99_ns <= 3000000);
	assert_int_equal(f.max_ns, 3000000);
	/* Then 10 of 20 us: the interval sees those only, its longest from their bucket. */
	now = then;
	add(&now, 20000, 10);
	bio_latency_figures(&now, &then, &f);
	assert_int_equal(f.requests, 10);
	assert_int_equal(f.average_ns, 20000);
	assert_true(f.p50_ns >= 17500 && f.p50_ns <= 22500);
	assert_true(f.max_ns >= bio_small_lower(bio_small_bucket(20000)) &&
		    f.max_ns <= bio_small_upper(bio_small_bucket(20000)));
	/*
	 * Interpolated, as the log-linear histograms are (vt_quantile): 40 of 42 us and 40 of 46 us,
	 * both in the bucket 40960 .. 49151: p50, rank 40 of 80, at 39.5 / 80 of its width; p99, rank
	 * 80, at 79.5 / 80, above the longest: the longest.
	 */
	memset(&then, 0, sizeof(then));
	add(&then, 42000, 40);
	add(&then, 46000, 40);
	bio_latency_figures(&then, NULL, &f);
	assert_int_equal(bio_small_lower(bio_small_bucket(42000)), 40960);
	assert_int_equal(bio_small_bucket(46000), bio_small_bucket(42000));
	assert_int_equal(f.p50_ns, 40960 + (uint64_t)(39.5 / 80 * 8192));
	assert_int_equal(f.p99_ns, 46000);
	/*
	 * One request is its own percentiles, average and longest, exactly: 1000 us sits in the
	 * bucket 917504 .. 1048575, whose middle is below it; alone, after a longer one (its
	 * longest not known exactly), or first of all.
	 */
	now = then;
	add(&now, 1000000, 1);
	bio_latency_figures(&now, &then, &f);
	assert_int_equal(f.requests, 1);
	assert_int_equal(f.average_ns, 1000000);
	assert_int_equal(f.p50_ns, 1000000);
	assert_int_equal(f.p99_ns, 1000000);
	assert_int_equal(f.max_ns, 1000000);
	memset(&then, 0, sizeof(then));
	add(&then, 900000, 1);
	bio_latency_figures(&then, NULL, &f);
	assert_int_equal(f.p50_ns, 900000);
	assert_int_equal(f.p99_ns, 900000);
	assert_int_equal(f.max_ns, 900000);
	/* Two, the longest exact: the median is the shorter (the sum less the longest), p99 the longest. */
	add(&then, 1000000, 1);
	bio_latency_figures(&then, NULL, &f);
	assert_int_equal(f.p50_ns, 900000);
	assert_int_equal(f.p99_ns, 1000000);
	/* Many in one bucket, the longest exact: p99 (rank 50 of 50) is the longest, p50 within the rest. */
	memset(&then, 0, sizeof(then));
	add(&then, 950000, 49);
	add(&then, 1040000, 1);
	bio_latency_figures(&then, NULL, &f);
	assert_int_equal(f.p99_ns, 1040000);
	assert_true(f.p50_ns >= 917504 && f.p50_ns <= 1040000);
	/* Never a percentile above the longest nor a longest below the average, whatever the buckets. */
	for (unsigned i = 0; i < 2000; i++) {
		struct bio_latency a = {0}, b;
		unsigned n = 1 + i % 7;

		for (unsigned k = 0; k < n; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			add(&a, 1024 + x % 50000000, 1);
		}
		b = a;
		for (unsigned k = 0; k < 1 + i % 3; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			add(&b, 1024 + x % 50000000, 1);
		}
		bio_latency_figures(&b, i % 2 ? &a : NULL, &f);
		assert_true(f.p50_ns <= f.p99_ns);
		assert_true(f.p99_ns <= f.max_ns);
		assert_true(f.average_ns <= f.max_ns);
		if (f.requests == 1)
			assert_true(f.p50_ns == f.average_ns && f.max_ns == f.average_ns);
	}
	/* A u32 bucket that wrapped in between is still counted right. */
	then.bucket[5] = UINT32_MAX;
	now = then;
	now.bucket[5] += 3;
	bio_latency_figures(&now, &then, &f);
	assert_int_equal(f.requests, 3);
}

#ifdef IOLENS_BPF
/* A BTF holding one 32-bit enum (name "" : without a name, as 6.12's request flags) of n enumerators. */
static struct btf *btf_of(const char *enum_name, const char *const *names, const int *values, int n)
{
	struct btf *btf = btf__new_empty();

	assert_non_null(btf);
	assert_true(btf__add_int(btf, "int", 4, BTF_INT_SIGNED) > 0);
	assert_true(btf__add_enum(btf, enum_name, 4) > 0);
	for (int i = 0; i < n; i++)
		assert_int_equal(btf__add_enum_value(btf, names[i], values[i]), 0);
	return btf;
}

/* flag's bit in btf: "rc bit" (bio_request_flag_bit's), why in *why. */
static void flag_bit(const struct btf *btf, const char *flag, unsigned old_bit, char *out, size_t size,
		     const char **why)
{
	unsigned bit = 99;
	int rc = bio_request_flag_bit(btf, flag, old_bit, &bit, why);

	snprintf(out, size, "%d %u", rc, bit);
}

/*
 * The bits of the flags on the kernels of the matrix, as their BTF holds them: an enum named
 * rqf_flags (6.9 to 6.11, 6.13 on), the same without a name (6.12), none (before 6.9: defines,
 * bits 4 and 13). A BTF with request flags but not the one asked (renamed, gone), one whose value
 * is no bit, or no BTF at all: refused with the reason, never a bit guessed.
 */
static void test_request_flag_bits(void **state)
{
	static const char *const flags[] = { "__RQF_STARTED", "__RQF_FLUSH_SEQ", "__RQF_MIXED_MERGE", "__RQF_IO_STAT" };
	static const int bits[] = { 0, 1, 2, 8 };
	static const char *const ops[] = { "REQ_OP_READ", "REQ_OP_WRITE" };
	static const int op_values[] = { 0, 1 };
	static const int too_big[] = { 0, 1, 2, 40 };
	const char *why = NULL;
	struct btf *btf;
	char got[32];

	(void)state;
	if (ebpf_init(&why) != 0) {
		print_message("skipped: libbpf cannot be opened: %s\n", why);
		skip();
	}
	/* 6.9 on: named; 6.12: without a name. Each flag its own bit. */
	for (int named = 0; named < 2; named++) {
		btf = btf_of(named ? "rqf_flags" : "", flags, bits, 4);
		flag_bit(btf, "__RQF_IO_STAT", 13, got, sizeof(got), &why);
		assert_string_equal(got, "0 8");
		assert_string_equal(why, "the kernel's BTF");
		flag_bit(btf, "__RQF_FLUSH_SEQ", 4, got, sizeof(got), &why);
		assert_string_equal(got, "0 1");
		btf__free(btf);
	}
	/* Before 6.9: no __RQF_ enumerator anywhere (other enums are there): the defines' bits. */
	btf = btf_of("req_op", ops, op_values, 2);
	flag_bit(btf, "__RQF_IO_STAT", 13, got, sizeof(got), &why);
	assert_string_equal(got, "0 13");
	assert_non_null(strstr(why, "before 6.9"));
	btf__free(btf);
	/* Request flags, but not this one: not known, said, never the old bit (6.12's IO_STAT 8 is not 13). */
	btf = btf_of("", flags, bits, 3);
	flag_bit(btf, "__RQF_IO_STAT", 13, got, sizeof(got), &why);
	assert_string_equal(got, "-3 32"); /* -ESRCH, BIO_FLAG_UNKNOWN */
	assert_string_equal(why, "this kernel's BTF has request flags (__RQF_*) but not __RQF_IO_STAT");
	btf__free(btf);
	/* A value that is no bit of the 32-bit rq_flags. */
	btf = btf_of("", flags, too_big, 4);
	flag_bit(btf, "__RQF_IO_STAT", 13, got, sizeof(got), &why);
	assert_string_equal(got, "-3 32");
	assert_non_null(strstr(why, "not a bit"));
	btf__free(btf);
	/* No BTF at all. */
	flag_bit(NULL, "__RQF_IO_STAT", 13, got, sizeof(got), &why);
	assert_string_equal(got, "-3 32");
	assert_non_null(strstr(why, "no BTF"));
	/* ebpf_enumerator_in itself: a name the BTF lacks, with and without others of its prefix. */
	btf = btf_of("", flags, bits, 3);
	long long value = 7;
	assert_int_equal(ebpf_enumerator_in(btf, "__RQF_IO_STAT", "__RQF_", &value), -ESRCH);
	assert_int_equal(ebpf_enumerator_in(btf, "__RQF_IO_STAT", NULL, &value), -ENOENT);
	assert_int_equal(ebpf_enumerator_in(btf, "__RQF_MIXED_MERGE", "__RQF_", &value), 0);
	assert_int_equal(value, 2);
	btf__free(btf);
}

/*
 * A tracepoint as the kernel's BTF declares it: typedef void (*btf_trace_EVENT)(void *, struct
 * ARG *, ...), each argument a pointer to a struct of that name (NULL: an int).
 */
static void add_tracepoint(struct btf *btf, const char *event, const char *const *args, int n)
{
	int void_ptr = btf__add_ptr(btf, 0), ids[4], proto, integer = btf__add_int(btf, "long", 8, BTF_INT_SIGNED);
	char name[64];

	for (int i = 0; i < n; i++) {
		ids[i] = integer;
		if (args[i]) {
			int tagged = btf__add_struct(btf, args[i], 8);

			assert_true(tagged > 0);
			/* as the kernel's: the pointer through a const */
			ids[i] = btf__add_ptr(btf, i == 1 ? btf__add_const(btf, tagged) : tagged);
		}
	}
	proto = btf__add_func_proto(btf, 0);
	assert_true(proto > 0);
	assert_int_equal(btf__add_func_param(btf, "", void_ptr), 0);
	for (int i = 0; i < n; i++)
		assert_int_equal(btf__add_func_param(btf, "", ids[i]), 0);
	snprintf(name, sizeof(name), "btf_trace_%s", event);
	assert_true(btf__add_typedef(btf, name, btf__add_ptr(btf, proto)) > 0);
}

/*
 * What a tracepoint's arguments point to, from its btf_trace_ typedef: a folio (5.19 on) or a
 * page (before) for the page-cache tracepoints cachestat picks its programs by; nothing for a
 * tracepoint the BTF lacks, an argument past the last, or one that is no pointer to a struct.
 */
static void test_tracepoint_arg_struct(void **state)
{
	static const char *const folio_add[] = { "folio" }, *const page_add[] = { "page" },
				 *const page_dirty[] = { "page", "address_space" }, *const scalar[] = { NULL };
	const char *why = NULL;
	struct btf *btf;

	(void)state;
	if (ebpf_init(&why) != 0) {
		print_message("skipped: libbpf cannot be opened: %s\n", why);
		skip();
	}
	btf = btf__new_empty();
	assert_non_null(btf);
	add_tracepoint(btf, "mm_filemap_add_to_page_cache", folio_add, 1);
	add_tracepoint(btf, "writeback_dirty_page", page_dirty, 2);
	add_tracepoint(btf, "rss_stat", scalar, 1);
	assert_string_equal(ebpf_tracepoint_arg_struct(btf, "mm_filemap_add_to_page_cache", 0), "folio");
	assert_string_equal(ebpf_tracepoint_arg_struct(btf, "writeback_dirty_page", 0), "page");
	assert_string_equal(ebpf_tracepoint_arg_struct(btf, "writeback_dirty_page", 1), "address_space");
	assert_null(ebpf_tracepoint_arg_struct(btf, "writeback_dirty_page", 2));
	assert_null(ebpf_tracepoint_arg_struct(btf, "rss_stat", 0));
	assert_null(ebpf_tracepoint_arg_struct(btf, "mm_filemap_delete_from_page_cache", 0));
	assert_null(ebpf_tracepoint_arg_struct(NULL, "mm_filemap_add_to_page_cache", 0));
	btf__free(btf);
	btf = btf__new_empty();
	assert_non_null(btf);
	add_tracepoint(btf, "mm_filemap_add_to_page_cache", page_add, 1);
	assert_string_equal(ebpf_tracepoint_arg_struct(btf, "mm_filemap_add_to_page_cache", 0), "page");
	btf__free(btf);
}

/* Whether the BTF file's strings hold "btf_trace_EVENT" (read as bytes, not through libbpf). */
static bool btf_file_names(const char *data, size_t size, const char *event)
{
	char name[64];
	int len = snprintf(name, sizeof(name), "%cbtf_trace_%s", 0, event);

	return memmem(data, size, name, (size_t)len + 1) != NULL;
}

/*
 * Which programs a kernel's BTF gets: those built with IOLENS_BPF_COMPAT where its enum bpf_map_type
 * has no BPF_MAP_TYPE_TASK_STORAGE (5.10's has INODE_STORAGE, 5.10's last), the others where it has.
 */
static void test_compat(void **state)
{
	static const char *const old[] = { "BPF_MAP_TYPE_HASH", "BPF_MAP_TYPE_SK_STORAGE",
					   "BPF_MAP_TYPE_INODE_STORAGE" };
	static const char *const new[] = { "BPF_MAP_TYPE_HASH", "BPF_MAP_TYPE_INODE_STORAGE",
					   "BPF_MAP_TYPE_TASK_STORAGE" };
	static const int values[] = { 1, 28, 29 };
	const char *why;
	struct btf *btf;

	(void)state;
	if (ebpf_init(&why) != 0) {
		print_message("skipped: %s\n", why);
		skip();
	}
	btf = btf_of("bpf_map_type", old, values, 3);
	assert_true(ebpf_compat(btf));
	btf__free(btf);
	btf = btf_of("bpf_map_type", new, values, 3);
	assert_false(ebpf_compat(btf));
	btf__free(btf);
}

/*
 * bio_mechanism_check on this kernel: each mechanism possible exactly where the kernel's BTF file
 * names its tracepoints (block_io_start; block_getrq and block_rq_insert; block_rq_issue,
 * block_rq_merge and block_rq_complete for all), and the reason names the one missing.
 */
static void test_mechanisms_here(void **state)
{
	static const char *const needs[][5] = {
		[BIO_BY_IO_START] = { "block_rq_issue", "block_rq_merge", "block_rq_complete", "block_io_start" },
		[BIO_BY_GETRQ] = { "block_rq_issue", "block_rq_merge", "block_rq_complete", "block_getrq",
				   "block_rq_insert" },
		[BIO_BY_DISKS] = { "block_rq_issue", "block_rq_merge", "block_rq_complete" },
	};
	const char *why = NULL;
	char *data = NULL;
	size_t size = 0;
	FILE *f = fopen("/sys/kernel/btf/vmlinux", "rb");

	(void)state;
	if (!f || ebpf_init(&why) != 0) {
		if (f)
			fclose(f);
		print_message("skipped: %s\n", f ? why : "no /sys/kernel/btf/vmlinux");
		skip();
	}
	for (size_t got;; size += got) {
		data = realloc(data, size + (1 << 20));
		assert_non_null(data);
		got = fread(data + size, 1, 1 << 20, f);
		if (!got)
			break;
	}
	fclose(f);
	/* No task storage (before 5.11): no atomic compare-and-exchange either, every mechanism refused. */
	bool old = !memmem(data, size, "\0BPF_MAP_TYPE_TASK_STORAGE", sizeof("\0BPF_MAP_TYPE_TASK_STORAGE"));

	for (enum bio_mechanism m = BIO_BY_IO_START; m <= BIO_BY_DISKS; m++) {
		const char *missing = NULL;
		int rc = bio_mechanism_check(m, &why);

		for (size_t i = 0; i < 5 && needs[m][i] && !missing; i++)
			if (!btf_file_names(data, size, needs[m][i]))
				missing = needs[m][i];
		print_message("%s: %s\n", bio_mechanism_name(m), rc == 0 ? "possible" : why);
		if (old && !missing) {
			assert_int_not_equal(rc, 0);
			assert_non_null(strstr(why, "compare-and-exchange"));
		} else if (!missing) {
			assert_int_equal(rc, 0);
		} else {
			assert_int_not_equal(rc, 0);
			assert_non_null(strstr(why, missing));
		}
	}
	free(data);
	assert_int_not_equal(bio_mechanism_check((enum bio_mechanism)7, &why), 0);
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_buckets),
		cmocka_unit_test(test_figures),
#ifdef IOLENS_BPF
		cmocka_unit_test(test_request_flag_bits),
		cmocka_unit_test(test_tracepoint_arg_struct),
		cmocka_unit_test(test_compat),
		cmocka_unit_test(test_mechanisms_here),
#endif
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
