/* SPDX-License-Identifier: GPL-2.0-or-later */
/* top_bio.c: iolens stat's group top-bio (--top-bio): "most expensive". */
#include <math.h>

#include "cmd/stat_group.h"

enum { NAME, READ, WRITE, P99, P50, MAX, AVG };
static const struct mon_column columns[] = {
	[NAME] = { "block i/o process", "name", "", MON_NAME, 11, 0 },
	[READ] = { "read", "read", "bytes_per_s", MON_DECIMAL, 5, 1024 },
	[WRITE] = { "writ", "write", "bytes_per_s", MON_DECIMAL, 5, 1024 },
	[P99] = { "p99", "p99", "ns", MON_FLOAT, 4, 1000 },
	[P50] = { "p50", "p50", "ns", MON_FLOAT, 4, 1000 },
	[MAX] = { "max", "max", "ns", MON_FLOAT, 4, 1000 },
	[AVG] = { "avg", "avg", "ns", MON_FLOAT, 4, 1000 },
};

/*
 * --top-bio by eBPF: the process whose requests moved the most bytes in the interval, charged
 * to the process that submitted them, on all its disks (the table has a row per process and
 * disk, a process's rows together). Counted from the start of the run: the line since boot is
 * unknown. A process that ended in the interval is still there, with its last requests.
 */
#define TABLE_COLUMNS 3 /* the table's: dstat's name, read, writ (latency: iolens biotop) */

static bool by_ebpf;

void groups_top_bio_by_ebpf(bool ebpf)
{
	by_ebpf = ebpf;
}

static unsigned needs_now(void)
{
	return by_ebpf ? SYS_BIO : SYS_PROC_IO;
}

/* The table keeps dstat's columns; JSON and CSV have the latency too. */
static void table_view(const struct group *g, struct mon_group *out)
{
	if (g->shown.ncolumns > TABLE_COLUMNS)
		out->ncolumns = TABLE_COLUMNS;
}

static void compute_ebpf(struct group *g, const struct system_sample *then, const struct system_sample *now,
			 double seconds)
{
	const struct bio_table *table = &now->bio;
	const char *name = "";
	unsigned first = 0, end = 0; /* the chosen process's rows */
	double best = 0, figures[2] = { 0, 0 };
	struct bio_latency latency_now = {0}, latency_then = {0}, both;
	struct bio_latency_figures latency;
	bool chosen;

	if (!(now->have & SYS_BIO) || !(then->have & SYS_BIO)) {
		stat_top_name(g, 0, "", false);
		all_unknown(g);
		return;
	}
	for (unsigned i = 0, j; i < table->count; i = j) {
		double read = 0, write = 0, most = -1;
		const char *its = "";

		for (j = i; j < table->count && table->process[j].pid == table->process[i].pid; j++) {
			const struct bio_process *p = &table->process[j], *a = bio_table_find(&then->bio, p);
			double r = rate(p->bytes[BIO_READ], a ? a->bytes[BIO_READ] : 0, seconds);
			double w = rate(p->bytes[BIO_WRITE], a ? a->bytes[BIO_WRITE] : 0, seconds);

			read += r;
			write += w;
			if (r + w > most) { /* named as its row that moved the most (a pid reused: the one busy now) */
				most = r + w;
				its = p->name;
			}
		}
		if (read + write > best) {
			best = read + write;
			first = i;
			end = j;
			name = its;
			figures[0] = read;
			figures[1] = write;
		}
	}
	chosen = end > first;
	stat_top_name(g, chosen ? table->process[first].pid : 0, name, false);
	g->shown.blank = !chosen;
	set_same(g, NAME, NAN);
	set_same(g, READ, figures[0]);
	set_same(g, WRITE, figures[1]);
	/*
	 * Its requests' latency in the interval, on all its disks (0 when none completed, as -x's);
	 * nothing done, unknown.
	 */
	for (unsigned i = first; i < end; i++) {
		const struct bio_process *a = bio_table_find(&then->bio, &table->process[i]);

		bio_latency_both(&table->process[i], &both);
		bio_latency_add(&latency_now, &both);
		if (a) {
			bio_latency_both(a, &both);
			bio_latency_add(&latency_then, &both);
		}
	}
	if (chosen)
		bio_latency_figures(&latency_now, &latency_then, &latency);
	set(g, P99, chosen ? (double)latency.p99_ns / 1e6 : NAN, chosen ? (double)latency.p99_ns : NAN);
	set(g, P50, chosen ? (double)latency.p50_ns / 1e6 : NAN, chosen ? (double)latency.p50_ns : NAN);
	set(g, MAX, chosen ? (double)latency.max_ns / 1e6 : NAN, chosen ? (double)latency.max_ns : NAN);
	set(g, AVG, chosen ? (double)latency.average_ns / 1e6 : NAN, chosen ? (double)latency.average_ns : NAN);
}

static double measure(const struct top_process *p, double figures[TOP_FIGURES])
{
	figures[READ - 1] = rate(p->now->read_bytes, p->then->read_bytes, p->seconds);
	figures[WRITE - 1] = rate(p->now->write_bytes, p->then->write_bytes, p->seconds);
	return figures[READ - 1] + figures[WRITE - 1];
}

static const struct top_measure top = { .part = PROCS_IO, .measure = measure };

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	(void)since_boot;
	if (by_ebpf) {
		compute_ebpf(g, then, now, seconds);
	} else {
		stat_compute_top(g, then, now, seconds, &top);
		for (unsigned c = P99; c < g->shown.ncolumns; c++)
			set_same(g, c, NAN); /* /proc/PID/io has no latency */
	}
}

const struct stat_group group_top_bio = {
	.rank = 40,
	.plugins = { "top-bio" },
	.section = GROUP_DSTAT_PLUGIN,
	.plugin_option = true,
	.title = "most expensive",
	.key = "top_bio",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_PROC_IO,
	.subtitle = "block i/o process",
	.glued = 1u << 1,
	.top = true,
	.compute = compute,
	.needs_now = needs_now,
	.table_view = table_view,
};
