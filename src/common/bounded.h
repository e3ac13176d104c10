/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bounded.h: a call that may never return (a stat of a hung FUSE or NFS mount), made in a child
 * process and waited for a bounded time, marked so that later runs see it while it lives.
 */
#ifndef IOLENS_COMMON_BOUNDED_H
#define IOLENS_COMMON_BOUNDED_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * Runs fn(arg) in a child process and waits for it at most timeout_ms; arg (size bytes,
 * plain data) goes in and comes back through shared memory. 0 when it returned in time,
 * with arg as fn left it; -ETIMEDOUT when not (the child is killed, and dies when the
 * kernel lets it: a request a FUSE server has read waits for its answer, unkillable, which
 * is why this is a process and not a thread, that would keep iolens from exiting); -errno
 * when no child could be made (fn was not called).
 */
int bounded_call(void (*fn)(void *arg), void *arg, size_t size, unsigned timeout_ms);
/* A call that did not return in time, left to run (bounded_call_keep). */
struct bounded_child {
	pid_t pid;
	void *shared;
	size_t size;
};

/*
 * As bounded_call, for a caller that asks again and again (a long-running exporter): on
 * -ETIMEDOUT the child is not killed but left in *left, waiting for its answer, and the
 * caller does not ask the same thing again until bounded_child_ended says it has ended: a
 * hung mount then costs one waiting child, and no wait at all, until it answers.
 */
int bounded_call_keep(void (*fn)(void *arg), void *arg, size_t size, unsigned timeout_ms, struct bounded_child *left);
/* Whether the child has ended (then reaped, and *child emptied); false while it waits. */
bool bounded_child_ended(struct bounded_child *child);
/* Kills the child and forgets it: it goes when the kernel lets it, and init reaps it after we exit. */
void bounded_child_abandon(struct bounded_child *child);

/*
 * keep true: the calls without left are made by one child kept between them (a run that asks
 * every second, the recorder, forks none), as bounded_call says otherwise: stuck past a call's
 * time it is killed, and the next call makes another. false: that child ends. From one thread
 * only (the one that set it: the child ends with that thread).
 */
void bounded_prober_keep(bool keep);

/* How long iolens waits for a filesystem to answer before it says so. */
#define BOUNDED_FS_MS 1000u

/*
 * Marks. A child that waits on a hung server outlives the run that made it (in D once
 * killed, until the server answers), so a run must see the calls of the runs before it:
 * the child takes a lock on a file named after what it asks (a device) and holds it for as
 * long as it lives, however it ends. The files are in a directory that only the user can
 * write, root's /run/iolens/probes (0755, the files 0600): no one else can create, open or
 * lock one, so a process that holds a mark there is a bounded call of iolens, whatever it
 * is called (the children name themselves "iolens-probe", for ps, but a name proves nothing).
 */
#define BOUNDED_MARK_NAME "iolens-probe"

/*
 * The directory of marks, made when missing: /run/iolens/probes as root, else
 * $XDG_RUNTIME_DIR/iolens/probes. 0, or -errno: -EPERM when it, or the directory above it,
 * is not a directory of the user's own that no one else can write (then marks would prove
 * nothing), -ENOENT for a user without XDG_RUNTIME_DIR.
 */
int bounded_mark_dir(char *dir, size_t size);

struct bounded_mark {
	char path[512]; /* the lock file: bounded_mark_path */
	char what[256]; /* what the call asks, written in the file for the runs that find it held */
};

/* The mark of the calls that ask device MAJOR:MINOR: DIR/dev-MAJOR:MINOR. */
void bounded_mark_path(char *path, size_t size, const char *dir, unsigned major, unsigned minor);

/* Who holds a mark. */
struct bounded_holder {
	pid_t pid;
	double seconds;     /* since its call began (CLOCK_BOOTTIME); -1 when it has not said yet */
	char what[256];     /* what it asks, "" when it has not said yet */
};

/*
 * 1 when a process holds the mark (holder filled), 0 when none does (or the file is not there),
 * -errno when it cannot be told.
 */
int bounded_mark_holder(const char *path, struct bounded_holder *holder);

/*
 * bounded_call (left NULL) or bounded_call_keep (left given) with the child holding the mark
 * for as long as it lives: -EBUSY, fn not called, when another process holds it (a call of
 * another run, or of this one, that has not ended); -errno when the mark cannot be taken.
 */
int bounded_call_marked(void (*fn)(void *arg), void *arg, size_t size, unsigned timeout_ms,
			const struct bounded_mark *mark, struct bounded_child *left);

/*
 * A call about the filesystem on device MAJOR:MINOR, marked in the directory marks (its mark
 * in *mark, for bounded_mark_holder): -EBUSY, no child made, while its mark is held by a
 * call that has waited timeout_ms or more (an earlier call about that filesystem still waits,
 * of this process or another); a younger holder is waited for (it answers, or reaches the
 * timeout), -EAGAIN, no child made, when younger holders kept the mark for 2 * timeout_ms
 * in all (a crowd of runs: nothing is known of the filesystem); else as
 * bounded_call (left NULL) or bounded_call_keep (left given). Unmarked (mark->path "") when
 * marks is "" or the mark cannot be taken.
 */
int bounded_call_device(const char *marks, unsigned major, unsigned minor, const char *what,
			void (*fn)(void *arg), void *arg, size_t size, unsigned timeout_ms, struct bounded_mark *mark,
			struct bounded_child *left);

/* The processes that hold a mark in dir now (a list to free): the bounded calls still alive. */
size_t bounded_mark_holders(const char *dir, pid_t **pids);

#endif
