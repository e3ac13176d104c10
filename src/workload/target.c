/* SPDX-License-Identifier: GPL-2.0-or-later */
/* target.c: the file or block device a benchmark runs on: made and laid out, checked for safety, removed after. */
#include <blkid.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <dirent.h>
#include <signal.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <vtrace/proc.h> /* a process's start time, which tells it from a reused pid */

#include "workload/target.h"
#include "common/dl.h"
#include "common/path_walk.h"
#include "common/util.h"


const char *bench_fs_type(int fd, bool *tmpfs)
{
	static const struct {
		unsigned long magic;
		const char *name;
	} known[] = {
		{ TMPFS_MAGIC, "tmpfs" }, { EXT4_SUPER_MAGIC, "ext4" }, { XFS_SUPER_MAGIC, "xfs" },
		{ BTRFS_SUPER_MAGIC, "btrfs" }, { OVERLAYFS_SUPER_MAGIC, "overlay" }, { FUSE_SUPER_MAGIC, "fuse" },
		{ 0x6969, "nfs" }, { RAMFS_MAGIC, "ramfs" }, { 0x2fc12fc1, "zfs" }, { 0xF2F52010, "f2fs" },
		{ MSDOS_SUPER_MAGIC, "vfat" }, { 0x5346544e, "ntfs" }, { 0x65735546, "fuse" },
	};
	struct statfs fs;

	*tmpfs = false;
	if (fstatfs(fd, &fs) != 0)
		return "unknown";
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		if ((unsigned long)fs.f_type == known[i].magic) {
			*tmpfs = known[i].magic == TMPFS_MAGIC || known[i].magic == RAMFS_MAGIC;
			return known[i].name;
		}
	}
	return "unknown";
}

/* Where O_DIRECT must be aligned, from statx (Linux >= 6.1 tells; 0 when it does not). */
static void dio_alignment(int fd, struct bench_target *target)
{
	struct statx sx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 && (sx.stx_mask & STATX_DIOALIGN)) {
		target->dio_mem_align = sx.stx_dio_mem_align;
		target->dio_offset_align = sx.stx_dio_offset_align;
	}
}

/* Writes [from, to) of the file with the pattern, syncs it, and drops it from the page cache. */
static int lay_out(int fd, uint64_t from, uint64_t to, const struct target_request *request)
{
	const uint64_t chunk = 1u << 20;
	unsigned char *buffer = xcalloc(1, chunk);
	uint64_t seed = 0x2545F4914F6CDD1DULL, offset;
	int err = 0;

	bench_fill(buffer, chunk, request->pattern, &seed);
	for (offset = from; offset < to && !err; ) {
		size_t length = to - offset < chunk ? (size_t)(to - offset) : chunk;
		ssize_t done;

		if (request->stop && *request->stop) {
			err = EINTR;
			break;
		}
		bench_scramble(buffer, length, request->pattern, offset, seed);
		done = pwrite(fd, buffer, length, (off_t)offset);
		if (done < 0 && errno == EINTR)
			continue;
		if (done <= 0) {
			err = done < 0 ? errno : ENOSPC;
			break;
		}
		offset += (uint64_t)done;
		if (request->on_layout && (offset & ((64u << 20) - 1)) == 0)
			request->on_layout(offset - from, to - from, request->context);
	}
	free(buffer);
	if (!err && fdatasync(fd) != 0)
		err = errno;
	if (!err)
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	return err;
}

static uint64_t free_bytes(int dir_fd)
{
	struct statvfs vfs;

	return fstatvfs(dir_fd, &vfs) == 0 ? (uint64_t)vfs.f_bavail * vfs.f_frsize : 0;
}

/*
 * The test files bench makes are mode 0600 and carry the xattr BENCH_XATTR "PID STARTTIME"
 * (where the filesystem keeps user xattrs); in a directory they are named iolens-bench.PID.HEX.
 * One whose process is gone (killed with SIGKILL, the machine reset) is what an earlier run
 * left: removed by the next run in that directory, or on that name, which says so. One of a
 * run still going is kept.
 */
#define BENCH_XATTR "user.iolens.bench"

static bool process_runs(int pid, uint64_t start_time)
{
	uint64_t now_start = 0;

	if (pid <= 0 || (kill(pid, 0) != 0 && errno == ESRCH))
		return false;
	return !start_time || (vtrace_proc_start_time("/proc", pid, &now_start) == 0 && now_start == start_time);
}

enum leftover { NOT_OURS, OURS_RUNNING, OURS_LEFT };

/*
 * Whether name in dir_fd is a test file of bench's: ours beyond doubt (a regular file of our
 * user, mode 0600, its mark's pid the name's, name_pid, where the name has one; without a
 * name's pid only a file with a mark is ours), and whether its run still goes (its pid, *pid).
 */
static enum leftover leftover_state(int dir_fd, const char *name, int name_pid, int *pid)
{
	char mark[64] = "";
	unsigned long long start_time = 0;
	int mark_pid = 0, fd = openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	enum leftover state = NOT_OURS;
	struct stat st;
	ssize_t len;

	if (fd < 0)
		return NOT_OURS;
	len = fgetxattr(fd, BENCH_XATTR, mark, sizeof(mark) - 1);
	if (len > 0)
		mark[len] = '\0';
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && (st.st_mode & 07777) == 0600 &&
	    ((len > 0 && sscanf(mark, "%d %llu", &mark_pid, &start_time) == 2 && (!name_pid || mark_pid == name_pid)) ||
	     (len < 0 && name_pid && (errno == ENODATA || errno == ENOTSUP)))) {
		*pid = len > 0 ? mark_pid : name_pid;
		state = process_runs(*pid, start_time) ? OURS_RUNNING : OURS_LEFT;
	}
	close(fd);
	return state;
}

/* Removes name from dir_fd when it is still the file with st's device and inode: 0, or -1. */
static int unlink_if_same(int dir_fd, const char *name, dev_t dev, ino_t ino)
{
	struct stat now;

	if (fstatat(dir_fd, name, &now, AT_SYMLINK_NOFOLLOW) != 0 || now.st_dev != dev || now.st_ino != ino)
		return -1;
	return unlinkat(dir_fd, name, 0);
}

/* Removes a leftover (said), after checking it once more: 0 when removed. */
static int remove_leftover(int dir_fd, const char *name, const char *shown, int pid)
{
	struct stat st;

	if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
	    unlink_if_same(dir_fd, name, st.st_dev, st.st_ino) != 0)
		return -1;
	warn_msg("removed %s: a test file an earlier run left (pid %d, no longer running)", printable_name(shown), pid);
	return 0;
}

static void remove_leftovers(int dir_fd, const char *dir)
{
	int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d))) {
		char shown[4096], tail[2];
		unsigned long long id;
		int name_pid, pid;

		if (sscanf(de->d_name, "iolens-bench.%d.%llx%1s", &name_pid, &id, tail) != 2 ||
		    leftover_state(dir_fd, de->d_name, name_pid, &pid) != OURS_LEFT)
			continue;
		snprintf(shown, sizeof(shown), "%s/%s", dir, de->d_name);
		remove_leftover(dir_fd, de->d_name, shown, pid);
	}
	closedir(d);
}

/* The file being made, for bench_target_signal_remove. */
static volatile sig_atomic_t signal_armed;
static int signal_dir_fd;
static char signal_name[256];
static dev_t signal_dev;
static ino_t signal_ino;

void bench_target_signal_remove(void)
{
	if (signal_armed)
		unlink_if_same(signal_dir_fd, signal_name, signal_dev, signal_ino);
}

static void publish_to_signal(const struct bench_target *target)
{
	signal_armed = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (!target)
		return;
	signal_dir_fd = target->dir_fd;
	snprintf(signal_name, sizeof(signal_name), "%s", target->name);
	signal_dev = target->file_dev;
	signal_ino = target->file_ino;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	signal_armed = 1;
}

/* A new file: made with O_EXCL in the directory held (never through a link), given its blocks, written whole. */
static int make_file(const struct target_request *request, struct bench_target *target, int dir_fd, const char *name,
		     const char *dir)
{
	char size_text[16], free_text[16], mark[64];
	uint64_t size = request->size ? request->size : BENCH_DEFAULT_SIZE, start_time = 0;
	struct stat st;
	int fd, err;

	fd = openat(dir_fd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = errno;
		if (err == EROFS)
			warn_msg("cannot make a test file in %s: a read-only filesystem", printable_name(dir));
		else
			warn_msg("cannot make the test file %s: %s", printable_name(target->path), strerror(err));
		return EXIT_FAIL;
	}
	if (fstat(fd, &st) != 0) {
		warn_msg("%s: %s", printable_name(target->path), strerror(errno));
		close(fd);
		unlinkat(dir_fd, name, 0);
		return EXIT_FAIL;
	}
	target->fd = fd;
	target->created = true;
	target->dir_fd = dup(dir_fd);
	snprintf(target->name, sizeof(target->name), "%s", name);
	target->file_dev = st.st_dev;
	target->file_ino = st.st_ino;
	publish_to_signal(target);
	vtrace_proc_start_time("/proc", getpid(), &start_time);
	snprintf(mark, sizeof(mark), "%d %llu", (int)getpid(), (unsigned long long)start_time);
	fsetxattr(fd, BENCH_XATTR, mark, strlen(mark), 0); /* where user xattrs are kept: not all filesystems */
	target->size = size;
	err = posix_fallocate(fd, 0, (off_t)size);
	if (err == EOPNOTSUPP || err == EINVAL)
		err = 0; /* no preallocation here: the writes below give the blocks */
	if (!err)
		err = lay_out(fd, 0, size, request);
	if (!err)
		dio_alignment(fd, target);
	if (err == ENOSPC || err == EDQUOT) {
		warn_msg("no space for a %s test file in %s: %s free (use a smaller --size)",
			 human_size(size, size_text, 16), printable_name(dir),
			 human_size(free_bytes(dir_fd), free_text, 16));
		return EXIT_FAIL;
	}
	if (err) {
		warn_msg("%s %s: %s", err == EINTR ? "interrupted laying out" : "cannot lay out",
		    printable_name(target->path), strerror(err));
		return EXIT_FAIL;
	}
	return 0;
}

/* libblkid, opened by check_no_signature (dl.h): not at every start-up, nor for a file. */
static DLSYM_POINTER(blkid_do_safeprobe);
static DLSYM_POINTER(blkid_free_probe);
static DLSYM_POINTER(blkid_new_probe);
static DLSYM_POINTER(blkid_probe_enable_partitions);
static DLSYM_POINTER(blkid_probe_enable_superblocks);
static DLSYM_POINTER(blkid_probe_lookup_value);
static DLSYM_POINTER(blkid_probe_set_device);
static DLSYM_POINTER(blkid_probe_set_partitions_flags);
static DLSYM_POINTER(blkid_probe_set_superblocks_flags);

static int blkid_dl(char *why, size_t why_len)
{
	static void *libblkid;

	return dl_open_many(&libblkid, BLKID_SONAME, why, why_len, DLSYM_ARG(blkid_do_safeprobe),
			    DLSYM_ARG(blkid_free_probe), DLSYM_ARG(blkid_new_probe),
			    DLSYM_ARG(blkid_probe_enable_partitions), DLSYM_ARG(blkid_probe_enable_superblocks),
			    DLSYM_ARG(blkid_probe_lookup_value), DLSYM_ARG(blkid_probe_set_device),
			    DLSYM_ARG(blkid_probe_set_partitions_flags), DLSYM_ARG(blkid_probe_set_superblocks_flags),
			    NULL);
}

/*
 * 0 when libblkid finds no filesystem, partition table or other signature on the device open as
 * fd; else says what it found (when is "" at the start, " during the run" after) and EXIT_FAIL.
 */
static int check_no_signature(int fd, const char *path, const char *when)
{
	const char *type = NULL, *what = "filesystem";
	blkid_probe probe;
	char why[512];
	int rc;

	if (blkid_dl(why, sizeof(why)) != 0) {
		warn_msg("%s: cannot look for a filesystem signature (%s): not written", printable_name(path), why);
		return EXIT_FAIL;
	}
	probe = sym_blkid_new_probe();
	if (!probe || sym_blkid_probe_set_device(probe, fd, 0, 0) != 0) {
		if (probe)
			sym_blkid_free_probe(probe);
		warn_msg("%s: cannot look for a filesystem signature (libblkid): not written", printable_name(path));
		return EXIT_FAIL;
	}
	sym_blkid_probe_enable_superblocks(probe, 1);
	sym_blkid_probe_set_superblocks_flags(probe, BLKID_SUBLKS_TYPE);
	sym_blkid_probe_enable_partitions(probe, 1);
	sym_blkid_probe_set_partitions_flags(probe, BLKID_PARTS_MAGIC);
	rc = sym_blkid_do_safeprobe(probe);
	if (rc == 0) {
		if (sym_blkid_probe_lookup_value(probe, "TYPE", &type, NULL) != 0 &&
		    sym_blkid_probe_lookup_value(probe, "PTTYPE", &type, NULL) == 0)
			what = "partition table";
	}
	if (rc != 1) {
		if (rc == 0 && *when)
			warn_msg("%s: a %s (%s) appeared on it during the run: stopped, not written again",
			    printable_name(path), what, type ? type : "?");
		else if (rc == 0)
			warn_msg("%s holds a %s (%s): never written; wipe it first (wipefs) if its data is not wanted",
			    printable_name(path), what, type ? type : "?");
		else
			warn_msg("%s: libblkid found conflicting signatures%s: %s", printable_name(path), when,
			    *when ? "stopped, not written again" : "never written");
		sym_blkid_free_probe(probe);
		return EXIT_FAIL;
	}
	sym_blkid_free_probe(probe);
	return 0;
}

/*
 * A block device written only when nothing uses it and it holds no filesystem or partition
 * table. It stays open with O_EXCL (target->hold_fd) until bench_target_remove: nothing can
 * mount it, mkfs it or make it part of an md or dm device while the run writes it.
 */
static int check_device_writable(const struct target_request *request, struct bench_target *target, int path_fd)
{
	const char *path = target->path;
	int fd, read_only = 0;

	if (!request->force) {
		warn_msg("%s is a block device: bench writes to one only with --force (its data is overwritten)",
		    printable_name(path));
		return EXIT_FAIL;
	}
	/* O_EXCL on a block device fails with EBUSY while it, or a partition of it, is mounted or held. */
	fd = fd_reopen(path_fd, O_RDONLY | O_EXCL);
	if (fd < 0) {
		if (errno == EBUSY)
			warn_msg("%s is in use (mounted, or held by device-mapper, md or swap): never written",
			    printable_name(path));
		else
			warn_msg("%s: %s", printable_name(path), strerror(errno));
		return EXIT_FAIL;
	}
	if (ioctl(fd, BLKROGET, &read_only) == 0 && read_only) {
		warn_msg("%s is read-only (a write-protected medium, losetup -r, blockdev --setro): cannot be written",
		    printable_name(path));
		close(fd);
		return EXIT_FAIL;
	}
	if (check_no_signature(fd, path, "") != 0) {
		close(fd);
		return EXIT_FAIL;
	}
	target->hold_fd = fd;
	return 0;
}

int bench_target_recheck(const struct bench_target *target)
{
	return target->hold_fd >= 0 ? check_no_signature(target->hold_fd, target->path, " during the run") : 0;
}

static int use_existing(const struct target_request *request, struct bench_target *target, int path_fd,
			const struct stat *st)
{
	char size_text[16], want_text[16];
	uint64_t size = (uint64_t)st->st_size;

	target->file_dev = st->st_dev;
	target->file_ino = st->st_ino;
	if (S_ISBLK(st->st_mode)) {
		target->block_device = true;
		target->disk = st->st_rdev;
		if (request->writes && check_device_writable(request, target, path_fd) != 0)
			return EXIT_FAIL;
	} else if (request->writes && !request->force) {
		warn_msg("%s exists: bench writes to an existing file only with --force (its data is overwritten)",
		    printable_name(target->path));
		return EXIT_FAIL;
	} else {
		target->disk = major(st->st_dev) ? st->st_dev : 0;
	}
	target->fd = fd_reopen(path_fd, request->writes ? O_RDWR : O_RDONLY);
	if (target->fd < 0) {
		warn_msg("%s: %s", printable_name(target->path),
		    errno == EROFS ? "on a read-only filesystem: cannot be written" : strerror(errno));
		return EXIT_FAIL;
	}
	if (S_ISBLK(st->st_mode) && ioctl(target->fd, BLKGETSIZE64, &size) != 0)
		size = 0;
	dio_alignment(target->fd, target);
	if (request->size && request->size > size && S_ISREG(st->st_mode) && request->writes) {
		/* Written with --force and asked for more than it has: lay the rest out (given back at the end). */
		int err = lay_out(target->fd, size, request->size, request);

		if (err) {
			if (ftruncate(target->fd, (off_t)size) != 0) /* not left grown, and the filesystem full */
				warn_msg("%s: cannot put it back to its %llu bytes: %s", printable_name(target->path),
				    (unsigned long long)size, strerror(errno));
			warn_msg("cannot extend %s to %s: %s", printable_name(target->path),
			    human_size(request->size, want_text, 16), strerror(err));
			return EXIT_FAIL;
		}
		target->extended = true;
		target->original_size = size;
		size = request->size;
	}
	if (request->size && request->size > size) {
		warn_msg("%s has %s, less than --size %s", printable_name(target->path),
			 human_size(size, size_text, 16), human_size(request->size, want_text, 16));
		return EXIT_FAIL;
	}
	target->size = request->size ? request->size : size;
	if (!target->size) {
		warn_msg("%s is empty: nothing to read (a writing --rw with --size and --force lays it out)",
		    printable_name(target->path));
		return EXIT_FAIL;
	}
	return 0;
}

/* Whether O_DIRECT opens succeed where fd is (a directory: an O_TMPFILE there): 1, 0, or -1 unknown. */
static int direct_accepted(int fd, bool is_dir)
{
	int tmp = is_dir ? openat(fd, ".", O_TMPFILE | O_RDWR | O_DIRECT | O_CLOEXEC, 0600) :
			   fd_reopen(fd, O_RDONLY | O_DIRECT | O_NONBLOCK);

	if (tmp >= 0) {
		close(tmp);
		return 1;
	}
	return errno == EINVAL || errno == EOPNOTSUPP ? 0 : -1;
}

/*
 * The directory a new file is made in (dir_fd), its name there, and the directory's path for
 * messages, from a walk that ends at a directory (a name of bench's own) or at a name that
 * does not exist. The name is bench's when new_name is set.
 */
static void new_file_place(struct path_walk *walk, const char *arg, struct bench_target *target, int *dir_fd,
			   char *name, size_t name_len, char **dir)
{
	if (walk->fd >= 0) { /* a directory */
		size_t length = strlen(arg) + 32;

		snprintf(name, name_len, "iolens-bench.%d.%llx", (int)getpid(),
			 (unsigned long long)(monotonic_ns() & 0xffffff));
		target->path = xcalloc(1, length);
		snprintf(target->path, length, "%s%s%s", arg, arg[strlen(arg) - 1] == '/' ? "" : "/", name);
		*dir_fd = walk->fd;
		*dir = xstrdup(arg);
	} else {
		char *slash;

		snprintf(name, name_len, "%s", walk->name);
		target->path = xstrdup(arg);
		*dir_fd = walk->dir_fd;
		*dir = xstrdup(arg);
		slash = strrchr(*dir, '/');
		if (!slash)
			strcpy(*dir, ".");
		else
			slash[slash == *dir] = '\0';
	}
}

int bench_target_prepare(const struct target_request *request, struct bench_target *target)
{
	const char *arg = request->arg ? request->arg : ".";
	struct path_walk walk;
	char *dir = NULL, name[256], why[512];
	struct stat st;
	bool tmpfs, new_file;
	int rc, dir_fd = -1, pid;

	memset(target, 0, sizeof(*target));
	target->fd = target->dir_fd = target->hold_fd = -1;
	rc = path_walk(arg, 0, &walk);
	if (rc == -ENOENT) {
		warn_msg("cannot make %s: its directory does not exist", printable_name(arg));
		return EXIT_FAIL;
	} else if (rc) {
		warn_msg("%s: %s", printable_name(arg), strerror(-rc));
		return EXIT_FAIL;
	}
	st = walk.st;
	/* A file a killed run left on the name the user gave: found by its mark, removed, made again. */
	if (walk.fd >= 0 && S_ISREG(st.st_mode)) {
		enum leftover state = leftover_state(walk.dir_fd, walk.name, 0, &pid);

		if (state == OURS_RUNNING) {
			warn_msg("%s is the test file of a bench still running (pid %d): not used", printable_name(arg),
				 pid);
			path_walk_close(&walk);
			return EXIT_FAIL;
		}
		if (state == OURS_LEFT && remove_leftover(walk.dir_fd, walk.name, arg, pid) == 0) {
			close(walk.fd);
			walk.fd = -1;
		}
	}
	new_file = walk.fd < 0 || S_ISDIR(st.st_mode);
	if (!new_file && !S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		warn_msg("%s is not a regular file, a directory or a block device", printable_name(arg));
		path_walk_close(&walk);
		return EXIT_FAIL;
	}
	/* Whoever else can change where the path leads must not lead bench to write what they could not. */
	if ((request->writes || new_file) && path_walk_check_write(&walk, why, sizeof(why)) != 0) {
		warn_msg("%s: %s", printable_name(arg), why);
		path_walk_close(&walk);
		return EXIT_FAIL;
	}
	if (new_file) {
		new_file_place(&walk, arg, target, &dir_fd, name, sizeof(name), &dir);
		path_walk_new_entry(&walk);
	} else {
		target->path = xstrdup(arg);
	}
	if (request->writes || new_file)
		path_walk_say_controllers(&walk, target->path);
	snprintf(target->fs_type, sizeof(target->fs_type), "%s", bench_fs_type(new_file ? dir_fd : walk.fd, &tmpfs));
	if (request->direct && tmpfs && (new_file || !S_ISBLK(st.st_mode))) {
		int accepted = direct_accepted(new_file ? dir_fd : walk.fd, new_file);

		warn_msg("%s is on %s, which keeps files in memory: there is no disk to measure%s (use --buffered to "
		    "measure memory copies)", printable_name(new_file ? dir : arg), target->fs_type,
		    accepted > 0 ? ", and O_DIRECT, which this kernel accepts there, only copies memory" :
		    accepted == 0 ? ", and this kernel does not support O_DIRECT there" : "");
		rc = EXIT_FAIL;
	} else if (new_file) {
		struct stat dir_st;

		if (fstat(dir_fd, &dir_st) == 0)
			target->disk = major(dir_st.st_dev) ? dir_st.st_dev : 0;
		remove_leftovers(dir_fd, dir);
		rc = make_file(request, target, dir_fd, name, dir);
	} else {
		rc = use_existing(request, target, walk.fd, &st);
	}
	free(dir);
	path_walk_close(&walk);
	if (rc) {
		bench_target_remove(target);
		return rc;
	}
	return 0;
}

void bench_target_remove(struct bench_target *target)
{
	publish_to_signal(NULL);
	if (target->created && target->dir_fd >= 0 &&
	    unlink_if_same(target->dir_fd, target->name, target->file_dev, target->file_ino) != 0 && target->fd >= 0) {
		/*
		 * Moved or replaced meanwhile by someone who can write its directory: its data
		 * freed, the name left alone.
		 */
		if (ftruncate(target->fd, 0) == 0)
			warn_msg("%s was moved or replaced during the run: its blocks are freed; what the name names "
				 "now is left as it is",
			    printable_name(target->path));
	} else if (target->extended && target->fd >= 0 && ftruncate(target->fd, (off_t)target->original_size) != 0) {
		warn_msg("%s: cannot put it back to its %llu bytes: %s", printable_name(target->path),
		    (unsigned long long)target->original_size, strerror(errno));
	}
	if (target->fd >= 0)
		close(target->fd);
	if (target->dir_fd >= 0)
		close(target->dir_fd);
	if (target->hold_fd >= 0)
		close(target->hold_fd);
	free(target->path);
	memset(target, 0, sizeof(*target));
	target->fd = target->dir_fd = target->hold_fd = -1;
}
