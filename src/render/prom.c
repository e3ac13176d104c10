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

static void labels(FILE *out, va_list args)
{
	const char *key = va_arg(args, const char *);

	if (!key)
		return;
	fputc('{', out);
	for (bool first = true; key; key = va_arg(args, const char *), first = false) {
		const char *value = va_arg(args, const char *);

		fprintf(out, "%s%s=\"", first ? "" : ",", key);
		escaped(out, value ? value : "");
		fputc('"', out);
	}
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

void prom_real(struct prom *p, const char *name, double value, ...)
{
	va_list args;

	fputs(name, p->out);
	va_start(args, value);
	labels(p->out, args);
	va_end(args);
	if (isnan(value))
		fputs(" NaN\n", p->out);
	else if (isinf(value))
		fputs(value > 0 ? " +Inf\n" : " -Inf\n", p->out);
	else {
		/* The shortest text that reads back as the same double. */
		char text[32];

		snprintf(text, sizeof(text), "%.15g", value);
		if (strtod(text, NULL) != value)
			snprintf(text, sizeof(text), "%.17g", value);
		fprintf(p->out, " %s\n", text);
	}
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
