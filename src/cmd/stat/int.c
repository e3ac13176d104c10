/* SPDX-License-Identifier: GPL-2.0-or-later */
/* int.c: iolens stat's group int (--int): "interrupts". */
#include "cmd/stat_group.h"


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
	.title = "interrupts",
	.key = "interrupts",
	.needs = SYS_INTERRUPTS | SYS_PROCSTAT,
	.compute = compute,
};
