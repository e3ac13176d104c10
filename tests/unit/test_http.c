/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_http.c: what export's HTTP side takes from clients: q weights in Accept and Accept-Encoding,
 * when gzip is allowed, what a Host is.
 */
#include "unit.h"

#include "http/http.h"

static void test_weight(void **state)
{
	(void)state;
	assert_true(http_weight("gzip", "gzip") == 1);
	assert_true(http_weight("deflate, gzip;q=0.5", "gzip") == 0.5);
	assert_true(http_weight("GZIP ; q=0.25", "gzip") == 0.25);
	assert_true(http_weight("gzip;q=0", "gzip") == 0);
	assert_true(http_weight("gzip;q=nan", "gzip") == 0);
	assert_true(http_weight("gzip;q=", "gzip") == 0);
	assert_true(http_weight("gzip;level=1;q=0.7;x", "gzip") == 0.7);
	assert_true(http_weight("gzipped", "gzip") == -1);
	assert_true(http_weight("x-gzip", "gzip") == -1);
	assert_true(http_weight(",,, ,", "gzip") == -1);
	assert_true(http_weight("", "gzip") == -1);
	assert_true(http_weight(NULL, "gzip") == -1);
	/* The greatest of two entries. */
	assert_true(http_weight("gzip;q=0, gzip;q=0.3", "gzip") == 0.3);
}

static void test_gzip(void **state)
{
	(void)state;
	assert_true(http_accepts_gzip("gzip"));
	assert_true(http_accepts_gzip("gzip, deflate, br"));   /* curl --compressed */
	assert_true(http_accepts_gzip("identity;q=0.5, x-gzip")); /* the old name */
	assert_true(http_accepts_gzip("*"));
	assert_true(http_accepts_gzip("br, *;q=0.1"));
	assert_false(http_accepts_gzip("gzip;q=0, *"));          /* named and refused: * does not bring it back */
	assert_false(http_accepts_gzip("*;q=0"));
	assert_false(http_accepts_gzip("deflate, br"));
	assert_false(http_accepts_gzip("identity"));
	assert_false(http_accepts_gzip(""));
	assert_false(http_accepts_gzip(NULL));
}

static void test_host(void **state)
{
	(void)state;
	assert_true(http_valid_host("localhost:9717"));
	assert_true(http_valid_host("127.0.0.1"));
	assert_true(http_valid_host("[::1]:9717"));
	assert_true(http_valid_host("my-host.example.com"));
	assert_true(http_valid_host(""));             /* allowed: a request without authority */
	assert_true(http_valid_host("a \t"));         /* what follows the value */
	assert_false(http_valid_host("a b"));         /* two values, or a smuggled one */
	assert_false(http_valid_host("a/b"));
	assert_false(http_valid_host("user@host"));
	assert_false(http_valid_host("a\x01"));
	assert_false(http_valid_host("h\xc3\xa9"));    /* raw UTF-8: IDNs are sent as punycode */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_weight),
		cmocka_unit_test(test_gzip),
		cmocka_unit_test(test_host),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
