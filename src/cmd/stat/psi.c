/* SPDX-License-Identifier: GPL-2.0-or-later */
/* psi.c: iolens stat's group psi (--psi): "pressure % stalled". */
#include "cmd/stat_group.h"

/* Stall time in percent of the interval on screen; stall ns in the interval in JSON and CSV. */
enum { IO_SOME, IO_FULL, MEMORY_SOME, MEMORY_FULL, CPU_SOME, CPU_FULL };
static const struct mon_column columns[] = {
	[IO_SOME] = { "io-s", "io_some", "stall_ns", MON_FLOAT, 4, 10 },
	[IO_FULL] = { "io-f", "io_full", "stall_ns", MON_FLOAT, 4, 10 },
	[MEMORY_SOME] = { "mem-s", "memory_some", "stall_ns", MON_FLOAT, 5, 10 },
	[MEMORY_FULL] = { "mem-f", "memory_full", "stall_ns", MON_FLOAT, 5, 10 },
	[CPU_SOME] = { "cpu-s", "cpu_some", "stall_ns", MON_FLOAT, 5, 10 },
	[CPU_FULL] = { "cpu-f", "cpu_full", "stall_ns", MON_FLOAT, 5, 10 },
};

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	(void)since_boot;
	stat_compute_psi(g, then, now, seconds);
}

const struct stat_group group_psi = {
	.rank = 24,
	.plugins = { "psi" },
	.section = GROUP_IOLENS,
	.title = "pressure %% stalled",
	.key = "pressure",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_PSI,
	.compute = compute,
};
