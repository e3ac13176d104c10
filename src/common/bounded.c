/* bounded.c: a call that may never return, made in a child process and waited for a bounded time. */
#include "common/bounded.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"

/* Whether the child ended within timeout_ms (reaped then). */
static bool child_ends(pid_t child, unsigned timeout_ms)
{
	uint64_t deadline = monotonic_ns() + (uint64_t)timeout_ms * 1000000ull;
	int pidfd = (int)syscall(SYS_pidfd_open, child, 0), status;

	for (;;) {
		uint64_t now = monotonic_ns();
		pid_t got = waitpid(child, &status, WNOHANG);

		if (got == child || (got < 0 && errno != EINTR)) {
			if (pidfd >= 0)
				close(pidfd);
			return got == child;
		}
		if (now >= deadline)
			break;
		if (pidfd >= 0) {
			struct pollfd p = { .fd = pidfd, .events = POLLIN };
			poll(&p, 1, (int)((deadline - now) / 1000000ull) + 1);
		} else { /* before 5.3: look every 10 ms */
			struct timespec tick = { 0, 10000000L };
			nanosleep(&tick, NULL);
		}
	}
	if (pidfd >= 0)
		close(pidfd);
	return false;
}

int bounded_call(void (*fn)(void *arg), void *arg, size_t size, unsigned timeout_ms)
{
	return bounded_call_keep(fn, arg, size, timeout_ms, NULL);
}

int bounded_call_keep(void (*fn)(void *arg), void *arg, size_t size, unsigned timeout_ms, struct bounded_child *left)
{
	size_t length = size ? size : 1;
	void *shared = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t child;
	int err;

	if (left)
		*left = (struct bounded_child){0};
	if (shared == MAP_FAILED)
		return -errno;
	memcpy(shared, arg, size);
	child = fork();
	if (child < 0) {
		err = errno;
		munmap(shared, length);
		return -err;
	}
	if (child == 0) {
		/* Nothing of the parent's stays open here: a child stuck for good must not hold its stdout. */
		for (int fd = 0; fd < 3; fd++)
			close(fd);
		syscall(SYS_close_range, 3u, ~0u, 0u);
		fn(shared);
		_exit(0);
	}
	if (!child_ends(child, timeout_ms)) {
		if (left) { /* left waiting for its answer: the caller looks again later */
			*left = (struct bounded_child){ child, shared, length };
			return -ETIMEDOUT;
		}
		kill(child, SIGKILL); /* it goes when the kernel lets it; init reaps it after we exit */
		munmap(shared, length);
		return -ETIMEDOUT;
	}
	memcpy(arg, shared, size);
	munmap(shared, length);
	return 0;
}

bool bounded_child_ended(struct bounded_child *child)
{
	pid_t got;

	if (!child->pid)
		return true;
	while ((got = waitpid(child->pid, NULL, WNOHANG)) < 0 && errno == EINTR)
		;
	if (got == 0)
		return false;
	munmap(child->shared, child->size); /* ended, or no child of ours any more (ECHILD) */
	*child = (struct bounded_child){0};
	return true;
}

void bounded_child_abandon(struct bounded_child *child)
{
	if (!child->pid)
		return;
	kill(child->pid, SIGKILL);
	munmap(child->shared, child->size);
	*child = (struct bounded_child){0};
}
