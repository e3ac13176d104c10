/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proc_io_rounds.c: what each process did between two rounds of /proc/PID/io, a reaped child's
 * counts taken off its parent.
 */
#include "collect/proc_io_rounds.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collect/sysroot.h"
#include "common/util.h"

/* Counts to take off a process's next deltas: a reaped child's, as it was last seen. */
struct proc_io_owed {
	pid_t pid;
	uint64_t start_time;
	struct proc_io io;
	bool carried; /* left over from the round before: tried this once more, then dropped */
};

/* A process's parents are at most this many steps away (a recording could hold a loop). */
#define ANCESTORS_MAX 64
/* How long before a round a process may have started and not yet been in /proc for it: 1 s (USER_HZ ticks). */
#define BORN_SLACK_TICKS 100

static int by_pid(const void *key, const void *item)
{
	pid_t a = *(const pid_t *)key, b = ((const struct proc_io_sample *)item)->pid;

	return (a > b) - (a < b);
}

static const struct proc_io_sample *find(const struct proc_io_sample *samples, size_t n, pid_t pid)
{
	return n ? bsearch(&pid, samples, n, sizeof(*samples), by_pid) : NULL;
}

/* The first of pid's samples (by pid, a pid used twice within a round: each), or NULL. */
static const struct proc_io_sample *first_of(const struct proc_io_sample *samples, size_t n, pid_t pid)
{
	const struct proc_io_sample *e = find(samples, n, pid);

	while (e && e > samples && e[-1].pid == pid)
		e--;
	return e;
}

/* One process in both samples: the same start time (and, where that is unknown, the same name). */
static bool same_process(const struct proc_io_sample *a, const struct proc_io_sample *b)
{
	return a->pid == b->pid && a->start_time == b->start_time &&
	       (a->start_time != PROCFS_UNKNOWN || !strcmp(a->comm, b->comm));
}

int proc_io_sample_by_pid(const void *a_, const void *b_)
{
	const struct proc_io_sample *a = a_, *b = b_;

	return (a->pid > b->pid) - (a->pid < b->pid);
}

static int owed_by_pid(const void *a_, const void *b_)
{
	const struct proc_io_owed *a = a_, *b = b_;

	return (a->pid > b->pid) - (a->pid < b->pid);
}

/* Whether a process that started at start may be the parent of one that started at child (not a pid reused since). */
static bool started_by(uint64_t start, uint64_t child)
{
	return start == PROCFS_UNKNOWN || child == PROCFS_UNKNOWN || start <= child;
}

/* The end, among the round's (by pid), of pid that may be the parent of a process started at child. */
static const struct proc_io_sample *end_of_parent(const struct proc_io_rounds *r, pid_t pid, uint64_t child)
{
	const struct proc_io_sample *e = first_of(r->exits, r->nexits, pid), *found = NULL;

	for (; e && e < r->exits + r->nexits && e->pid == pid; e++)
		if (started_by(e->start_time, child))
			found = e;
	return found;
}

/*
 * The process that vanished's counts went to when it was reaped: its parent, by pid (one that
 * started before it), alive now (seen last round, or started since: counted from 0, the child's
 * counts within it), else ended within the round (its end holds them), else, seen last round
 * and gone without an end, that one's own parent in turn. NULL when none is known.
 */
static const struct proc_io_sample *reaper_of(const struct proc_io_rounds *r, const struct proc_io_sample *vanished,
					      const struct proc_io_sample *now, size_t n)
{
	pid_t parent = vanished->ppid;
	uint64_t child = vanished->start_time;

	for (int step = 0; step < ANCESTORS_MAX && parent > 0; step++) {
		const struct proc_io_sample *before = find(r->previous, r->nprevious, parent), *after, *end;

		after = find(now, n, parent);
		if (after && (before ? same_process(before, after) : started_by(after->start_time, child)))
			return after;
		if ((end = end_of_parent(r, parent, child)))
			return end;
		if (!before)
			return NULL; /* not seen last round: what it holds was never shown */
		parent = before->ppid; /* it vanished too: it handed on what it had, to its own parent */
		child = before->start_time;
	}
	return NULL;
}

static uint64_t larger(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

/* Each of io's counts made at least other's. */
static void keep_larger(struct proc_io *io, const struct proc_io *other)
{
	io->rchar = larger(io->rchar, other->rchar);
	io->read_bytes = larger(io->read_bytes, other->read_bytes);
	io->write_bytes = larger(io->write_bytes, other->write_bytes);
}

static uint64_t take(uint64_t *from, uint64_t *owed)
{
	uint64_t taken = *from < *owed ? *from : *owed;

	*from -= taken;
	*owed -= taken;
	return taken;
}


static int by_pid_start(const void *a_, const void *b_)
{
	const struct proc_io_sample *a = a_, *b = b_;

	if (a->pid != b->pid)
		return (a->pid > b->pid) - (a->pid < b->pid);
	return (a->start_time > b->start_time) - (a->start_time < b->start_time);
}

size_t proc_io_ends_sort(struct proc_io_sample *ends, size_t n)
{
	size_t kept = 0;

	if (n > 1)
		qsort(ends, n, sizeof(*ends), by_pid_start);
	for (size_t i = 0; i < n; i++) {
		struct proc_io_sample *k = kept ? &ends[kept - 1] : NULL;

		if (k && k->pid == ends[i].pid && k->start_time == ends[i].start_time) {
			keep_larger(&k->io, &ends[i].io);
			continue;
		}
		ends[kept++] = ends[i];
	}
	return kept;
}

void proc_io_rounds_exits(struct proc_io_rounds *r, const struct proc_io_sample *exits, size_t n)
{
	r->exits = xrealloc(r->exits, (r->nexits + n + 1) * sizeof(*r->exits));
	if (n)
		memcpy(r->exits + r->nexits, exits, n * sizeof(*exits));
	r->nexits = proc_io_ends_sort(r->exits, r->nexits + n);
}

/* The end of the process sample was of, among exits (by pid), or NULL. */
static const struct proc_io_sample *end_of(const struct proc_io_sample *exits, size_t n,
					   const struct proc_io_sample *sample)
{
	const struct proc_io_sample *e = first_of(exits, n, sample->pid);

	for (; e && e < exits + n && e->pid == sample->pid; e++)
		if (e->start_time == sample->start_time && e->start_time != PROCFS_UNKNOWN)
			return e;
	return NULL;
}

/* A process gone within the round, from before (the last round's, or 0 when born since) to its end. */
static bool add_ended(struct proc_io_rounds *r, const struct proc_io_sample *before, const struct proc_io_sample *end)
{
	struct proc_io_ended *e = &r->ended[r->nended];
	struct proc_io_sample from = *before;

	memcpy(from.comm, end->comm, sizeof(from.comm)); /* an exec renames it; its counts go on */
	e->last = *end;
	keep_larger(&e->last.io, &before->io); /* (a count never goes down: see proc_io_rounds_take) */
	if (!proc_io_delta(&from, &e->last, &e->delta))
		return false;
	r->nended++;
	return true;
}

/*
 * What the children of the process pid (started at start) had, in owed (nowed of them, by pid),
 * taken off its delta d: as much as d holds, the rest left owed.
 */
static void take_owed(struct proc_io_delta *d, pid_t pid, uint64_t start, struct proc_io_owed *owed, size_t nowed)
{
	size_t low = 0, high = nowed;
	bool changed = false;

	while (low < high) { /* the first of pid */
		size_t middle = low + (high - low) / 2;

		if (owed[middle].pid < pid)
			low = middle + 1;
		else
			high = middle;
	}
	for (size_t j = low; j < nowed && owed[j].pid == pid; j++) {
		struct proc_io *o = &owed[j].io;

		if (owed[j].start_time == start &&
		    take(&d->rchar, &o->rchar) + take(&d->read_bytes, &o->read_bytes) +
			take(&d->write_bytes, &o->write_bytes))
			changed = true;
	}
	if (changed)
		proc_io_delta_pages(d);
}

static int ended_by_pid(const void *a, const void *b)
{
	const struct proc_io_ended *x = a, *y = b;

	return proc_io_sample_by_pid(&x->last, &y->last);
}

/* Whether the last round counted the process that exit is the end of (ended is sorted by pid). */
static bool ended_already(const struct proc_io_rounds *r, const struct proc_io_sample *exit)
{
	size_t low = 0, high = r->nended;

	while (low < high) { /* the first of its pid */
		size_t middle = low + (high - low) / 2;

		if (r->ended[middle].last.pid < exit->pid)
			low = middle + 1;
		else
			high = middle;
	}
	for (; low < r->nended && r->ended[low].last.pid == exit->pid; low++)
		if (r->ended[low].last.start_time == exit->start_time)
			return true;
	return false;
}

/*
 * What a round's gone processes leave their reapers: owed, and whether each reaper ignores
 * SIGCHLD, asked once a round (a shell or a server that many children left is asked once, not
 * a read of /proc/PID/status for each child).
 */
struct owing {
	proc_io_ignores_sigchld_fn ignores;
	void *context;
	struct proc_io_owed *owed;
	size_t nowed;
	struct asked {
		pid_t pid;
		bool ignores;
	} asked[16]; /* the last reapers asked, the oldest replaced */
	unsigned nasked, next;
};

static bool reaper_ignores(struct owing *o, pid_t pid)
{
	struct asked *a;

	if (!o->ignores)
		return false;
	for (unsigned i = 0; i < o->nasked; i++)
		if (o->asked[i].pid == pid)
			return o->asked[i].ignores;
	a = &o->asked[o->nasked < 16 ? o->nasked++ : o->next++ % 16];
	*a = (struct asked){ pid, o->ignores(pid, o->context) };
	return a->ignores;
}

/*
 * The counts io of a process gone (of) owed by its reaper, unless that one ignores SIGCHLD: as its
 * end said (end, when its parent is the reaper), else asked.
 */
static void owe_reaper(const struct proc_io_rounds *r, const struct proc_io_sample *of, const struct proc_io *io,
		       const struct proc_io_sample *end, const struct proc_io_sample *now, size_t n, struct owing *o)
{
	const struct proc_io_sample *reaper = reaper_of(r, of, now, n);

	if (!reaper)
		return;
	if (end && end->reap && end->ppid == reaper->pid ? end->reap == PROC_REAP_PARENT
							 : !reaper_ignores(o, reaper->pid))
		o->owed[o->nowed++] = (struct proc_io_owed){ reaper->pid, reaper->start_time, *io, false };
}

/*
 * The processes of the last round that are gone: their counts went to their reaper, as last
 * seen or, known from their end, as they ended. Then the ends of processes born and gone within
 * the round; those of processes still in it wait. Each adds to o->owed.
 */
static void take_gone(struct proc_io_rounds *r, const struct proc_io_sample *now, size_t n, struct owing *o)
{
	struct proc_io_sample *exits = r->exits;
	size_t nexits = r->nexits, waiting = 0;
	bool *used = xcalloc(nexits + 1, sizeof(*used)), *waits = xcalloc(nexits + 1, sizeof(*waits));

	/* An end written twice (two threads that both saw the group dead), the second drained later. */
	for (size_t i = 0; i < nexits; i++)
		used[i] = ended_already(r, &exits[i]);
	free(r->ended);
	r->ended = xcalloc(nexits + 1, sizeof(*r->ended));
	r->nended = 0;
	for (size_t i = 0; r->started && i < r->nprevious; i++) {
		const struct proc_io_sample *v = &r->previous[i], *still = find(now, n, v->pid), *end;
		const struct proc_io_sample *last = v;

		if (still && same_process(v, still))
			continue;
		if ((end = end_of(exits, nexits, v))) {
			used[end - exits] = true;
			if (add_ended(r, v, end))
				last = &r->ended[r->nended - 1].last;
		}
		owe_reaper(r, v, &last->io, end, now, n, o);
	}
	for (size_t i = 0; i < nexits; i++) {
		const struct proc_io_sample *e = &exits[i], *in_now = find(now, n, e->pid);
		struct proc_io_sample born;

		if (used[i])
			continue;
		if (in_now && end_of(e, 1, in_now)) {
			waits[i] = true; /* still there: its end is for the round it is gone from */
			continue;
		}
		/* Born since the last round began (as for one first seen, below), else not ours. */
		if (!r->started || !r->previous_ticks || e->start_time == PROCFS_UNKNOWN ||
		    e->start_time + BORN_SLACK_TICKS < r->previous_ticks)
			continue;
		born = (struct proc_io_sample){ .pid = e->pid, .ppid = e->ppid, .start_time = e->start_time };
		add_ended(r, &born, e);
		owe_reaper(r, e, &e->io, e, now, n, o);
	}
	for (size_t i = 0; i < nexits; i++) /* (after: reaper_of looks among them all, in order) */
		if (waits[i])
			exits[waiting++] = exits[i];
	r->nexits = waiting;
	free(used);
	free(waits);
	if (r->nended > 1)
		qsort(r->ended, r->nended, sizeof(*r->ended), ended_by_pid);
}

void proc_io_rounds_take(struct proc_io_rounds *r, const struct proc_io_sample *now, size_t n, uint64_t ticks,
			 proc_io_ignores_sigchld_fn ignores, void *context, struct proc_io_delta *deltas, bool *known)
{
	struct owing o = { .ignores = ignores, .context = context,
			   .owed = xcalloc(r->nowed + r->nprevious + r->nexits + 1, sizeof(*o.owed)) };
	struct proc_io_owed *owed = o.owed;
	struct proc_io_sample *previous = xcalloc(n ? n : 1, sizeof(*now)); /* the next round's */
	size_t nowed, kept = 0;

	if (n)
		memcpy(previous, now, n * sizeof(*now));

	/* Left over from the last round: tried once more. */
	for (size_t i = 0; i < r->nowed; i++)
		owed[o.nowed++] = (struct proc_io_owed){ r->owed[i].pid, r->owed[i].start_time, r->owed[i].io, true };
	take_gone(r, now, n, &o);
	nowed = o.nowed;
	if (nowed > 1)
		qsort(owed, nowed, sizeof(*owed), owed_by_pid);

	for (size_t i = 0; i < n; i++) {
		const struct proc_io_sample *before = r->started ? find(r->previous, r->nprevious, now[i].pid) : NULL;
		struct proc_io_sample from;

		known[i] = false;
		memset(&deltas[i], 0, sizeof(deltas[i]));
		if (before && same_process(before, &now[i])) {
			/*
			 * A count that went down keeps the last round's: the task iterator's sum of a
			 * process reads a thread that ends between its rows in neither place, for that
			 * round; from a lowered baseline the next round would count its whole life again.
			 */
			keep_larger(&previous[i].io, &before->io);
			from = *before;
			memcpy(from.comm, now[i].comm, sizeof(from.comm)); /* an exec renames it; its counts go on */
		} else if (r->started && r->previous_ticks && now[i].start_time != PROCFS_UNKNOWN &&
			   now[i].start_time + BORN_SLACK_TICKS >= r->previous_ticks) {
			/* Not in the last round, and started in its tick or after: after it began (one that
			 * was there then was in it), all it did is within the round. Or started a little
			 * before: fork stamps the start before /proc shows the process, which a busy
			 * machine made tens of milliseconds, so the last round's listing missed it. */
			/* born since */
			from = (struct proc_io_sample){ .pid = now[i].pid, .start_time = now[i].start_time };
			memcpy(from.comm, now[i].comm, sizeof(from.comm));
		} else {
			continue;
		}
		known[i] = proc_io_delta(&from, &now[i], &deltas[i]);
		if (!known[i])
			continue;
		/* What its reaped children had when last seen: taken off, the rest tried next round. */
		take_owed(&deltas[i], now[i].pid, now[i].start_time, owed, nowed);
	}
	/* A reaper that ended within the round: its end's delta holds what its children had. */
	for (size_t i = 0; i < r->nended; i++)
		take_owed(&r->ended[i].delta, r->ended[i].last.pid, r->ended[i].last.start_time, owed, nowed);
	/* What is left: kept one round if it is this round's (the reap may show in the parent only next round). */
	for (size_t j = 0; j < nowed; j++)
		if (!owed[j].carried && (owed[j].io.rchar || owed[j].io.read_bytes || owed[j].io.write_bytes))
			owed[kept++] = owed[j];
	free(r->owed);
	r->owed = owed;
	r->nowed = kept;

	free(r->previous);
	r->previous = previous;
	r->nprevious = n;
	r->previous_ticks = ticks;
	r->started = true;
}

void proc_io_rounds_free(struct proc_io_rounds *r)
{
	free(r->previous);
	free(r->owed);
	free(r->exits);
	free(r->ended);
	*r = (struct proc_io_rounds){0};
}

uint64_t proc_io_rounds_ticks_now(void)
{
	long hz = sysconf(_SC_CLK_TCK);
	struct timespec ts;

	if (hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * (uint64_t)hz + (uint64_t)ts.tv_nsec / (1000000000u / (uint64_t)hz);
}

bool proc_ignores_sigchld(pid_t pid, void *context)
{
	char path[64], text[4096];
	struct proc_ids ids;
	ssize_t length;

	(void)context;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((length = sysroot_read_small(path, text, sizeof(text))) < 0 ||
	    proc_ids_parse(text, (size_t)length, (int)pid, &ids) != 0)
		return false;
	return ids.signals_ignored & (1ull << (SIGCHLD - 1));
}
