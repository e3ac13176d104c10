/* SPDX-License-Identifier: GPL-2.0-or-later */
/* prom.h: the Prometheus text exposition format (0.0.4) and OpenMetrics 1.0: families, samples, escaped labels. */
#ifndef IOLENS_OUT_PROM_H
#define IOLENS_OUT_PROM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum prom_type { PROM_COUNTER, PROM_GAUGE, PROM_HISTOGRAM };

/* The formats a scraper may ask for. */
enum prom_format {
	PROM_FORMAT_TEXT,        /* the text format, 0.0.4 */
	PROM_FORMAT_OPENMETRICS, /* OpenMetrics 1.0 text */
	PROM_FORMAT_PROTOBUF,    /* io.prometheus.client.MetricFamily, delimited: native histograms */
};

/* A growing buffer of protobuf bytes. */
struct prom_buffer {
	unsigned char *data;
	size_t len, size;
	bool failed; /* out of memory: the exposition is lost */
};

struct prom {
	FILE *out;
	bool openmetrics; /* OpenMetrics: counter families named without _total, "# EOF" at the end */
	bool protobuf;    /* delimited MetricFamily messages, written as each family ends */
	/* protobuf: the family being made (its name, help and type, then its metrics), and its type */
	struct prom_buffer family;
	enum prom_type type;
	bool failed;      /* protobuf: out of memory; the caller sees it after prom_end */
};

/*
 * HELP and TYPE of a family. name is the family's, without _total for a counter: the text
 * format names a counter's lines and family name_total, OpenMetrics names the family name.
 */
void prom_family(struct prom *p, const char *name, enum prom_type type, const char *help);
/*
 * One sample: name (with its suffix: _total, _bucket, _sum, _count), then label pairs
 * (key, value, ... NULL); values are escaped (\\, \", \n).
 */
void prom_u64(struct prom *p, const char *name, uint64_t value, ...) __attribute__((sentinel));
void prom_real(struct prom *p, const char *name, double value, ...) __attribute__((sentinel));
/*
 * One series of a latency histogram family, from libvtrace's log-linear buckets of ns
 * (VTRACE_HISTOGRAM_BUCKETS of them), labelled by pairs (key, value, ..., NULL): in the text
 * formats, _bucket for each of the classic bounds (1, 2.5, 5 in each decade from 1 us to 10 s;
 * a bucket counted under the first bound its largest value fits in) and +Inf, then _sum and
 * _count; in protobuf, those buckets and a native histogram of schema 6 (64 buckets per power
 * of two, as libvtrace's, each of its buckets put in the native one holding its largest value).
 */
void prom_latency_histogram(struct prom *p, const char *family, const char *const *pairs, const uint64_t *buckets,
			    uint64_t count, double sum_seconds);
/* The end of the exposition ("# EOF" in OpenMetrics, the last family in protobuf). */
void prom_end(struct prom *p);
/* Frees what protobuf kept (after prom_end, or instead of it). */
void prom_free(struct prom *p);

#define PROM_TEXT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define PROM_OPENMETRICS_TYPE "application/openmetrics-text; version=1.0.0; charset=utf-8"
#define PROM_PROTOBUF_TYPE                                                                                             \
	"application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited"

#endif
