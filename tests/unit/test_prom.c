/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_prom.c: the Prometheus exposition: family lines in both formats, escaped labels, numbers,
 * content negotiation.
 */
#include "unit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "http/http.h"
#include "render/prom.h"

/* What the calls of fill wrote, in the format asked. */
static char *written(bool openmetrics, void (*fill)(struct prom *p))
{
	char *text = NULL;
	size_t len = 0;
	struct prom p = { .openmetrics = openmetrics };

	p.out = open_memstream(&text, &len);
	assert_non_null(p.out);
	fill(&p);
	fclose(p.out);
	return text;
}

static void counter(struct prom *p)
{
	prom_family(p, "iolens_disk_read_bytes", PROM_COUNTER, "Bytes read.");
	prom_u64(p, "iolens_disk_read_bytes_total", 18446744073709551615ull, "device", "sda", NULL);
	prom_end(p);
}

static void labels_and_numbers(struct prom *p)
{
	prom_u64(p, "a", 1, "op", "a\"b\\c\nd", "pid", "7", NULL);
	prom_real(p, "b", 0.1, NULL);
	prom_real(p, "c", 1e-6, NULL);
	prom_real(p, "d", INFINITY, NULL);
	prom_real(p, "e", NAN, NULL);
	prom_real(p, "f", 942.316072, NULL);
}

static void test_families(void **state)
{
	char *text;
	(void)state;

	/* The text format names a counter's family with _total; OpenMetrics without, and ends with # EOF. */
	text = written(false, counter);
	assert_string_equal(text, "# HELP iolens_disk_read_bytes_total Bytes read.\n"
				  "# TYPE iolens_disk_read_bytes_total counter\n"
				  "iolens_disk_read_bytes_total{device=\"sda\"} 18446744073709551615\n");
	free(text);
	text = written(true, counter);
	assert_string_equal(text, "# HELP iolens_disk_read_bytes Bytes read.\n"
				  "# TYPE iolens_disk_read_bytes counter\n"
				  "iolens_disk_read_bytes_total{device=\"sda\"} 18446744073709551615\n"
				  "# EOF\n");
	free(text);
}

static void test_labels_numbers(void **state)
{
	char *text = written(false, labels_and_numbers);
	(void)state;

	/*
	 * Quotes and newlines escaped as Prometheus does; a backslash first becomes the text \x5c, as
	 * in every output (iolens(1), NAMES IN OUTPUT), then its backslash Prometheus's \\.
	 */
	assert_string_equal(text, "a{op=\"a\\\"b\\\\x5cc\\nd\",pid=\"7\"} 1\n"
				  "b 0.1\n"
				  "c 1e-06\n"
				  "d +Inf\n"
				  "e NaN\n"
				  "f 942.316072\n");
	free(text);
}

/* A counter in protobuf: one delimited MetricFamily, its bytes as metrics.proto lays them out. */
static void test_protobuf(void **state)
{
	static const unsigned char expected[] = {
		0x23,                                           /* the family's length: 35 */
		0x0a, 0x07, 'a', '_', 't', 'o', 't', 'a', 'l', /* name (1): with _total, as the text format */
		0x12, 0x01, 'h',                                /* help (2) */
		0x18, 0x00,                                     /* type (3): COUNTER */
		0x22, 0x13,                                     /* metric (4), 19 bytes */
		0x0a, 0x06, 0x0a, 0x01, 'k', 0x12, 0x01, 'v',   /* label (1): name k, value v */
		0x1a, 0x09, 0x09, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, /* counter (3): value (1), the double 1.0 */
	};
	char *text = NULL;
	size_t len = 0;
	struct prom p = { .protobuf = true };
	(void)state;

	p.out = open_memstream(&text, &len);
	assert_non_null(p.out);
	prom_family(&p, "a", PROM_COUNTER, "h");
	prom_u64(&p, "a_total", 1, "k", "v", NULL);
	prom_end(&p);
	fclose(p.out);
	assert_false(p.failed);
	assert_int_equal(len, sizeof(expected));
	assert_memory_equal(text, expected, sizeof(expected));
	free(text);
}

static void test_negotiation(void **state)
{
	(void)state;
	/* Prometheus with native histograms on; without; OpenMetrics preferred; other encodings of protobuf. */
	assert_int_equal(prom_negotiate("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;"
					"encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3,*/*;q=0.2"),
			 PROM_FORMAT_PROTOBUF);
	assert_int_equal(prom_negotiate("application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"),
			 PROM_FORMAT_OPENMETRICS);
	assert_int_equal(prom_negotiate("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;"
					"encoding=delimited;q=0.3,application/openmetrics-text;q=0.5"),
			 PROM_FORMAT_OPENMETRICS);
	assert_int_equal(prom_negotiate("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;"
					"encoding=text"),
			 PROM_FORMAT_TEXT);
	assert_int_equal(prom_negotiate("application/vnd.google.protobuf"), PROM_FORMAT_TEXT);
	assert_int_equal(prom_negotiate("application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; "
					"encoding=delimited;q=0"),
			 PROM_FORMAT_TEXT);
	assert_int_equal(prom_negotiate(NULL), PROM_FORMAT_TEXT);
	assert_true(prom_wants_openmetrics("application/openmetrics-text; version=1.0.0; charset=utf-8"));
	assert_true(prom_wants_openmetrics("text/plain;q=0.5, application/openmetrics-text;version=1.0.0;q=0.9"));
	assert_true(prom_wants_openmetrics("Application/OpenMetrics-Text"));
	assert_false(prom_wants_openmetrics("application/openmetrics-text;q=0, text/plain"));
	assert_false(prom_wants_openmetrics("application/openmetrics-textual"));
	assert_false(prom_wants_openmetrics("text/plain; version=0.0.4"));
	assert_false(prom_wants_openmetrics("*/*"));
	assert_false(prom_wants_openmetrics(""));
	assert_false(prom_wants_openmetrics(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_families),
		cmocka_unit_test(test_labels_numbers),
		cmocka_unit_test(test_protobuf),
		cmocka_unit_test(test_negotiation),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
