/* test_bio.c: the per-process latency scale of bio.bpf.c (bio_small_bucket) and the figures the collector reads from it. */
#include "unit.h"

#include "collect/bio.h"

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

/* Percentiles within 12.5 % of the truth, the average and the longest exact; an interval's own. */
static void test_figures(void **state)
{
	struct bio_latency then = {0}, now;
	struct bio_latency_figures f;

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
	assert_true(f.max_ns >= bio_small_lower(bio_small_bucket(20000)) && f.max_ns <= bio_small_upper(bio_small_bucket(20000)));
	/* A u32 bucket that wrapped in between is still counted right. */
	then.bucket[5] = UINT32_MAX;
	now = then;
	now.bucket[5] += 3;
	bio_latency_figures(&now, &then, &f);
	assert_int_equal(f.requests, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_buckets),
		cmocka_unit_test(test_figures),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
