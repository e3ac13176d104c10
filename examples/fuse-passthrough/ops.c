/* SPDX-License-Identifier: MIT */
/* ops.c: the low-level FUSE requests, each done on the source tree and bracketed by vtrace_begin and vtrace_end. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "passthrough.h"

/* ---- Tracing: every request is one call, from its start to after its reply ---------- */

struct call {
	fuse_req_t req;
	struct passthrough *pt;
	struct vtrace_token token;
	uint64_t ready_ns; /* when the answer was ready, just before the reply */
};

/*
 * --hang-op: the first request of the op stays in flight until SIGUSR1 (or the server stops);
 * with --hang-all every request of it does, until then (a server that never answers a statfs).
 */
static void hang(struct passthrough *pt, enum pt_op op, fuse_req_t req)
{
	const struct timespec tick = { 0, 10 * 1000 * 1000 };
	bool first = !__atomic_exchange_n(&pt->hang_taken, true, __ATOMIC_ACQ_REL);
	unsigned held;

	if (!first && !pt->hang_all)
		return;
	held = __atomic_add_fetch(&pt->hang_count, 1, __ATOMIC_ACQ_REL);
	if (first)
		fprintf(stderr, "fuse-passthrough: %s hangs until SIGUSR1\n", pt_op_table[op].name);
	/* A line a request held: a test counts what reached the server, and who asked. */
	fprintf(stderr, "fuse-passthrough: %s held: %u so far, from pid %d\n", pt_op_table[op].name, held,
		(int)fuse_req_ctx(req)->pid);
	/* Polled rather than waited for, so a signal that comes at any moment is seen. */
	while (!pt_hang_released && !pt_stopping)
		nanosleep(&tick, NULL);
}

static uint64_t monotonic_ns(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000000000 + (uint64_t)now.tv_nsec;
}

/*
 * --slow-op: while SIGUSR2 has turned it on, every request of the op sleeps slow_ms more,
 * inside its call, so the service time vtrace records grows by that much. In steps of at
 * most 10 ms against the monotonic clock: a signal that cuts a step short does not shorten
 * the total, and a server that stops does not wait for the rest.
 */
static void slow(struct passthrough *pt, enum pt_op op)
{
	int on = pt_slow_on != 0;
	uint64_t now, until;

	if (__atomic_exchange_n(&pt->slow_seen, on, __ATOMIC_ACQ_REL) != on) {
		if (on)
			fprintf(stderr, "fuse-passthrough: %s takes %u ms longer until the next SIGUSR2\n",
				pt_op_table[op].name, pt->slow_ms);
		else
			fprintf(stderr, "fuse-passthrough: %s takes its usual time again\n", pt_op_table[op].name);
	}
	if (!on)
		return;
	now = monotonic_ns();
	until = now + (uint64_t)pt->slow_ms * 1000000;
	while (now < until && !pt_stopping) {
		uint64_t left = until - now;
		struct timespec step = { 0, (long)(left < 10000000 ? left : 10000000) };
		nanosleep(&step, NULL);
		now = monotonic_ns();
	}
}

static struct call begin(fuse_req_t req, enum pt_op op)
{
	struct passthrough *pt = fuse_req_userdata(req);
	struct call c = { req, pt, vtrace_begin(pt->vt, op), 0 };

	if ((int)op == pt->hang_op)
		hang(pt, op, req);
	if ((int)op == pt->slow_op)
		slow(pt, op);
	return c;
}

/*
 * The service time ends when the answer is ready, just before the reply: the reply wakes
 * the process waiting for it, which may take the CPU before this thread reads the clock
 * again. The request stays in flight until after the reply (vtrace_end_ready), so a
 * server stuck in fuse_reply_* still shows as busy.
 */
static void ready(struct call *c)
{
	if (c->pt->vt)
		c->ready_ns = vtrace_now();
}

static void end(struct call *c, uint64_t bytes, int error)
{
	if (c->pt->vt)
		vtrace_end_ready(c->pt->vt, c->token, c->ready_ns ? c->ready_ns : vtrace_now(), bytes, error);
}

/* A reply of nothing but a status: 0 for success, else an errno. */
static void reply_status(struct call *c, int error)
{
	ready(c);
	fuse_reply_err(c->req, error);
	end(c, 0, error);
}

/* An entry counts one lookup when the kernel gets it; one it never got must not stay counted. */
static void reply_entry(struct call *c, const struct fuse_entry_param *e, int error)
{
	if (error) {
		reply_status(c, error);
		return;
	}
	ready(c);
	if (fuse_reply_entry(c->req, e) != 0)
		pt_inode_forget(c->pt, pt_inode(c->pt, e->ino), 1);
	end(c, 0, 0);
}

/* After mknod, mkdir, symlink or link (rc from the call, errno set when it failed): the new entry. */
static void reply_made(struct call *c, struct pt_inode *parent, const char *name, int rc)
{
	struct fuse_entry_param e;

	reply_entry(c, &e, rc != 0 ? errno : pt_inode_lookup(c->pt, parent, name, &e));
}

#define PROC_PATH_MAX 32

/* An O_PATH descriptor is reopened, chmod-ed or truncated through its /proc/self/fd link. */
static char *proc_path(char path[PROC_PATH_MAX], int fd)
{
	snprintf(path, PROC_PATH_MAX, "/proc/self/fd/%d", fd);
	return path;
}

static int status(int rc)
{
	return rc == 0 ? 0 : errno;
}

/* ---- Names and attributes ------------------------------------------------------------ */

static void pt_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct call c = begin(req, PT_LOOKUP);
	struct fuse_entry_param e;

	reply_entry(&c, &e, pt_inode_lookup(c.pt, pt_inode(c.pt, parent), name, &e));
}

static void pt_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	struct call c = begin(req, PT_FORGET);

	pt_inode_forget(c.pt, pt_inode(c.pt, ino), nlookup);
	ready(&c);
	fuse_reply_none(req);
	end(&c, 0, 0);
}

static void pt_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	struct call c = begin(req, PT_BATCH_FORGET);

	for (size_t i = 0; i < count; i++)
		pt_inode_forget(c.pt, pt_inode(c.pt, forgets[i].ino), forgets[i].nlookup);
	ready(&c);
	fuse_reply_none(req);
	end(&c, 0, 0);
}

static void reply_attr(struct call *c, struct pt_inode *inode)
{
	struct stat st;

	if (fstatat(inode->fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
		reply_status(c, errno);
		return;
	}
	ready(c);
	fuse_reply_attr(c->req, &st, c->pt->timeout);
	end(c, 0, 0);
}

static void pt_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct call c = begin(req, PT_GETATTR);

	(void)fi;
	reply_attr(&c, pt_inode(c.pt, ino));
}

static struct timespec time_to_set(int to_set, int set, int now, const struct timespec *value)
{
	if (to_set & now)
		return (struct timespec){ 0, UTIME_NOW };
	if (to_set & set)
		return *value;
	return (struct timespec){ 0, UTIME_OMIT };
}

/* With an open file, through its descriptor; without, through the O_PATH one. */
static void pt_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set, struct fuse_file_info *fi)
{
	struct call c = begin(req, PT_SETATTR);
	struct pt_inode *inode = pt_inode(c.pt, ino);
	int fd = fi ? (int)fi->fh : -1, rc = 0;
	char path[PROC_PATH_MAX];

	proc_path(path, inode->fd);
	if (to_set & FUSE_SET_ATTR_MODE)
		rc = fd >= 0 ? fchmod(fd, attr->st_mode) : chmod(path, attr->st_mode);
	if (rc == 0 && (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)))
		rc = fchownat(inode->fd, "", to_set & FUSE_SET_ATTR_UID ? attr->st_uid : (uid_t)-1,
			      to_set & FUSE_SET_ATTR_GID ? attr->st_gid : (gid_t)-1,
			      AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
	if (rc == 0 && (to_set & FUSE_SET_ATTR_SIZE))
		rc = fd >= 0 ? ftruncate(fd, attr->st_size) : truncate(path, attr->st_size);
	if (rc == 0 && (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_ATIME_NOW |
				  FUSE_SET_ATTR_MTIME_NOW))) {
		struct timespec times[2] = {
			time_to_set(to_set, FUSE_SET_ATTR_ATIME, FUSE_SET_ATTR_ATIME_NOW, &attr->st_atim),
			time_to_set(to_set, FUSE_SET_ATTR_MTIME, FUSE_SET_ATTR_MTIME_NOW, &attr->st_mtim),
		};
		rc = fd >= 0 ? futimens(fd, times) : utimensat(AT_FDCWD, path, times, 0);
	}
	if (rc != 0) {
		reply_status(&c, errno);
		return;
	}
	reply_attr(&c, inode);
}

static void pt_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct call c = begin(req, PT_READLINK);
	char target[PATH_MAX + 1];
	ssize_t n = readlinkat(pt_inode(c.pt, ino)->fd, "", target, sizeof(target));

	if (n < 0 || n == (ssize_t)sizeof(target)) {
		reply_status(&c, n < 0 ? errno : ENAMETOOLONG);
		return;
	}
	target[n] = '\0';
	ready(&c);
	fuse_reply_readlink(req, target);
	end(&c, 0, 0);
}

static void pt_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	struct call c = begin(req, PT_MKNOD);
	struct pt_inode *dir = pt_inode(c.pt, parent);

	reply_made(&c, dir, name, mknodat(dir->fd, name, mode, rdev));
}

static void pt_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	struct call c = begin(req, PT_MKDIR);
	struct pt_inode *dir = pt_inode(c.pt, parent);

	reply_made(&c, dir, name, mkdirat(dir->fd, name, mode));
}

static void pt_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	struct call c = begin(req, PT_SYMLINK);
	struct pt_inode *dir = pt_inode(c.pt, parent);

	reply_made(&c, dir, name, symlinkat(link, dir->fd, name));
}

static void pt_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	struct call c = begin(req, PT_LINK);
	struct pt_inode *inode = pt_inode(c.pt, ino), *dir = pt_inode(c.pt, newparent);
	char path[PROC_PATH_MAX];
	/* AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH; the /proc link does not. */
	int rc = linkat(inode->fd, "", dir->fd, newname, AT_EMPTY_PATH);

	if (rc != 0 && (errno == ENOENT || errno == EPERM))
		rc = linkat(AT_FDCWD, proc_path(path, inode->fd), dir->fd, newname, AT_SYMLINK_FOLLOW);
	reply_made(&c, dir, newname, rc);
}

static void pt_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct call c = begin(req, PT_UNLINK);

	reply_status(&c, status(unlinkat(pt_inode(c.pt, parent)->fd, name, 0)));
}

static void pt_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct call c = begin(req, PT_RMDIR);

	reply_status(&c, status(unlinkat(pt_inode(c.pt, parent)->fd, name, AT_REMOVEDIR)));
}

/* The kernel sends FUSE_RENAME2 only for a rename with flags (RENAME_NOREPLACE, RENAME_EXCHANGE ...). */
static void pt_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		      const char *newname, unsigned int flags)
{
	struct call c = begin(req, flags ? PT_RENAME2 : PT_RENAME);

	reply_status(&c, status(renameat2(pt_inode(c.pt, parent)->fd, name, pt_inode(c.pt, newparent)->fd, newname,
					  flags)));
}

static void pt_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct call c = begin(req, PT_STATFS);
	struct statvfs st;

	if (fstatvfs(pt_inode(c.pt, ino)->fd, &st) != 0) {
		reply_status(&c, errno);
		return;
	}
	ready(&c);
	fuse_reply_statfs(req, &st);
	end(&c, 0, 0);
}

static void pt_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
	struct call c = begin(req, PT_ACCESS);

	reply_status(&c, status(faccessat(pt_inode(c.pt, ino)->fd, "", mask, AT_EMPTY_PATH)));
}

/* ---- Files ----------------------------------------------------------------------------- */

/* O_NOFOLLOW would refuse the /proc link itself; symbolic links are never opened anyway. */
static void pt_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct call c = begin(req, PT_OPEN);
	char path[PROC_PATH_MAX];
	int fd = open(proc_path(path, pt_inode(c.pt, ino)->fd), (fi->flags & ~O_NOFOLLOW) | O_CLOEXEC);

	if (fd < 0) {
		reply_status(&c, errno);
		return;
	}
	fi->fh = (uint64_t)fd;
	ready(&c);
	if (fuse_reply_open(req, fi) != 0)
		close(fd); /* the kernel never got it, so it will not release it */
	end(&c, 0, 0);
}

static void pt_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, struct fuse_file_info *fi)
{
	struct call c = begin(req, PT_CREATE);
	struct pt_inode *dir = pt_inode(c.pt, parent);
	struct fuse_entry_param e;
	int fd = openat(dir->fd, name, ((fi->flags | O_CREAT) & ~O_NOFOLLOW) | O_CLOEXEC, mode), err;

	if (fd < 0) {
		reply_status(&c, errno);
		return;
	}
	err = pt_inode_lookup(c.pt, dir, name, &e);
	if (err) {
		close(fd);
		reply_status(&c, err);
		return;
	}
	fi->fh = (uint64_t)fd;
	ready(&c);
	if (fuse_reply_create(req, &e, fi) != 0) {
		close(fd);
		pt_inode_forget(c.pt, pt_inode(c.pt, e.ino), 1);
	}
	end(&c, 0, 0);
}

/* Read into a buffer of our own rather than spliced: the bytes counted are the bytes read. */
static void pt_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, struct fuse_file_info *fi)
{
	struct call c = begin(req, PT_READ);
	void *buf = NULL;
	ssize_t n;

	(void)ino;
	if (posix_memalign(&buf, 4096, size ? size : 1) != 0) { /* aligned, for a file opened O_DIRECT */
		reply_status(&c, ENOMEM);
		return;
	}
	n = pread((int)fi->fh, buf, size, offset);
	if (n < 0) {
		int err = errno;
		free(buf);
		reply_status(&c, err);
		return;
	}
	ready(&c);
	fuse_reply_buf(req, buf, (size_t)n);
	free(buf);
	end(&c, (uint64_t)n, 0);
}

/*
 * libfuse's buffer is not aligned; a file opened O_DIRECT wants it to be (EINVAL), and
 * gets an aligned copy.
 */
static ssize_t write_aligned(int fd, const char *buf, size_t size, off_t offset)
{
	ssize_t n = pwrite(fd, buf, size, offset);
	void *aligned;

	if (n >= 0 || errno != EINVAL || (uintptr_t)buf % 4096 == 0)
		return n;
	if (posix_memalign(&aligned, 4096, size ? size : 1) != 0) {
		errno = ENOMEM;
		return -1;
	}
	memcpy(aligned, buf, size);
	n = pwrite(fd, aligned, size, offset);
	if (n < 0) {
		int err = errno;
		free(aligned);
		errno = err;
		return -1;
	}
	free(aligned);
	return n;
}

static void pt_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t offset,
		     struct fuse_file_info *fi)
{
	struct call c = begin(req, PT_WRITE);
	ssize_t n = write_aligned((int)fi->fh, buf, size, offset);

	(void)ino;
	if (n < 0) {
		reply_status(&c, errno);
		return;
	}
	ready(&c);
	fuse_reply_write(req, (size_t)n);
	end(&c, (uint64_t)n, 0);
}

/* Each close(2) of the file: what the source's own filesystem does on close, without closing ours. */
static void pt_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct call c = begin(req, PT_FLUSH);
	int fd = dup((int)fi->fh);

	(void)ino;
	reply_status(&c, fd < 0 ? errno : status(close(fd)));
}

static void pt_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct call c = begin(req, PT_RELEASE);

	(void)ino;
	close((int)fi->fh); /* and with it the file's locks */
	reply_status(&c, 0);
}

static void pt_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	struct call c = begin(req, PT_FSYNC);

	(void)ino;
	reply_status(&c, status(datasync ? fdatasync((int)fi->fh) : fsync((int)fi->fh)));
}

static void pt_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
			 struct fuse_file_info *fi)
{
	struct call c = begin(req, PT_FALLOCATE);

	(void)ino;
	reply_status(&c, status(fallocate((int)fi->fh, mode, offset, length)));
}

static void pt_lseek(fuse_req_t req, fuse_ino_t ino, off_t offset, int whence, struct fuse_file_info *fi)
{
	struct call c = begin(req, PT_LSEEK);
	off_t where = lseek((int)fi->fh, offset, whence);

	(void)ino;
	if (where < 0) {
		reply_status(&c, errno);
		return;
	}
	ready(&c);
	fuse_reply_lseek(req, where);
	end(&c, 0, 0);
}

static void pt_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t offset_in, struct fuse_file_info *fi_in,
			       fuse_ino_t ino_out, off_t offset_out, struct fuse_file_info *fi_out, size_t length,
			       int flags)
{
	struct call c = begin(req, PT_COPY_FILE_RANGE);
	ssize_t n = copy_file_range((int)fi_in->fh, &offset_in, (int)fi_out->fh, &offset_out, length,
				    (unsigned)flags);

	(void)ino_in;
	(void)ino_out;
	if (n < 0) {
		reply_status(&c, errno);
		return;
	}
	ready(&c);
	fuse_reply_write(req, (size_t)n);
	end(&c, (uint64_t)n, 0);
}

/* ---- Locks: kept by the source's kernel, as open-file-description locks on the file each FUSE_OPEN opened ---- */

/*
 * A request that waits for a lock is a thread blocked in F_OFD_SETLKW or flock(). It ends
 * when the lock is granted, when its process gives up (the kernel sends FUSE_INTERRUPT and
 * PT_WAKE_SIGNAL to the waiting thread makes the call return EINTR) or when the server stops.
 * A signal that lands between the last check and the call is missed: that waiter then ends
 * only when the lock comes.
 *
 * EINTR answers an interrupt only: the kernel turns it into ERESTARTSYS ("locking is
 * restartable"), which reaches a process with no signal pending as errno 512. A server that
 * stops answers ENOTCONN, as the kernel does for requests of a server that is gone.
 */
#define MAX_WAITERS 64
static pid_t waiter_tids[MAX_WAITERS];

static int waiter_add(pid_t tid)
{
	for (int slot = 0; slot < MAX_WAITERS; slot++) {
		pid_t free_slot = 0;
		if (__atomic_compare_exchange_n(&waiter_tids[slot], &free_slot, tid, false, __ATOMIC_SEQ_CST,
						__ATOMIC_SEQ_CST))
			return slot;
	}
	return -1; /* not woken when the server stops, only */
}

static void waiter_remove(int slot)
{
	if (slot >= 0)
		__atomic_store_n(&waiter_tids[slot], 0, __ATOMIC_SEQ_CST);
}

void pt_wake_waiters(void)
{
	pid_t pid = getpid();

	for (int slot = 0; slot < MAX_WAITERS; slot++) {
		pid_t tid = __atomic_load_n(&waiter_tids[slot], __ATOMIC_SEQ_CST);
		if (tid)
			tgkill(pid, tid, PT_WAKE_SIGNAL);
	}
}

static void interrupt_waiter(fuse_req_t req, void *data)
{
	(void)req;
	tgkill(getpid(), *(const pid_t *)data, PT_WAKE_SIGNAL);
}

/* F_OFD_SETLKW with lock, else flock(flock_op): 0 or an errno, EINTR when given up, ENOTCONN when stopping. */
static int wait_for_lock(fuse_req_t req, int fd, struct flock *lock, int flock_op)
{
	pid_t tid = gettid();
	int slot = waiter_add(tid), err;

	fuse_req_interrupt_func(req, interrupt_waiter, &tid);
	for (;;) {
		if (fuse_req_interrupted(req) || pt_stopping) {
			err = fuse_req_interrupted(req) ? EINTR : ENOTCONN;
			break;
		}
		if ((lock ? fcntl(fd, F_OFD_SETLKW, lock) : flock(fd, flock_op)) == 0) {
			err = 0;
			break;
		}
		if (errno != EINTR) {
			err = errno;
			break;
		}
	}
	/* Under the request's lock, as interrupt_waiter runs: once back, it will not touch tid again. */
	fuse_req_interrupt_func(req, NULL, NULL);
	waiter_remove(slot);
	return err;
}

static void pt_getlk(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, struct flock *lock)
{
	struct call c = begin(req, PT_GETLK);

	(void)ino;
	lock->l_pid = 0; /* open-file-description locks insist */
	if (fcntl((int)fi->fh, F_OFD_GETLK, lock) != 0) {
		reply_status(&c, errno);
		return;
	}
	if (lock->l_pid < 0)
		lock->l_pid = 0; /* the holder is an open file, not a process */
	ready(&c);
	fuse_reply_lock(req, lock);
	end(&c, 0, 0);
}

/* sleep is FUSE_SETLKW: F_SETLKW through the mount. */
static void pt_setlk(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, struct flock *lock, int sleep)
{
	struct call c = begin(req, sleep ? PT_SETLKW : PT_SETLK);

	(void)ino;
	lock->l_pid = 0;
	if (sleep)
		reply_status(&c, wait_for_lock(req, (int)fi->fh, lock, 0));
	else
		reply_status(&c, status(fcntl((int)fi->fh, F_OFD_SETLK, lock)));
}

/* flock(2) through the mount comes as FUSE_SETLK or FUSE_SETLKW with FUSE_LK_FLOCK. */
static void pt_flock(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi, int op)
{
	struct call c = begin(req, op & LOCK_NB ? PT_SETLK : PT_SETLKW);

	(void)ino;
	if (op & LOCK_NB)
		reply_status(&c, status(flock((int)fi->fh, op)));
	else
		reply_status(&c, wait_for_lock(req, (int)fi->fh, NULL, op));
}

/* ---- Directories ------------------------------------------------------------------------ */

struct pt_dir {
	DIR *stream;
	off_t offset;         /* where the stream is */
	struct dirent *entry; /* read but not yet sent: it did not fit */
};

static struct pt_dir *dir_of(const struct fuse_file_info *fi)
{
	return (struct pt_dir *)(uintptr_t)fi->fh;
}

static void pt_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct call c = begin(req, PT_OPENDIR);
	struct pt_dir *dir = calloc(1, sizeof(*dir));
	int fd, err;

	if (!dir) {
		reply_status(&c, ENOMEM);
		return;
	}
	fd = openat(pt_inode(c.pt, ino)->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || !(dir->stream = fdopendir(fd))) {
		err = errno;
		if (fd >= 0)
			close(fd);
		free(dir);
		reply_status(&c, err);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)dir;
	ready(&c);
	if (fuse_reply_open(req, fi) != 0) {
		closedir(dir->stream);
		free(dir);
	}
	end(&c, 0, 0);
}

static bool dot_or_dotdot(const char *name)
{
	return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

/*
 * One entry into buf (of room bytes): its size, larger than room when it did not fit. With
 * plus, an entry but . and .. counts as a lookup, taken back when it did not fit; an entry
 * gone since readdir saw it is skipped (0).
 */
static size_t add_entry(struct call *c, struct pt_inode *parent, const struct dirent *entry, bool plus, char *buf,
			size_t room, int *err)
{
	struct fuse_entry_param e;
	size_t size;

	memset(&e, 0, sizeof(e));
	e.attr.st_ino = entry->d_ino;
	e.attr.st_mode = (mode_t)entry->d_type << 12;
	if (!plus)
		return fuse_add_direntry(c->req, buf, room, entry->d_name, &e.attr, entry->d_off);
	if (!dot_or_dotdot(entry->d_name)) {
		*err = pt_inode_lookup(c->pt, parent, entry->d_name, &e);
		if (*err == ENOENT)
			*err = 0;
		if (*err)
			return 0;
		if (!e.ino)
			return 0;
	}
	size = fuse_add_direntry_plus(c->req, buf, room, entry->d_name, &e, entry->d_off);
	if (size > room && e.ino)
		pt_inode_forget(c->pt, pt_inode(c->pt, e.ino), 1);
	return size;
}

static void read_directory(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, struct fuse_file_info *fi,
			   bool plus)
{
	struct call c = begin(req, plus ? PT_READDIRPLUS : PT_READDIR);
	struct pt_dir *dir = dir_of(fi);
	struct pt_inode *parent = pt_inode(c.pt, ino);
	char *buf = malloc(size ? size : 1);
	size_t used = 0;
	int err = 0;

	if (!buf) {
		reply_status(&c, ENOMEM);
		return;
	}
	if (offset != dir->offset) {
		seekdir(dir->stream, offset);
		dir->entry = NULL;
		dir->offset = offset;
	}
	for (;;) {
		size_t entry_size;

		if (!dir->entry) {
			errno = 0;
			dir->entry = readdir(dir->stream);
			if (!dir->entry) {
				err = errno;
				break;
			}
		}
		entry_size = add_entry(&c, parent, dir->entry, plus, buf + used, size - used, &err);
		if (err || entry_size > size - used)
			break;
		used += entry_size;
		dir->offset = dir->entry->d_off;
		dir->entry = NULL;
	}
	if (err && used == 0) {
		free(buf);
		reply_status(&c, err);
		return;
	}
	ready(&c);
	fuse_reply_buf(req, buf, used);
	free(buf);
	end(&c, 0, 0);
}

static void pt_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, struct fuse_file_info *fi)
{
	read_directory(req, ino, size, offset, fi, false);
}

static void pt_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, struct fuse_file_info *fi)
{
	read_directory(req, ino, size, offset, fi, true);
}

static void pt_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct call c = begin(req, PT_RELEASEDIR);
	struct pt_dir *dir = dir_of(fi);

	(void)ino;
	closedir(dir->stream);
	free(dir);
	reply_status(&c, 0);
}

static void pt_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	struct call c = begin(req, PT_FSYNCDIR);
	int fd = dirfd(dir_of(fi)->stream);

	(void)ino;
	reply_status(&c, status(datasync ? fdatasync(fd) : fsync(fd)));
}

/* ---- Extended attributes: ENOSYS (the kernel then stops asking) unless --xattr ---------- */

/* What getxattr or listxattr said: the size asked for when size is 0, else the bytes. */
static void reply_xattr(struct call *c, size_t size, const char *buf, ssize_t n)
{
	if (n < 0) {
		reply_status(c, errno);
		return;
	}
	ready(c);
	if (size == 0)
		fuse_reply_xattr(c->req, (size_t)n);
	else
		fuse_reply_buf(c->req, buf, (size_t)n);
	end(c, 0, 0);
}

static void pt_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct call c = begin(req, PT_GETXATTR);
	char path[PROC_PATH_MAX], *buf;

	if (!c.pt->xattr) {
		reply_status(&c, ENOSYS);
		return;
	}
	if (!(buf = malloc(size ? size : 1))) {
		reply_status(&c, ENOMEM);
		return;
	}
	reply_xattr(&c, size, buf, getxattr(proc_path(path, pt_inode(c.pt, ino)->fd), name, size ? buf : NULL, size));
	free(buf);
}

static void pt_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct call c = begin(req, PT_LISTXATTR);
	char path[PROC_PATH_MAX], *buf;

	if (!c.pt->xattr) {
		reply_status(&c, ENOSYS);
		return;
	}
	if (!(buf = malloc(size ? size : 1))) {
		reply_status(&c, ENOMEM);
		return;
	}
	reply_xattr(&c, size, buf, listxattr(proc_path(path, pt_inode(c.pt, ino)->fd), size ? buf : NULL, size));
	free(buf);
}

static void pt_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value, size_t size,
			int flags)
{
	struct call c = begin(req, PT_SETXATTR);
	char path[PROC_PATH_MAX];

	if (!c.pt->xattr) {
		reply_status(&c, ENOSYS);
		return;
	}
	reply_status(&c, status(setxattr(proc_path(path, pt_inode(c.pt, ino)->fd), name, value, size, flags)));
}

static void pt_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct call c = begin(req, PT_REMOVEXATTR);
	char path[PROC_PATH_MAX];

	if (!c.pt->xattr) {
		reply_status(&c, ENOSYS);
		return;
	}
	reply_status(&c, status(removexattr(proc_path(path, pt_inode(c.pt, ino)->fd), name)));
}

/* Setting .getlk and .setlk makes libfuse offer POSIX locks to the kernel, .flock flock(2) locks. */
const struct fuse_lowlevel_ops pt_ops = {
	.lookup = pt_lookup,
	.forget = pt_forget,
	.forget_multi = pt_forget_multi,
	.getattr = pt_getattr,
	.setattr = pt_setattr,
	.readlink = pt_readlink,
	.mknod = pt_mknod,
	.mkdir = pt_mkdir,
	.unlink = pt_unlink,
	.rmdir = pt_rmdir,
	.symlink = pt_symlink,
	.rename = pt_rename,
	.link = pt_link,
	.open = pt_open,
	.create = pt_create,
	.read = pt_read,
	.write = pt_write,
	.flush = pt_flush,
	.release = pt_release,
	.fsync = pt_fsync,
	.opendir = pt_opendir,
	.readdir = pt_readdir,
	.readdirplus = pt_readdirplus,
	.releasedir = pt_releasedir,
	.fsyncdir = pt_fsyncdir,
	.statfs = pt_statfs,
	.access = pt_access,
	.fallocate = pt_fallocate,
	.lseek = pt_lseek,
	.copy_file_range = pt_copy_file_range,
	.getlk = pt_getlk,
	.setlk = pt_setlk,
	.flock = pt_flock,
	.getxattr = pt_getxattr,
	.listxattr = pt_listxattr,
	.setxattr = pt_setxattr,
	.removexattr = pt_removexattr,
};
