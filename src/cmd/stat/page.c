/* SPDX-License-Identifier: GPL-2.0-or-later */
/* page.c: iolens stat's group page (--page): "page/swap". */
#include "cmd/stat_group.h"

/* Page traffic and swap traffic side by side, never both called "in" and "out". */
enum { PAGE_IN, PAGE_OUT, SWAP_IN, SWAP_OUT };
static const struct mon_column columns[] = {
	[PAGE_IN] = { "pgin", "page_in", "bytes_per_s", MON_BYTES, 5, 1024 },
	[PAGE_OUT] = { "pgout", "page_out", "bytes_per_s", MON_BYTES, 5, 1024 },
	[SWAP_IN] = { "swin", "swap_in", "bytes_per_s", MON_BYTES, 5, 1024 },
	[SWAP_OUT] = { "swout", "swap_out", "bytes_per_s", MON_BYTES, 5, 1024 },
};

/* dstat's -g: "paging" is swap traffic alone (pswpin and pswpout), labelled in and out. */
static void dstat_view(const struct group *g, struct mon_group *out, bool since_boot)
{
	static const struct mon_column dstat_columns[] = {
		{ "in", "swap_in", "bytes_per_s", MON_DECIMAL, 5, 1024 },
		{ "out", "swap_out", "bytes_per_s", MON_DECIMAL, 5, 1024 },
	};

	(void)since_boot;
	snprintf(out->title, sizeof(out->title), "paging");
	out->columns = dstat_columns;
	out->ncolumns = 2;
	for (unsigned c = 0; c < 2; c++) {
		out->values[c] = g->shown.values[SWAP_IN + c];
		out->raw[c] = g->shown.raw[SWAP_IN + c];
	}
}

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
	set_same(g, PAGE_IN, rate(v->pgpgin, v0->pgpgin, seconds) * 1024);
	set_same(g, PAGE_OUT, rate(v->pgpgout, v0->pgpgout, seconds) * 1024);
	set_same(g, SWAP_IN, rate(v->pswpin, v0->pswpin, seconds) * (double)page_size());
	set_same(g, SWAP_OUT, rate(v->pswpout, v0->pswpout, seconds) * (double)page_size());
}

const struct stat_group group_page = {
	.rank = 5,
	.plugins = { "page", "page24" },
	.section = GROUP_DSTAT,
	.letter = 'g',
	.title = "page/swap",
	.key = "paging",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_VMSTAT,
	.compute = compute,
	.dstat_view = dstat_view,
};
