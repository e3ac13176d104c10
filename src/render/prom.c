/* prom.c: the Prometheus text exposition format and OpenMetrics, written to a stream. */
#include "http/http.h"
#include "render/prom.h"

#include "common/util.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>

static const char *const type_names[] = { "counter", "gauge", "histogram" };

void prom_family(struct prom *p, const char *name, enum prom_type type, const char *help)
{
	const char *suffix = type == PROM_COUNTER && !p->openmetrics ? "_total" : "";

	fprintf(p->out, "# HELP %s%s %s\n# TYPE %s%s %s\n", name, suffix, help, name, suffix, type_names[type]);
}

/* As every format writes a name (out.h): bytes that are not UTF-8 and backslashes as \xNN, then the exposition format's own escapes. */
static void escaped(FILE *out, const char *raw)
{
	char *text = escape_text(raw, ESCAPE_BACKSLASH);

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

	fputs(name, p->out);
	va_start(args, value);
	labels(p->out, args);
	va_end(args);
	fprintf(p->out, " %llu\n", (unsigned long long)value);
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

	fputs(name, p->out);
	va_start(args, value);
	labels(p->out, args);
	va_end(args);
	real_value(p->out, value);
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

void prom_histogram(struct prom *p, const char *family, const char *const *pairs, const double *bounds,
		    const uint64_t *cumulative, unsigned nbounds, uint64_t count, double sum)
{
	char le[32];

	for (unsigned k = 0; k < nbounds; k++) {
		snprintf(le, sizeof(le), "%g", bounds[k]);
		series(p->out, family, "_bucket", pairs, le);
		fprintf(p->out, " %llu\n", (unsigned long long)cumulative[k]);
	}
	series(p->out, family, "_bucket", pairs, "+Inf");
	fprintf(p->out, " %llu\n", (unsigned long long)count);
	series(p->out, family, "_sum", pairs, NULL);
	real_value(p->out, sum);
	series(p->out, family, "_count", pairs, NULL);
	fprintf(p->out, " %llu\n", (unsigned long long)count);
}

void prom_end(struct prom *p)
{
	if (p->openmetrics)
		fputs("# EOF\n", p->out);
}

bool prom_wants_openmetrics(const char *accept)
{
	return http_weight(accept, "application/openmetrics-text") > 0;
}
