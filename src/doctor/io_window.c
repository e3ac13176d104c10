/* SPDX-License-Identifier: GPL-2.0-or-later */
/* io_window.c: each process's I/O over doctor's window, its /proc/PID/io deltas between rounds added up. */
#include "doctor/io_window.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/procfs.h"
#include "collect/sysroot.h"
#include "common/util.h"

static int window_order(pid_t pid_a, uint64_t start_a, pid_t pid_b, uint64_t start_b)
{
	if (pid_a != pid_b)
		return (pid_a > pid_b) - (pid_a < pid_b);
	return (start_a > start_b) - (start_a < start_b);
}

static void add_delta(struct window_counts *total, const struct proc_io_delta *d)
{
	total->rchar += d->rchar;
	total->read_bytes += d->read_bytes;
	total->write_bytes += d->write_bytes;
}

static int by_process(const void *a_, const void *b_)
{
	const struct window_io *a = a_, *b = b_;

	return window_order(a->pid, a->start_time, b->pid, b->start_time);
}

/*
 * The round's ended processes (known from their ends): the counts of one gone since the last
 * round added to its own, to its end; those born and gone within the round returned (*nborn of
 * them, to free).
 */
static struct window_io *take_ended(struct io_window *win, size_t *nborn_out)
{
	const struct proc_io_rounds *r = &win->rounds;
	struct window_io *born = NULL;
	size_t nborn = 0;

	for (size_t i = 0; i < r->nended; i++) {
		const struct proc_io_ended *e = &r->ended[i];
		struct window_io key = { .pid = e->last.pid, .start_time = e->last.start_time };
		struct window_io *p = win->count ? bsearch(&key, win->procs, win->count, sizeof(*p), by_process) : NULL;

		if (!p) {
			born = xrealloc(born, (nborn + 1) * sizeof(*born));
			p = &born[nborn++];
			*p = (struct window_io){ .pid = e->last.pid, .start_time = e->last.start_time,
						 .from_ns = win->round_ns };
		}
		snprintf(p->comm, sizeof(p->comm), "%s", e->last.comm);
		add_delta(&p->total, &e->delta);
	}
	*nborn_out = nborn;
	return born;
}

void io_window_take(struct io_window *win, const struct proc_io_sample *now, size_t n, uint64_t ns, uint64_t ticks,
		    proc_io_ignores_sigchld_fn ignores, void *context)
{
	struct proc_io_delta *deltas = xcalloc(n ? n : 1, sizeof(*deltas));
	bool *known = xcalloc(n ? n : 1, sizeof(*known));
	struct window_io *procs, *born;
	size_t i = 0, j = 0, count = 0, nborn;

	proc_io_rounds_take(&win->rounds, now, n, ticks, ignores, context, deltas, known);
	born = take_ended(win, &nborn);
	procs = xcalloc(win->count + n + nborn + 1, sizeof(*procs));
	/* The last round's processes and this one's, both in order: merged. */
	while (i < win->count || j < n) {
		int order = i == win->count ? 1 : j == n ? -1
			    : window_order(win->procs[i].pid, win->procs[i].start_time, now[j].pid, now[j].start_time);
		struct window_io *p = &procs[count];

		if (order < 0) { /* gone: kept when it did some I/O */
			*p = win->procs[i++];
			p->alive = false;
			count += p->total.rchar || p->total.read_bytes || p->total.write_bytes;
			continue;
		}
		if (order == 0)
			*p = win->procs[i++];
		else /* new: born since the last round (known), else counted from this one */
			*p = (struct window_io){ .pid = now[j].pid, .start_time = now[j].start_time,
						 .from_ns = known[j] ? win->round_ns : ns };
		snprintf(p->comm, sizeof(p->comm), "%s", now[j].comm);
		p->alive = true;
		if (known[j])
			add_delta(&p->total, &deltas[j]);
		j++;
		count++;
	}
	/* Those born and gone within the round, known from their ends, in order too. */
	if (nborn) {
		memcpy(procs + count, born, nborn * sizeof(*born));
		count += nborn;
		qsort(procs, count, sizeof(*procs), by_process);
	}
	free(born);
	free(win->procs);
	win->procs = procs;
	win->count = count;
	win->round_ns = ns;
	free(deltas);
	free(known);
}

void io_window_round(struct io_window *win, const struct task_iter *from)
{
	uint64_t ticks = proc_io_rounds_ticks_now(), ns = monotonic_ns();
	struct proc_io_sample *now = NULL;
	size_t n = 0;
	struct proc_pids pids;
	pid_t pid;

	if (from) {
		proc_io_rounds_exits(&win->rounds, from->exits, from->nexits);
		io_window_take(win, from->procs, from->nprocs, ns, ticks, proc_ignores_sigchld, NULL);
		return;
	}
	proc_pids_open(&pids, PROC_PIDS_NOT_SELF);
	while ((pid = proc_pids_next(&pids))) {
		struct proc_io_sample e;

		if (proc_io_sample_read(pid, &e) != 0)
			continue;
		now = xrealloc(now, (n + 1) * sizeof(*now));
		now[n++] = e;
	}
	proc_pids_close(&pids);
	if (n > 1)
		qsort(now, n, sizeof(*now), proc_io_sample_by_pid);
	io_window_take(win, now, n, ns, ticks, proc_ignores_sigchld, NULL);
	free(now);
}

const struct window_io *io_window_alive(const struct io_window *win, pid_t pid)
{
	size_t low = 0, high = win->count;

	while (low < high) { /* the first of pid */
		size_t middle = low + (high - low) / 2;

		if (win->procs[middle].pid < pid)
			low = middle + 1;
		else
			high = middle;
	}
	for (; low < win->count && win->procs[low].pid == pid; low++)
		if (win->procs[low].alive)
			return &win->procs[low];
	return NULL;
}

void io_window_free(struct io_window *win)
{
	proc_io_rounds_free(&win->rounds);
	free(win->procs);
	*win = (struct io_window){0};
}
