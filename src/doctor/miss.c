/* SPDX-License-Identifier: GPL-2.0-or-later */
/* miss.c: the readers that missed the cache, read off a snapshot alone (capture.c and the rules both ask). */
#include "doctor/miss.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

static int compare_misses(const void *a_, const void *b_)
{
	const struct miss_row *a = a_, *b = b_;

	return (b->misses > a->misses) - (b->misses < a->misses);
}

static bool is_direct(const struct doctor_snapshot *s, pid_t pid)
{
	for (size_t i = 0; i < s->ndirect; i++)
		if (s->direct[i].pid == pid)
			return true;
	return false;
}

/*
 * Processes whose reads mostly missed, each by its pid; those of one command added into one
 * row (one short-lived process after another, as a shell loop runs them, is one reader),
 * named by the pids that missed most. A process that did not mostly miss is in no row: an
 * idle process is never named for another's misses. O_DIRECT processes left out.
 */
static size_t group_by_command(const struct doctor_snapshot *s, struct miss_row *rows, size_t nrows)
{
	size_t kept = 0, missed = 0;

	/* Those that mostly missed, then sorted by their misses (a busy window's thousand processes
	 * are few such: sorting them all was a tenth of doctor --from's time over a day). */
	for (size_t i = 0; i < nrows; i++)
		if (!is_direct(s, rows[i].pid) && rows[i].accesses && rows[i].misses * 2 >= rows[i].accesses)
			rows[missed++] = rows[i];
	nrows = missed;
	if (nrows > 1)
		qsort(rows, nrows, sizeof(*rows), compare_misses);
	for (size_t i = 0; i < nrows; i++) {
		size_t k;

		for (k = 0; k < kept && strcmp(rows[k].comm, rows[i].comm); k++)
			;
		if (k == kept) {
			rows[kept] = rows[i];
			rows[kept].processes = 1;
			rows[kept].newest = rows[i].pid;
			rows[kept++].pids[0] = rows[i].pid;
			continue;
		}
		if (rows[i].pid > rows[k].newest)
			rows[k].newest = rows[i].pid;
		if (rows[k].processes < sizeof(rows[k].pids) / sizeof(rows[k].pids[0]))
			rows[k].pids[rows[k].processes] = rows[i].pid;
		rows[k].processes++;
		rows[k].accesses += rows[i].accesses;
		rows[k].misses += rows[i].misses;
		rows[k].refaults = rows[k].refaults == UINT64_MAX || rows[i].refaults == UINT64_MAX
					   ? UINT64_MAX : rows[k].refaults + rows[i].refaults;
	}
	if (kept > 1)
		qsort(rows, kept, sizeof(*rows), compare_misses);
	return kept;
}

_Static_assert(sizeof(((struct miss_row *)0)->comm) == sizeof(((struct snap_cache_proc *)0)->comm) &&
		       sizeof(((struct miss_row *)0)->comm) == sizeof(((struct snap_io_rate *)0)->comm),
	       "a reader's command copied whole");

size_t snap_miss_readers(const struct doctor_snapshot *s, struct miss_row **out)
{
	uint64_t page = s->page_size;
	struct miss_row *rows;
	size_t nrows = 0;

	if (s->cache_ebpf) {
		rows = xcalloc(s->ncache_procs ? s->ncache_procs : 1, sizeof(*rows));
		for (size_t i = 0; i < s->ncache_procs; i++) {
			const struct snap_cache_proc *p = &s->cache_procs[i];

			rows[nrows] = (struct miss_row){ .pid = p->pid, .memcg = p->memcg, .accesses = p->accesses,
							 .misses = p->misses, .refaults = p->refaults };
			memcpy(rows[nrows].comm, p->comm, sizeof(rows[nrows].comm)); /* (a busy day's snprintf: 3 %) */
			nrows++;
		}
	} else {
		/* Without eBPF, as cachetop's estimate: read by system calls against fetched from storage. */
		rows = xcalloc(s->nrates ? s->nrates : 1, sizeof(*rows));
		for (size_t i = 0; i < s->nrates; i++) {
			const struct snap_io_rate *r = &s->rates[i];

			/* the bytes counted: a rate times its seconds, rounded (not one byte short, a page less) */
			rows[nrows] =
			    (struct miss_row){ .pid = r->pid,
					       .accesses = (uint64_t)(r->rchar_rate * s->seconds + 0.5) / page,
					       .misses = (uint64_t)(r->read_rate * s->seconds + 0.5) / page,
					       .refaults = UINT64_MAX };
			memcpy(rows[nrows].comm, r->comm, sizeof(rows[nrows].comm));
			nrows++;
		}
	}
	*out = rows;
	return group_by_command(s, rows, nrows);
}

bool snap_miss_matters(const struct doctor_snapshot *s, const struct miss_row *r)
{
	return s->seconds > 0 && r->accesses && r->misses * 2 >= r->accesses &&
	       (double)(r->misses * s->page_size) / s->seconds >= MiB;
}
