/* SPDX-License-Identifier: GPL-2.0-or-later */
/* io_window.h: each process's I/O over doctor's window, its /proc/PID/io deltas between rounds added up. */
#ifndef IOLENS_DOCTOR_IO_WINDOW_H
#define IOLENS_DOCTOR_IO_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect/proc_io_rounds.h"
#include "collect/task_iter.h"

/*
 * Every process's /proc/PID/io, round after round, what each did between two rounds added up
 * (proc_io_rounds.h): a child reaped in the window is not counted again under its parent; what
 * was seen under the child stays the child's, what it did after its last round is its parent's.
 * A process counts from the first round it is in (from the round before, when it was born since).
 */
struct window_counts {
	uint64_t rchar, read_bytes, write_bytes;
};

struct window_io {
	pid_t pid;
	uint64_t start_time;        /* with pid, the process (stat's start_time) */
	char comm[32];              /* at the last round it was in */
	struct window_counts total; /* since from_ns */
	uint64_t from_ns;
	bool alive;                 /* in the last round */
};

struct io_window {
	struct proc_io_rounds rounds;
	struct window_io *procs;    /* by pid, then start time; those gone kept when they did some I/O */
	size_t count;
	uint64_t round_ns;          /* when the last round began; 0 before the first */
};

/*
 * Takes a round: now[0..n) sorted by pid, begun at ns (CLOCK_MONOTONIC) and ticks (as
 * proc_io_rounds_take, with ignores and context). now is copied.
 */
void io_window_take(struct io_window *win, const struct proc_io_sample *now, size_t n, uint64_t ns, uint64_t ticks,
		    proc_io_ignores_sigchld_fn ignores, void *context);
/*
 * A round of every process of the live system but this one (all of them as root): from one run
 * of the task iterator (its procs) when it is given, else from each /proc/PID/io.
 */
void io_window_round(struct io_window *win, const struct task_iter *from);
/* The process pid in the last round, or NULL. */
const struct window_io *io_window_alive(const struct io_window *win, pid_t pid);
void io_window_free(struct io_window *win);

#endif
