/* SPDX-License-Identifier: GPL-2.0-or-later */
/* finding.c: findings as data, and their report: text (render/report.h) for people, JSON (render/record.h). */
#include "doctor/finding.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "render/record.h"
#include "render/report.h"

const char *const doctor_severity_names[] = { "info", "warning", "critical" };

struct doctor_finding *doctor_finding_add(struct doctor_findings *findings, enum doctor_severity severity,
					  const char *rule, const char *why)
{
	struct doctor_finding *f;

	findings->list = xrealloc(findings->list, (findings->count + 1) * sizeof(*findings->list));
	f = &findings->list[findings->count++];
	memset(f, 0, sizeof(*f));
	f->severity = severity;
	f->rule = rule;
	f->why = why;
	return f;
}

void doctor_fields_free(struct doctor_fields *fields)
{
	for (size_t i = 0; i < fields->count; i++) {
		free(fields->items[i].text);
		doctor_fields_free(&fields->items[i].children);
	}
	free(fields->items);
	*fields = (struct doctor_fields){0};
}

void doctor_findings_free(struct doctor_findings *findings)
{
	for (size_t i = 0; i < findings->count; i++)
		doctor_fields_free(&findings->list[i].data);
	free(findings->list);
	*findings = (struct doctor_findings){0};
}

const char *doctor_shell_word(const char *text, char *buf, size_t len)
{
	size_t used = 0;

	if (len && text[0] &&
	    strspn(text, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_/.,:+=@%-") == strlen(text)) {
		snprintf(buf, len, "%s", text);
		return buf;
	}
	if (len < 3) {
		if (len)
			buf[0] = '\0';
		return buf;
	}
	buf[used++] = '\'';
	for (const char *c = text; *c; c++) {
		const char *piece = *c == '\'' ? "'\\''" : NULL;
		size_t need = piece ? strlen(piece) : 1;

		if (used + need + 2 > len)
			break;
		if (piece) {
			memcpy(buf + used, piece, need);
			used += need;
		} else {
			buf[used++] = *c;
		}
	}
	buf[used++] = '\'';
	buf[used] = '\0';
	return buf;
}

void doctor_text(char *buf, size_t size, const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	vsnprintf(buf, size, fmt, args);
	va_end(args);
}

static struct doctor_field *append(struct doctor_fields *f, const char *key, enum doctor_field_kind kind)
{
	struct doctor_field *field;

	f->items = xrealloc(f->items, (f->count + 1) * sizeof(*f->items));
	field = &f->items[f->count++];
	*field = (struct doctor_field){ .key = key, .kind = kind };
	return field;
}

void field_text(struct doctor_fields *f, const char *key, const char *text)
{
	if (text)
		append(f, key, FIELD_TEXT)->text = xstrdup(text);
	else
		append(f, key, FIELD_NULL);
}

void field_bool(struct doctor_fields *f, const char *key, bool value)
{
	append(f, key, FIELD_BOOL)->value.flag = value;
}

void field_int(struct doctor_fields *f, const char *key, int64_t value)
{
	append(f, key, FIELD_INT)->value.integer = value;
}

void field_int_if(struct doctor_fields *f, const char *key, int64_t value, bool known)
{
	if (known)
		field_int(f, key, value);
	else
		append(f, key, FIELD_NULL);
}

void field_count(struct doctor_fields *f, const char *key, uint64_t value)
{
	append(f, key, FIELD_COUNT)->value.count = value;
}

void field_count_if(struct doctor_fields *f, const char *key, uint64_t value, bool known)
{
	if (known)
		field_count(f, key, value);
	else
		append(f, key, FIELD_NULL);
}

void field_real(struct doctor_fields *f, const char *key, double value)
{
	field_real_if(f, key, value, isfinite(value));
}

void field_real_if(struct doctor_fields *f, const char *key, double value, bool known)
{
	if (known && isfinite(value))
		append(f, key, FIELD_REAL)->value.real = value;
	else
		append(f, key, FIELD_NULL);
}

void field_null(struct doctor_fields *f, const char *key)
{
	append(f, key, FIELD_NULL);
}

struct doctor_fields *field_list(struct doctor_fields *f, const char *key)
{
	return &append(f, key, FIELD_LIST)->children;
}

struct doctor_fields *field_object(struct doctor_fields *f, const char *key)
{
	return &append(f, key, FIELD_OBJECT)->children;
}

void field_list_move(struct doctor_fields *f, const char *key, struct doctor_fields *items)
{
	*field_list(f, key) = *items;
	*items = (struct doctor_fields){0};
}

const struct doctor_field *doctor_field_get(const struct doctor_fields *f, const char *key)
{
	for (size_t i = 0; i < f->count; i++)
		if (f->items[i].key && !strcmp(f->items[i].key, key))
			return &f->items[i];
	return NULL;
}

const char *doctor_field_text(const struct doctor_fields *f, const char *key)
{
	const struct doctor_field *field = doctor_field_get(f, key);

	return field && field->kind == FIELD_TEXT ? field->text : NULL;
}

enum doctor_severity doctor_worst(const struct doctor_findings *findings)
{
	enum doctor_severity worst = DOCTOR_INFO;

	for (size_t i = 0; i < findings->count; i++)
		if (findings->list[i].severity > worst)
			worst = findings->list[i].severity;
	return worst;
}

/* ---- JSON -------------------------------------------------------------------------------- */

static bool ends_with(const char *key, const char *suffix)
{
	size_t k = strlen(key), s = strlen(suffix);

	return k > s && !strcmp(key + k - s, suffix);
}

static void object_json(struct out_record *r, const struct doctor_fields *fields);
static void list_json(struct out_list *l, const struct doctor_fields *fields);

static void field_json(struct out_record *r, const struct doctor_field *f)
{
	switch (f->kind) {
	case FIELD_NULL:
		out_rec_null(r, f->key);
		break;
	case FIELD_TEXT:
		out_rec_text(r, f->key, f->text);
		break;
	case FIELD_BOOL:
		out_rec_bool(r, f->key, f->value.flag);
		break;
	case FIELD_INT:
		out_rec_int(r, f->key, f->value.integer);
		break;
	case FIELD_COUNT:
		if (ends_with(f->key, "_bytes"))
			out_rec_bytes(r, f->key, f->value.count);
		else if (ends_with(f->key, "_ns"))
			out_rec_ns(r, f->key, f->value.count);
		else
			out_rec_count(r, f->key, f->value.count);
		break;
	case FIELD_REAL:
		out_rec_real(r, f->key, f->value.real);
		break;
	case FIELD_LIST:
		list_json(out_rec_list(r, f->key), &f->children);
		break;
	case FIELD_OBJECT:
		object_json(out_rec_object(r, f->key), &f->children);
		break;
	}
}

static void object_json(struct out_record *r, const struct doctor_fields *fields)
{
	for (size_t i = 0; i < fields->count; i++)
		field_json(r, &fields->items[i]);
}

static void list_json(struct out_list *l, const struct doctor_fields *fields)
{
	for (size_t i = 0; i < fields->count; i++) {
		const struct doctor_field *f = &fields->items[i];

		switch (f->kind) {
		case FIELD_TEXT:
			out_list_text(l, f->text);
			break;
		case FIELD_INT: /* pids: never negative */
			out_list_count(l, (uint64_t)f->value.integer);
			break;
		case FIELD_COUNT:
			out_list_count(l, f->value.count);
			break;
		case FIELD_REAL:
			out_list_real(l, f->value.real);
			break;
		case FIELD_OBJECT:
			object_json(out_list_object(l), &f->children);
			break;
		case FIELD_LIST:
			list_json(out_list_list(l), &f->children);
			break;
		case FIELD_NULL:
			out_list_real(l, NAN);
			break;
		case FIELD_BOOL: /* no list of flags is written */
			out_list_count(l, f->value.flag);
			break;
		}
	}
}

int doctor_write_json(const struct doctor_report *report, FILE *stream)
{
	const struct doctor_findings *findings = report->findings;
	struct out_record *doc = out_record_new();
	struct out_list *list;
	int rc;

	out_rec_real(doc, "seconds", report->seconds);
	out_rec_text(doc, "worst", findings->count ? doctor_severity_names[doctor_worst(findings)] : "none");
	/* How cache hits and misses were counted: "ebpf", or "procfs" estimates (see stderr for why). */
	out_rec_text(doc, "cache_mode", report->cache_mode);
	/* ... with eBPF how reads and faults were seen: "tracepoints", "fentry" or "kprobes" (else null). */
	out_rec_text(doc, "cache_mechanism", report->cache_mechanism);
	/* How O_DIRECT was looked for: "ebpf" (every open, as it happens), "fdinfo" (at each sample) or "off". */
	out_rec_text(doc, "odirect_mode", report->odirect_mode);
	/* How block requests were timed and charged to processes: "ebpf", or "procfs" (diskstats' averages), */
	out_rec_text(doc, "bio_mode", report->bio_mode);
	/* How each process's I/O was counted to its end: "ebpf" (at its exit), or "procfs" (as last read). */
	out_rec_text(doc, "exits_mode", report->exits_mode);
	/*
	 * ... with eBPF at which tracepoint a request's process is seen: "block_io_start" or
	 * "block_getrq" (else null).
	 */
	out_rec_text(doc, "bio_mechanism", report->bio_mechanism);
	list = out_rec_list(doc, "findings");
	for (size_t i = 0; i < findings->count; i++) {
		const struct doctor_finding *f = &findings->list[i];
		struct out_record *o = out_list_object(list);

		out_rec_text(o, "severity", doctor_severity_names[f->severity]);
		out_rec_text(o, "rule", f->rule);
		out_rec_text(o, "what", f->what);
		out_rec_text(o, "numbers", f->numbers);
		out_rec_text(o, "why", f->why);
		out_rec_text(o, "more", f->more);
		object_json(out_rec_object(o, "data"), &f->data);
	}
	/* What the configuration accepted as normal here, not counted in worst or the exit status. */
	list = out_rec_list(doc, "accepted");
	for (size_t i = 0; i < report->naccepted; i++) {
		struct out_record *o = out_list_object(list);

		out_rec_text(o, "rule", report->accepted[i].rule);
		out_rec_text(o, "what", report->accepted[i].what);
		out_rec_text(o, "by", report->accepted[i].by);
	}
	rc = out_record_write(doc, stream, OUT_RECORD_PRETTY);
	out_record_free(doc);
	return rc;
}

/* ---- Text -------------------------------------------------------------------------------- */

/*
 * "ebpf (fentry)", or the mode alone ("procfs"); escaped (a replay's are a file's words). Until
 * the fourth next call.
 */
static const char *mode_words(const char *mode, const char *mechanism)
{
	static char text[4][64];
	static unsigned next;
	char *out = text[next++ % 4];

	if (mechanism)
		snprintf(out, sizeof(text[0]), "%s (%s)", mode, printable_name(mechanism));
	else
		snprintf(out, sizeof(text[0]), "%s", mode);
	return out;
}

int doctor_write_text(const struct doctor_report *report, FILE *stream)
{
	const struct doctor_findings *findings = report->findings;

	/* The header: how each thing was counted (iolens version --features says why, on this kernel). */
	out_report_printf(stream, "Counted: page cache %s, block I/O %s, O_DIRECT opens %s, process exits %s.\n",
			  mode_words(report->cache_mode, report->cache_mechanism),
			  mode_words(report->bio_mode, report->bio_mechanism), printable_name(report->odirect_mode),
			  printable_name(report->exits_mode ? report->exits_mode : "procfs"));
	if (!findings->count)
		out_report_printf(stream, "No I/O problem found in %.3g s.\n", report->seconds);
	for (size_t i = 0; i < findings->count; i++) {
		const struct doctor_finding *f = &findings->list[i];
		/* Every line holds names (files, services, segments): each escaped as a name is. */
		const struct out_report_line lines[] = {
			{ NULL, f->numbers },
			{ "why", f->why },
			{ "more", f->more },
		};

		if (i)
			out_report_printf(stream, "\n");
		out_report_paragraph(stream, doctor_severity_names[f->severity], f->what, lines, 3);
	}
	if (report->naccepted)
		out_report_printf(stream,
				  "%s%zu finding%s accepted as normal here (--json lists them): the first, %s: %s\n",
				  findings->count ? "\n" : "", report->naccepted, report->naccepted > 1 ? "s" : "",
				  printable_name(report->accepted[0].what), printable_name(report->accepted[0].by));
	return out_report_end(stream);
}
