/* SPDX-License-Identifier: GPL-2.0-or-later */
/* prom_rules.c: Prometheus alerting rules written as a rule file (YAML, single-quoted scalars). */
#include "render/prom_rules.h"

#include <errno.h>
#include <string.h>

/* A YAML single-quoted scalar: a quote doubled; a line feed (never in these) as a space. */
static void quoted(FILE *f, const char *text)
{
	fputc('\'', f);
	for (const char *p = text; *p; p++) {
		if (*p == '\'')
			fputs("''", f);
		else
			fputc(*p == '\n' ? ' ' : *p, f);
	}
	fputc('\'', f);
}

int prom_rules_write(FILE *f, const char *header, const char *group, const struct prom_alert *alerts,
		     size_t count)
{
	for (const char *line = header; line && *line;) {
		size_t n = strcspn(line, "\n");
		fprintf(f, "# %.*s\n", (int)n, line);
		line += n + (line[n] == '\n');
	}
	fprintf(f, "groups:\n  - name: %s\n    rules:\n", group);
	for (size_t i = 0; i < count; i++) {
		const struct prom_alert *a = &alerts[i];

		fprintf(f, "      - alert: %s\n        expr: ", a->name);
		quoted(f, a->expr);
		if (a->for_)
			fprintf(f, "\n        for: %s", a->for_);
		fprintf(f, "\n        labels:\n          severity: %s\n          rule: %s\n", a->severity, a->rule);
		fputs("        annotations:\n          summary: ", f);
		quoted(f, a->summary);
		fputs("\n          description: ", f);
		quoted(f, a->description);
		fputc('\n', f);
	}
	return ferror(f) ? -EIO : 0;
}
