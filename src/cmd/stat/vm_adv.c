/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vm_adv.c: iolens stat's group vm-adv (--vm-adv): "advanced virtual memory". */
#include "cmd/stat_group.h"

enum { STEAL, SCAN_KSWAPD, SCAN_DIRECT, PAGEOUTRUN, ALLOCSTALL };
static const struct mon_column columns[] = {
	[STEAL] = { "steal", "steal", "pages_per_s", MON_DECIMAL, 5, 1000 },
	[SCAN_KSWAPD] = { "scanK", "scan_kswapd", "pages_per_s", MON_DECIMAL, 5, 1000 },
	[SCAN_DIRECT] = { "scanD", "scan_direct", "pages_per_s", MON_DECIMAL, 5, 1000 },
	[PAGEOUTRUN] = { "pgoru", "pageoutrun", "per_s", MON_DECIMAL, 5, 1000 },
	[ALLOCSTALL] = { "astll", "allocstall", "per_s", MON_DECIMAL, 5, 1000 },
};

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	const struct vm_adv *x = &now->vm_adv, *x0 = &then->vm_adv;
	(void)since_boot;
	if (!(now->have & SYS_VM_ADV)) {
		all_unknown(g);
		return;
	}
	set_same(g, STEAL, rate(x->pgsteal, x0->pgsteal, seconds));
	set_same(g, SCAN_KSWAPD, rate(x->pgscan_kswapd, x0->pgscan_kswapd, seconds));
	set_same(g, SCAN_DIRECT, rate(x->pgscan_direct, x0->pgscan_direct, seconds));
	set_same(g, PAGEOUTRUN, rate(x->pageoutrun, x0->pageoutrun, seconds));
	set_same(g, ALLOCSTALL, rate(x->allocstall, x0->allocstall, seconds));
}

const struct stat_group group_vm_adv = {
	.rank = 35,
	.plugins = { "vm-adv" },
	.section = GROUP_DSTAT,
	.plugin_option = true,
	.title = "advanced virtual memory",
	.key = "vm_adv",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_VM_ADV,
	.compute = compute,
};
