/* SPDX-License-Identifier: GPL-2.0-or-later */
/* bench_result.c: bench's JSON documents read back with json-c (--compare, the capacity store), every field checked. */
#include "collect/bench_result.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"

/* A number field: 0 with *out set; 1 when absent or null (*out NaN); -1 when of another type or not finite. */
static int get_number(struct json_object *o, const char *key, double *out)
{
	struct json_object *v;

	*out = NAN;
	if (!json_object_object_get_ex(o, key, &v) || !v)
		return 1;
	if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
		return -1;
	*out = json_object_get_double(v);
	return isfinite(*out) && *out >= 0 && *out < 1e18 ? 0 : -1;
}

/* A text field into buf: 0, 1 when absent or null, -1 when not a string or too long. */
static int get_text(struct json_object *o, const char *key, char *buf, size_t len)
{
	struct json_object *v;
	const char *text;

	buf[0] = '\0';
	if (!json_object_object_get_ex(o, key, &v) || !v)
		return 1;
	if (!json_object_is_type(v, json_type_string))
		return -1;
	text = json_object_get_string(v);
	if ((size_t)json_object_get_string_len(v) >= len || strlen(text) != (size_t)json_object_get_string_len(v))
		return -1;
	memcpy(buf, text, strlen(text) + 1);
	return 0;
}

static int parse_case(struct json_object *point, unsigned index, const char *doc_rw, struct bench_case *c, char *why,
		      size_t why_len)
{
	struct json_object *lat, *runs;
	double bs, qd, count;
	char mode[16], rw[16];

	if (!json_object_is_type(point, json_type_object))
		return say_why(why, why_len, "points[%u]: not an object", index);
	if (get_number(point, "bs", &bs) != 0 || bs < 1 || bs > (double)(1ull << 40) || bs != floor(bs))
		return say_why(why, why_len, "points[%u]: no block size (bs) as bench writes it", index);
	if (get_number(point, "qd", &qd) != 0 || qd < 1 || qd > 1e6 || qd != floor(qd))
		return say_why(why, why_len, "points[%u]: no queue depth (qd) as bench writes it", index);
	c->bs = (uint64_t)bs;
	c->qd = (unsigned)qd;
	if (get_number(point, "bytes_per_s", &c->bytes_per_s) != 0)
		return say_why(why, why_len, "points[%u]: no bytes_per_s", index);
	if (get_number(point, "iops", &c->iops) != 0)
		return say_why(why, why_len, "points[%u]: no iops", index);
	switch (get_text(point, "case", c->name, sizeof(c->name))) {
	case 0:
		if (!c->name[0])
			return say_why(why, why_len, "points[%u]: an empty case", index);
		break;
	case 1: { /* a point of a sweep: named by what it ran */
		char bs_text[24];

		if (get_text(point, "mode", mode, sizeof(mode)) != 0 || get_text(point, "rw", rw, sizeof(rw)) < 0)
			return say_why(why, why_len, "points[%u]: no case and no mode", index);
		if (!rw[0]) /* a sweep's points carry no rw of their own: the document's */
			snprintf(rw, sizeof(rw), "%s", doc_rw);
		snprintf(c->name, sizeof(c->name), "%s%s%s-%s-qd%u", mode, rw[0] ? "-" : "", rw,
			 bench_size_label(c->bs, bs_text, sizeof(bs_text)), c->qd);
		break;
	}
	default:
		return say_why(why, why_len, "points[%u]: case is not a short text", index);
	}
	c->lat_p50_ns = c->lat_p99_ns = NAN;
	if (json_object_object_get_ex(point, "lat_ns", &lat) && lat) {
		if (!json_object_is_type(lat, json_type_object) || get_number(lat, "p50", &c->lat_p50_ns) < 0 ||
		    get_number(lat, "p99", &c->lat_p99_ns) < 0)
			return say_why(why, why_len, "points[%u]: lat_ns is not bench's latency object", index);
	}
	c->runs = 1;
	c->runs_min = c->runs_max = c->bytes_per_s;
	if (json_object_object_get_ex(point, "runs", &runs) && runs) {
		struct json_object *each;
		size_t n;

		if (!json_object_is_type(runs, json_type_object) || get_number(runs, "count", &count) != 0 ||
		    !json_object_object_get_ex(runs, "bytes_per_s", &each) ||
		    !json_object_is_type(each, json_type_array))
			return say_why(why, why_len, "points[%u]: runs is not bench's object of runs", index);
		n = json_object_array_length(each);
		if (n < 1 || n > 999 || count != (double)n)
			return say_why(why, why_len, "points[%u]: runs: count %g and %zu values of bytes_per_s", index,
				       count, n);
		c->runs = (unsigned)n;
		for (size_t i = 0; i < n; i++) {
			struct json_object *v = json_object_array_get_idx(each, i);
			double value;

			if (!v ||
			    (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int)) ||
			    !isfinite(value = json_object_get_double(v)) || value < 0 || value >= 1e18)
				return say_why(why, why_len, "points[%u]: runs: bytes_per_s[%zu] is not a rate", index,
					       i);
			if (!i || value < c->runs_min)
				c->runs_min = value;
			if (!i || value > c->runs_max)
				c->runs_max = value;
		}
		/* The point is the median run: a document whose point lies outside its runs was edited wrongly. */
		if (c->bytes_per_s < c->runs_min * (1 - 1e-9) || c->bytes_per_s > c->runs_max * (1 + 1e-9))
			return say_why(why, why_len, "points[%u]: bytes_per_s %.0f is outside its runs (%.0f to %.0f)",
				       index, c->bytes_per_s, c->runs_min, c->runs_max);
	}
	return 0;
}

static int parse_capacity(struct json_object *doc, struct bench_result_doc *out, char *why, size_t why_len)
{
	struct json_object *cap;

	out->capacity_saved_s = NAN;
	if (!json_object_object_get_ex(doc, "capacity", &cap) || !cap)
		return 0;
	if (!json_object_is_type(cap, json_type_object) ||
	    get_text(cap, "key", out->capacity_key, sizeof(out->capacity_key)) != 0 || !out->capacity_key[0] ||
	    get_text(cap, "disk", out->capacity_disk, sizeof(out->capacity_disk)) < 0 ||
	    get_text(cap, "source", out->capacity_source, sizeof(out->capacity_source)) < 0 ||
	    get_number(cap, "saved_s", &out->capacity_saved_s) < 0)
		return say_why(why, why_len, "capacity: not the object bench --save-capacity writes");
	out->has_capacity = true;
	return 0;
}

int bench_result_parse(const char *text, size_t len, struct bench_result_doc *out, char *why, size_t why_len)
{
	struct json_tokener *tokener;
	struct json_object *doc, *points;
	enum json_tokener_error error;
	int rc = -1;
	size_t n;

	memset(out, 0, sizeof(*out));
	if (len > BENCH_RESULT_MAX_BYTES)
		return say_why(why, why_len, "more than %u MiB: not a bench document", BENCH_RESULT_MAX_BYTES >> 20);
	if (len > INT32_MAX)
		return say_why(why, why_len, "too long");
	tokener = json_tokener_new();
	if (!tokener)
		return say_why(why, why_len, "%s", strerror(ENOMEM));
	doc = json_tokener_parse_ex(tokener, text, (int)len);
	error = json_tokener_get_error(tokener);
	if (!doc || error != json_tokener_success) {
		say_why(why, why_len, "not JSON (%s at offset %zu)", error == json_tokener_continue ? "it ends early" :
		     json_tokener_error_desc(error), json_tokener_get_parse_end(tokener));
		goto cleanup;
	}
	/* Only white space after the document. */
	for (size_t at = json_tokener_get_parse_end(tokener); at < len; at++)
		if (!strchr(" \t\r\n", text[at])) {
			say_why(why, why_len, "more after the JSON document (offset %zu)", at);
			goto cleanup;
		}
	if (!json_object_is_type(doc, json_type_object) || !json_object_object_get_ex(doc, "points", &points) ||
	    !json_object_is_type(points, json_type_array)) {
		say_why(why, why_len, "not a bench --json document (no list of points)");
		goto cleanup;
	}
	if (get_text(doc, "rw", out->rw, sizeof(out->rw)) < 0 ||
	    get_text(doc, "sweep", out->sweep, sizeof(out->sweep)) < 0) {
		say_why(why, why_len, "rw or sweep is not a short text");
		goto cleanup;
	}
	n = json_object_array_length(points);
	if (!n) {
		say_why(why, why_len, "no points: the run measured nothing");
		goto cleanup;
	}
	if (n > BENCH_RESULT_MAX_CASES) {
		say_why(why, why_len, "%zu points: more than the %d bench makes", n, BENCH_RESULT_MAX_CASES);
		goto cleanup;
	}
	for (size_t i = 0; i < n; i++) {
		struct bench_case *c = &out->cases[i];

		if (parse_case(json_object_array_get_idx(points, i), (unsigned)i, out->rw, c, why, why_len) != 0)
			goto cleanup;
		if (bench_result_find(out, c->name)) {
			say_why(why, why_len, "points[%zu]: case %s twice", i, c->name);
			goto cleanup;
		}
		out->ncases++;
	}
	rc = parse_capacity(doc, out, why, why_len);
cleanup:
	json_object_put(doc);
	json_tokener_free(tokener);
	if (rc)
		out->ncases = 0;
	return rc;
}

int bench_result_load(const char *path, struct bench_result_doc *out, char *why, size_t why_len)
{
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK) : STDIN_FILENO;
	size_t len = 0, capacity = 1u << 16;
	char *text, inner[400];
	int rc;

	if (fd < 0)
		return say_why(why, why_len, "%s: %s", path, strerror(errno));
	text = malloc(capacity);
	if (!text) {
		if (fd != STDIN_FILENO)
			close(fd);
		return say_why(why, why_len, "%s: %s", path, strerror(ENOMEM));
	}
	for (;;) {
		ssize_t got;

		if (len == capacity) {
			char *bigger;

			if (capacity > BENCH_RESULT_MAX_BYTES) {
				len = capacity; /* too long: said by the parser */
				break;
			}
			bigger = realloc(text, capacity * 2);
			if (!bigger) {
				errno = ENOMEM;
				goto read_failed;
			}
			text = bigger;
			capacity *= 2;
		}
		got = read(fd, text + len, capacity - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
read_failed:
			rc = errno;
			free(text);
			if (fd != STDIN_FILENO)
				close(fd);
			return say_why(why, why_len, "%s: %s", path, strerror(rc));
		}
		if (!got)
			break;
		len += (size_t)got;
	}
	if (fd != STDIN_FILENO)
		close(fd);
	rc = bench_result_parse(text, len, out, inner, sizeof(inner));
	free(text);
	if (rc)
		say_why(why, why_len, "%s: %s", path, inner);
	return rc;
}

const struct bench_case *bench_result_find(const struct bench_result_doc *doc, const char *name)
{
	for (unsigned i = 0; i < doc->ncases; i++)
		if (!strcmp(doc->cases[i].name, name))
			return &doc->cases[i];
	return NULL;
}
