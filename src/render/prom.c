/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prom.c: the Prometheus exposition formats: text (0.0.4) and OpenMetrics written to a stream, and
 * protobuf (delimited io.prometheus.client.MetricFamily messages, with native histograms).
 */
#include "render/prom.h"

#include "common/util.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>

#include <vtrace.h>

static const char *const type_names[] = { "counter", "gauge", "histogram" };

/* ---- Protobuf: the wire format, by hand (prometheus/client_model's metrics.proto) ---------------- */

/* Field numbers of metrics.proto's messages. */
enum {
	FAMILY_NAME = 1, FAMILY_HELP = 2, FAMILY_TYPE = 3, FAMILY_METRIC = 4,
	METRIC_LABEL = 1, METRIC_GAUGE = 2, METRIC_COUNTER = 3, METRIC_HISTOGRAM = 7,
	LABEL_NAME = 1, LABEL_VALUE = 2,
	VALUE = 1, /* Gauge.value, Counter.value */
	HISTOGRAM_COUNT = 1, HISTOGRAM_SUM = 2, HISTOGRAM_BUCKET = 3, HISTOGRAM_SCHEMA = 5,
	HISTOGRAM_ZERO_THRESHOLD = 6, HISTOGRAM_ZERO_COUNT = 7,
	HISTOGRAM_POSITIVE_SPAN = 12, HISTOGRAM_POSITIVE_DELTA = 13,
	BUCKET_CUMULATIVE = 1, BUCKET_UPPER = 2,
	SPAN_OFFSET = 1, SPAN_LENGTH = 2,
};
enum { WIRE_VARINT = 0, WIRE_FIXED64 = 1, WIRE_BYTES = 2 };
/* MetricType: COUNTER 0, GAUGE 1, HISTOGRAM 4. */
static const unsigned pb_types[] = { 0, 1, 4 };

static void pb_bytes(struct prom_buffer *b, const void *data, size_t len)
{
	if (b->failed)
		return;
	if (b->len + len > b->size) {
		size_t size = b->size ? b->size : 256;
		unsigned char *grown;

		while (size < b->len + len)
			size *= 2;
		if (!(grown = realloc(b->data, size))) {
			b->failed = true;
			return;
		}
		b->data = grown;
		b->size = size;
	}
	memcpy(b->data + b->len, data, len);
	b->len += len;
}

static void pb_varint(struct prom_buffer *b, uint64_t v)
{
	unsigned char bytes[10];
	size_t n = 0;

	do {
		bytes[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	pb_bytes(b, bytes, n);
}

static void pb_tag(struct prom_buffer *b, unsigned field, unsigned wire)
{
	pb_varint(b, (uint64_t)field << 3 | wire);
}

static void pb_uint(struct prom_buffer *b, unsigned field, uint64_t v)
{
	pb_tag(b, field, WIRE_VARINT);
	pb_varint(b, v);
}

/* sint32, sint64: zigzag. */
static void pb_sint(struct prom_buffer *b, unsigned field, int64_t v)
{
	pb_uint(b, field, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static void pb_double(struct prom_buffer *b, unsigned field, double v)
{
	unsigned char bytes[8];
	uint64_t bits;

	memcpy(&bits, &v, sizeof(bits));
	for (unsigned i = 0; i < 8; i++)
		bytes[i] = (unsigned char)(bits >> (8 * i)); /* little-endian, whatever the host's order */
	pb_tag(b, field, WIRE_FIXED64);
	pb_bytes(b, bytes, sizeof(bytes));
}

static void pb_string(struct prom_buffer *b, unsigned field, const char *text, size_t len)
{
	pb_tag(b, field, WIRE_BYTES);
	pb_varint(b, len);
	pb_bytes(b, text, len);
}

/* A message inside another: its bytes (made apart), length-delimited. */
static void pb_message(struct prom_buffer *b, unsigned field, struct prom_buffer *inner)
{
	if (inner->failed)
		b->failed = true;
	pb_string(b, field, (const char *)inner->data, inner->len);
	inner->len = 0;
	inner->failed = false;
}

static void pb_free(struct prom_buffer *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

/* The family made so far, out as one delimited message. */
static void pb_flush_family(struct prom *p)
{
	struct prom_buffer length = {0};

	if (!p->family.len)
		return;
	pb_varint(&length, p->family.len);
	if (length.failed || p->family.failed)
		p->failed = true;
	else if (fwrite(length.data, 1, length.len, p->out) != length.len ||
		 fwrite(p->family.data, 1, p->family.len, p->out) != p->family.len)
		p->failed = true;
	pb_free(&length);
	p->family.len = 0;
}

/*
 * A label value as every format of export writes it (iolens(1), NAMES IN OUTPUT): UTF-8, with
 * bytes that are not, backslashes, and the controls and invisible characters char_hidden()
 * names as \xNN, but for line feeds and tabs (the exposition text escapes a line feed itself):
 * a label shown on a terminal or a dashboard cannot act on it or reorder its text.
 */
#define LABEL_ESCAPES (ESCAPE_CONTROL | ESCAPE_KEEP_BREAKS | ESCAPE_BACKSLASH)

/* A label value as protobuf takes it. */
static void pb_label(struct prom_buffer *metric, const char *key, const char *value)
{
	struct prom_buffer pair = {0};
	char *text = escape_text(value ? value : "", LABEL_ESCAPES);

	pb_string(&pair, LABEL_NAME, key, strlen(key));
	if (text)
		pb_string(&pair, LABEL_VALUE, text, strlen(text));
	else
		pair.failed = true;
	pb_message(metric, METRIC_LABEL, &pair);
	free(text);
	pb_free(&pair);
}

/* A counter's or gauge's Metric, with its labels (va_list pairs). */
static void pb_sample(struct prom *p, double value, va_list args)
{
	struct prom_buffer metric = {0}, inner = {0};

	for (const char *key = va_arg(args, const char *); key; key = va_arg(args, const char *))
		pb_label(&metric, key, va_arg(args, const char *));
	pb_double(&inner, VALUE, value);
	pb_message(&metric, p->type == PROM_COUNTER ? METRIC_COUNTER : METRIC_GAUGE, &inner);
	pb_message(&p->family, FAMILY_METRIC, &metric);
	pb_free(&inner);
	pb_free(&metric);
}

/* ---- The formats ------------------------------------------------------------------------------------ */

void prom_family(struct prom *p, const char *name, enum prom_type type, const char *help)
{
	const char *suffix = type == PROM_COUNTER && !p->openmetrics ? "_total" : "";

	if (p->protobuf) {
		char full[256];
		int len = snprintf(full, sizeof(full), "%s%s", name, suffix);

		pb_flush_family(p);
		p->type = type;
		pb_string(&p->family, FAMILY_NAME, full,
			  len < 0 ? 0 : (size_t)len < sizeof(full) ? (size_t)len : sizeof(full) - 1);
		pb_string(&p->family, FAMILY_HELP, help, strlen(help));
		pb_uint(&p->family, FAMILY_TYPE, pb_types[type]);
		return;
	}
	fprintf(p->out, "# HELP %s%s %s\n# TYPE %s%s %s\n", name, suffix, help, name, suffix, type_names[type]);
}

/* A label value (LABEL_ESCAPES), then with the exposition format's own escapes. */
static void escaped(FILE *out, const char *raw)
{
	char *text = escape_text(raw, LABEL_ESCAPES);

	for (const char *value = text; *value; value++) {
		if (*value == '\\' || *value == '"')
			fputc('\\', out), fputc(*value, out);
		else if (*value == '\n')
			fputs("\\n", out);
		else
			fputc(*value, out);
	}
	free(text);
}

static void label(FILE *out, bool first, const char *key, const char *value)
{
	fprintf(out, "%s%s=\"", first ? "" : ",", key);
	escaped(out, value ? value : "");
	fputc('"', out);
}

static void labels(FILE *out, va_list args)
{
	const char *key = va_arg(args, const char *);

	if (!key)
		return;
	fputc('{', out);
	for (bool first = true; key; key = va_arg(args, const char *), first = false)
		label(out, first, key, va_arg(args, const char *));
	fputc('}', out);
}

void prom_u64(struct prom *p, const char *name, uint64_t value, ...)
{
	va_list args;

	va_start(args, value);
	if (p->protobuf)
		pb_sample(p, (double)value, args);
	else {
		fputs(name, p->out);
		labels(p->out, args);
		fprintf(p->out, " %llu\n", (unsigned long long)value);
	}
	va_end(args);
}

/* " value\n": the shortest text that reads back as the same double. */
static void real_value(FILE *out, double value)
{
	char text[32];

	if (isnan(value))
		fputs(" NaN\n", out);
	else if (isinf(value))
		fputs(value > 0 ? " +Inf\n" : " -Inf\n", out);
	else {
		snprintf(text, sizeof(text), "%.15g", value);
		if (strtod(text, NULL) != value)
			snprintf(text, sizeof(text), "%.17g", value);
		fprintf(out, " %s\n", text);
	}
}

void prom_real(struct prom *p, const char *name, double value, ...)
{
	va_list args;

	va_start(args, value);
	if (p->protobuf)
		pb_sample(p, value, args);
	else {
		fputs(name, p->out);
		labels(p->out, args);
		real_value(p->out, value);
	}
	va_end(args);
}

/* name{pairs...,le="..."}: the le label last, as client libraries write it (le NULL: none). */
static void series(FILE *out, const char *family, const char *suffix, const char *const *pairs, const char *le)
{
	bool first = true;

	fprintf(out, "%s%s", family, suffix);
	if (!pairs[0] && !le)
		return;
	fputc('{', out);
	for (; pairs[0]; pairs += 2, first = false)
		label(out, first, pairs[0], pairs[1]);
	if (le)
		label(out, first, "le", le);
	fputc('}', out);
}

/* The classic bounds of a latency histogram, in seconds: 1, 2.5, 5 in each decade, from a microsecond to 10 s. */
static const double latency_bounds[] = { 1e-6,   2.5e-6, 5e-6,   1e-5,  2.5e-5, 5e-5,  1e-4, 2.5e-4,
					 5e-4,   1e-3,   2.5e-3, 5e-3,  1e-2,   2.5e-2, 5e-2, 0.1,
					 0.25,   0.5,    1,      2.5,   5,      10 };
#define NBOUNDS (sizeof(latency_bounds) / sizeof(latency_bounds[0]))
/* Native histograms of schema 6: bucket i holds (2^((i-1)/64), 2^(i/64)] seconds. */
#define NATIVE_SCHEMA 6
/* client_golang's default: values at or below it (0 ns) are in the zero bucket. */
#define NATIVE_ZERO_THRESHOLD 2.938735877055719e-39 /* 2^-128 */

/* The native bucket of a value in seconds (> 0). */
static int native_index(double seconds)
{
	return (int)ceil(log2(seconds) * (1 << NATIVE_SCHEMA) - 1e-9);
}

/* The native histogram's fields: the zero bucket, then spans of consecutive buckets and their counts as deltas. */
static void pb_native(struct prom_buffer *h, const uint64_t *buckets)
{
	struct prom_buffer span = {0};
	int64_t previous_count = 0;
	uint64_t zero = buckets[0];
	int next = 0, span_start = 0;
	unsigned span_len = 0;
	bool any = false;

	pb_sint(h, HISTOGRAM_SCHEMA, NATIVE_SCHEMA);
	pb_double(h, HISTOGRAM_ZERO_THRESHOLD, NATIVE_ZERO_THRESHOLD);
	pb_uint(h, HISTOGRAM_ZERO_COUNT, zero);
	/*
	 * libvtrace's buckets rise with their values, and so do their native indexes: walk them in
	 * order, adding up those that fall in the same native bucket, a span ending at a gap.
	 */
	for (unsigned b = 1; b < VTRACE_HISTOGRAM_BUCKETS;) {
		int index;
		uint64_t count = 0;

		if (!buckets[b]) {
			b++;
			continue;
		}
		index = native_index((double)vtrace_histogram_upper(b) / 1e9);
		for (; b < VTRACE_HISTOGRAM_BUCKETS &&
		     (!buckets[b] || native_index((double)vtrace_histogram_upper(b) / 1e9) == index);
		     b++)
			count += buckets[b];
		if (!any || index != next) { /* a new span, its offset from where the last one ended */
			if (any) {
				pb_sint(&span, SPAN_OFFSET, span_start);
				pb_uint(&span, SPAN_LENGTH, span_len);
				pb_message(h, HISTOGRAM_POSITIVE_SPAN, &span);
			}
			span_start = any ? index - next : index;
			span_len = 0;
		}
		any = true;
		span_len++;
		next = index + 1;
		pb_sint(h, HISTOGRAM_POSITIVE_DELTA, (int64_t)count - previous_count);
		previous_count = (int64_t)count;
	}
	if (any) {
		pb_sint(&span, SPAN_OFFSET, span_start);
		pb_uint(&span, SPAN_LENGTH, span_len);
		pb_message(h, HISTOGRAM_POSITIVE_SPAN, &span);
	}
	pb_free(&span);
}

void prom_latency_histogram(struct prom *p, const char *family, const char *const *pairs, const uint64_t *buckets,
			    uint64_t count, double sum_seconds)
{
	uint64_t cumulative[NBOUNDS] = {0};
	char le[32];

	/* A libvtrace bucket counts under the first bound its largest value fits in. */
	for (unsigned b = 0; b < VTRACE_HISTOGRAM_BUCKETS; b++) {
		double upper;

		if (!buckets[b])
			continue;
		upper = (double)vtrace_histogram_upper(b) / 1e9;
		for (unsigned k = 0; k < NBOUNDS; k++)
			if (upper <= latency_bounds[k])
				cumulative[k] += buckets[b];
	}
	if (p->protobuf) {
		struct prom_buffer metric = {0}, h = {0}, bucket = {0};
		uint64_t total = 0;

		/*
		 * The count is the buckets' own total: Prometheus refuses a native histogram whose
		 * buckets do not add up to it, and a live libvtrace segment's count can run ahead of
		 * the buckets read after it.
		 */
		for (unsigned b = 0; b < VTRACE_HISTOGRAM_BUCKETS; b++)
			total += buckets[b];
		(void)count;
		for (const char *const *pair = pairs; pair[0]; pair += 2)
			pb_label(&metric, pair[0], pair[1]);
		pb_uint(&h, HISTOGRAM_COUNT, total);
		pb_double(&h, HISTOGRAM_SUM, sum_seconds);
		for (unsigned k = 0; k < NBOUNDS; k++) {
			pb_uint(&bucket, BUCKET_CUMULATIVE, cumulative[k]);
			pb_double(&bucket, BUCKET_UPPER, latency_bounds[k]);
			pb_message(&h, HISTOGRAM_BUCKET, &bucket);
		}
		pb_native(&h, buckets);
		pb_message(&metric, METRIC_HISTOGRAM, &h);
		pb_message(&p->family, FAMILY_METRIC, &metric);
		pb_free(&bucket);
		pb_free(&h);
		pb_free(&metric);
		return;
	}
	for (unsigned k = 0; k < NBOUNDS; k++) {
		snprintf(le, sizeof(le), "%g", latency_bounds[k]);
		series(p->out, family, "_bucket", pairs, le);
		fprintf(p->out, " %llu\n", (unsigned long long)cumulative[k]);
	}
	series(p->out, family, "_bucket", pairs, "+Inf");
	fprintf(p->out, " %llu\n", (unsigned long long)count);
	series(p->out, family, "_sum", pairs, NULL);
	real_value(p->out, sum_seconds);
	series(p->out, family, "_count", pairs, NULL);
	fprintf(p->out, " %llu\n", (unsigned long long)count);
}

void prom_end(struct prom *p)
{
	if (p->protobuf)
		pb_flush_family(p);
	else if (p->openmetrics)
		fputs("# EOF\n", p->out);
	prom_free(p);
}

void prom_free(struct prom *p)
{
	pb_free(&p->family);
}
