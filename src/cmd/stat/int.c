/* SPDX-License-Identifier: GPL-2.0-or-later */
/* int.c: iolens stat's group int (--int): "interrupts". */
#include <stdio.h>
#include <string.h>

#include "cmd/stat_group.h"

/* The interrupts of the item, comma-separated: a column each. */
static void init(struct group *g)
{
	static struct mon_column irq_columns[24];
	static char nicks[24][16];
	unsigned n = 0;
	char copy[64], *save = NULL;

	snprintf(copy, sizeof(copy), "%s", g->item);
	for (char *irq = strtok_r(copy, ",", &save); irq && n < 24; irq = strtok_r(NULL, ",", &save), n++) {
		snprintf(nicks[n], sizeof(nicks[n]), "%s", irq);
		irq_columns[n] = (struct mon_column){ nicks[n], nicks[n], "per_s", MON_DECIMAL, 5, 1000 };
	}
	g->shown.columns = irq_columns;
	g->shown.ncolumns = n;
}

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	(void)since_boot;
	for (unsigned c = 0; c < g->shown.ncolumns; c++) {
		const char *irq = g->shown.columns[c].key;
		const struct irq_line *b = NULL, *a = NULL;
		double value = NAN;

		if (!strcmp(irq, "total")) {
			/* All interrupts, as /proc/stat counts them (dstat's "total"). */
			if (now->have & SYS_PROCSTAT)
				value = rate(now->procstat.intr, then->have & SYS_PROCSTAT ? then->procstat.intr : 0,
					     seconds);
			set_same(g, c, value);
			continue;
		}
		for (unsigned i = 0; (now->have & SYS_INTERRUPTS) && i < now->interrupts.count && !b; i++)
			if (!strcmp(now->interrupts.line[i].name, irq))
				b = &now->interrupts.line[i];
		for (unsigned j = 0; (then->have & SYS_INTERRUPTS) && j < then->interrupts.count && !a; j++)
			if (!strcmp(then->interrupts.line[j].name, irq))
				a = &then->interrupts.line[j];
		/* One that was not there at the earlier sample: its first interval cannot be known. */
		if (b && (a || !(then->have & SYS_INTERRUPTS)))
			value = rate(b->count, a ? a->count : 0, seconds);
		set_same(g, c, value);
	}
}

const struct stat_group group_int = {
	.rank = 11,
	.plugins = { "int" },
	.section = GROUP_DSTAT,
	.letter = 'i',
	.items = ITEMS_IRQS,
	.title = "interrupts",
	.key = "interrupts",
	.needs = SYS_INTERRUPTS | SYS_PROCSTAT,
	.init = init,
	.compute = compute,
	.alone = true,
};
