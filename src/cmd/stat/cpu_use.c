/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cpu_use.c: iolens stat's group cpu-use (--cpu-use): "per cpu usage". */
#include "cmd/stat_group.h"


static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	(void)seconds;
	(void)since_boot;
	stat_compute_cpu_use(g, then, now);
}

const struct stat_group group_cpu_use = {
	.rank = 53,
	.plugins = { "cpu-use" },
	.section = GROUP_DSTAT,
	.plugin_option = true,
	.title = "per cpu usage",
	.key = "cpu_use",
	.needs = SYS_PROCSTAT,
	.compute = compute,
};
