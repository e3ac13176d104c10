/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vm.c: iolens stat's group vm (--vm): "virtual memory". */
#include "cmd/stat_group.h"

enum { MAJOR_FAULTS, MINOR_FAULTS, ALLOC, FREE };
static const struct mon_column columns[] = {
	[MAJOR_FAULTS] = { "majpf", "major_faults", "per_s", MON_DECIMAL, 5, 1000 },
	[MINOR_FAULTS] = { "minpf", "minor_faults", "per_s", MON_DECIMAL, 5, 1000 },
	[ALLOC] = { "alloc", "alloc", "pages_per_s", MON_DECIMAL, 5, 1000 },
	[FREE] = { "free", "free", "pages_per_s", MON_DECIMAL, 5, 1000 },
};

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	const struct vmstat *v = &now->vmstat, *v0 = &then->vmstat;
	(void)then;
	(void)since_boot;
	if (!(now->have & SYS_VMSTAT)) {
		all_unknown(g);
		return;
	}
	set_same(g, MAJOR_FAULTS, rate(v->pgmajfault, v0->pgmajfault, seconds));
	set_same(g, MINOR_FAULTS, rate(v->pgfault, v0->pgfault, seconds));
	set_same(g, ALLOC, rate(v->pgalloc, v0->pgalloc, seconds));
	set_same(g, FREE, rate(v->pgfree, v0->pgfree, seconds));
}

const struct stat_group group_vm = {
	.rank = 19,
	.plugins = { "vm" },
	.section = GROUP_DSTAT,
	.title = "virtual memory",
	.key = "vm",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_VMSTAT,
	.compute = compute,
};
