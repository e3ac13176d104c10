/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pressure.c: export's pressure collector: the stall times of /proc/pressure, iolens_pressure_*. */
#include <stdio.h>

#include "cmd/export.h"
#include "collect/procfs.h"

static void pressure_metrics(struct prom *p, struct exporter *e)
{
	static const char *const resources[] = { "cpu", "memory", "io" };
	struct psi psi[3];
	bool any = false;

	(void)e;
	for (unsigned r = 0; r < 3; r++)
		any |= psi_read(resources[r], &psi[r]) == 0 && psi[r].available;
	if (!any)
		return;
	for (int full = 0; full < 2; full++) {
		const char *name = full ? "iolens_pressure_full_seconds" : "iolens_pressure_some_seconds";
		char sample[64];

		prom_family(p, name, PROM_COUNTER,
			    full ? "Time all non-idle tasks stalled on the resource together (PSI full)."
				 : "Time some task stalled on the resource (PSI some).");
		snprintf(sample, sizeof(sample), "%s_total", name);
		for (unsigned r = 0; r < 3; r++) {
			const struct psi_line *line = full ? &psi[r].full : &psi[r].some;

			if (psi[r].available && line->present)
				prom_real(p, sample, (double)line->total_us / 1e6, "resource", resources[r], NULL);
		}
	}
}

const struct export_collector collector_pressure = {
	.name = "pressure",
	.help = "iolens_pressure_*: the time tasks stalled on CPU, memory and I/O (PSI)",
	.rank = 50,
	.render = pressure_metrics,
};
