/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * finding.h: a doctor finding as data (rule, severity, what, the numbers as typed fields, why,
 * more), rendered as text or JSON by one renderer.
 */
#ifndef IOLENS_DOCTOR_FINDING_H
#define IOLENS_DOCTOR_FINDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum doctor_severity { DOCTOR_INFO, DOCTOR_WARNING, DOCTOR_CRITICAL };
extern const char *const doctor_severity_names[]; /* "info", "warning", "critical" */

/*
 * A finding's numbers for scripts: typed fields in the order they are written, each known or
 * unknown (JSON null). A list holds fields without keys; an object (a list's element, or a
 * field) holds fields with keys. Counts whose key ends in _bytes or _ns are written with
 * that unit (record.h).
 */
enum doctor_field_kind {
	FIELD_NULL,
	FIELD_TEXT,
	FIELD_BOOL,
	FIELD_INT,
	FIELD_COUNT,
	FIELD_REAL,
	FIELD_LIST,
	FIELD_OBJECT
};

struct doctor_fields {
	struct doctor_field *items;
	size_t count;
};

struct doctor_field {
	const char *key; /* a literal; NULL for a list's element */
	enum doctor_field_kind kind;
	union {
		bool flag;
		int64_t integer;
		uint64_t count;
		double real;
	} value;
	char *text;                    /* FIELD_TEXT's */
	struct doctor_fields children; /* FIELD_LIST's and FIELD_OBJECT's */
};

struct doctor_finding {
	enum doctor_severity severity;
	const char *rule;
	char what[512];    /* what is wrong, in one line */
	char numbers[768]; /* the numbers that show it, as a sentence */
	const char *why;   /* why it matters */
	char more[256];    /* the iolens command that shows more */
	struct doctor_fields data;
};

struct doctor_findings {
	struct doctor_finding *list;
	size_t count;
};

/* A new finding, its texts empty and no data yet. */
struct doctor_finding *doctor_finding_add(struct doctor_findings *findings, enum doctor_severity severity,
					  const char *rule, const char *why);
void doctor_findings_free(struct doctor_findings *findings);
void doctor_fields_free(struct doctor_fields *fields);

/* printf into a finding's text (what, numbers, more): cut at size. */
/*
 * A word for a finding's more, that a shell takes as text: itself when it has only characters no
 * shell treats apart, else in single quotes (a quote in it as '\''); cut short to fit len.
 */
const char *doctor_shell_word(const char *text, char *buf, size_t len);
/* How long the commands of a finding's more sample: they run as printed, and end. */
#define DOCTOR_MORE_SAMPLES "1 5"
void doctor_text(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Fields, appended to an object (key given) or a list (key NULL). */
void field_text(struct doctor_fields *f, const char *key, const char *text); /* NULL: null */
void field_bool(struct doctor_fields *f, const char *key, bool value);
void field_int(struct doctor_fields *f, const char *key, int64_t value);
void field_int_if(struct doctor_fields *f, const char *key, int64_t value, bool known);
void field_count(struct doctor_fields *f, const char *key, uint64_t value);
void field_count_if(struct doctor_fields *f, const char *key, uint64_t value, bool known);
void field_real(struct doctor_fields *f, const char *key, double value); /* NaN: null */
void field_real_if(struct doctor_fields *f, const char *key, double value, bool known);
void field_null(struct doctor_fields *f, const char *key);
struct doctor_fields *field_list(struct doctor_fields *f, const char *key);
struct doctor_fields *field_object(struct doctor_fields *f, const char *key);
/* A list made beforehand, its items moved in (items is left empty). */
void field_list_move(struct doctor_fields *f, const char *key, struct doctor_fields *items);

/* A field of an object by key, or NULL; its text (NULL unless a text). */
const struct doctor_field *doctor_field_get(const struct doctor_fields *f, const char *key);
const char *doctor_field_text(const struct doctor_fields *f, const char *key);

/* A finding the configuration accepted as normal here: not reported, listed (JSON) and counted. */
struct doctor_accepted {
	const char *rule;
	char what[512];
	char by[512]; /* the statement and where it was said */
};

/* The whole report, as the renderers take it. */
struct doctor_report {
	double seconds;
	const char *cache_mode;   /* "ebpf" or "procfs" */
	const char *cache_mechanism; /* with eBPF: "tracepoints", "fentry" or "kprobes" (NULL: not known) */
	const char *odirect_mode; /* "ebpf", "fdinfo" or "off" */
	const char *bio_mode;     /* "ebpf" or "procfs" */
	const char *exits_mode;   /* processes' I/O to their ends: "ebpf", or "procfs" (as last seen) */
	const char *bio_mechanism; /* with eBPF: "block_io_start" or "block_getrq" (NULL: not known) */
	const struct doctor_findings *findings; /* worst first */
	const struct doctor_accepted *accepted;
	size_t naccepted;
};

enum doctor_severity doctor_worst(const struct doctor_findings *findings);
/* The report as one JSON document, or as text: 0 or -errno. */
int doctor_write_json(const struct doctor_report *report, FILE *stream);
int doctor_write_text(const struct doctor_report *report, FILE *stream);

#endif
