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
	stat_compute_int(g, then, now, seconds);
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
};
