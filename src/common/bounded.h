/* bounded.h: a call that may never return (a stat of a hung FUSE or NFS mount), made in a child process and waited for a bounded time. */
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

/* How long iolens waits for a filesystem to answer before it says so. */
#define BOUNDED_FS_MS 1000u

#endif
