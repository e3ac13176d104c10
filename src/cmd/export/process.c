/* SPDX-License-Identifier: GPL-2.0-or-later */
/* process.c: export's process collector: the exporter itself, process_*, named as client_golang names them. */
#include <stdio.h>

#include "cmd/export.h"
#include "collect/procfs.h"
#include "collect/self.h"

static void process_metrics(struct prom *p, struct exporter *e)
{
	struct process_self self;

	(void)e;
	process_self_read(&self);
	const struct {
		const char *name, *help;
		enum prom_type type;
		double value;
		bool known;
	} metrics[] = {
		{ "process_cpu_seconds", "Total user and system CPU time spent in seconds.", PROM_COUNTER,
		  self.cpu_seconds, self.cpu_seconds >= 0 },
		{ "process_open_fds", "Number of open file descriptors.", PROM_GAUGE, (double)self.open_fds,
		  self.open_fds != PROCFS_UNKNOWN },
		{ "process_max_fds", "Maximum number of open file descriptors.", PROM_GAUGE, (double)self.max_fds,
		  self.max_fds != PROCFS_UNKNOWN },
		{ "process_virtual_memory_bytes", "Virtual memory size in bytes.", PROM_GAUGE,
		  (double)self.virtual_bytes, self.virtual_bytes != PROCFS_UNKNOWN },
		{ "process_resident_memory_bytes", "Resident memory size in bytes.", PROM_GAUGE,
		  (double)self.resident_bytes, self.resident_bytes != PROCFS_UNKNOWN },
		{ "process_start_time_seconds", "Start time of the process since unix epoch in seconds.", PROM_GAUGE,
		  self.start_time_seconds, self.start_time_seconds >= 0 },
	};

	for (size_t i = 0; i < sizeof(metrics) / sizeof(metrics[0]); i++) {
		char sample[64];

		if (!metrics[i].known)
			continue;
		prom_family(p, metrics[i].name, metrics[i].type, metrics[i].help);
		snprintf(sample, sizeof(sample), "%s%s", metrics[i].name,
			 metrics[i].type == PROM_COUNTER ? "_total" : "");
		prom_real(p, sample, metrics[i].value, NULL); /* whole numbers below 2^53 print as such */
	}
}

const struct export_collector collector_process = {
	.name = "process",
	.help = "process_*: the exporter's own CPU time, descriptors, memory and start time",
	.rank = 80,
	.render = process_metrics,
};
