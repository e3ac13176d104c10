/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bounded.c: a call that may never return, made in a child process and waited for a bounded time,
 * marked for the runs after it while it lives.
 */
#include "common/bounded.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
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

/* What the child says before it calls fn, ahead of arg in the shared memory. */
struct bounded_header {
	int mark_rc; /* 0, or why the mark was not taken (fn not called) */
	char pad[60];
};

static uint64_t boottime_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_BOOTTIME, &now);
	return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
}

/* Mark files a prober keeps open between its calls, by path: a call locks one, not opens it. */
struct kept_marks {
	struct kept_mark {
		char path[sizeof(((struct bounded_mark *)0)->path)];
		int fd;
	} mark[32];
	unsigned n;
};

/* The open mark file of path (kept, when keep is given and has room): a descriptor, or -errno. */
static int open_mark(const char *path, struct kept_marks *keep)
{
	int fd;

	for (unsigned i = 0; keep && i < keep->n; i++) {
		struct stat open_file, at_path;

		if (strcmp(keep->mark[i].path, path))
			continue;
		/* Still the file at path (one removed, or made again, is locked by no one else). */
		if (fstat(keep->mark[i].fd, &open_file) == 0 && lstat(path, &at_path) == 0 &&
		    open_file.st_dev == at_path.st_dev && open_file.st_ino == at_path.st_ino)
			return keep->mark[i].fd;
		close(keep->mark[i].fd);
		keep->mark[i] = keep->mark[--keep->n];
		break;
	}
	if ((fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600)) < 0)
		return -errno;
	if (keep && keep->n < sizeof(keep->mark) / sizeof(keep->mark[0])) {
		snprintf(keep->mark[keep->n].path, sizeof(keep->mark[0].path), "%s", path);
		keep->mark[keep->n++].fd = fd;
	}
	return fd;
}

static bool kept(const struct kept_marks *keep, int fd)
{
	for (unsigned i = 0; keep && i < keep->n; i++)
		if (keep->mark[i].fd == fd)
			return true;
	return false;
}

/*
 * In the child: the mark taken, its descriptor in *held (let_mark_go lets it go; a one-off child
 * keeps it for as long as it lives). A prober's marks are kept open in keep (else NULL).
 */
static int take_mark(const struct bounded_mark *mark, int *held, struct kept_marks *keep)
{
	struct flock lock = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	int fd = open_mark(mark->path, keep), err;
	char line[320];
	int length;

	if (fd < 0)
		return fd;
	if (fcntl(fd, F_SETLK, &lock) != 0) {
		err = errno;
		if (!kept(keep, fd))
			close(fd);
		return err == EAGAIN || err == EACCES ? -EBUSY : -err;
	}
	/*
	 * When and what, for the runs that find it held; a failure here leaves them unsaid, no more.
	 * They read to the first newline: a longer line left by an earlier call needs no truncating.
	 */
	length = snprintf(line, sizeof(line), "%llu %s\n", (unsigned long long)boottime_ns(), mark->what);
	if (length >= (int)sizeof(line)) {
		length = sizeof(line) - 1;
		line[length - 1] = '\n';
	}
	(void)!pwrite(fd, line, (size_t)length, 0);
	*held = fd; /* the lock lives as long as fd is open, or until let_mark_go */
	return 0;
}

static void let_mark_go(int fd, const struct kept_marks *keep)
{
	struct flock unlock = { .l_type = F_UNLCK, .l_whence = SEEK_SET };

	if (kept(keep, fd))
		(void)fcntl(fd, F_SETLK, &unlock);
	else
		close(fd);
}

/* In a child: nothing of the parent's stays open but keep (a child stuck for good must not hold its stdout). */
static void close_all_but(int keep)
{
	for (int fd = 0; fd < 3; fd++)
		if (fd != keep)
			close(fd);
	if (keep > 3)
		syscall(SYS_close_range, 3u, (unsigned)keep - 1, 0u);
	syscall(SYS_close_range, keep >= 3 ? (unsigned)keep + 1 : 3u, ~0u, 0u);
}

/*
 * The prober: a child kept between calls (bounded_prober_keep) that makes them one after the
 * other, so that a run asking every second forks none. Stuck past a call's time, it is killed
 * as a one-off child would be (holding the call's mark until it goes), and the next call starts
 * another.
 */
#define PROBER_ARG_MAX 16384

struct prober_request {
	void (*fn)(void *arg);
	size_t size;
	bool marked;
	struct bounded_mark mark;
};

static struct {
	bool wanted;
	pid_t pid;
	int sock;
	pid_t killed[16]; /* probers killed while they waited: reaped once they end */
} prober = { .sock = -1 };

static void prober_serve(int sock)
{
	struct kept_marks marks = { .n = 0 };
	/* Shared, as a one-off child's arg: what fn's own children write there is seen. */
	unsigned char *buffer = mmap(NULL, sizeof(struct prober_request) + PROBER_ARG_MAX, PROT_READ | PROT_WRITE,
				     MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (buffer == MAP_FAILED)
		_exit(0);
	for (;;) {
		struct prober_request request;
		ssize_t got = recv(sock, buffer, sizeof(request) + PROBER_ARG_MAX, 0);
		int rc = 0, held = -1;
		struct iovec out[2] = { { &rc, sizeof(rc) }, { buffer + sizeof(request), 0 } };
		struct msghdr message = { .msg_iov = out, .msg_iovlen = 2 };

		if (got < 0 && errno == EINTR)
			continue;
		if (got < (ssize_t)sizeof(request)) /* the parent is gone (or said nothing we know) */
			_exit(0);
		memcpy(&request, buffer, sizeof(request));
		if (request.size != (size_t)got - sizeof(request))
			_exit(0);
		if (request.marked)
			rc = take_mark(&request.mark, &held, &marks);
		if (!rc)
			request.fn(buffer + sizeof(request));
		if (held >= 0)
			let_mark_go(held, &marks);
		out[1].iov_len = request.size;
		if (sendmsg(sock, &message, MSG_NOSIGNAL) < 0)
			_exit(0);
	}
}

/* Killed probers that have ended since, reaped. */
static void prober_reap(void)
{
	for (size_t i = 0; i < sizeof(prober.killed) / sizeof(prober.killed[0]); i++)
		if (prober.killed[i] && waitpid(prober.killed[i], NULL, WNOHANG) != 0)
			prober.killed[i] = 0; /* ended (or not ours any more) */
}

static int prober_start(void)
{
	pid_t parent = getpid(), child;
	int pair[2];

	prober_reap();
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
		return -errno;
	child = fork_light();
	if (child < 0) {
		int err = errno;

		close(pair[0]);
		close(pair[1]);
		return -err;
	}
	if (child == 0) {
		prober.wanted = false; /* fn's own bounded calls: one-off children */
		close_all_but(pair[1]);
		prctl(PR_SET_NAME, BOUNDED_MARK_NAME);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent) /* (gone before the line above) */
			_exit(0);
		/* The caller's handlers only set its flags: a signal that would end it ends this. */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		prober_serve(pair[1]);
	}
	close(pair[1]);
	prober.pid = child;
	prober.sock = pair[0];
	return 0;
}

/* The prober let go: told to end (its socket closed) and reaped, or killed where it waits. */
static void prober_end(bool stuck)
{
	if (prober.sock >= 0)
		close(prober.sock);
	if (prober.pid > 0 && (stuck || !child_ends(prober.pid, 100))) {
		kill(prober.pid, SIGKILL);
		/*
		 * One waiting on a call goes when the kernel lets it, reaped by the next start; one only
		 * slow to see its socket closed (a busy machine) goes at once, reaped now.
		 */
		if (stuck || !child_ends(prober.pid, 100))
			for (size_t i = 0; i < sizeof(prober.killed) / sizeof(prober.killed[0]); i++)
				if (!prober.killed[i]) { /* (more than 16 at once: init reaps them after we exit) */
					prober.killed[i] = prober.pid;
					break;
				}
	}
	prober.pid = 0;
	prober.sock = -1;
}

void bounded_prober_keep(bool keep)
{
	prober.wanted = keep;
	if (!keep && prober.pid)
		prober_end(false);
	if (!keep)
		prober_reap();
}

/*
 * prober_call's one try: 0 with *rc said; 1 when the prober was gone before the request reached
 * it (killed since the last call); -1 when it cannot serve (the caller makes a one-off child).
 */
static int prober_try(const struct prober_request *request, void *arg, uint64_t deadline, int *rc)
{
	struct iovec out[2] = { { (void *)request, sizeof(*request) }, { arg, request->size } };
	struct msghdr message = { .msg_iov = out, .msg_iovlen = 2 };
	struct pollfd answer;
	ssize_t got;

	if (!prober.pid && prober_start() != 0)
		return -1;
	if (sendmsg(prober.sock, &message, MSG_NOSIGNAL) < 0) {
		int err = errno;

		prober_end(false);
		return err == EPIPE || err == ECONNRESET || err == ECONNREFUSED ? 1 : -1;
	}
	answer = (struct pollfd){ .fd = prober.sock, .events = POLLIN };
	for (uint64_t now; (now = monotonic_ns()) < deadline;)
		if (poll(&answer, 1, (int)((deadline - now) / 1000000ull) + 1) > 0)
			break;
	if (!(answer.revents & (POLLIN | POLLHUP | POLLERR))) {
		prober_end(true);
		*rc = -ETIMEDOUT;
		return 0;
	}
	out[0] = (struct iovec){ rc, sizeof(*rc) }; /* the answer in place of what was asked */
	while ((got = recvmsg(prober.sock, &message, 0)) < 0 && errno == EINTR)
		;
	if (got != (ssize_t)(sizeof(*rc) + request->size)) {
		/* It died in the call (fn crashed, or it was killed): as a one-off child that died, 0. */
		prober_end(false);
		*rc = 0;
	}
	return 0;
}

/* run_bounded's call made by the prober: as run_bounded returns, or 1 when there is no prober. */
static int prober_call(void (*fn)(void *arg), void *arg, size_t size, unsigned timeout_ms,
		       const struct bounded_mark *mark)
{
	struct prober_request request = { .fn = fn, .size = size, .marked = mark != NULL };
	uint64_t deadline = monotonic_ns() + (uint64_t)timeout_ms * 1000000ull;
	int rc = 0, tried;

	if (mark)
		request.mark = *mark;
	if ((tried = prober_try(&request, arg, deadline, &rc)) == 1) /* gone since: another */
		tried = prober_try(&request, arg, deadline, &rc);
	return tried ? 1 : rc;
}

/*
 * fn in a child, waited for timeout_ms; with mark, the child holds it while it lives (-EBUSY,
 * fn not called, when another holds it); with left, a child that is late is left to run.
 */
static int run_bounded(void (*fn)(void *arg), void *arg, size_t size, unsigned timeout_ms,
		       const struct bounded_mark *mark, struct bounded_child *left)
{
	size_t length = sizeof(struct bounded_header) + size;
	struct bounded_header *header;
	void *shared;
	pid_t child;
	int err;

	if (left)
		*left = (struct bounded_child){0};
	else if (prober.wanted && size <= PROBER_ARG_MAX && (err = prober_call(fn, arg, size, timeout_ms, mark)) != 1)
		return err;
	header = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (header == MAP_FAILED)
		return -errno;
	shared = header + 1;
	memcpy(shared, arg, size);
	child = fork_light();
	if (child < 0) {
		err = errno;
		munmap(header, length);
		return -err;
	}
	if (child == 0) {
		int held;

		close_all_but(-1);
		if (mark) {
			prctl(PR_SET_NAME, BOUNDED_MARK_NAME);
			header->mark_rc = take_mark(mark, &held, NULL);
			if (header->mark_rc != 0)
				_exit(0);
		}
		fn(shared);
		_exit(0);
	}
	if (!child_ends(child, timeout_ms)) {
		if (left) { /* left waiting for its answer: the caller looks again later */
			*left = (struct bounded_child){ child, header, length };
			return -ETIMEDOUT;
		}
		kill(child, SIGKILL); /* it goes when the kernel lets it; init reaps it after we exit */
		munmap(header, length);
		return -ETIMEDOUT;
	}
	err = header->mark_rc;
	if (!err)
		memcpy(arg, shared, size);
	munmap(header, length);
	return err;
}

int bounded_call(void (*fn)(void *arg), void *arg, size_t size, unsigned timeout_ms)
{
	return run_bounded(fn, arg, size, timeout_ms, NULL, NULL);
}

int bounded_call_keep(void (*fn)(void *arg), void *arg, size_t size, unsigned timeout_ms, struct bounded_child *left)
{
	return run_bounded(fn, arg, size, timeout_ms, NULL, left);
}

int bounded_call_marked(void (*fn)(void *arg), void *arg, size_t size, unsigned timeout_ms,
			const struct bounded_mark *mark, struct bounded_child *left)
{
	return run_bounded(fn, arg, size, timeout_ms, mark, left);
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

/* A directory of the user's own that no one else can write, made when missing. */
static int own_directory(const char *path)
{
	struct stat st;

	if (mkdir(path, 0755) != 0 && errno != EEXIST)
		return -errno;
	if (lstat(path, &st) != 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))
		return -EPERM;
	return 0;
}

int bounded_mark_dir(char *dir, size_t size)
{
	const char *runtime = geteuid() == 0 ? "/run" : getenv("XDG_RUNTIME_DIR");
	struct stat st;
	int rc;

	if (!runtime || runtime[0] != '/')
		return -ENOENT;
	/* A user's runtime directory must be the user's own; /run is root's. */
	if (lstat(runtime, &st) != 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))
		return -EPERM;
	if ((size_t)snprintf(dir, size, "%s/iolens", runtime) >= size)
		return -ENAMETOOLONG;
	if ((rc = own_directory(dir)) != 0)
		return rc;
	strncat(dir, "/probes", size - strlen(dir) - 1);
	if (strlen(dir) + 1 >= size)
		return -ENAMETOOLONG;
	return own_directory(dir);
}

void bounded_mark_path(char *path, size_t size, const char *dir, unsigned major, unsigned minor)
{
	snprintf(path, size, "%s/dev-%u:%u", dir, major, minor);
}

int bounded_mark_holder(const char *path, struct bounded_holder *holder)
{
	struct flock lock = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK), err;
	unsigned long long started;
	char text[320], *end;
	ssize_t length;

	*holder = (struct bounded_holder){ .seconds = -1 };
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fcntl(fd, F_GETLK, &lock) != 0) {
		err = errno;
		close(fd);
		return -err;
	}
	if (lock.l_type == F_UNLCK) {
		close(fd);
		return 0;
	}
	holder->pid = lock.l_pid;
	/* "BOOTTIME_NS WHAT\n", as take_mark wrote it; nothing yet when it has only just locked. */
	length = pread(fd, text, sizeof(text) - 1, 0);
	close(fd);
	text[length > 0 ? length : 0] = '\0';
	errno = 0;
	started = strtoull(text, &end, 10);
	if (!errno && end != text && *end == ' ' && started <= boottime_ns()) {
		holder->seconds = (double)(boottime_ns() - started) / 1e9;
		snprintf(holder->what, sizeof(holder->what), "%.*s", (int)strcspn(end + 1, "\n"), end + 1);
	}
	return 1;
}

/*
 * 0 once no one holds the mark at path; -EBUSY when its holder has waited timeout_ms (the
 * time this call would wait: what it asks does not answer); -EAGAIN when the mark stayed
 * held by younger calls for twice that in all (*waited_ns, across the caller's looks). A call
 * of another run that began a moment ago is no sign of a hung server: it is waited for.
 */
static int wait_for_holder(const char *path, unsigned timeout_ms, uint64_t *waited_ns)
{
	const uint64_t budget_ns = 2ull * timeout_ms * 1000000ull;
	struct bounded_holder holder;

	while (bounded_mark_holder(path, &holder) == 1) {
		struct timespec tick = { 0, 2000000L };
		uint64_t start;

		if (holder.seconds >= timeout_ms / 1000.0)
			return -EBUSY;
		if (*waited_ns >= budget_ns)
			return -EAGAIN;
		start = boottime_ns();
		nanosleep(&tick, NULL);
		*waited_ns += boottime_ns() - start;
	}
	return 0;
}

int bounded_call_device(const char *marks, unsigned major, unsigned minor, const char *what,
			void (*fn)(void *arg), void *arg, size_t size, unsigned timeout_ms, struct bounded_mark *mark,
			struct bounded_child *left)
{
	uint64_t waited_ns = 0;
	int rc;

	mark->path[0] = '\0';
	if (left)
		left->pid = 0;
	if (!marks[0])
		return run_bounded(fn, arg, size, timeout_ms, NULL, left);
	bounded_mark_path(mark->path, sizeof(mark->path), marks, major, minor);
	snprintf(mark->what, sizeof(mark->what), "%s", what);
	while ((rc = wait_for_holder(mark->path, timeout_ms, &waited_ns)) == 0) {
		rc = bounded_call_marked(fn, arg, size, timeout_ms, mark, left);
		if (rc != -EBUSY) /* (taken by another run between the look and the lock: looked at again) */
			break;
	}
	/* the mark could not be taken: asked all the same */
	if (rc != 0 && rc != -ETIMEDOUT && rc != -EBUSY && rc != -EAGAIN) {
		mark->path[0] = '\0';
		rc = run_bounded(fn, arg, size, timeout_ms, NULL, left);
	}
	return rc;
}

size_t bounded_mark_holders(const char *dir, pid_t **pids)
{
	DIR *marks = opendir(dir);
	struct dirent *entry;
	size_t count = 0;

	*pids = NULL;
	while (marks && (entry = readdir(marks))) {
		struct bounded_holder holder;
		char path[512];

		if (strncmp(entry->d_name, "dev-", 4))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, entry->d_name);
		if (bounded_mark_holder(path, &holder) != 1 || holder.pid <= 0)
			continue;
		*pids = xrealloc(*pids, (count + 1) * sizeof(**pids));
		(*pids)[count++] = holder.pid;
	}
	if (marks)
		closedir(marks);
	return count;
}
