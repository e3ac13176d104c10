/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proc_io_rounds.h: what each process did between two rounds of /proc/PID/io, a reaped child's
 * counts taken off its parent.
 */
#ifndef IOLENS_PROC_IO_ROUNDS_H
#define IOLENS_PROC_IO_ROUNDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect/procfs.h"

/*
 * When a parent reaps a child (wait_task_zombie), the kernel adds the child's whole counts (its
 * own, its dead threads' and those of the children it reaped) to the parent's signal counts,
 * which the parent's /proc/PID/io includes from then on: its delta would show the child's reads
 * again. So a process that vanished takes its counts as last seen off its parent's (the nearest
 * ancestor still there, when the parent vanished too), unless that parent ignores SIGCHLD (the
 * kernel then reaps without adding). What the child did after it was last seen stays with the
 * parent, the only place /proc tells it. A process not in the last round that started in the
 * clock tick it began or later is counted from 0: all it did is within the round.
 */
struct proc_io_owed;
/* A process that ended since the last round, known from its counts as it ended (exits). */
struct proc_io_ended {
	struct proc_io_sample last; /* as it ended */
	struct proc_io_delta delta; /* since the last round, or since it began when born within the round */
};
struct proc_io_rounds {
	struct proc_io_sample *previous; /* the last round, sorted by pid */
	size_t nprevious;
	uint64_t previous_ticks; /* CLOCK_BOOTTIME in clock ticks when it began; 0 when not known */
	bool started;
	struct proc_io_owed *owed; /* what could not be taken off yet: tried once more, next round */
	size_t nowed;
	struct proc_io_sample *exits; /* handed by proc_io_rounds_exits, not yet taken; by pid */
	size_t nexits;
	struct proc_io_ended *ended; /* the last round's (proc_io_rounds_take), by pid */
	size_t nended;
};

/* Whether pid ignores SIGCHLD now (its children are then reaped without their counts added to it). */
typedef bool (*proc_io_ignores_sigchld_fn)(pid_t pid, void *context);
/* The one of /proc: its status file's SigIgn (false when it cannot be read). context unused. */
bool proc_ignores_sigchld(pid_t pid, void *context);

/*
 * Takes a round: now[0..n) sorted by pid, begun at ticks (CLOCK_BOOTTIME in clock ticks, 0 when
 * not known). deltas[i] is what now[i] did since the last round, known[i] whether that is known
 * (false: the first round, or a process first seen and not born within the round). ignores may
 * be NULL (every parent adds). now is copied; the first round only sets the baseline.
 */
void proc_io_rounds_take(struct proc_io_rounds *r, const struct proc_io_sample *now, size_t n, uint64_t ticks,
			 proc_io_ignores_sigchld_fn ignores, void *context, struct proc_io_delta *deltas, bool *known);
/*
 * Processes' counts as they ended (eBPF at their last thread's exit), sorted by pid, for the next
 * round: one gone since the last round is known to its end, its delta in r->ended and its whole
 * counts taken off its reaper's (not as last seen); one born and gone within the round is in
 * r->ended too. An end of a process still in the round (a zombie, or ended after it was read)
 * waits for the round it is gone from. Copied.
 */
void proc_io_rounds_exits(struct proc_io_rounds *r, const struct proc_io_sample *exits, size_t n);
/*
 * Ends sorted by pid and start time, each process once (an end written twice, by two threads
 * that both saw the group dead, keeps the larger counts): the number kept.
 */
size_t proc_io_ends_sort(struct proc_io_sample *ends, size_t n);
void proc_io_rounds_free(struct proc_io_rounds *r);
/* qsort's comparison of two struct proc_io_sample by pid, for a round's order. */
int proc_io_sample_by_pid(const void *a, const void *b);

/* CLOCK_BOOTTIME in clock ticks (/proc/PID/stat's start_time unit), 0 when not known. */
uint64_t proc_io_rounds_ticks_now(void);

#endif
