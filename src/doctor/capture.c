/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * capture.c: doctor's window on the machine: the samples of a few seconds (eBPF's O_DIRECT opens,
 * cache counts and block request latencies, /proc and /sys, libvtrace segments, probes of the
 * filesystems, disks' saved capacities), kept as a snapshot for the rules.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <vtrace.h>

#include "collect/bio.h"
#include "collect/cachestat.h"
#include "collect/capacity.h"
#include "collect/container.h"
#include "collect/diskstats.h"
#include "collect/fdinfo.h"
#include "collect/filesystems.h"
#include "collect/inode_names.h"
#include "collect/memcg.h"
#include "collect/mounts.h"
#include "collect/odirect.h"
#include "collect/pagecache.h"
#include "collect/procfs.h"
#include "collect/segments.h"
#include "collect/sysroot.h"
#include "collect/system.h"
#include "collect/task_iter.h"
#include "collect/tasks.h"
#include "common/bounded.h"
#include "common/signals.h"
#include "common/util.h"
#include "doctor/capture.h"
#include "doctor/io_window.h"
#include "doctor/miss.h"
#include "model/cache.h"
#include "model/disk.h"

#define NAMING_NS 1000000000ull /* the most naming the files reported may take */

/* ---- Containers ------------------------------------------------------------------------ */

/* The container of each process found, found while it lives (or by its cgroup's ids): the snapshot's at the end. */
static struct snap_container *containers;
static size_t ncontainers;

/* The container of process pid running comm (NULL: a libvtrace server, by its pid), when it is in one. */
static void see_container(pid_t pid, const char *comm, uint64_t cgroup, uint64_t memcg)
{
	const struct container *c;
	struct snap_container *out;

	if (pid <= 0)
		return;
	for (size_t i = 0; i < ncontainers; i++)
		if (containers[i].pid == pid && !strcmp(containers[i].comm, comm ? comm : ""))
			return;
	if (!(c = container_of_process(pid, cgroup, memcg)))
		return;
	containers = xrealloc(containers, (ncontainers + 1) * sizeof(*containers));
	out = &containers[ncontainers++];
	*out = (struct snap_container){ .pid = pid, .uid = c->owner };
	snprintf(out->comm, sizeof(out->comm), "%s", comm ? comm : "");
	snprintf(out->runtime, sizeof(out->runtime), "%s", container_runtime_names[c->runtime]);
	snprintf(out->id, sizeof(out->id), "%s", c->id);
	snprintf(out->name, sizeof(out->name), "%s", c->name);
	snprintf(out->pod, sizeof(out->pod), "%s", c->pod);
	snprintf(out->namespace_, sizeof(out->namespace_), "%s", c->namespace_);
	snprintf(out->label, sizeof(out->label), "%s", c->label);
}

/* ---- Processes doing I/O with O_DIRECT ------------------------------------------------ */

/*
 * Processes seen doing I/O with O_DIRECT in the window, by two means merged into one list:
 * eBPF on the raw syscall tracepoints sees each O_DIRECT open (and fcntl(F_SETFL, O_DIRECT))
 * as it happens, however briefly the file stays open (the O_DIRECT service opens, reads
 * 32 MiB in 30 ms, closes and sleeps); a scan of every process's /proc/PID/fdinfo finds
 * the files open O_DIRECT when the window begins, and at every sample when eBPF cannot be
 * had (then a file open only between two samples is missed, as said on stderr).
 */

#define DIRECT_FILES 4 /* files named per process */

/* A file opened O_DIRECT, and what the page cache holds of it: probed once, when first found. */
struct direct_file {
	dev_t dev;
	uint64_t ino;     /* 0 for a block device */
	bool block;
	char path[512];
	bool cache_known;
	uint64_t cached_pages, file_pages;
};

struct direct_process {
	pid_t pid;
	char comm[32];
	size_t files[DIRECT_FILES]; /* in direct_set.files */
	unsigned nfiles;
	int first_fd;          /* the first descriptor found with O_DIRECT (-1 unknown), and its flags */
	unsigned first_flags;
	const char *seen_by;   /* which saw it first: "fdinfo" or "ebpf" */
	const char *call;      /* eBPF: the call that gave O_DIRECT ("openat" ...), else NULL */
	uint64_t first_ns;     /* when first seen */
	uint64_t start_time;   /* its window_io: with pid, the process */
	struct window_counts io_first, io_last; /* its window_io's counts when first seen, and last while it lived */
	uint64_t io_first_ns, io_last_ns;
	bool io_known;
	bool io_pending;       /* not in the last round when first seen: from the next one it is in */
	bool ended;            /* gone (or its pid another process's) by the end */
};

struct direct_set {
	const char *marks;     /* where probes of filesystems are marked (struct doctor's) */
	struct direct_process *procs;
	size_t count;
	struct direct_file *files;
	size_t nfiles;
	bool ebpf;             /* opens seen as they happen; else fdinfo at every sample */
	bool off;              /* the odirect rule is disabled: fdinfo once, for the cache-miss rule, no eBPF */
	const char *why;       /* why not */
	const struct io_window *io; /* every process's I/O (struct watch's) */
	uint64_t start_ns;     /* the window's start, for first_seen_seconds */
	uint64_t probe_ns;     /* spent waiting for probes of the page cache, in all */
	uint64_t lost;         /* opens the program had no room to report, at the last sample */
};

/* What the page cache holds of a file, asked in a child process: its open may wait on a hung server. */
struct cache_probe {
	char path[768];
	dev_t dev;         /* the file it must be (a path may name another file now) */
	uint64_t ino;
	struct pagecache_stat cache;
	int rc;
};

static void probe_cache(void *arg)
{
	struct cache_probe *p = arg;
	int file = open(p->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;

	if (file < 0)
		p->rc = -errno;
	else if (fstat(file, &st) != 0)
		p->rc = -errno;
	else if (!S_ISREG(st.st_mode) || st.st_dev != p->dev || st.st_ino != p->ino)
		p->rc = -ESTALE;
	else
		p->rc = pagecache_query(file, 0, (uint64_t)st.st_size, &p->cache);
	if (file >= 0)
		close(file);
}

/*
 * The page cache's pages of a regular file, through path (bounded and marked: a hung server
 * never holds us); true when it was asked (whether or not it answered), false when path did
 * not open as that file.
 */
static bool count_cached(struct direct_set *set, struct direct_file *file, const char *path)
{
	struct cache_probe probe = { .dev = file->dev, .ino = file->ino };
	struct bounded_mark mark;
	uint64_t start;
	char what[256];
	int rc;

	if (file->block || !path)
		return true;
	start = monotonic_ns();
	snprintf(probe.path, sizeof(probe.path), "%s", path);
	snprintf(what, sizeof(what), "an open of %s, for its pages in the page cache", path);
	rc = bounded_call_device(set->marks, major(file->dev), minor(file->dev), what, probe_cache, &probe,
				 sizeof(probe), BOUNDED_FS_MS, &mark, NULL);
	set->probe_ns += monotonic_ns() - start;
	if (rc == 0 && probe.rc == 0) {
		file->cache_known = true;
		file->cached_pages = probe.cache.cached;
		file->file_pages = probe.cache.pages;
	}
	return rc != 0 || (probe.rc != -ENOENT && probe.rc != -ESTALE);
}

/*
 * The file's place in the set; one not seen before is added, its cache probed through
 * probe_path, or path when that no longer names it (a descriptor closed a moment ago).
 */
static size_t direct_file(struct direct_set *set, dev_t dev, uint64_t ino, bool block, const char *path,
			  const char *probe_path)
{
	struct direct_file *file;

	for (size_t i = 0; i < set->nfiles; i++)
		if (set->files[i].dev == dev && set->files[i].ino == ino && set->files[i].block == block)
			return i;
	set->files = xrealloc(set->files, (set->nfiles + 1) * sizeof(*set->files));
	file = &set->files[set->nfiles];
	*file = (struct direct_file){ .dev = dev, .ino = ino, .block = block };
	snprintf(file->path, sizeof(file->path), "%s", path);
	if (!count_cached(set, file, probe_path) && path[0] == '/' && strcmp(path, probe_path))
		count_cached(set, file, path);
	return set->nfiles++;
}

/* The process pid running comm (a pid reused by another command is another process), added when new. */
static struct direct_process *direct_process(struct direct_set *set, pid_t pid, const char *comm, const char *seen_by)
{
	struct direct_process *p;

	for (size_t i = 0; i < set->count; i++)
		if (set->procs[i].pid == pid && !strcmp(set->procs[i].comm, comm))
			return &set->procs[i];
	set->procs = xrealloc(set->procs, (set->count + 1) * sizeof(*set->procs));
	p = &set->procs[set->count++];
	*p = (struct direct_process){ .pid = pid, .first_fd = -1, .seen_by = seen_by, .first_ns = monotonic_ns() };
	snprintf(p->comm, sizeof(p->comm), "%s", comm);
	see_container(pid, p->comm, 0, 0);
	/* Its I/O from the last round: rates from when it was first seen. */
	const struct window_io *io = io_window_alive(set->io, pid);

	if (io && !strcmp(io->comm, p->comm)) {
		p->io_known = true;
		p->start_time = io->start_time;
		p->io_first = p->io_last = io->total;
		p->io_first_ns = p->io_last_ns = set->io->round_ns;
	} else {
		p->io_pending = true; /* born since, most likely: all it did is in its next round */
	}
	return p;
}

static void direct_add(struct direct_process *p, size_t file, int fd, unsigned flags)
{
	unsigned k;

	if (p->first_fd < 0 && fd >= 0) {
		p->first_fd = fd;
		p->first_flags = flags;
	}
	for (k = 0; k < p->nfiles && p->files[k] != file; k++)
		;
	if (k == p->nfiles && p->nfiles < DIRECT_FILES)
		p->files[p->nfiles++] = file;
}

/* Neither this process nor its probes ("iolens-probe", which never open O_DIRECT) are reported. */
static bool direct_ours(pid_t pid, const char *comm)
{
	return pid == getpid() || !strcmp(comm, BOUNDED_MARK_NAME);
}

/*
 * A file the process has open at fd, taken when fdinfo says O_DIRECT and the fd is a regular file
 * or a block device; *p is the process's entry, made at its first such file. False when the
 * process is iolens's own (its other fds need no look).
 */
static bool direct_scan_fd(struct direct_set *set, pid_t pid, int fd, struct direct_process **p)
{
	char link[4300], target[512], comm[32] = "";
	struct fdinfo info;
	struct statx st;
	ssize_t length;
	bool block;

	if (fdinfo_read(pid, fd, &info) != 0 || !(info.flags & O_DIRECT) ||
	    !sysroot_path(link, sizeof(link), "/proc/%d/fd/%d", (int)pid, fd))
		return true;
	/* The attributes the kernel has: asking a hung FUSE or NFS server would never return. */
	if (statx(AT_FDCWD, link, AT_STATX_DONT_SYNC, STATX_TYPE | STATX_INO, &st) != 0 ||
	    !(S_ISREG(st.stx_mode) || S_ISBLK(st.stx_mode)))
		return true;
	if (!*p) {
		if (!proc_comm_read(pid, comm, sizeof(comm)) || direct_ours(pid, comm))
			return false;
		*p = direct_process(set, pid, comm, "fdinfo");
	}
	length = readlink(link, target, sizeof(target) - 1);
	target[length > 0 ? length : 0] = '\0';
	block = S_ISBLK(st.stx_mode);
	direct_add(*p, direct_file(set, block ? makedev(st.stx_rdev_major, st.stx_rdev_minor)
				       : makedev(st.stx_dev_major, st.stx_dev_minor),
				  block ? 0 : st.stx_ino, block, target, link),
		   fd, info.flags);
	return true;
}

/*
 * The files processes have open with O_DIRECT, as their fdinfo says: the fds that eBPF's
 * iterator lists (one read), else every fd of every process.
 */
static void direct_scan_fdinfo(struct direct_set *set, bool iterator)
{
	struct task_iter_fd *fds;
	struct proc_pids pids;
	size_t n;
	pid_t pid;

	if (iterator && task_iter_direct_fds(&fds, &n) == 0) {
		struct direct_process *p = NULL;
		pid_t ours = getpid(); /* and a process found iolens's own: its other fds passed over */

		for (size_t i = 0; i < n; i++) {
			if (i && fds[i].pid != fds[i - 1].pid)
				p = NULL;
			if (fds[i].pid != ours && !direct_scan_fd(set, fds[i].pid, fds[i].fd, &p))
				ours = fds[i].pid;
		}
		free(fds);
		return;
	}
	proc_pids_open(&pids, PROC_PIDS_NOT_SELF);
	while ((pid = proc_pids_next(&pids))) {
		struct direct_process *p = NULL;
		char dir_path[4200];
		struct dirent *fd_entry;
		DIR *fds_dir;

		if (!sysroot_path(dir_path, sizeof(dir_path), "/proc/%d/fd", (int)pid) ||
		    !(fds_dir = opendir(dir_path)))
			continue;
		while ((fd_entry = readdir(fds_dir)))
			if (fd_entry->d_name[0] != '.' &&
			    !direct_scan_fd(set, pid, (int)strtol(fd_entry->d_name, NULL, 10), &p))
				break;
		closedir(fds_dir);
	}
	proc_pids_close(&pids);
}

/* Whether /proc/PID/fd/FD is still the file opened (same device and inode). */
static bool fd_is(pid_t pid, int fd, const struct odirect_open *open, char *link, size_t size)
{
	struct statx st;

	snprintf(link, size, "/proc/%d/fd/%d", (int)pid, fd);
	if (fd < 0 || statx(AT_FDCWD, link, AT_STATX_DONT_SYNC, STATX_TYPE | STATX_INO, &st) != 0)
		return false;
	if (open->block)
		return S_ISBLK(st.stx_mode) && makedev(st.stx_rdev_major, st.stx_rdev_minor) == open->dev;
	return S_ISREG(st.stx_mode) && makedev(st.stx_dev_major, st.stx_dev_minor) == open->dev &&
	    st.stx_ino == open->ino;
}

/*
 * An O_DIRECT open eBPF saw, a moment ago: named from its descriptor while it is open, else
 * from the path it passed (a relative one joined to the directory it was relative to, while
 * the process lives); its cache probed through either, as the same file.
 */
static void direct_seen_open(const struct odirect_open *open, void *context)
{
	struct direct_set *set = context;
	struct direct_process *p;
	char comm[32], link[64], base[512] = "", path[768];
	const char *probe_path = NULL;
	ssize_t length;

	if (!proc_comm_read(open->pid, comm, sizeof(comm)))
		snprintf(comm, sizeof(comm), "%s", open->comm); /* gone already: its thread's name */
	if (direct_ours(open->pid, comm))
		return;
	p = direct_process(set, open->pid, comm, "ebpf");
	if (!p->call) {
		p->call = open->call;
		if (!strcmp(p->seen_by, "ebpf"))
			p->first_ns = open->ns;
	}
	if (fd_is(open->pid, open->fd, open, link, sizeof(link)) &&
	    (length = readlink(link, path, sizeof(path) - 1)) > 0) {
		path[length] = '\0';
		probe_path = link; /* else path, as the same file (probe_cache checks) */
	} else if (open->path[0] && !open->name_only) {
		if (open->path[0] != '/') {
			if (open->dirfd == AT_FDCWD)
				snprintf(link, sizeof(link), "/proc/%d/cwd", (int)open->pid);
			else
				snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)open->pid, open->dirfd);
			length = readlink(link, base, sizeof(base) - 1);
			base[length > 0 ? length : 0] = '\0';
		}
		length = (ssize_t)strlen(base);
		snprintf(path, sizeof(path), "%s%s%s", base, length && base[length - 1] != '/' ? "/" : "", open->path);
		if (path[0] == '/') /* probed as the same file only (probe_cache checks) */
			probe_path = path;
	} else { /* fcntl on a descriptor closed since: the file's name, its inode and device */
		snprintf(path, sizeof(path), "%s%sinode %llu on %u:%u%s", open->path, open->path[0] ? " (" : "",
			 (unsigned long long)open->ino, major(open->dev), minor(open->dev), open->path[0] ? ")" : "");
	}
	direct_add(p, direct_file(set, open->dev, open->ino, open->block, path, probe_path), open->fd, open->flags);
}

/*
 * Each process's I/O as of the last round, while it lives (the same command under its pid): its
 * rates stop where it ended.
 */
static void direct_refresh_io(struct direct_set *set)
{
	for (size_t i = 0; i < set->count; i++) {
		struct direct_process *p = &set->procs[i];
		const struct window_io *io = io_window_alive(set->io, p->pid);

		if (p->ended)
			continue;
		if (p->io_pending && io && !strcmp(io->comm, p->comm)) {
			p->io_pending = false;
			p->io_known = true;
			p->start_time = io->start_time;
			p->io_first = (struct window_counts){0}; /* its counts from its first round */
			p->io_first_ns = io->from_ns;
		}
		if (!io || strcmp(io->comm, p->comm) || (p->io_known && io->start_time != p->start_time)) {
			p->ended = true;
			continue;
		}
		p->io_last = io->total;
		p->io_last_ns = set->io->round_ns;
	}
}

static void direct_free(struct direct_set *set)
{
	free(set->procs);
	free(set->files);
	*set = (struct direct_set){0};
}

/* ---- The window: samples at its ends, and every quarter second in between ------------------ */

#define SAMPLE_NS 250000000ull /* at most this often; less when a scan of every thread takes more than a tenth of it */
#define RECORDER_SAMPLE_NS 1000000000ull /* a recorder's, window after window (doctor_capture_keep) */
#define QUIET_SAMPLE_NS 3000000000ull    /* ... while nothing is in D or near a limit (sample_quiet) */
static uint64_t sample_ns = SAMPLE_NS;

/* doctor_capture_keep's: the programs stay loaded between windows; loaded is true once they are. */
static bool keep_programs, programs_loaded;

/* A thread seen in uninterruptible sleep (D). */
struct task_watch {
	pid_t pid, tid;
	char comm[16], wchan[64];
	unsigned first, last, samples;  /* sample indexes: first and last seen in D, and how many */
	uint64_t first_ns, last_ns;
	uint64_t switches_first, switches_last;
	bool switches_known;
	unsigned throttled;             /* samples where it waited in balance_dirty_pages */
};

/* A process's I/O counters at the start of the window. */

/* A process's I/O over the window. */
struct io_rate {
	pid_t pid;
	char comm[32];
	double read_rate, write_rate, rchar_rate; /* bytes per second */
};

struct watch {
	uint64_t start_ns, sample_ns;
	uint64_t called_ns;             /* when the window was asked for: start_ns, or after it when carried */
	uint64_t interval_ns;           /* between samples: sample_ns, or ten times a scan that took longer */
	unsigned samples;               /* taken so far; the index of the next */
	unsigned walks;                 /* samples that walked the threads (or those in D alone) */
	unsigned in_d;                  /* threads in D at the last sample that walked */
	bool exits_lost;                /* an end eBPF had no room for: every sample walks from then on */
	bool carried;                   /* begun where the last window ended, whose end walked every thread */
	int handed;                     /* cache hand-overs added up at the last sample */
	struct vmstat vm_start, vm_end;
	struct meminfo mem_end;
	bool vm_known, mem_known;
	struct diskstats disk_start, disk_mid, disk_end;
	bool mid_known;
	uint64_t disk_start_ns, disk_mid_ns, disk_end_ns; /* when each diskstats sample was read */
	struct psi io_start, io_end, memory_start, memory_end;
	uint64_t dirty_peak, writeback_peak, thresh, bg_thresh; /* pages, at the peak of dirty + writeback */
	unsigned writeback_samples;     /* samples with pages under writeback */
	struct task_watch *tasks;
	size_t ntasks;
	struct io_window io;            /* every process's I/O */
	struct io_rate *rates;          /* busiest first */
	size_t nrates;
	struct segment_set vtrace; /* libvtrace servers, proven theirs */
	struct direct_set direct;       /* processes doing I/O with O_DIRECT */
	bool bpf;                       /* per-process cache counts from eBPF */
	const char *bpf_why;
	bool task_iter;                 /* threads and processes' I/O from eBPF's task iterator, not /proc */
	bool bio, bio_mid_known;        /* block requests timed by eBPF; its disks read at the middle too */
	const char *bio_why;
	struct bio_disks bio_start, bio_mid, bio_end;
	struct bio_table bio_procs_start, bio_procs_end;
	struct bio_unended_set bio_unended; /* at the end, read right after bio_procs_end */
	uint64_t bio_procs_start_ns;        /* CLOCK_MONOTONIC as bio_procs_start was read (before the window) */
	uint64_t bio_procs_end_ns;          /* ... and bio_procs_end (a recorder's next window's start) */
};

/*
 * A recorder's windows follow one another (doctor_capture_keep): the counters one window ends
 * with are those the next begins with, not read again a moment later, and nothing between two
 * windows is left out (the cache and block counts, the processes' I/O, the pressure).
 */
static struct carry {
	bool valid;
	uint64_t end_ns;                 /* when the disks were read at the end: the next start */
	struct vmstat vm;
	bool vm_known;
	struct psi io, memory;
	struct diskstats disk;
	bool bio;                        /* the block counts below were read */
	struct bio_disks bio_disks;
	struct bio_table bio_procs;
	uint64_t bio_procs_ns;
	struct proc_io_rounds rounds;    /* the last round of every process's I/O */
	uint64_t round_ns;
	pid_t *probes;                   /* iolens's probes holding marks, after the mounts' probes */
	size_t nprobes;
	bool probes_known;
} carry;

static void carry_free(void)
{
	diskstats_free(&carry.disk);
	bio_disks_free(&carry.bio_disks);
	bio_table_free(&carry.bio_procs);
	proc_io_rounds_free(&carry.rounds);
	free(carry.probes);
	carry = (struct carry){0};
}

static int compare_rate(const void *a_, const void *b_)
{
	const struct io_rate *a = a_, *b = b_;
	double x = a->read_rate + a->write_rate, y = b->read_rate + b->write_rate;

	return (y > x) - (y < x);
}

/* Each process's storage I/O over the window, busiest first (those that did some). */
static void compute_io_rates(struct watch *w, double seconds)
{
	for (size_t i = 0; i < w->io.count && seconds > 0; i++) {
		const struct window_io *p = &w->io.procs[i];
		struct io_rate r = { .pid = p->pid, .read_rate = (double)p->total.read_bytes / seconds,
				     .write_rate = (double)p->total.write_bytes / seconds,
				     .rchar_rate = (double)p->total.rchar / seconds };

		if (r.read_rate + r.write_rate + r.rchar_rate <= 0)
			continue;
		snprintf(r.comm, sizeof(r.comm), "%s", p->comm);
		w->rates = xrealloc(w->rates, (w->nrates + 1) * sizeof(*w->rates));
		w->rates[w->nrates++] = r;
	}
	if (w->nrates > 1)
		qsort(w->rates, w->nrates, sizeof(*w->rates), compare_rate);
	for (size_t i = 0; i < w->nrates && i < 10; i++) /* the busiest, which the rules may name */
		see_container(w->rates[i].pid, w->rates[i].comm, 0, 0);
}

static void watch_task(pid_t pid, const struct proc_task *task, void *context)
{
	struct watch *w = context;
	struct task_watch *t = NULL;

	if (task->state != 'D')
		return;
	w->in_d++;
	for (size_t i = 0; i < w->ntasks && !t; i++)
		if (w->tasks[i].tid == task->pid && w->tasks[i].pid == pid)
			t = &w->tasks[i];
	if (!t) {
		w->tasks = xrealloc(w->tasks, (w->ntasks + 1) * sizeof(*w->tasks));
		t = &w->tasks[w->ntasks++];
		*t = (struct task_watch){ .pid = pid, .tid = task->pid, .first = w->samples, .first_ns = w->sample_ns };
		snprintf(t->comm, sizeof(t->comm), "%s", task->comm);
		t->switches_known = task_switches(pid, task->pid, &t->switches_first) == 0;
		see_container(pid, t->comm, 0, 0);
	}
	t->last = w->samples;
	t->last_ns = w->sample_ns;
	t->samples++;
	if (t->switches_known && task_switches(pid, task->pid, &t->switches_last) != 0)
		t->switches_known = false;
	task_wchan(pid, task->pid, t->wchan, sizeof(t->wchan));
	if (strstr(t->wchan, "balance_dirty_pages"))
		t->throttled++;
}

/*
 * One run of the task iterator, when the watch reads it (of the threads in D alone when
 * only_blocked): false (and /proc from now on) else.
 */
static bool watch_tasks(struct watch *w, struct task_iter *it, bool only_blocked)
{
	if (w->task_iter && (only_blocked ? task_iter_read_blocked(it) : task_iter_read(it)) != 0)
		w->task_iter = false;
	return w->task_iter;
}

/* Whether an O_DIRECT process of the window still lives: its rates go by the rounds it is in. */
static bool direct_live(const struct direct_set *set)
{
	for (size_t i = 0; i < set->count; i++)
		if (!set->procs[i].ended)
			return true;
	return false;
}

/* Whether a sample that walks takes a round of every process's I/O too (see sample_walks). */
static bool sample_rounds(const struct watch *w)
{
	return (!w->samples && !w->carried) || !w->task_iter || w->exits_lost || direct_live(&w->direct);
}

/*
 * Whether a sample walks every thread (and takes a round of every process's I/O). The window's
 * first and last always do, but for the first of a window begun where the last one ended: that
 * one's end walked, and its round is this window's first. Between them, with the task iterator, a
 * round is needed only for an O_DIRECT process's rates or when eBPF lost an end (a process's
 * counts to its end come with it, not from the rounds it was in), and the threads only when some
 * are in D: none in D at the last walk and none now (a count that costs a system call) is none to
 * watch. A walk for the threads in D alone has the iterator write their rows only, and takes no
 * round (the ends it reads wait in the rounds for the next one).
 */
static bool sample_walks(const struct watch *w, bool rounds, long blocked)
{
	return rounds || w->in_d || blocked != 0; /* (-errno: not known, walked) */
}

/* Whether dirty + writeback pages make a new peak of the window (the first sample always does). */
static bool new_peak(const struct watch *w, int64_t dirty, int64_t writeback)
{
	return !w->samples || dirty + writeback > (int64_t)(w->dirty_peak + w->writeback_peak);
}

/*
 * The pages dirty and under writeback at a sample, their peak kept with the dirty limits as they
 * were then. Counted by eBPF (the look), /proc/vmstat (which computes the limits as it prints
 * them, from the memory free then) is read only at a peak that nears the limits, where the rule
 * needs them as they were; below, the limits as the window began stand.
 */
static void watch_dirty(struct watch *w, const struct task_iter_look *look)
{
	int64_t dirty = look->dirty, writeback = look->writeback;
	bool peak = new_peak(w, dirty, writeback);
	struct vmstat vm;

	if (dirty >= 0 && !peak) {
		w->writeback_samples += writeback > 0;
		return;
	}
	if (dirty < 0 || !w->thresh || (uint64_t)(dirty + writeback) >= (w->thresh + w->bg_thresh) / 4) {
		if (vmstat_read(&vm) != 0 || vm.nr_dirty == PROCFS_UNKNOWN || vm.nr_writeback == PROCFS_UNKNOWN)
			return;
		dirty = (int64_t)vm.nr_dirty;
		writeback = (int64_t)vm.nr_writeback;
		peak = new_peak(w, dirty, writeback);
		if (peak && vm.nr_dirty_threshold != PROCFS_UNKNOWN) {
			w->thresh = vm.nr_dirty_threshold;
			w->bg_thresh = vm.nr_dirty_background_threshold;
		}
	}
	w->writeback_samples += writeback > 0;
	if (peak) {
		w->dirty_peak = (uint64_t)dirty;
		w->writeback_peak = (uint64_t)writeback;
	}
}

/*
 * Whether a recorder's window is quiet enough to be sampled less often, after a sample: no thread
 * in D (counted by the look, each one a rule may judge stuck or throttled), no round wanted (an
 * O_DIRECT process's rates, an end lost, no iterator: sample_rounds), the pages dirty and under
 * writeback known to be far from their limits (below where watch_dirty reads them), and few cache
 * hand-overs since the last sample (the buffer they wait in holds some 130,000: a reader going
 * through many files fills it in a few seconds). The next sample that sees any of these is a
 * second away.
 */
#define QUIET_HANDOVERS 10000
static bool sample_quiet(const struct watch *w, const struct task_iter_look *look)
{
	return look->blocked == 0 && !w->in_d && !sample_rounds(w) && w->handed < QUIET_HANDOVERS &&
	       look->dirty >= 0 && w->thresh &&
	       (uint64_t)(look->dirty + look->writeback) < (w->thresh + w->bg_thresh) / 4;
}

static void watch_sample(struct watch *w)
{
	uint64_t probe_ns = w->direct.probe_ns, lost;
	struct task_iter_look look;
	struct task_iter it;
	bool iter = false, walks, rounds;

	w->sample_ns = monotonic_ns();
	if (task_iter_look(&look) != 0)
		look.blocked = -ENOSYS; /* (and no pages) */
	/*
	 * Files open O_DIRECT at the start, and at every sample when eBPF does not see the opens or
	 * lost some (its ring buffer full): those still open are found. A process found before its
	 * first round in the window counts from its last one (the window's first, or the last one's end).
	 */
	lost = odirect_lost(); /* (before the scan: what is lost during it is looked for at the next) */
	if (!w->samples || (!w->direct.ebpf && !w->direct.off) || (w->direct.ebpf && lost != w->direct.lost))
		direct_scan_fdinfo(&w->direct, w->task_iter);
	w->direct.lost = lost;
	odirect_drain();
	rounds = sample_rounds(w);
	if ((walks = sample_walks(w, rounds, look.blocked))) {
		iter = watch_tasks(w, &it, !rounds);
		rounds = rounds || !iter; /* (/proc's walk, without the iterator, is a round) */
		if (rounds)
			io_window_round(&w->io, iter ? &it : NULL);
		else
			proc_io_rounds_exits(&w->io.rounds, it.exits, it.nexits);
		w->exits_lost = w->exits_lost || (iter && it.exits_lost);
		w->walks++;
		w->in_d = 0;
	}
	if (w->bpf) /* what threads handed over, added up now: a long window's would not all fit */
		w->handed = cachestat_drain();
	/* By this sample's round: one not walked holds none (a process found now waits for the next). */
	if (rounds)
		direct_refresh_io(&w->direct);
	watch_dirty(w, &look);
	if (iter) {
		for (size_t i = 0; i < it.nthreads; i++)
			watch_task(it.threads[i].pid, &it.threads[i].task, w);
		task_iter_free(&it);
	} else if (walks) {
		tasks_scan(watch_task, w);
	}
	w->samples++;
	/* Thousands of threads take a while to read: the doctor takes no more than a tenth of a CPU. */
	/* (waiting for a probe of a file's cache, in a child, is no work of ours) */
	w->interval_ns = 10 * (monotonic_ns() - w->sample_ns - (w->direct.probe_ns - probe_ns));
	if (w->interval_ns < sample_ns)
		w->interval_ns = sample_ns;
	if (keep_programs && w->interval_ns < QUIET_SAMPLE_NS && sample_quiet(w, &look))
		w->interval_ns = QUIET_SAMPLE_NS;
}

static void mtab_free(void);

void doctor_capture_keep(bool keep)
{
	keep_programs = keep;
	sample_ns = keep ? RECORDER_SAMPLE_NS : SAMPLE_NS;
	bounded_prober_keep(keep); /* the mounts' probes of every window, by one child */
	if (!keep) {
		carry_free();
		mtab_free();
		container_cache_free();
	}
	if (!keep && programs_loaded) {
		cachestat_stop();
		odirect_stop();
		bio_stop();
		task_iter_stop();
		programs_loaded = false;
	}
}

/* What takes long to set up, before the window: the eBPF programs, the segments. */
static void watch_prepare(struct watch *w, const char *marks, bool direct_off)
{
	static const struct cachestat_options counting = { .per_process = true, .per_file = true };

	w->bpf = cachestat_start(&counting, &w->bpf_why) == 0;
	/* What was counted since the last window's end: this window's when it follows it, else gone. */
	if (w->bpf && programs_loaded && !carry.valid)
		w->bpf = cachestat_take(NULL, NULL, NULL, NULL) == 0;
	w->bio = bio_start(BIO_WANT_PROCESSES | BIO_WANT_DISKS, &w->bio_why) == 0;
	/*
	 * The processes' block counts the window's are taken from, read before the O_DIRECT watch
	 * starts: a process whose open it sees has all its requests since in the window. Read with the
	 * window's other counters, after the watch, they could hold the first reads of a reader started
	 * as the watch attached (a test's dd), and take them from its count.
	 */
	w->bio_procs_start_ns = monotonic_ns();
	if (w->bio && carry.valid && carry.bio) { /* read at the last window's end */
		w->bio_procs_start = carry.bio_procs;
		w->bio_procs_start_ns = carry.bio_procs_ns;
		carry.bio_procs = (struct bio_table){0};
	} else if (w->bio && bio_read(&w->bio_procs_start) != 0) {
		w->bio = false;
		w->bio_why = "its counts could not be read";
	}
	/* What /proc would say of every thread, in one read: on the live system only. */
	w->task_iter = !strcmp(sysroot_get(), "/") && task_iter_start(&(const char *){ NULL }) == 0;
	w->direct.marks = marks;
	w->direct.io = &w->io;
	w->direct.off = direct_off;
	if (programs_loaded) /* opens before this window: seen by fdinfo if still open; the next is an event */
		odirect_forget();
	w->direct.ebpf = !direct_off && odirect_start(direct_seen_open, &w->direct, &w->direct.why) == 0;
	segment_set_refresh(&w->vtrace);
}

/* The counters at the start of the window, read one after the other. */
static void watch_start(struct watch *w)
{
	bool carried = carry.valid;

	w->carried = carried;
	w->called_ns = monotonic_ns();
	if (carried) { /* the last window's end (see struct carry) */
		w->vm_known = carry.vm_known;
		w->vm_start = carry.vm;
		w->io_start = carry.io;
		w->memory_start = carry.memory;
		w->disk_start = carry.disk;
		carry.disk = (struct diskstats){0};
		w->io.rounds = carry.rounds;
		w->io.round_ns = carry.round_ns;
		carry.rounds = (struct proc_io_rounds){0};
	} else {
		w->vm_known = vmstat_read(&w->vm_start) == 0;
		psi_read("io", &w->io_start);
		psi_read("memory", &w->memory_start);
		if (diskstats_read(&w->disk_start) != 0)
			w->disk_start = (struct diskstats){0};
	}
	if (w->bio && carried && carry.bio) {
		w->bio_start = carry.bio_disks;
		carry.bio_disks = (struct bio_disks){0};
	} else if (w->bio && bio_read_disks(&w->bio_start) != 0) {
		w->bio = false;
		w->bio_why = "its counts could not be read";
	}
	if (carried)
		w->start_ns = carry.end_ns;
	else
		w->start_ns = w->called_ns = monotonic_ns();
	w->disk_start_ns = w->direct.start_ns = w->start_ns;
	if (w->vm_known && w->vm_start.nr_dirty_threshold != PROCFS_UNKNOWN) { /* (see watch_dirty) */
		w->thresh = w->vm_start.nr_dirty_threshold;
		w->bg_thresh = w->vm_start.nr_dirty_background_threshold;
	}
	carry_free(); /* what is left of it: nothing taken (its block counts when this window has none) */
	watch_sample(w);
}

/*
 * The processes' block counts and the requests not seen ending, at the end: one whose end the
 * kernel ran no program for, charged as its address starts another between the two reads, would
 * be in neither. The program counts such charges (completions_unseen): read again, a few times at
 * most, until none fell during the reads. The requests not seen ending are of the O_DIRECT
 * readers' (snap_direct_bio): without one, not looked for (a walk of all the places a request
 * can be, 1 MiB). 0 or -errno.
 */
static int read_procs_and_unended(struct watch *w)
{
	if (!w->direct.count) {
		bio_table_free(&w->bio_procs_end);
		bio_unended_free(&w->bio_unended);
		return bio_read(&w->bio_procs_end);
	}
	for (int tries = 0; tries < 5; tries++) {
		uint64_t charged = bio_unseen_completions();
		int rc;

		bio_table_free(&w->bio_procs_end);
		bio_unended_free(&w->bio_unended);
		if ((rc = bio_read(&w->bio_procs_end)) != 0 || (rc = bio_read_unended(&w->bio_unended)) != 0)
			return rc;
		if (bio_unseen_completions() == charged)
			break;
	}
	return 0;
}

static doctor_end_fn end_with;
static void *end_context;

void doctor_capture_end_with(doctor_end_fn fn, void *context)
{
	end_with = fn;
	end_context = context;
}

/* Samples until seconds have passed (or a signal came): the seconds it watched. */
static double watch_run(struct watch *w, double seconds)
{
	/* (a recorder's window counts from the last one's end, and lasts its seconds from its call) */
	uint64_t end_ns = w->called_ns + (uint64_t)(seconds * 1e9), mid_ns = w->start_ns + (end_ns - w->start_ns) / 2;
	const struct system_sample *ended = NULL;
	struct task_iter it;
	bool iter;
	double watched;

	while (!stop_signal && monotonic_ns() < end_ns) {
		uint64_t next = w->sample_ns + w->interval_ns;

		if (!w->mid_known && mid_ns > w->start_ns && next > mid_ns)
			next = mid_ns; /* the middle, on time even when samples are far apart */
		odirect_wait(next < end_ns ? next : end_ns, &stop_signal); /* O_DIRECT opens seen meanwhile */
		if (!w->mid_known && mid_ns > w->start_ns && monotonic_ns() >= mid_ns) {
			w->mid_known = diskstats_read(&w->disk_mid) == 0;
			w->bio_mid_known = w->bio && bio_read_disks(&w->bio_mid) == 0;
			w->disk_mid_ns = monotonic_ns();
		}
		if (!stop_signal && (monotonic_ns() >= next || monotonic_ns() >= end_ns))
			watch_sample(w); /* and one at the end */
	}
	iter = watch_tasks(w, &it, false);
	io_window_round(&w->io, iter ? &it : NULL);
	if (iter)
		task_iter_free(&it);
	odirect_drain();
	direct_refresh_io(&w->direct);
	if (end_with) /* (a recorder's system frame, read now: see doctor_capture_end_with) */
		ended = end_with(end_context);
	if (ended && (ended->have & SYS_DISKSTATS))
		diskstats_copy(&w->disk_end, &ended->disks);
	else if (diskstats_read(&w->disk_end) != 0)
		w->disk_end = (struct diskstats){0};
	w->bio_procs_end_ns = monotonic_ns();
	if (w->bio && (bio_read_disks(&w->bio_end) != 0 || read_procs_and_unended(w) != 0)) {
		w->bio = false;
		w->bio_why = "its counts could not be read";
	}
	w->disk_end_ns = monotonic_ns();
	if (ended && (ended->have & SYS_PSI)) {
		w->io_end = ended->psi_io;
		w->memory_end = ended->psi_memory;
	} else {
		psi_read("io", &w->io_end);
		psi_read("memory", &w->memory_end);
	}
	if (ended && (ended->have & SYS_VMSTAT))
		w->vm_end = ended->vmstat;
	else
		w->vm_known = w->vm_known && vmstat_read(&w->vm_end) == 0;
	watched = (double)(monotonic_ns() - w->start_ns) / 1e9;
	if (ended && (ended->have & SYS_MEMINFO))
		w->mem_end = ended->meminfo, w->mem_known = true;
	else
		w->mem_known = meminfo_read(&w->mem_end) == 0;
	compute_io_rates(w, watched);
	/* A server that died in the window left its requests in flight, not a hang: it goes. */
	segment_set_refresh(&w->vtrace);
	return watched;
}

/* A recorder's window's end counters, kept as the next window's start (see struct carry). */
static void carry_end(struct watch *w)
{
	carry_free();
	carry = (struct carry){ .valid = true, .end_ns = w->disk_end_ns, .vm = w->vm_end, .vm_known = w->vm_known,
				.io = w->io_end, .memory = w->memory_end, .disk = w->disk_end, .bio = w->bio,
				.rounds = w->io.rounds, .round_ns = w->io.round_ns };
	w->disk_end = (struct diskstats){0};
	w->io.rounds = (struct proc_io_rounds){0};
	if (w->bio) {
		/* (a window of many short processes would leave the next ones a full table to read) */
		bio_forget_ended(&w->bio_procs_end, &w->bio_unended);
		carry.bio_disks = w->bio_end;
		carry.bio_procs = w->bio_procs_end;
		carry.bio_procs_ns = w->bio_procs_end_ns;
		w->bio_end = (struct bio_disks){0};
		w->bio_procs_end = (struct bio_table){0};
	}
}

static void watch_free(struct watch *w)
{
	programs_loaded = keep_programs;
	if (keep_programs && !stop_signal)
		carry_end(w);
	if (!keep_programs) {
		cachestat_stop();
		odirect_stop();
		bio_stop();
		task_iter_stop();
	}
	direct_free(&w->direct);
	diskstats_free(&w->disk_start);
	diskstats_free(&w->disk_mid);
	diskstats_free(&w->disk_end);
	bio_disks_free(&w->bio_start);
	bio_disks_free(&w->bio_mid);
	bio_disks_free(&w->bio_end);
	bio_table_free(&w->bio_procs_start);
	bio_table_free(&w->bio_procs_end);
	bio_unended_free(&w->bio_unended);
	segment_set_free(&w->vtrace);
	free(w->tasks);
	io_window_free(&w->io);
	free(w->rates);
}
/* ---- The snapshot: what the rules judge, as plain values ---------------------------------- */

static void snap_direct(struct doctor_snapshot *s, const struct direct_set *set)
{
	s->odirect_ebpf = set->ebpf;
	s->direct_files = xcalloc(set->nfiles ? set->nfiles : 1, sizeof(*s->direct_files));
	for (size_t i = 0; i < set->nfiles; i++) {
		const struct direct_file *file = &set->files[i];
		struct snap_direct_file *out = &s->direct_files[i];

		*out = (struct snap_direct_file){ .major = major(file->dev),
						  .minor = minor(file->dev),
						  .ino = file->ino,
						  .block = file->block,
						  .cache_known = file->cache_known,
						  .cached_pages = file->cached_pages,
						  .file_pages = file->file_pages };
		snprintf(out->path, sizeof(out->path), "%s", file->path);
	}
	s->ndirect_files = set->nfiles;
	s->direct = xcalloc(set->count ? set->count : 1, sizeof(*s->direct));
	for (size_t i = 0; i < set->count; i++) {
		const struct direct_process *p = &set->procs[i];
		struct snap_direct_process *out = &s->direct[i];
		*out = (struct snap_direct_process){ .pid = p->pid, .nfiles = p->nfiles, .first_fd = p->first_fd,
						     .first_flags = p->first_flags, .ended = p->ended };
		snprintf(out->comm, sizeof(out->comm), "%s", p->comm);
		snprintf(out->seen_by, sizeof(out->seen_by), "%s", p->seen_by);
		snprintf(out->call, sizeof(out->call), "%s", p->call ? p->call : "");
		out->first_seen_seconds = p->first_ns > set->start_ns ? (double)(p->first_ns - set->start_ns) / 1e9 : 0;
		out->rate_seconds = (double)(p->io_last_ns - p->io_first_ns) / 1e9;
		/* one process: refresh_io saw to it; its counts only grow */
		out->io_known = p->io_known;
		if (out->io_known) {
			out->read_bytes = p->io_last.read_bytes - p->io_first.read_bytes;
			out->write_bytes = p->io_last.write_bytes - p->io_first.write_bytes;
		}
		for (unsigned k = 0; k < p->nfiles; k++) {
			const struct direct_file *file = &set->files[p->files[k]];

			out->files[k] = p->files[k];
			out->opens[k] = odirect_opens(p->pid, file->dev, file->ino);
		}
	}
	s->ndirect = set->count;
}

/*
 * Each O_DIRECT process's block requests over the window, as eBPF counted them (by pid and
 * command, every disk): a process that lived a few milliseconds has all of them, where
 * /proc/PID/io may never have been read while it lived.
 */
static uint64_t counter_delta(uint64_t before, uint64_t after)
{
	return after > before ? after - before : 0;
}

static void snap_direct_bio(struct doctor_snapshot *s, const struct watch *w)
{
	const struct bio_table *end = &w->bio_procs_end;

	for (size_t i = 0; i < s->ndirect; i++) {
		struct snap_direct_process *d = &s->direct[i];

		d->bio_known = true;
		for (unsigned k = 0; k < end->count; k++) {
			const struct bio_process *p = &end->process[k], *then;
			char name[sizeof(p->name) + 1];

			if (p->pid != d->pid)
				continue;
			memcpy(name, p->name, sizeof(p->name));
			name[sizeof(p->name)] = '\0';
			if (strncmp(name, d->comm, sizeof(p->name) - 1))
				continue; /* the pid of another command */
			then = bio_table_find(&w->bio_procs_start, p);
			d->bio_read_requests +=
			    counter_delta(then ? then->requests[BIO_READ] : 0, p->requests[BIO_READ]);
			d->bio_read_bytes += counter_delta(then ? then->bytes[BIO_READ] : 0, p->bytes[BIO_READ]);
			d->bio_write_requests +=
			    counter_delta(then ? then->requests[BIO_WRITE] : 0, p->requests[BIO_WRITE]);
			d->bio_write_bytes += counter_delta(then ? then->bytes[BIO_WRITE] : 0, p->bytes[BIO_WRITE]);
		}
		/*
		 * Its requests issued since its counts began (or not yet) that no program saw end
		 * by the window's end.
		 */
		for (size_t k = 0; k < w->bio_unended.count; k++) {
			const struct bio_unended *r = &w->bio_unended.request[k];

			if (r->pid != d->pid || (r->issue_ns && r->issue_ns < w->bio_procs_start_ns))
				continue;
			if (r->op == BIO_READ) {
				d->bio_read_unended_requests++;
				d->bio_read_unended_bytes += r->bytes;
			} else if (r->op == BIO_WRITE) {
				d->bio_write_unended_requests++;
				d->bio_write_unended_bytes += r->bytes;
			}
		}
	}
	s->bio_unattributed_bytes =
	    counter_delta(w->bio_procs_start.unattributed_bytes, w->bio_procs_end.unattributed_bytes);
}

static void snap_psi_of(struct snap_psi *out, const struct psi_line *start, const struct psi_line *end)
{
	*out = (struct snap_psi){ .known = start->present && end->present, .start_us = start->total_us,
				  .end_us = end->total_us };
}

/*
 * A disk's requests completed between two reads of the histograms, reads and writes
 * together: their count and percentiles of each span (total, device, queue).
 */
static void latency_between(const struct bio_disks *a, const struct bio_disks *b, const struct disk_stats *disk,
			    struct snap_latency *out)
{
	static uint64_t histogram[LOG_LINEAR_BUCKETS];
	const struct bio_disk *before = bio_disks_find(a, disk->major, disk->minor);
	const struct bio_disk *after = bio_disks_find(b, disk->major, disk->minor);
	double *p50[BIO_LAT_KINDS] = { &out->p50_ns, &out->device_p50_ns, &out->queue_p50_ns };
	double *p99[BIO_LAT_KINDS] = { &out->p99_ns, &out->device_p99_ns, &out->queue_p99_ns };

	*out = (struct snap_latency){0};
	for (unsigned kind = 0; kind < BIO_LAT_KINDS; kind++) {
		/* The same histograms (shared: their pointers), no request of the kind (most disks): no quantiles. */
		if (!after || (before && !memcmp(before->histogram[kind], after->histogram[kind],
						 sizeof(after->histogram[kind]))))
			continue;
		for (unsigned bucket = 0; bucket < LOG_LINEAR_BUCKETS; bucket++) {
			histogram[bucket] = 0;
			for (unsigned op = BIO_LAT_READ; op <= BIO_LAT_WRITE; op++) {
				uint64_t then = before ? before->histogram[kind][op][bucket] : 0;
				uint64_t now = after ? after->histogram[kind][op][bucket] : 0;
				histogram[bucket] += now > then ? now - then : 0;
			}
		}
		if (kind == BIO_LAT_TOTAL)
			out->count = bio_histogram_count(histogram);
		*p50[kind] = (double)vtrace_histogram_quantile(histogram, 0.5);
		*p99[kind] = (double)vtrace_histogram_quantile(histogram, 0.99);
	}
}

/* The disk's saved capacity (in dir): its QD1 latencies and the window's share of it. */
static void snap_capacity(struct snap_disk *disk, double seconds, const char *dir)
{
	struct bench_result_doc *capacity = xcalloc(1, sizeof(*capacity));
	const struct bench_case *read, *write;
	struct capacity_demand load;
	struct disk_ext x;
	char why[512];

	if (!capacity_none_saved(dir) &&
	    capacity_load(dir, makedev(disk->end.major, disk->end.minor), capacity, NULL, 0, why, sizeof(why)) == 0) {
		disk_ext_compute(&disk->start, &disk->end, seconds, &x);
		load = (struct capacity_demand){ .iops = { x.r_s, x.w_s },
						 .bytes_per_s = { x.rkb_s * 1024, x.wkb_s * 1024 },
						 .size = { x.rareq_sz * 1024, x.wareq_sz * 1024 },
						 .depth = x.aqu_sz };
		read = bench_result_find(capacity, "rnd4k_q1t1_read");
		write = bench_result_find(capacity, "rnd4k_q1t1_write");
		disk->capacity_known = true;
		disk->capacity_qd1_read_ns = read && read->lat_p50_ns > 0 ? read->lat_p50_ns : NAN;
		disk->capacity_qd1_write_ns = write && write->lat_p50_ns > 0 ? write->lat_p50_ns : NAN;
		disk->capacity_pct = capacity_share(capacity, &load);
	}
	free(capacity);
}

/* Block requests per process and disk over the window (eBPF), most first; whether each is a kernel thread. */
static int by_requests(const void *a_, const void *b_)
{
	const struct snap_bio_proc *a = a_, *b = b_;

	return a->requests < b->requests ? 1 : a->requests > b->requests ? -1 : 0;
}

static void snap_bio_procs(struct doctor_snapshot *s, const struct watch *w)
{
	const struct bio_table *end = &w->bio_procs_end;

	s->bio_procs = xcalloc(end->count ? end->count : 1, sizeof(*s->bio_procs));
	for (unsigned i = 0; i < end->count; i++) {
		const struct bio_process *p = &end->process[i], *then = bio_table_find(&w->bio_procs_start, p);
		struct snap_bio_proc *out = &s->bio_procs[s->nbio_procs];
		char path[64], text[1024];
		struct proc_task task;
		ssize_t len;

		*out = (struct snap_bio_proc){ .pid = p->pid, .ops_known = true, .op_figures_known = true };
		for (unsigned op = 0; op < BIO_OPS; op++) {
			uint64_t requests = then ? then->requests[op] : 0, bytes = then ? then->bytes[op] : 0;
			uint64_t more = p->requests[op] > requests ? p->requests[op] - requests : 0;
			uint64_t more_bytes = p->bytes[op] > bytes ? p->bytes[op] - bytes : 0;

			out->requests += more;
			out->bytes += more_bytes;
			if (op == BIO_READ) {
				out->read_requests = more;
				out->read_bytes = more_bytes;
			} else if (op == BIO_WRITE) {
				out->write_requests = more;
				out->write_bytes = more_bytes;
			}
		}
		if (!out->requests) /* (most rows: every process that did block I/O since the programs' load) */
			continue;
		for (unsigned op = BIO_READ; op <= BIO_WRITE; op++) { /* each one's latencies, as biotop's rows */
			struct bio_latency_figures figures;
			struct snap_bio_op *o = &out->op[op == BIO_WRITE];

			bio_latency_figures(&p->latency[op], then ? &then->latency[op] : NULL, &figures);
			if (figures.requests) { /* in order: a max raised as they were read is not */
				*o = (struct snap_bio_op){ (double)figures.average_ns, (double)figures.p50_ns,
							   (double)figures.p99_ns, (double)figures.max_ns };
				o->p99_ns = o->p99_ns < o->p50_ns ? o->p50_ns : o->p99_ns;
				o->max_ns = o->max_ns < o->p99_ns ? o->p99_ns : o->max_ns;
				o->max_ns = o->max_ns < o->avg_ns ? o->avg_ns : o->max_ns;
			}
		}
		out->disk_major = p->disk_major;
		out->disk_minor = p->disk_minor;
		{
			struct bio_latency now, before = {0};
			struct bio_latency_figures figures;

			bio_latency_both(p, &now);
			if (then)
				bio_latency_both(then, &before);
			bio_latency_figures(&now, then ? &before : NULL, &figures);
			if (figures.requests) {
				out->p50_ns = (double)figures.p50_ns;
				out->p99_ns = (double)figures.p99_ns;
			}
		}
		memcpy(out->comm, p->name, sizeof(p->name));
		out->comm[sizeof(p->name)] = '\0';
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)p->pid);
		len = sysroot_read_small(path, text, sizeof(text));
		out->kernel =
		    p->pid == 2 || (len > 0 && proc_task_parse(text, (size_t)len, &task) == 0 && task.ppid == 2);
		if (!out->kernel)
			see_container(out->pid, out->comm, p->cgroup, 0);
		s->nbio_procs++;
	}
	/* A row per process and disk, a process's together (the table's order): which used several disks. */
	for (size_t i = 0; i < s->nbio_procs; i++)
		s->bio_procs[i].several_disks = (i > 0 && s->bio_procs[i - 1].pid == s->bio_procs[i].pid) ||
		    (i + 1 < s->nbio_procs && s->bio_procs[i + 1].pid == s->bio_procs[i].pid);
	qsort(s->bio_procs, s->nbio_procs, sizeof(*s->bio_procs), by_requests);
}

/*
 * A disk that did nothing in the window and had nothing in flight at any sample (nor any request
 * eBPF timed: a queue with iostats off counts none in /proc): no rule has anything to judge of
 * it, and it is left out of the snapshot (a machine's unused loop devices are dozens: most of a
 * snapshot's lines, and of its cost).
 */
static bool disk_idle(const struct watch *w, const struct disk_stats *start, const struct disk_stats *mid,
		      const struct disk_stats *end)
{
	const size_t from = offsetof(struct disk_stats, rd_ios),
		     span = offsetof(struct disk_stats, fl_ticks) + sizeof(start->fl_ticks) - from;
	const struct bio_disk *a = w->bio ? bio_disks_find(&w->bio_start, end->major, end->minor) : NULL,
			      *b = w->bio ? bio_disks_find(&w->bio_end, end->major, end->minor) : NULL;

	if (start->in_flight || end->in_flight || (mid && mid->in_flight) ||
	    memcmp((const char *)start + from, (const char *)end + from, span))
		return false;
	/* (histograms are shared between reads: equal pointers, equal histograms) */
	return !b || (a && !memcmp(a->histogram[BIO_LAT_TOTAL], b->histogram[BIO_LAT_TOTAL],
				   sizeof(a->histogram[BIO_LAT_TOTAL])));
}

static void snap_window(struct doctor_snapshot *s, const struct watch *w, const char *capacities)
{
	struct swaps swaps;

	s->samples = w->samples;
	s->walks = w->walks;
	s->exits_ebpf = w->task_iter; /* (its rounds took the ends the iterator's ring buffer held) */
	/* Whole disks that sysfs knows, in the samples at both ends. */
	s->disks = xcalloc(w->disk_end.count ? w->disk_end.count : 1, sizeof(*s->disks));
	for (unsigned i = 0; i < w->disk_end.count; i++) {
		const struct disk_stats *after = &w->disk_end.disk[i],
					*before = diskstats_find(&w->disk_start, after->name);
		const struct disk_stats *mid = w->mid_known ? diskstats_find(&w->disk_mid, after->name) : NULL;
		struct snap_disk *disk = &s->disks[s->ndisks];

		if (!before || !w->disk_end.kind[i].in_sysfs || w->disk_end.kind[i].partition ||
		    disk_idle(w, before, mid, after))
			continue;
		*disk = (struct snap_disk){ .start = *before, .end = *after, .mid_known = mid != NULL };
		if (mid)
			disk->mid = *mid;
		if (w->bio) {
			disk->latency_known = true;
			latency_between(&w->bio_start, &w->bio_end, after, &disk->latency);
			if (!w->bio_mid_known)
				disk->mid_known = false; /* halves of the latencies and of diskstats' averages alike */
			if (disk->mid_known) {
				latency_between(&w->bio_start, &w->bio_mid, after, &disk->first);
				latency_between(&w->bio_mid, &w->bio_end, after, &disk->second);
			}
		}
		/* (what only a busy disk is judged by: an idle one's store is not read) */
		if (after->io_ticks != before->io_ticks || after->rd_ios != before->rd_ios ||
		    after->wr_ios != before->wr_ios || after->in_flight)
			snap_capacity(disk, (double)(w->disk_end_ns - w->disk_start_ns) / 1e9, capacities);
		s->ndisks++;
	}
	s->bio_known = w->bio;
	if (w->bio) {
		snprintf(s->bio_mechanism, sizeof(s->bio_mechanism), "%s", bio_mechanism_name(bio_mechanism()));
		snap_bio_procs(s, w);
		snap_direct_bio(s, w);
	}
	s->disk_seconds = (double)(w->disk_end_ns - w->disk_start_ns) / 1e9;
	s->disk_mid_seconds = w->mid_known ? (double)(w->disk_mid_ns - w->disk_start_ns) / 1e9 : 0;
	snap_psi_of(&s->io_some, &w->io_start.some, &w->io_end.some);
	snap_psi_of(&s->io_full, &w->io_start.full, &w->io_end.full);
	snap_psi_of(&s->memory_some, &w->memory_start.some, &w->memory_end.some);
	s->rates = xcalloc(w->nrates ? w->nrates : 1, sizeof(*s->rates));
	for (size_t i = 0; i < w->nrates; i++) {
		s->rates[i] = (struct snap_io_rate){ .pid = w->rates[i].pid, .read_rate = w->rates[i].read_rate,
						     .write_rate = w->rates[i].write_rate,
						     .rchar_rate = w->rates[i].rchar_rate };
		snprintf(s->rates[i].comm, sizeof(s->rates[i].comm), "%s", w->rates[i].comm);
	}
	s->nrates = w->nrates;
	s->vm_known = w->vm_known;
	if (w->vm_known) {
		const struct vmstat *v[2] = { &w->vm_start, &w->vm_end };

		for (int k = 0; k < 2; k++) {
			s->pswpin[k] = v[k]->pswpin;
			s->pswpout[k] = v[k]->pswpout;
			s->pgpgin[k] = v[k]->pgpgin;
			s->pgpgout[k] = v[k]->pgpgout;
			s->refault_file[k] = v[k]->workingset_refault_file;
		}
	}
	s->mem_known = w->mem_known;
	if (w->mem_known) {
		s->mem_total = w->mem_end.mem_total;
		s->mem_available = w->mem_end.mem_available;
		s->cached = w->mem_end.cached;
	}
	if (swaps_read(&swaps) == 0) {
		s->swaps = swaps.count;
		for (unsigned i = 0; i < swaps.count; i++)
			s->swaps_zram += !strncmp(swaps.area[i].name, "/dev/zram", 9);
		swaps_free(&swaps);
	}
	s->dirty_peak = w->dirty_peak;
	s->writeback_peak = w->writeback_peak;
	s->dirty_thresh = w->thresh;
	s->dirty_bg_thresh = w->bg_thresh;
	s->writeback_samples = w->writeback_samples;
	s->tasks = xcalloc(w->ntasks ? w->ntasks : 1, sizeof(*s->tasks));
	for (size_t i = 0; i < w->ntasks; i++) {
		const struct task_watch *t = &w->tasks[i];
		struct snap_task *out = &s->tasks[i];

		*out = (struct snap_task){ .pid = t->pid, .tid = t->tid, .first = t->first, .last = t->last,
					   .samples = t->samples, .stuck_ns = t->last_ns - t->first_ns,
					   .switches_known = t->switches_known, .switches_first = t->switches_first,
					   .switches_last = t->switches_last, .throttled = t->throttled };
		snprintf(out->comm, sizeof(out->comm), "%s", t->comm);
		snprintf(out->wchan, sizeof(out->wchan), "%s", t->wchan);
	}
	s->ntasks = w->ntasks;
}

/* How long op's oldest request of segment had been in flight at its last sample (0: none in flight). */
static uint64_t op_age_ns(const struct segment *segment, unsigned op)
{
	const struct vtrace_stats *now = &segment->current[op];

	return now->oldest_ns && segment->current_ns > now->oldest_ns ? segment->current_ns - now->oldest_ns : 0;
}

static void snap_vtrace(struct doctor_snapshot *s, const struct segment_set *set)
{
	s->vtrace = xcalloc(set->count ? set->count : 1, sizeof(*s->vtrace));
	for (size_t i = 0; i < set->count; i++) {
		const struct segment *segment = set->list[i];
		struct snap_vtrace *out = &s->vtrace[s->nvtrace];

		if (!segment->has_previous)
			continue;
		snprintf(out->service, sizeof(out->service), "%s", segment->info->service);
		snprintf(out->segment, sizeof(out->segment), "%s", segment->path);
		out->pid = segment->pid;
		see_container(out->pid, NULL, 0, 0);
		out->uid_known = true;
		out->uid = segment->info->uid;
		snprintf(out->user, sizeof(out->user), "%s", segment_user_name(segment->info->uid));
		out->nops = segment->info->op_count;
		out->ops = xcalloc(out->nops ? out->nops : 1, sizeof(*out->ops));
		for (unsigned op = 0; op < out->nops; op++) {
			const struct vtrace_stats *now = &segment->current[op], *then = &segment->previous[op];
			struct snap_vtrace_op *o = &out->ops[op];

			snprintf(o->name, sizeof(o->name), "%s", vtrace_reader_op_name(segment->reader, op));
			o->impossible = segment_impossible(segment, op);
			o->begins = now->begins;
			o->completions = now->completions;
			o->service_ns = now->service_ns;
			o->oldest_age_ns = op_age_ns(segment, op);
			o->completions_before = then->completions;
			o->service_ns_before = then->service_ns;
		}
		s->nvtrace++;
	}
}

/* Pages read or mapped, and of those not cached, as eBPF counted them. */
static void counted(const struct cache_counters *c, uint64_t *accesses, uint64_t *misses, uint64_t *refaults)
{
	uint64_t hits = cache_hits(c);

	*accesses = c->reads + c->maps;
	*misses = *accesses > hits ? *accesses - hits : 0;
	*refaults = c->refaults;
}

static void add_memcg(struct doctor_snapshot *s, pid_t pid, uint64_t id, const struct memcg *cgroup)
{
	struct snap_memcg *m;

	s->memcgs = xrealloc(s->memcgs, (s->nmemcgs + 1) * sizeof(*s->memcgs));
	m = &s->memcgs[s->nmemcgs++];
	*m = (struct snap_memcg){ .pid = pid, .id = id, .version = cgroup->version, .max = cgroup->max,
				  .current = cgroup->current, .refaults = cgroup->refaults,
				  .at_limit = memcg_at_limit(cgroup) };
	snprintf(m->path, sizeof(m->path), "%s", cgroup->path);
}

/*
 * The memory cgroup of each reader that will be reported: the one eBPF saw its reads charged to
 * (a shell loop's readers are short-lived, ended by the time the window is over, and a pid read
 * again at the end may be another process's by then), else that of the first of its processes
 * still alive.
 */
static void snap_memcgs(struct doctor_snapshot *s)
{
	struct miss_row *rows;
	size_t nrows = snap_miss_readers(s, &rows), reported = 0;

	for (size_t i = 0; i < nrows && reported < 5; i++) {
		const struct miss_row *r = &rows[i];
		struct memcg cgroup;
		bool found = false;

		if (!snap_miss_matters(s, r))
			continue;
		reported++;
		if (r->memcg && memcg_of_id(r->memcg, &cgroup) == 0) {
			add_memcg(s, 0, r->memcg, &cgroup);
			continue;
		}
		for (unsigned k = 0; k < r->processes && k < 5 && !found; k++)
			if (memcg_of_pid(r->pids[k], &cgroup) == 0) {
				add_memcg(s, r->pids[k], 0, &cgroup);
				found = true;
			}
		if (!found && r->newest && memcg_of_pid(r->newest, &cgroup) == 0)
			add_memcg(s, r->newest, 0, &cgroup);
	}
	free(rows);
}

/*
 * Cgroup ids looked for, found or not, kept from window to window: a look walks the cgroup2
 * tree, and an id is never another cgroup's (a removed one stays not found).
 */
#define CGROUPS_KEPT 256
static struct cgroup_seen {
	uint64_t id;
	bool found;
	char path[512];
} cgroups_seen[CGROUPS_KEPT];
static size_t ncgroups_seen;

static const struct cgroup_seen *cgroup_look(uint64_t id)
{
	struct cgroup_seen *c;

	for (size_t k = 0; k < ncgroups_seen; k++)
		if (cgroups_seen[k].id == id)
			return &cgroups_seen[k];
	if (ncgroups_seen == CGROUPS_KEPT) /* a machine of many: begun again */
		ncgroups_seen = 0;
	c = &cgroups_seen[ncgroups_seen++];
	c->id = id;
	c->found = memcg_path_of_id(memcg_v2_mount(), id, c->path, sizeof(c->path));
	return c;
}

/* The cgroups of the processes that used the page cache, each once, by path (cachetop --at --cgroup). */
static void snap_cgroups(struct doctor_snapshot *s)
{
	for (size_t i = 0; i < s->ncache_procs; i++) {
		uint64_t id = s->cache_procs[i].cgroup;
		const struct cgroup_seen *c;
		bool seen = !id;

		for (size_t k = 0; k < s->ncgroups && !seen; k++)
			seen = s->cgroups[k].id == id;
		if (seen || !(c = cgroup_look(id))->found)
			continue;
		s->cgroups = xrealloc(s->cgroups, (s->ncgroups + 1) * sizeof(*s->cgroups));
		s->cgroups[s->ncgroups].id = id;
		snprintf(s->cgroups[s->ncgroups].path, sizeof(s->cgroups[s->ncgroups].path), "%s", c->path);
		s->ncgroups++;
	}
}

/*
 * The names files were given in earlier windows (a recorder's), by device and inode: hints for
 * the next window's looker, which takes one that is still its file's (a stat) instead of reading
 * every process's files and directories again for the same busy files.
 */
#define NAMES_KEPT 256
static struct kept_name {
	dev_t dev;
	uint64_t ino;
	char *path;
} names_kept[NAMES_KEPT];
static size_t names_next;

static struct kept_name *name_kept(dev_t dev, uint64_t ino)
{
	for (size_t i = 0; i < NAMES_KEPT; i++)
		if (names_kept[i].path && names_kept[i].ino == ino && names_kept[i].dev == dev)
			return &names_kept[i];
	return NULL;
}

static void name_keep(dev_t dev, uint64_t ino, const char *path)
{
	struct kept_name *k = name_kept(dev, ino);

	if (k && !strcmp(k->path, path))
		return;
	if (!k) /* the oldest goes */
		k = &names_kept[names_next++ % NAMES_KEPT];
	free(k->path);
	*k = (struct kept_name){ dev, ino, xstrdup(path) };
}

/* Hints for these files from the names kept (a list to free, its paths the kept ones). */
static const struct inode_name_hint *names_hints(const struct file_id *ids, size_t n, size_t *nhints)
{
	struct inode_name_hint *hints = xcalloc(n ? n : 1, sizeof(*hints));

	*nhints = 0;
	for (size_t i = 0; i < n; i++) {
		const struct kept_name *k = name_kept(ids[i].dev, ids[i].ino);

		if (k)
			hints[(*nhints)++] = (struct inode_name_hint){ k->dev, k->ino, k->path };
	}
	return hints;
}

/*
 * The files a recorder's looker did not name in a window (deleted since, or out of its reach in
 * NAMING_NS): not looked for again for UNFOUND_NS, shown by device and inode meanwhile. Without it
 * a machine that reads and deletes temporary files (a build, CI) had every window read every
 * process's files and walk its disks for the same files again, up to NAMING_NS of a CPU a window.
 * An inode number taken by a new file meanwhile goes unnamed until then.
 */
#define UNFOUND_KEPT 1024
#define UNFOUND_NS (600 * 1000000000ull)
static struct unfound {
	dev_t dev;
	uint64_t ino, until_ns;
} unfound[UNFOUND_KEPT];
static size_t unfound_next;

/* A recorder's file left unnamed lately (a live doctor's never). */
static bool name_unfound(dev_t dev, uint64_t ino, uint64_t now)
{
	for (size_t i = 0; keep_programs && i < UNFOUND_KEPT; i++)
		if (unfound[i].until_ns > now && unfound[i].ino == ino && unfound[i].dev == dev)
			return true;
	return false;
}

static void name_unfound_keep(dev_t dev, uint64_t ino, uint64_t now)
{
	if (keep_programs && !name_unfound(dev, ino, now))
		unfound[unfound_next++ % UNFOUND_KEPT] = (struct unfound){ dev, ino, now + UNFOUND_NS };
}

static void snap_cache(struct doctor_snapshot *s, const struct watch *w)
{
	struct cachestat_proc *procs = NULL;
	struct cachestat_file *files = NULL;
	size_t nprocs = 0, nfiles = 0;

	s->cache_ebpf = w->bpf;
	if (w->bpf && cachestat_mechanism())
		snprintf(s->cache_mechanism, sizeof(s->cache_mechanism), "%s", cachestat_mechanism());
	if (w->bpf && cachestat_take(&procs, &nprocs, &files, &nfiles) == 0) {
		pid_t self = getpid(); /* (a busy machine's window has thousands of rows) */

		s->cache_procs = xcalloc(nprocs ? nprocs : 1, sizeof(*s->cache_procs));
		for (size_t i = 0; i < nprocs; i++) {
			struct snap_cache_proc *p = &s->cache_procs[s->ncache_procs];

			if ((pid_t)procs[i].pid == self)
				continue;
			p->pid = (pid_t)procs[i].pid;
			p->memcg = procs[i].memcg;
			p->cgroup = procs[i].cgroup;
			p->cgroup_known = true;
			snprintf(p->comm, sizeof(p->comm), "%.16s", procs[i].comm);
			counted(&procs[i].counters, &p->accesses, &p->misses, &p->refaults);
			if (p->misses)
				see_container(p->pid, p->comm, procs[i].cgroup, procs[i].memcg);
			s->ncache_procs++;
		}
		free(procs);
		s->cache_files_known = files != NULL;
		snap_cgroups(s);
	}
	snap_memcgs(s);
	if (!files)
		return;
	/* Files named from what processes have open or mapped: only those reported, within a second. */
	{
		struct inode_names names = {0};
		struct file_id *ids = xcalloc(nfiles ? nfiles : 1, sizeof(*ids));
		size_t wanted = 0;
		uint64_t now = monotonic_ns();

		/* Only the files that counted a page: a busy machine's window hands over thousands more
		 * whose events were evictions or dirtied pages alone (14,664 of 14,698 in one of a build's
		 * windows), which the snapshot keeps nothing of. */
		s->cache_files = xcalloc(nfiles ? nfiles : 1, sizeof(*s->cache_files));
		for (size_t i = 0; i < nfiles; i++) {
			struct snap_cache_file *f = &s->cache_files[s->ncache_files];
			struct miss_row row;

			*f = (struct snap_cache_file){ .major = major(files[i].dev), .minor = minor(files[i].dev),
						       .ino = files[i].ino };
			counted(&files[i].counters, &f->accesses, &f->misses, &f->refaults);
			if (!f->accesses && !f->misses && !f->refaults)
				continue;
			files[s->ncache_files++] = files[i]; /* (files[] kept beside cache_files[]) */
			row = (struct miss_row){ .accesses = f->accesses, .misses = f->misses };
			if (snap_miss_matters(s, &row) && !name_unfound(files[i].dev, files[i].ino, now))
				ids[wanted++] = (struct file_id){ files[i].dev, files[i].ino };
		}
		names.hints = names_hints(ids, wanted, &names.nhints);
		inode_names_resolve(&names, ids, wanted, NAMING_NS, NULL);
		for (size_t i = 0; i < s->ncache_files; i++) {
			struct snap_cache_file *f = &s->cache_files[i];
			struct miss_row row = { .accesses = f->accesses, .misses = f->misses };
			char unknown[64];

			if (snap_miss_matters(s, &row)) {
				const char *name = inode_names_get(&names, files[i].dev, files[i].ino, unknown,
								   sizeof(unknown));

				snprintf(f->name, sizeof(f->name), "%s", name);
				if (name != unknown && major(files[i].dev)) /* (hints are for block devices) */
					name_keep(files[i].dev, files[i].ino, name);
				else if (name == unknown)
					name_unfound_keep(files[i].dev, files[i].ino, now);
			}
		}
		free((void *)names.hints);
		inode_names_free(&names);
		free(ids);
		free(files);
	}
}

/*
 * Each writable mount, probed (bounded and marked: one probe of a mount at most, across runs);
 * a mount that does not answer is named with the probe that waits on it.
 */
/*
 * The mount table as last read, kept between a recorder's windows with a descriptor of
 * /proc/self/mountinfo, which poll(2) flags (POLLPRI) once after any mount or unmount in the
 * namespace: read again then, or a minute after it was. Opened before the tables are read, so
 * a change after its open is flagged. Not kept under another root (a recorded tree), nor by a
 * run of one window, nor when a read failed.
 */
#define MTAB_EVERY_NS 60000000000ull

static struct mount_table {
	int fd; /* /proc/self/mountinfo, polled; -1: none */
	bool known;
	uint64_t read_ns;
	struct mounts mounts;
	struct mountinfo devices; /* the device of each mount, to name its probe after */
} mtab = { .fd = -1 };

static void mtab_free(void)
{
	if (mtab.fd >= 0)
		close(mtab.fd);
	mounts_free(&mtab.mounts);
	mountinfo_free(&mtab.devices);
	mtab = (struct mount_table){ .fd = -1 };
}

static void mtab_read(void)
{
	struct pollfd changed = { .fd = -1, .events = POLLPRI };
	bool read;

	if (keep_programs && mtab.fd < 0 && !strcmp(sysroot_get(), "/"))
		mtab.fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	changed.fd = mtab.fd;
	/*
	 * (and every minute all the same: a filesystem the kernel made read-only on an error says
	 * so in the table without a change flagged)
	 */
	if (mtab.known && mtab.fd >= 0 && poll(&changed, 1, 0) == 0 && monotonic_ns() - mtab.read_ns < MTAB_EVERY_NS)
		return;
	mounts_free(&mtab.mounts);
	mountinfo_free(&mtab.devices);
	/* From the kernel's tables, asking no filesystem. */
	read = mountinfo_read(&mtab.devices) == 0;
	if (!read)
		mtab.devices = (struct mountinfo){0};
	if (mounts_read(&mtab.mounts) != 0) {
		mtab.mounts = (struct mounts){ 0 };
		read = false;
	}
	mtab.known = mtab.fd >= 0 && read; /* (one not read is read again at the next window) */
	mtab.read_ns = monotonic_ns();
}

static void snap_mounts(struct doctor_snapshot *s, const char *marks, int *marks_error)
{
	const struct mountinfo *devices = &mtab.devices;
	dev_t *seen = NULL;
	size_t nseen = 0;

	mtab_read();
	for (size_t i = 0; i < mtab.mounts.count; i++) {
		const struct mount *m = &mtab.mounts.list[i];
		struct fs_probe probe = {0};
		struct bounded_mark mark = { .path = "" };
		struct snap_mount *out;
		unsigned major_, minor_;
		size_t k;
		int rc;

		if (filesystem_pseudo(m->type) || mount_option(m, "ro"))
			continue;
		snprintf(probe.dir, sizeof(probe.dir), "%s", m->dir);
		if (filesystem_probe_safe(devices, m->type, m->dir)) { /* no child: it can wait on nothing */
			filesystem_probe_here(&probe);
			rc = 0;
		} else if (mountinfo_device(devices, m->dir, &major_, &minor_))
			rc = filesystem_probe_marked(&probe, marks, major_, minor_, &mark);
		else /* unmounted since: a probe finds what is there now, unmarked */
			rc = filesystem_probe(&probe);
		s->mounts = xrealloc(s->mounts, (s->nmounts + 1) * sizeof(*s->mounts));
		out = &s->mounts[s->nmounts++];
		*out = (struct snap_mount){ .state = MOUNT_FAILED, .probe_seconds = -1, .probe_started = -1 };
		snprintf(out->dir, sizeof(out->dir), "%s", m->dir);
		snprintf(out->type, sizeof(out->type), "%s", m->type);
		snprintf(out->source, sizeof(out->source), "%s", m->source);
		if (rc == -ETIMEDOUT || rc == -EBUSY) {
			struct bounded_holder holder = { .seconds = -1 };

			out->state = rc == -ETIMEDOUT ? MOUNT_TIMEOUT : MOUNT_BUSY;
			out->held = mark.path[0] && bounded_mark_holder(mark.path, &holder) == 1;
			if (out->held) {
				out->probe_pid = holder.pid;
				out->probe_seconds = holder.seconds;
				if (holder.seconds >= 0)
					out->probe_started = (double)realtime_ns() / 1e9 - holder.seconds;
				snprintf(out->probe_asks, sizeof(out->probe_asks), "%s", holder.what);
			}
			if (*marks_error) {
				warn_msg("%s: %s: filesystem probes unmarked", geteuid() == 0 ? "/run/iolens/probes"
					 : "$XDG_RUNTIME_DIR/iolens/probes", strerror(-*marks_error));
				warn_detail("a probe left waiting on a server that does not answer is probed again by "
					    "the next run, and seen as a stuck process");
				*marks_error = 0; /* said once */
			}
		}
		if (rc == -EAGAIN) /* not a sign of a hung server: said, and nothing judged of the mount */
			warn_msg("%s: not probed: other iolens runs' probes kept it busy for %u ms",
				 printable_name(m->dir), 2 * BOUNDED_FS_MS);
		if ((rc ? rc : probe.rc) != 0 || !probe.vfs.f_blocks)
			continue;
		out->state = MOUNT_OK;
		out->blocks = probe.vfs.f_blocks;
		out->bfree = probe.vfs.f_bfree;
		out->bavail = probe.vfs.f_bavail;
		out->files = probe.vfs.f_files;
		out->ffree = probe.vfs.f_ffree;
		out->favail = probe.vfs.f_favail;
		out->frsize = probe.vfs.f_frsize;
		for (k = 0; k < nseen && seen[k] != probe.st.st_dev; k++)
			;
		if (k < nseen) { /* a bind mount of one already seen */
			out->duplicate = true;
			continue;
		}
		seen = xrealloc(seen, (nseen + 1) * sizeof(*seen));
		seen[nseen++] = probe.st.st_dev;
	}
	if (!mtab.known)
		mtab_free();
	free(seen);
}

/*
 * What is estimated for want of eBPF: one line for each reason (not root: one line, not three),
 * what each estimate misses only with -v (and in iolens-doctor(1), DIAGNOSTICS).
 */
static void say_fallbacks(const struct watch *w)
{
	const struct {
		bool fallen;
		const char *why, *detail;
	} parts[] = {
		{ !w->bpf, w->bpf_why, "cache misses per process estimated from /proc/PID/io, none per file" },
		{ !w->bio, w->bio_why,
		  "disk latencies are /proc/diskstats' averages: no percentiles, no I/O per process" },
		{ !w->direct.ebpf && !w->direct.off, w->direct.why,
		  "O_DIRECT files looked for in /proc/PID/fdinfo at each sample: one opened between two is missed" },
	};
	enum { NPARTS = sizeof(parts) / sizeof(parts[0]) };

	for (unsigned i = 0; i < NPARTS; i++) /* the same reason said once (warn_msg) */
		if (parts[i].fallen)
			warn_msg("no eBPF (%s): estimating from /proc", parts[i].why ? parts[i].why : "not loaded");
	for (unsigned i = 0; i < NPARTS; i++)
		if (parts[i].fallen)
			warn_detail("%s", parts[i].detail);
}

void doctor_capture(struct doctor_snapshot *s, double seconds, bool direct_off, const char *capacity_directory)
{
	struct watch w = {0};
	char marks[512];
	int marks_error;
	pid_t *probes = NULL, *now = NULL;
	size_t nprobes = 0, nnow = 0;
	bool carried_probes, in_d_at_end;

	*s = (struct doctor_snapshot){ .seconds = seconds, .page_size = (uint64_t)sysconf(_SC_PAGESIZE) };
	if ((marks_error = bounded_mark_dir(marks, sizeof(marks))) != 0)
		marks[0] = '\0';
	watch_prepare(&w, marks, direct_off);
	if (geteuid() != 0)
		warn_msg("not root: other users' processes, files and I/O are not seen");
	say_fallbacks(&w);
	if (w.bpf && cachestat_caveat())
		warn_msg("page-cache counts with %s: %s", cachestat_mechanism(), cachestat_caveat());
	if (w.bio && bio_mechanism_less_exact(bio_mechanism())) { /* the first clause of it */
		warn_msg("each request's process seen at block_getrq (no block_io_start before Linux 6.5)");
		warn_detail("%s", bio_mechanism_less_exact(bio_mechanism()));
	}
	/*
	 * iolens's probes, which wait on a filesystem that does not answer: never stuck processes.
	 * Only a thread in D at the last sample can be judged stuck, and a probe holds its mark for
	 * as long as it lives: the marks are looked at when a thread is in D at the first sample,
	 * and at the last (a window of a quiet machine reads none).
	 */
	carried_probes = carry.valid && carry.probes_known;
	if (carried_probes) { /* (as the last window left them: see below) */
		probes = carry.probes;
		nprobes = carry.nprobes;
		carry.probes = NULL;
	}
	watch_start(&w);
	if (!carried_probes && marks[0] && w.in_d)
		nprobes = bounded_mark_holders(marks, &probes);
	if (seconds > 0) /* else one sample: no rates */
		s->seconds = watch_run(&w, seconds);
	else
		watch_run(&w, 0);
	in_d_at_end = w.in_d != 0;
	snap_direct(s, &w.direct);
	snap_window(s, &w, capacity_dir(capacity_directory));
	snap_vtrace(s, &w.vtrace);
	snap_cache(s, &w);
	watch_free(&w);
	snap_mounts(s, marks, &marks_error);
	/* (after the mounts' probes: one left waiting by them is the next window's to know of) */
	if (marks[0] && in_d_at_end)
		nnow = bounded_mark_holders(marks, &now);
	s->probes = xcalloc(nprobes + nnow + 1, sizeof(*s->probes));
	if (nnow)
		memcpy(s->probes, now, nnow * sizeof(*now));
	if (nprobes)
		memcpy(s->probes + nnow, probes, nprobes * sizeof(*probes));
	s->nprobes = nnow + nprobes;
	free(probes);
	if (carry.valid && marks[0] && in_d_at_end) { /* a recorder's next window begins with them */
		carry.probes = now;
		carry.nprobes = nnow;
		carry.probes_known = true;
	} else {
		free(now);
	}
	s->containers = containers;
	s->ncontainers = ncontainers;
	containers = NULL;
	ncontainers = 0;
	if (keep_programs) /* a recorder's next window asks of the same processes, mostly */
		container_cache_trim();
	else
		container_cache_free();
}
