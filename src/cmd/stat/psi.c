/* SPDX-License-Identifier: GPL-2.0-or-later */
/* psi.c: iolens stat's group psi (--psi): "pressure % stalled". */
#include "cmd/stat_group.h"
#include "model/pressure.h"

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
	const struct psi *a[3] = { &then->psi_io, &then->psi_memory, &then->psi_cpu };
	const struct psi *b[3] = { &now->psi_io, &now->psi_memory, &now->psi_cpu };

	(void)since_boot;
	for (int r = 0; r < 3; r++) {
		const struct psi_line *lines_a[2] = { &a[r]->some, &a[r]->full },
				      *lines_b[2] = { &b[r]->some, &b[r]->full };
		for (int l = 0; l < 2; l++) {
			unsigned c = (unsigned)(r * 2 + l);
			if (!(now->have & SYS_PSI) || !b[r]->available || !lines_b[l]->present) {
				set_same(g, c, NAN);
				continue;
			}
			uint64_t stall_us = lines_b[l]->total_us >= lines_a[l]->total_us
						    ? lines_b[l]->total_us - lines_a[l]->total_us : 0;
			double pct = psi_share(lines_a[l]->total_us, lines_b[l]->total_us, seconds);
			set(g, c, pct > 100 ? 100 : pct, (double)stall_us * 1000);
		}
	}
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
