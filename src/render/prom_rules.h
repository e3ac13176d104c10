/* SPDX-License-Identifier: GPL-2.0-or-later */
/* prom_rules.h: Prometheus alerting rules as a rule file (YAML) for promtool and Prometheus. */
#ifndef IOLENS_PROM_RULES_H
#define IOLENS_PROM_RULES_H

#include <stddef.h>
#include <stdio.h>

struct prom_alert {
	const char *name;        /* the alert's name (IolensDoctorFull) */
	const char *expr;        /* its PromQL condition */
	const char *for_;        /* how long it must hold ("1m"), or NULL */
	const char *severity;    /* its severity label */
	const char *rule;        /* its rule label */
	const char *summary;     /* annotations, with {{ $labels.x }} and {{ $value }} */
	const char *description;
};

/* The alerts as one group of a rule file, after comment lines (header, "# "-less lines): 0 or -errno. */
int prom_rules_write(FILE *stream, const char *header, const char *group, const struct prom_alert *alerts,
		     size_t count);

#endif
