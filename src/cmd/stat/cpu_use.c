/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cpu_use.c: iolens stat's group cpu-use (--cpu-use): "per cpu usage". */
#include <stdio.h>
#include <string.h>

#include "cmd/stat_group.h"
#include "model/cpu.h"

/* The cpus of the item, comma-separated: a column each. */
static void init(struct group *g)
{
	static struct mon_column cpu_columns[40];
	static char nicks[40][16], keys[40][20];
	unsigned n = 0;
	char copy[64], *save = NULL;

	snprintf(copy, sizeof(copy), "%s", g->item);
	for (char *cpu = strtok_r(copy, ",", &save); cpu && n < 40; cpu = strtok_r(NULL, ",", &save), n++) {
		snprintf(nicks[n], sizeof(nicks[n]), "%s", cpu);
		snprintf(keys[n], sizeof(keys[n]), "cpu%s", cpu);
		cpu_columns[n] = (struct mon_column){ nicks[n], keys[n], "pct", MON_PERCENT, 3, 34 };
	}
	g->shown.columns = cpu_columns;
	g->shown.ncolumns = n;
}

/* dstat's cpu-use: each cpu's time not idle, in percent of its time in the interval. */
static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	static const struct cpu_times zero;

	(void)seconds;
	(void)since_boot;
	for (unsigned c = 0; c < g->shown.ncolumns; c++) {
		const char *cpu = g->shown.columns[c].nick;
		const struct cpu_times *b = sample_cpu(now, cpu), *a = sample_cpu(then, cpu);
		double total;

		if (!b) {
			set_same(g, c, NAN);
			continue;
		}
		if (!a)
			a = &zero;
#define SUM(t)                                                                                                         \
	((double)((t)->user + (t)->nice + (t)->system + (t)->idle + (t)->iowait + (t)->irq + (t)->softirq + (t)->steal))
		total = SUM(b) - SUM(a);
#undef SUM
		set_same(g, c, total > 0 ? 100.0 - 100.0 * ((double)b->idle - (double)a->idle) / total : 0);
	}
}

const struct stat_group group_cpu_use = {
	.rank = 53,
	.plugins = { "cpu-use" },
	.section = GROUP_DSTAT,
	.plugin_option = true,
	.items = ITEMS_CPUS,
	.title = "per cpu usage",
	.key = "cpu_use",
	.needs = SYS_PROCSTAT,
	.init = init,
	.compute = compute,
};
