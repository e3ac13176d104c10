/* bounded.h: a call that may never return (a stat of a hung FUSE or NFS mount), made in a child process and waited for a bounded time. */
#ifndef IOLENS_COMMON_BOUNDED_H
#define IOLENS_COMMON_BOUNDED_H

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
/*
 * As bounded_call, for a caller that asks again and again (a long-running exporter): on
 * -ETIMEDOUT, *stuck is the child, killed but not reaped, for the caller to wait for
 * (waitpid) before it asks the same thing again: a hung mount then costs one child, not
 * one per call. *stuck is 0 otherwise.
 */
int bounded_call_keep(void (*fn)(void *arg), void *arg, size_t size, unsigned timeout_ms, pid_t *stuck);

/* How long iolens waits for a filesystem to answer before it says so. */
#define BOUNDED_FS_MS 1000u

#endif
