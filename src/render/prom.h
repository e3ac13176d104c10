/* prom.h: the Prometheus text exposition format (0.0.4) and OpenMetrics 1.0: families, samples, escaped labels. */
#ifndef IOLENS_OUT_PROM_H
#define IOLENS_OUT_PROM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum prom_type { PROM_COUNTER, PROM_GAUGE, PROM_HISTOGRAM };

struct prom {
	FILE *out;
	bool openmetrics; /* OpenMetrics: counter families named without _total, "# EOF" at the end */
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
 * One series of a histogram family: _bucket for each bound (cumulative[k]: the observations
 * <= bounds[k]) and +Inf, then _sum and _count; labelled by pairs (key, value, ..., NULL), le last.
 */
void prom_histogram(struct prom *p, const char *family, const char *const *pairs, const double *bounds,
		    const uint64_t *cumulative, unsigned nbounds, uint64_t count, double sum);
/* The end of the exposition ("# EOF" in OpenMetrics). */
void prom_end(struct prom *p);

/* Whether an Accept header asks for OpenMetrics (application/openmetrics-text, and q not 0). */
bool prom_wants_openmetrics(const char *accept);

#define PROM_TEXT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define PROM_OPENMETRICS_TYPE "application/openmetrics-text; version=1.0.0; charset=utf-8"

#endif
