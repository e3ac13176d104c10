/* doctor.c: iolens doctor: the I/O diagnosis a person would make, as rules over what the collectors see in a window of seconds. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "common/bounded.h"
#include "cmd/common.h"
#include "cmd/doctor_config.h"
#include "collect/cachestat.h"
#include "collect/diskstats.h"
#include "collect/fdinfo.h"
#include "collect/filesystems.h"
#include "collect/inode_names.h"
#include "collect/memcg.h"
#include "collect/odirect.h"
#include "collect/pagecache.h"
#include "collect/procfs.h"
#include "collect/sysroot.h"
#include "collect/segments.h"
#include "collect/tasks.h"
#include "common/signals.h"
#include "common/util.h"
#include "doctor/finding.h"

#define MiB (1024.0 * 1024.0)
#define NAMING_NS 1000000000ull /* the most naming the files reported may take */

#define SEV_INFO DOCTOR_INFO
#define SEV_WARNING DOCTOR_WARNING
#define SEV_CRITICAL DOCTOR_CRITICAL

/* Exit statuses beyond the house's 0, 1 and 2: what the worst finding was. */
enum { EXIT_WARNING = 3, EXIT_CRITICAL = 4 };

struct doctor {
	struct doctor_findings findings;
	struct doctor_config config; /* what is normal here: rules off, thresholds, what is accepted */
	double seconds;
	char marks[512]; /* where probes of filesystems are marked (bounded_mark_dir), "" when they cannot be */
	int marks_error; /* why they cannot be, -errno, said with the first probe that does not answer */
};

static struct doctor_finding *add_finding(struct doctor *d, enum doctor_severity severity, const char *rule,
					  const char *why)
{
	return doctor_finding_add(&d->findings, severity, rule, why);
}



/* ---- Rule: O_DIRECT ------------------------------------------------------------------- */

/*
 * Processes seen doing I/O with O_DIRECT in the window, by two means merged into one list:
 * eBPF on the raw syscall tracepoints sees each O_DIRECT open (and fcntl(F_SETFL, O_DIRECT))
 * as it happens, however briefly the file stays open (the seed's application opens, reads
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
	struct proc_io_sample io_first, io_last; /* /proc/PID/io when first seen, and last read while it lived */
	uint64_t io_first_ns, io_last_ns;
	bool io_known;
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
	uint64_t start_ns;     /* the window's start, for first_seen_seconds */
	uint64_t probe_ns;     /* spent waiting for probes of the page cache, in all */
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
	doctor_text(what, sizeof(what), "an open of %s, for its pages in the page cache", path);
	rc = bounded_call_device(set->marks, major(file->dev), minor(file->dev), what, probe_cache, &probe, sizeof(probe),
				 BOUNDED_FS_MS, &mark, NULL);
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
	/* Its I/O from now: rates from when it was first seen. */
	p->io_known = proc_io_sample_read(pid, &p->io_first) == 0;
	p->io_first_ns = p->io_last_ns = monotonic_ns();
	p->io_last = p->io_first;
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

/* Every process's descriptors with O_DIRECT in their fdinfo flags, now. */
static void direct_scan_fdinfo(struct direct_set *set)
{
	struct proc_pids pids;
	pid_t pid;

	proc_pids_open(&pids, PROC_PIDS_NOT_SELF);
	while ((pid = proc_pids_next(&pids))) {
		struct direct_process *p = NULL;
		char dir_path[4200], comm[32] = "";
		struct dirent *fd_entry;
		DIR *fds;

		if (!sysroot_path(dir_path, sizeof(dir_path), "/proc/%d/fd", (int)pid) || !(fds = opendir(dir_path)))
			continue;
		while ((fd_entry = readdir(fds))) {
			char link[4300], target[512];
			struct fdinfo info;
			struct statx st;
			ssize_t length;
			int fd = (int)strtol(fd_entry->d_name, NULL, 10);
			bool block;

			if (fd_entry->d_name[0] == '.' || fdinfo_read(pid, fd, &info) != 0 || !(info.flags & O_DIRECT))
				continue;
			snprintf(link, sizeof(link), "%s/%d", dir_path, fd);
			/* The attributes the kernel has: asking a hung FUSE or NFS server would never return. */
			if (statx(AT_FDCWD, link, AT_STATX_DONT_SYNC, STATX_TYPE | STATX_INO, &st) != 0 ||
			    !(S_ISREG(st.stx_mode) || S_ISBLK(st.stx_mode)))
				continue;
			if (!p) {
				if (!proc_comm_read(pid, comm, sizeof(comm)) || direct_ours(pid, comm))
					break;
				p = direct_process(set, pid, comm, "fdinfo");
			}
			length = readlink(link, target, sizeof(target) - 1);
			target[length > 0 ? length : 0] = '\0';
			block = S_ISBLK(st.stx_mode);
			direct_add(p, direct_file(set, block ? makedev(st.stx_rdev_major, st.stx_rdev_minor)
							     : makedev(st.stx_dev_major, st.stx_dev_minor),
						  block ? 0 : st.stx_ino, block, target, link),
				   fd, info.flags);
		}
		closedir(fds);
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
	return S_ISREG(st.stx_mode) && makedev(st.stx_dev_major, st.stx_dev_minor) == open->dev && st.stx_ino == open->ino;
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

/* Each process's /proc/PID/io while it lives (the same command under its pid): its rates stop where it ended. */
static void direct_refresh_io(struct direct_set *set)
{
	for (size_t i = 0; i < set->count; i++) {
		struct direct_process *p = &set->procs[i];
		struct proc_io_sample now;
		struct proc_io_delta delta;

		if (p->ended)
			continue;
		if (proc_io_sample_read(p->pid, &now) != 0 || strcmp(now.comm, p->comm) ||
		    (p->io_known && !proc_io_delta(&p->io_last, &now, &delta))) {
			p->ended = true;
			continue;
		}
		p->io_last = now;
		p->io_last_ns = monotonic_ns();
	}
}

static void direct_free(struct direct_set *set)
{
	free(set->procs);
	free(set->files);
	*set = (struct direct_set){0};
}

static void rule_direct(struct doctor *d, const struct direct_set *set)
{
	for (size_t i = 0; i < set->count; i++) {
		const struct direct_process *p = &set->procs[i];
		double seconds = (double)(p->io_last_ns - p->io_first_ns) / 1e9, read_rate = 0, write_rate = 0;
		double first_seen = p->first_ns > set->start_ns ? (double)(p->first_ns - set->start_ns) / 1e9 : 0;
		bool rates = p->io_known && seconds > 0;
		uint64_t cached = 0, pages = 0, opens = 0;
		bool cache_known = false;
		const struct direct_file *file0 = &set->files[p->files[0]];
		char read_text[16], write_text[16];
		struct doctor_fields *files;
		struct doctor_finding *f;
		size_t used;

		if (!p->nfiles)
			continue;
		for (unsigned k = 0; k < p->nfiles; k++) {
			const struct direct_file *file = &set->files[p->files[k]];

			if (file->cache_known) {
				cache_known = true;
				cached += file->cached_pages;
				pages += file->file_pages;
			}
			opens += odirect_opens(p->pid, file->dev, file->ino);
		}
		if (rates) {
			struct proc_io_delta delta;

			proc_io_delta(&p->io_first, &p->io_last, &delta); /* one process: refresh_io saw to it */
			read_rate = (double)delta.read_bytes / seconds;
			write_rate = (double)delta.write_bytes / seconds;
		}
		/*
		 * Bypassing the cache matters when it reads: reads that the cache could serve. A few
		 * KiB now and then (multipathd's path checker), or writes (a database flushing its own
		 * buffers, on purpose), are a note.
		 */
		f = add_finding(d, read_rate >= d->config.threshold[TH_ODIRECT_READ] ? SEV_WARNING : SEV_INFO, "odirect",
				"O_DIRECT bypasses the page cache: every read goes to the disk, even of data read a moment "
				"ago; the cache could serve repeated reads from memory (the seed's 1.4 s against 0.017 s)");
		doctor_text(f->what, sizeof(f->what), "process %d (%s) does its I/O with O_DIRECT on %s%s", (int)p->pid, p->comm,
		     file0->path, p->nfiles > 1 ? " and more" : "");
		if (!strcmp(p->seen_by, "fdinfo"))
			used = (size_t)snprintf(f->numbers, sizeof(f->numbers),
						"/proc/%d/fdinfo/%d says \"flags: 0%o\": O_DIRECT (0%o) is set, on %u file%s",
						(int)p->pid, p->first_fd, p->first_flags, (unsigned)O_DIRECT, p->nfiles,
						p->nfiles > 1 ? "s" : "");
		else
			used = (size_t)snprintf(f->numbers, sizeof(f->numbers),
						"%s with O_DIRECT (0%o) gave it fd %d %.1f s into the window, %llu time%s "
						"(eBPF, raw_syscalls); the file's flags 0%o; on %u file%s",
						p->call ? p->call : "?", (unsigned)O_DIRECT, p->first_fd, first_seen,
						(unsigned long long)opens, opens == 1 ? "" : "s", p->first_flags, p->nfiles,
						p->nfiles > 1 ? "s" : "");
		if (rates && used < sizeof(f->numbers))
			used += (size_t)snprintf(f->numbers + used, sizeof(f->numbers) - used,
						 "; from storage %s/s read, %s/s written over the %.1f s since it was first "
						 "seen (/proc/%d/io)",
						 human_size((uint64_t)read_rate, read_text, sizeof(read_text)),
						 human_size((uint64_t)write_rate, write_text, sizeof(write_text)), seconds,
						 (int)p->pid);
		if (cache_known && used < sizeof(f->numbers))
			used += (size_t)snprintf(f->numbers + used, sizeof(f->numbers) - used,
						 "; the page cache holds %llu of its %llu pages", (unsigned long long)cached,
						 (unsigned long long)pages);
		if (p->ended && used < sizeof(f->numbers))
			snprintf(f->numbers + used, sizeof(f->numbers) - used, "; it ended before the window did");
		doctor_text(f->more, sizeof(f->more), "iolens cachetop -p %d; iolens pcstat --pid %d", (int)p->pid, (int)p->pid);
		field_int(&f->data, "pid", p->pid);
		field_text(&f->data, "comm", p->comm);
		files = field_list(&f->data, "files");
		for (unsigned k = 0; k < p->nfiles; k++)
			field_text(files, NULL, set->files[p->files[k]].path);
		field_real_if(&f->data, "read_bytes_per_s", read_rate, rates);
		field_real_if(&f->data, "write_bytes_per_s", write_rate, rates);
		field_real_if(&f->data, "rate_seconds", seconds, rates);
		field_int_if(&f->data, "fd", p->first_fd, p->first_fd >= 0);
		field_int(&f->data, "flags", (int)p->first_flags);
		field_count_if(&f->data, "cached_pages", cached, cache_known);
		field_count_if(&f->data, "file_pages", pages, cache_known);
		field_text(&f->data, "seen_by", p->seen_by);
		field_text(&f->data, "call", p->call ? p->call : NULL);
		field_count_if(&f->data, "opens", opens, set->ebpf);
		field_real(&f->data, "first_seen_seconds", first_seen);
		field_bool(&f->data, "ended", p->ended);
	}
}

/* ---- Rule: full filesystems ------------------------------------------------------------ */

/*
 * A mount that did not answer: the probe this run made (probed), or one an earlier probe of
 * it still waits for (not probed again). The probe that waits is named by its mark, with
 * since when; without a mark (none could be made, or it ended a moment ago) by the timeout only.
 */
static void unresponsive(struct doctor *d, const struct mntent *m, const char *mark_path, bool probed)
{
	struct doctor_finding *f = add_finding(d, SEV_WARNING, "unresponsive",
					"every process that touches it waits too, in D, until its server answers: a "
					"shell's cd, ls or df, a backup, the service itself");
	struct bounded_holder holder = { .seconds = -1 };
	bool held = mark_path[0] && bounded_mark_holder(mark_path, &holder) == 1;
	double started = held && holder.seconds >= 0 ? (double)realtime_ns() / 1e9 - holder.seconds : -1;
	char since[64] = "";
	size_t used;

	if (started >= 0) {
		time_t when = (time_t)started;
		struct tm local;

		if (localtime_r(&when, &local))
			strftime(since, sizeof(since), ", waiting since %Y-%m-%d %H:%M:%S", &local);
	}
	doctor_text(f->what, sizeof(f->what), "%s (%s on %s) does not answer", m->mnt_dir, m->mnt_type, m->mnt_fsname);
	if (d->marks_error) {
		fprintf(stderr, "%s: %s: %s: probes of filesystems unmarked: one left waiting on a server that does not "
			"answer is probed again by the next run, and seen as a stuck process\n", program_name,
			geteuid() == 0 ? "/run/iolens/probes" : "$XDG_RUNTIME_DIR/iolens/probes", strerror(-d->marks_error));
		d->marks_error = 0; /* said once */
	}
	if (probed)
		used = (size_t)snprintf(f->numbers, sizeof(f->numbers), "stat and statfs of it did not return within %u ms",
					BOUNDED_FS_MS);
	else if (holder.seconds >= 0)
		used = (size_t)snprintf(f->numbers, sizeof(f->numbers), "%s: no answer for %.1f s", holder.what,
					holder.seconds);
	else
		used = (size_t)snprintf(f->numbers, sizeof(f->numbers), "an earlier probe of it has had no answer");
	if (held && used < sizeof(f->numbers))
		snprintf(f->numbers + used, sizeof(f->numbers) - used,
			 " (iolens probe pid %d%s); no other probe of this filesystem while it waits", (int)holder.pid,
			 since);
	doctor_text(f->more, sizeof(f->more), "iolens vstat (a libvtrace server); cat /proc/PID/stack of a process waiting on it");
	field_text(&f->data, "mount", m->mnt_dir);
	field_text(&f->data, "type", m->mnt_type);
	field_text(&f->data, "source", m->mnt_fsname);
	field_int(&f->data, "timeout_ms", (int)BOUNDED_FS_MS);
	field_bool(&f->data, "probed", probed);
	field_int_if(&f->data, "probe_pid", holder.pid, held);
	field_real_if(&f->data, "probe_waiting_seconds", holder.seconds, holder.seconds >= 0);
	field_real_if(&f->data, "probe_started", started, started >= 0);
	field_text(&f->data, "probe_asks", held && holder.what[0] ? holder.what : NULL);
}

/* df's Use%: used / (used + available to users), rounded up. */
static double percent_used(uint64_t total, uint64_t free_all, uint64_t available)
{
	uint64_t used = total > free_all ? total - free_all : 0;

	return used + available ? 100.0 * (double)used / (double)(used + available) : 0;
}

static void rule_full(struct doctor *d)
{
	FILE *mounts = setmntent("/proc/self/mounts", "re");
	struct mountinfo devices;
	struct mntent *m;
	dev_t *seen = NULL;
	size_t nseen = 0;

	/* The device of each mount, to name its probe after: from the kernel's table, asking no filesystem. */
	if (mountinfo_read(&devices) != 0)
		devices = (struct mountinfo){0};
	while (mounts && (m = getmntent(mounts))) {
		struct fs_probe probe = {0};
		struct bounded_mark mark = { .path = "" };
		unsigned major, minor;
		size_t k;
		int rc;

		if (filesystem_pseudo(m->mnt_type) || hasmntopt(m, "ro"))
			continue;
		snprintf(probe.dir, sizeof(probe.dir), "%s", m->mnt_dir);
		if (mountinfo_device(&devices, m->mnt_dir, &major, &minor))
			rc = filesystem_probe_marked(&probe, d->marks, major, minor, &mark);
		else /* unmounted since: a probe finds what is there now, unmarked */
			rc = filesystem_probe(&probe);
		if (rc == -ETIMEDOUT || rc == -EBUSY)
			unresponsive(d, m, mark.path, rc == -ETIMEDOUT);
		if ((rc ? rc : probe.rc) != 0 || !probe.vfs.f_blocks)
			continue;
		for (k = 0; k < nseen && seen[k] != probe.st.st_dev; k++)
			;
		if (k < nseen) /* a bind mount of one already seen */
			continue;
		seen = xrealloc(seen, (nseen + 1) * sizeof(*seen));
		seen[nseen++] = probe.st.st_dev;
		for (int inodes = 0; inodes < 2; inodes++) {
			uint64_t total = inodes ? probe.vfs.f_files : probe.vfs.f_blocks;
			uint64_t free_all = inodes ? probe.vfs.f_ffree : probe.vfs.f_bfree;
			uint64_t available = inodes ? probe.vfs.f_favail : probe.vfs.f_bavail;
			double used = percent_used(total, free_all, available);
			char free_text[16], total_text[16];
			struct doctor_finding *f;

			if (!total || used < d->config.threshold[TH_FULL_WARNING])
				continue;
			f = add_finding(d, used >= d->config.threshold[TH_FULL_CRITICAL] ? SEV_CRITICAL : SEV_WARNING,
					inodes ? "inodes" : "full",
					inodes ? "with no inode left, no file can be created, however much space is free"
					       : "writes fail with ENOSPC when it fills, and ext4 and others slow down "
						 "well before, as free extents get scarce");
			doctor_text(f->what, sizeof(f->what), "%s (%s on %s) is %s", m->mnt_dir, m->mnt_type, m->mnt_fsname,
			     inodes ? "nearly out of inodes" : "nearly full");
			if (inodes)
				doctor_text(f->numbers, sizeof(f->numbers), "%.1f %% of inodes used: %llu free of %llu (statvfs)", used,
				     (unsigned long long)available, (unsigned long long)total);
			else
				doctor_text(f->numbers, sizeof(f->numbers), "%.1f %% used: %s free of %s (statvfs, as df counts)", used,
				     human_size(available * probe.vfs.f_frsize, free_text, sizeof(free_text)),
				     human_size(total * probe.vfs.f_frsize, total_text, sizeof(total_text)));
			doctor_text(f->more, sizeof(f->more), "df %s%s", inodes ? "-i " : "-h ", m->mnt_dir);
			field_text(&f->data, "mount", m->mnt_dir);
			field_text(&f->data, "type", m->mnt_type);
			field_text(&f->data, "source", m->mnt_fsname);
			field_real(&f->data, "used_percent", used);
			field_count(&f->data, inodes ? "inodes_free" : "bytes_free",
				    inodes ? available : available * probe.vfs.f_frsize);
			field_count(&f->data, inodes ? "inodes_total" : "bytes_total",
				    inodes ? total : total * probe.vfs.f_frsize);
		}
	}
	if (mounts)
		endmntent(mounts);
	mountinfo_free(&devices);
	free(seen);
}

/* ---- The window: samples at its ends, and every quarter second in between ------------------ */

#define SAMPLE_NS 250000000ull /* at most this often; less when a scan of every thread takes more than a tenth of it */

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
	uint64_t interval_ns;           /* between samples: SAMPLE_NS, or ten times a scan that took longer */
	unsigned samples;               /* taken so far; the index of the next */
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
	struct proc_io_sample *io;      /* sorted by pid */
	size_t nio;
	struct io_rate *rates;          /* busiest first */
	size_t nrates;
	struct segment_set vtrace; /* libvtrace servers, proven theirs */
	struct direct_set direct;       /* processes doing I/O with O_DIRECT */
	bool bpf;                       /* per-process cache counts from eBPF */
	const char *bpf_why;
};

static int compare_io_pid(const void *a_, const void *b_)
{
	const struct proc_io_sample *a = a_, *b = b_;

	return (a->pid > b->pid) - (a->pid < b->pid);
}

/* Every process's /proc/PID/io that can be read (all of them as root). */
static size_t read_all_io(struct proc_io_sample **out)
{
	struct proc_pids pids;
	size_t count = 0;
	pid_t pid;

	*out = NULL;
	proc_pids_open(&pids, PROC_PIDS_NOT_SELF);
	while ((pid = proc_pids_next(&pids))) {
		struct proc_io_sample e;

		if (proc_io_sample_read(pid, &e) != 0)
			continue;
		*out = xrealloc(*out, (count + 1) * sizeof(**out));
		(*out)[count++] = e;
	}
	proc_pids_close(&pids);
	if (count > 1)
		qsort(*out, count, sizeof(**out), compare_io_pid);
	return count;
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
	struct proc_io_sample *end;
	size_t nend = read_all_io(&end);

	for (size_t i = 0; i < nend && seconds > 0; i++) {
		/* (none at the start, as for a user who had no process then: bsearch wants an array) */
		struct proc_io_sample *start = w->nio ? bsearch(&end[i], w->io, w->nio, sizeof(*w->io), compare_io_pid) : NULL;
		struct io_rate r = { .pid = end[i].pid };
		struct proc_io_delta delta;

		/* new, the pid another process now, or a counter gone back */
		if (!start || !proc_io_delta(start, &end[i], &delta))
			continue;
		r.read_rate = (double)delta.read_bytes / seconds;
		r.write_rate = (double)delta.write_bytes / seconds;
		r.rchar_rate = (double)delta.rchar / seconds;
		if (r.read_rate + r.write_rate + r.rchar_rate <= 0)
			continue;
		snprintf(r.comm, sizeof(r.comm), "%s", end[i].comm);
		w->rates = xrealloc(w->rates, (w->nrates + 1) * sizeof(*w->rates));
		w->rates[w->nrates++] = r;
	}
	if (w->nrates > 1)
		qsort(w->rates, w->nrates, sizeof(*w->rates), compare_rate);
	free(end);
}

static void watch_task(pid_t pid, const struct proc_task *task, void *context)
{
	struct watch *w = context;
	struct task_watch *t = NULL;

	if (task->state != 'D')
		return;
	for (size_t i = 0; i < w->ntasks && !t; i++)
		if (w->tasks[i].tid == task->pid && w->tasks[i].pid == pid)
			t = &w->tasks[i];
	if (!t) {
		w->tasks = xrealloc(w->tasks, (w->ntasks + 1) * sizeof(*w->tasks));
		t = &w->tasks[w->ntasks++];
		*t = (struct task_watch){ .pid = pid, .tid = task->pid, .first = w->samples, .first_ns = w->sample_ns };
		snprintf(t->comm, sizeof(t->comm), "%s", task->comm);
		t->switches_known = task_switches(pid, task->pid, &t->switches_first) == 0;
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

/* One sample: the dirty pages against their limits, and the threads in D. */
static void watch_sample(struct watch *w)
{
	uint64_t probe_ns = w->direct.probe_ns;
	struct vmstat vm;

	w->sample_ns = monotonic_ns();
	/* Files open O_DIRECT at the start, and at every sample when eBPF does not see the opens. */
	if (!w->samples || (!w->direct.ebpf && !w->direct.off))
		direct_scan_fdinfo(&w->direct);
	odirect_drain();
	direct_refresh_io(&w->direct);
	if (vmstat_read(&vm) == 0 && vm.nr_dirty != PROCFS_UNKNOWN && vm.nr_writeback != PROCFS_UNKNOWN) {
		if (vm.nr_writeback)
			w->writeback_samples++;
		if (!w->samples || vm.nr_dirty + vm.nr_writeback > w->dirty_peak + w->writeback_peak) {
			w->dirty_peak = vm.nr_dirty;
			w->writeback_peak = vm.nr_writeback;
			w->thresh = vm.nr_dirty_threshold;
			w->bg_thresh = vm.nr_dirty_background_threshold;
		}
	}
	tasks_scan(watch_task, w);
	w->samples++;
	/* Thousands of threads take a while to read: the doctor takes no more than a tenth of a CPU. */
	/* (waiting for a probe of a file's cache, in a child, is no work of ours) */
	w->interval_ns = 10 * (monotonic_ns() - w->sample_ns - (w->direct.probe_ns - probe_ns));
	if (w->interval_ns < SAMPLE_NS)
		w->interval_ns = SAMPLE_NS;
}

/* What takes long to set up, before the window: the eBPF programs, the segments. */
static void watch_prepare(struct watch *w, const char *marks, bool direct_off)
{
	static const struct cachestat_options counting = { .per_process = true, .per_file = true };

	w->bpf = cachestat_start(&counting, &w->bpf_why) == 0;
	w->direct.marks = marks;
	w->direct.off = direct_off;
	w->direct.ebpf = !direct_off && odirect_start(direct_seen_open, &w->direct, &w->direct.why) == 0;
	segment_set_refresh(&w->vtrace);
}

/* The counters at the start of the window, read one after the other. */
static void watch_start(struct watch *w)
{
	w->nio = read_all_io(&w->io);
	w->vm_known = vmstat_read(&w->vm_start) == 0;
	psi_read("io", &w->io_start);
	psi_read("memory", &w->memory_start);
	if (diskstats_read(&w->disk_start) != 0)
		w->disk_start = (struct diskstats){0};
	w->start_ns = w->disk_start_ns = w->direct.start_ns = monotonic_ns();
	watch_sample(w);
}

/* Samples until seconds have passed (or a signal came): the seconds it watched. */
static double watch_run(struct watch *w, double seconds)
{
	uint64_t end_ns = w->start_ns + (uint64_t)(seconds * 1e9), mid_ns = w->start_ns + (end_ns - w->start_ns) / 2;
	double watched;

	while (!stop_signal && monotonic_ns() < end_ns) {
		uint64_t next = w->sample_ns + w->interval_ns;

		if (!w->mid_known && mid_ns > w->start_ns && next > mid_ns)
			next = mid_ns; /* the middle, on time even when samples are far apart */
		odirect_wait(next < end_ns ? next : end_ns, &stop_signal); /* O_DIRECT opens seen meanwhile */
		if (!w->mid_known && mid_ns > w->start_ns && monotonic_ns() >= mid_ns) {
			w->mid_known = diskstats_read(&w->disk_mid) == 0;
			w->disk_mid_ns = monotonic_ns();
		}
		if (!stop_signal && (monotonic_ns() >= next || monotonic_ns() >= end_ns))
			watch_sample(w); /* and one at the end */
	}
	odirect_drain();
	direct_refresh_io(&w->direct);
	if (diskstats_read(&w->disk_end) != 0)
		w->disk_end = (struct diskstats){0};
	w->disk_end_ns = monotonic_ns();
	psi_read("io", &w->io_end);
	psi_read("memory", &w->memory_end);
	w->vm_known = w->vm_known && vmstat_read(&w->vm_end) == 0;
	watched = (double)(monotonic_ns() - w->start_ns) / 1e9;
	w->mem_known = meminfo_read(&w->mem_end) == 0;
	compute_io_rates(w, watched);
	/* A server that died in the window left its requests in flight, not a hang: it goes. */
	segment_set_refresh(&w->vtrace);
	return watched;
}

static void watch_free(struct watch *w)
{
	cachestat_stop();
	odirect_stop();
	direct_free(&w->direct);
	diskstats_free(&w->disk_start);
	diskstats_free(&w->disk_mid);
	diskstats_free(&w->disk_end);
	segment_set_free(&w->vtrace);
	free(w->tasks);
	free(w->io);
	free(w->rates);
}

/* "comm (pid) 12 MiB/s read, 3 MiB/s written; ..." of the n busiest, and the same as JSON. */
static void busiest(const struct watch *w, size_t n, char *buf, size_t len, struct doctor_fields *json)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < w->nrates && i < n && w->rates[i].read_rate + w->rates[i].write_rate > 0; i++) {
		const struct io_rate *r = &w->rates[i];
		struct doctor_fields *o = field_object(json, NULL);
		char read_text[16], write_text[16];

		used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s (%d) %s/s read, %s/s written",
					 i ? "; " : "", r->comm, (int)r->pid,
					 human_size((uint64_t)r->read_rate, read_text, sizeof(read_text)),
					 human_size((uint64_t)r->write_rate, write_text, sizeof(write_text)));
		field_int(o, "pid", r->pid);
		field_text(o, "comm", r->comm);
		field_real(o, "read_bytes_per_s", r->read_rate);
		field_real(o, "write_bytes_per_s", r->write_rate);
	}
}

static double psi_share(const struct psi_line *start, const struct psi_line *end, double seconds)
{
	if (!start->present || !end->present || seconds <= 0 || end->total_us < start->total_us)
		return -1;
	return 100.0 * (double)(end->total_us - start->total_us) / (seconds * 1e6);
}

/* ---- Rule: a saturated disk ----------------------------------------------------------------- */

/* Mean time per request (ms) and queue length between two samples of a device. */
static void await_between(const struct disk_stats *a, const struct disk_stats *b, double seconds, double *await,
			  double *queue)
{
	struct disk_ext x;
	double ios;

	disk_ext_compute(a, b, seconds, &x);
	ios = x.r_s + x.w_s;
	*await = ios > 0 ? (x.r_await * x.r_s + x.w_await * x.w_s) / ios : 0;
	*queue = x.aqu_sz;
}

static bool rule_disk(struct doctor *d, const struct watch *w)
{
	double seconds = (double)(w->disk_end_ns - w->disk_start_ns) / 1e9;
	double mid_seconds = w->mid_known ? (double)(w->disk_mid_ns - w->disk_start_ns) / 1e9 : 0;
	double some = psi_share(&w->io_start.some, &w->io_end.some, seconds);
	double full = psi_share(&w->io_start.full, &w->io_end.full, seconds);
	bool found = false;

	for (unsigned i = 0; i < w->disk_end.count && d->seconds > 0 && seconds > 0; i++) {
		const struct disk_stats *after = &w->disk_end.disk[i], *before = diskstats_find(&w->disk_start, after->name);
		const struct disk_stats *mid = w->mid_known ? diskstats_find(&w->disk_mid, after->name) : NULL;
		const struct disk_kind *kind = &w->disk_end.kind[i];
		char read_text[16], write_text[16], top[512] = "";
		struct doctor_fields top_json = {0};
		struct doctor_finding *f;
		struct disk_ext x;
		size_t used;

		if (!before || !kind->in_sysfs || kind->partition)
			continue;
		disk_ext_compute(before, after, seconds, &x);
		if (x.util < 90)
			continue;
		found = true;
		f = add_finding(d, full >= 50 ? SEV_CRITICAL : SEV_WARNING, "disk",
				"a request to a saturated disk waits behind the ones queued before it: every reader and "
				"writer of it slows down, and those who wait for them");
		doctor_text(f->what, sizeof(f->what), "disk %s is saturated: busy %.0f %% of the time", after->name, x.util);
		used = (size_t)snprintf(f->numbers, sizeof(f->numbers),
					"%%util %.1f, aqu-sz %.2f, r_await %.2f ms, w_await %.2f ms, %.0f r/s %s/s, %.0f w/s "
					"%s/s (/proc/diskstats, as iostat -x)",
					x.util, x.aqu_sz, x.r_await, x.w_await, x.r_s,
					human_size((uint64_t)(x.rkb_s * 1024), read_text, sizeof(read_text)), x.w_s,
					human_size((uint64_t)(x.wkb_s * 1024), write_text, sizeof(write_text)));
		if (mid && mid_seconds > 0 && seconds > mid_seconds) {
			double await1, await2, queue1, queue2;

			await_between(before, mid, mid_seconds, &await1, &queue1);
			await_between(mid, after, seconds - mid_seconds, &await2, &queue2);
			used += (size_t)snprintf(f->numbers + used, sizeof(f->numbers) - used,
						 "; await %.2f then %.2f ms, aqu-sz %.2f then %.2f (first and second half)",
						 await1, await2, queue1, queue2);
			field_real(&f->data, "await_ms_first_half", await1);
			field_real(&f->data, "await_ms_second_half", await2);
		} else {
			field_null(&f->data, "await_ms_first_half");
			field_null(&f->data, "await_ms_second_half");
		}
		if (some >= 0 && used < sizeof(f->numbers))
			used += (size_t)snprintf(f->numbers + used, sizeof(f->numbers) - used,
						 "; tasks stalled on I/O %.0f %% of the time, all of them %.0f %% (PSI io some, "
						 "full)", some, full >= 0 ? full : 0);
		busiest(w, 3, top, sizeof(top), &top_json);
		if (top[0] && used < sizeof(f->numbers))
			snprintf(f->numbers + used, sizeof(f->numbers) - used, "; most I/O (all disks, /proc/PID/io): %s",
				 top);
		doctor_text(f->more, sizeof(f->more), "iolens stat -x --psi 1; iolens cachetop");
		field_text(&f->data, "device", after->name);
		field_real(&f->data, "util", x.util);
		field_real(&f->data, "aqu_sz", x.aqu_sz);
		field_real(&f->data, "r_await_ms", x.r_await);
		field_real(&f->data, "w_await_ms", x.w_await);
		field_real(&f->data, "r_s", x.r_s);
		field_real(&f->data, "w_s", x.w_s);
		field_real(&f->data, "read_bytes_per_s", x.rkb_s * 1024);
		field_real(&f->data, "write_bytes_per_s", x.wkb_s * 1024);
		field_real_if(&f->data, "psi_io_some_percent", some, some >= 0);
		field_real_if(&f->data, "psi_io_full_percent", full, full >= 0);
		field_list_move(&f->data, "top", &top_json);
	}
	return found;
}

/* ---- Rule: writeback ------------------------------------------------------------------------- */

static void rule_writeback(struct doctor *d, const struct watch *w)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), freerun = (w->thresh + w->bg_thresh) / 2;
	char dirty_text[16], writeback_text[16], limit_text[16], bg_text[16], freerun_text[16];
	char throttled[512] = "";
	struct doctor_fields writers = {0};
	size_t used = 0;
	unsigned nthrottled = 0;
	struct doctor_finding *f;

	for (size_t i = 0; i < w->ntasks; i++) {
		const struct task_watch *t = &w->tasks[i];
		struct doctor_fields *o;

		if (!t->throttled)
			continue;
		if (nthrottled++ < 4)
			used += (size_t)snprintf(throttled + used, used < sizeof(throttled) ? sizeof(throttled) - used : 0,
						 "%s%s (%d) in %u of %u samples", used ? ", " : "", t->comm, (int)t->tid,
						 t->throttled, w->samples);
		o = field_object(&writers, NULL);
		field_int(o, "pid", t->pid);
		field_int(o, "tid", t->tid);
		field_text(o, "comm", t->comm);
		field_int(o, "samples", (int)t->throttled);
	}
	if (w->thresh == PROCFS_UNKNOWN || w->bg_thresh == PROCFS_UNKNOWN || !w->thresh ||
	    (w->dirty_peak + w->writeback_peak < freerun && !nthrottled)) {
		doctor_fields_free(&writers);
		return;
	}
	f = add_finding(d, SEV_WARNING, "writeback",
			"past the dirty limit a writer sleeps in balance_dirty_pages until writeback catches up: writes "
			"that take microseconds take the disk's time, and fsync and reads of that disk wait behind the "
			"flush");
	doctor_text(f->what, sizeof(f->what), "dirty pages reached the dirty limit%s",
	     nthrottled ? ": writers are throttled" : "");
	used = (size_t)snprintf(f->numbers, sizeof(f->numbers),
				"Dirty %s + Writeback %s at the peak, against the dirty limit %s and background limit %s: "
				"writers are throttled from %s (nr_dirty_threshold, nr_dirty_background_threshold in "
				"/proc/vmstat); writeback in %u of %u samples",
				human_size(w->dirty_peak * page, dirty_text, sizeof(dirty_text)),
				human_size(w->writeback_peak * page, writeback_text, sizeof(writeback_text)),
				human_size(w->thresh * page, limit_text, sizeof(limit_text)),
				human_size(w->bg_thresh * page, bg_text, sizeof(bg_text)),
				human_size(freerun * page, freerun_text, sizeof(freerun_text)), w->writeback_samples,
				w->samples);
	if (nthrottled)
		snprintf(f->numbers + used, sizeof(f->numbers) - used, "; waiting in balance_dirty_pages (wchan): %s%s",
			 throttled, nthrottled > 4 ? " and more" : "");
	doctor_text(f->more, sizeof(f->more), "iolens stat -m --vm -d 1; iolens cachetop (DIRTIES); sysctl vm.dirty_ratio "
				       "vm.dirty_bytes");
	field_count(&f->data, "dirty_bytes", w->dirty_peak * page);
	field_count(&f->data, "writeback_bytes", w->writeback_peak * page);
	field_count(&f->data, "dirty_limit_bytes", w->thresh * page);
	field_count(&f->data, "background_limit_bytes", w->bg_thresh * page);
	field_int(&f->data, "writeback_samples", (int)w->writeback_samples);
	field_int(&f->data, "samples", (int)w->samples);
	field_list_move(&f->data, "throttled", &writers);
}

/* ---- Rule: swapping ---------------------------------------------------------------------------- */

static void rule_swap(struct doctor *d, const struct watch *w, bool disk_saturated)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	double in, out, read, written;
	char in_text[16], out_text[16], read_text[16], written_text[16], avail_text[16], total_text[16];
	struct swaps swaps;
	unsigned on_zram = 0;
	bool all_zram = false;
	struct doctor_finding *f;

	if (!w->vm_known || d->seconds <= 0 || w->vm_start.pswpin == PROCFS_UNKNOWN || w->vm_end.pswpin < w->vm_start.pswpin ||
	    w->vm_end.pswpout < w->vm_start.pswpout)
		return;
	in = (double)(w->vm_end.pswpin - w->vm_start.pswpin) * (double)page / d->seconds;
	out = (double)(w->vm_end.pswpout - w->vm_start.pswpout) * (double)page / d->seconds;
	if (in + out < MiB)
		return;
	read = w->vm_end.pgpgin >= w->vm_start.pgpgin ? (double)(w->vm_end.pgpgin - w->vm_start.pgpgin) * 1024 / d->seconds : 0;
	written = w->vm_end.pgpgout >= w->vm_start.pgpgout
			  ? (double)(w->vm_end.pgpgout - w->vm_start.pgpgout) * 1024 / d->seconds
			  : 0;
	/* Swap on zram is compressed memory, not a disk: its cost is CPU. */
	if (swaps_read(&swaps) == 0) {
		for (unsigned i = 0; i < swaps.count; i++)
			on_zram += !strncmp(swaps.area[i].name, "/dev/zram", 9);
		all_zram = swaps.count && on_zram == swaps.count;
		swaps_free(&swaps);
	}
	f = add_finding(d, all_zram ? SEV_INFO : disk_saturated ? SEV_CRITICAL : SEV_WARNING, "swap",
			"swapping is disk I/O in memory's path: a process that touches a page swapped out waits for the "
			"disk, and swap competes with the service's own I/O (the seed's redis refused clients)");
	doctor_text(f->what, sizeof(f->what), "the machine swaps%s",
	     all_zram ? " to zram (compressed memory)" : disk_saturated ? " while a disk is saturated" : "");
	doctor_text(f->numbers, sizeof(f->numbers),
	     "swapped in %s/s, out %s/s (pswpin, pswpout in /proc/vmstat); all disks read %s/s, wrote %s/s "
	     "(pgpgin, pgpgout); memory available %s of %s (MemAvailable)",
	     human_size((uint64_t)in, in_text, sizeof(in_text)), human_size((uint64_t)out, out_text, sizeof(out_text)),
	     human_size((uint64_t)read, read_text, sizeof(read_text)),
	     human_size((uint64_t)written, written_text, sizeof(written_text)),
	     w->mem_known ? human_size(w->mem_end.mem_available, avail_text, sizeof(avail_text)) : "?",
	     w->mem_known ? human_size(w->mem_end.mem_total, total_text, sizeof(total_text)) : "?");
	doctor_text(f->more, sizeof(f->more), "iolens stat -s -m --vm 1; iolens stat -x 1");
	field_real(&f->data, "swap_in_bytes_per_s", in);
	field_real(&f->data, "swap_out_bytes_per_s", out);
	field_real(&f->data, "disk_read_bytes_per_s", read);
	field_real(&f->data, "disk_write_bytes_per_s", written);
	field_bool(&f->data, "zram", all_zram);
	field_count_if(&f->data, "mem_available_bytes", w->mem_end.mem_available, w->mem_known);
}

/* ---- Rule: threads stuck in D ------------------------------------------------------------------- */

static bool listed(const pid_t *pids, size_t count, pid_t pid)
{
	for (size_t i = 0; i < count; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

/* How long op's oldest request of segment s had been in flight at its last sample (0: none in flight). */
static uint64_t op_age_ns(const struct segment *s, unsigned op)
{
	const struct vtrace_stats *now = &s->current[op];

	return now->oldest_ns && s->current_ns > now->oldest_ns ? s->current_ns - now->oldest_ns : 0;
}

/* Whether a libvtrace server has a request in flight past the hang threshold: from the snapshot, as rule_vtrace sees it. */
static bool vtrace_hung(const struct doctor *d, const struct watch *w)
{
	for (size_t i = 0; i < w->vtrace.count; i++) {
		const struct segment *s = w->vtrace.list[i];

		for (unsigned op = 0; s->has_previous && op < s->info->op_count; op++)
			if (!segment_impossible(s, op) && op_age_ns(s, op) >= (uint64_t)(d->config.threshold[TH_HANG_SECONDS] * 1e9))
				return true;
	}
	return false;
}

/*
 * Threads stuck in D, but for iolens's own probes (those that held a mark at the start of the
 * window or hold one now, probes_before and a look now): a probe waits on a filesystem that
 * does not answer, and rule_full says that of the filesystem. A name proves nothing: only a mark.
 */
static void rule_stuck(struct doctor *d, const struct watch *w, const pid_t *probes_before, size_t nprobes_before)
{
	/* From the snapshot, not from the findings of a rule run before: the order of rules says nothing. */
	bool server_hung = vtrace_hung(d, w);
	pid_t *probes = NULL;
	size_t nprobes = d->marks[0] ? bounded_mark_holders(d->marks, &probes) : 0;

	for (size_t i = 0; i < w->ntasks; i++) {
		const struct task_watch *t = &w->tasks[i];
		uint64_t stuck_ns = t->last_ns - t->first_ns, stuck_limit = (uint64_t)(d->config.threshold[TH_STUCK_SECONDS] * 1e9);
		struct doctor_finding *f;

		/* In D at every sample to the last, with no context switch between: one sleep, never woken. */
		if (t->last + 1 != w->samples || t->samples != t->last - t->first + 1 || !t->switches_known ||
		    t->switches_first != t->switches_last || stuck_ns < stuck_limit / 3)
			continue;
		if (listed(probes, nprobes, t->pid) || listed(probes_before, nprobes_before, t->pid))
			continue;
		f = add_finding(d, stuck_ns >= stuck_limit ? SEV_WARNING : SEV_INFO, "stuck",
				"a thread in uninterruptible sleep does nothing else, and only SIGKILL, if anything, ends it, "
				"until what it waits for comes: a disk or a server that does not answer, a page or a lock "
				"that another stuck thread holds");
		if (t->tid == t->pid)
			doctor_text(f->what, sizeof(f->what), "process %d (%s) is stuck in uninterruptible sleep (D)%s%s",
			     (int)t->pid, t->comm, t->wchan[0] ? " in " : "", t->wchan);
		else
			doctor_text(f->what, sizeof(f->what), "thread %d of process %d (%s) is stuck in uninterruptible sleep (D)%s%s",
			     (int)t->tid, (int)t->pid, t->comm, t->wchan[0] ? " in " : "", t->wchan);
		doctor_text(f->numbers, sizeof(f->numbers),
		     "state D in all %u samples over %.1f s with no context switch (/proc/%d/task/%d/stat, status)%s%s%s",
		     t->samples, (double)stuck_ns / 1e9, (int)t->pid, (int)t->tid, t->wchan[0] ? "; waits in " : "",
		     t->wchan, t->wchan[0] ? " (wchan)" : "");
		doctor_text(f->more, sizeof(f->more), "cat /proc/%d/task/%d/stack%s", (int)t->pid, (int)t->tid,
		     server_hung ? "; iolens vstat (a hung server it may wait on)" : "; iolens stat -x 1");
		field_int(&f->data, "pid", t->pid);
		field_int(&f->data, "tid", t->tid);
		field_text(&f->data, "comm", t->comm);
		field_text(&f->data, "wchan", t->wchan);
		field_real(&f->data, "seconds", (double)stuck_ns / 1e9);
	}
	free(probes);
}

/* ---- Rule: a libvtrace service hung, or slower than it was ----------------------------------------- */

static double mean_ms(uint64_t service_ns, uint64_t completions)
{
	return completions ? (double)service_ns / (double)completions / 1e6 : 0;
}

static void rule_vtrace(struct doctor *d, const struct watch *w)
{
	for (size_t i = 0; i < w->vtrace.count; i++) {
		const struct segment *s = w->vtrace.list[i];
		const struct vtrace_info *info = s->info;

		if (!s->has_previous)
			continue;
		for (unsigned op = 0; op < info->op_count; op++) {
			const struct vtrace_stats *now = &s->current[op], *then = &s->previous[op];
			const char *name = vtrace_reader_op_name(s->reader, op);
			uint64_t age = op_age_ns(s, op);
			uint64_t done = now->completions > then->completions ? now->completions - then->completions : 0;
			double window = mean_ms(now->service_ns - then->service_ns, done);
			double before = mean_ms(then->service_ns, then->completions);
			struct doctor_finding *f;

			if (segment_impossible(s, op)) /* counters no server writes: nothing to say from them */
				continue;
			if (age >= (uint64_t)(d->config.threshold[TH_HANG_SECONDS] * 1e9)) {
				f = add_finding(d, age >= 60 * 1000000000ull ? SEV_CRITICAL : SEV_WARNING, "vtrace-hang",
						"a request that never ends holds its client, and often a thread and a lock of the "
						"server: other requests pile up behind it (a FUSE client waiting for a page the "
						"request should fill sleeps in D)");
				doctor_text(f->what, sizeof(f->what), "service %s (pid %d) is hung on %s", info->service, (int)s->pid,
				     name);
				doctor_text(f->numbers, sizeof(f->numbers),
				     "%llu %s request%s in flight, the oldest for %.1f s; %llu completed in the %.1f s watched "
				     "(%s)",
				     (unsigned long long)(now->begins - now->completions), name,
				     now->begins - now->completions == 1 ? "" : "s", (double)age / 1e9,
				     (unsigned long long)done, d->seconds, s->path);
			} else if (done >= 10 && then->completions >= 50 && window >= 4 * before && window - before >= 0.5) {
				f = add_finding(d, SEV_WARNING, "vtrace-latency",
						"the service's clients wait that much longer for each answer");
				doctor_text(f->what, sizeof(f->what), "service %s (pid %d): %s takes %.0f times longer than before",
				     info->service, (int)s->pid, name, window / before);
				doctor_text(f->numbers, sizeof(f->numbers),
				     "mean %.3f ms over %llu requests in the %.1f s watched, against %.3f ms over the %llu "
				     "before (%s)",
				     window, (unsigned long long)done, d->seconds, before, (unsigned long long)then->completions,
				     s->path);
			} else {
				continue;
			}
			doctor_text(f->more, sizeof(f->more), "iolens vstat %s 1", s->path);
			field_text(&f->data, "service", info->service);
			field_int(&f->data, "pid", (int)s->pid);
			field_text(&f->data, "segment", s->path);
			field_text(&f->data, "op", name);
			field_count(&f->data, "in_flight", now->begins - now->completions);
			field_real(&f->data, "oldest_seconds", (double)age / 1e9);
			field_count(&f->data, "completions", done);
			field_real(&f->data, "mean_ms", window);
			field_real(&f->data, "mean_ms_before", before);
		}
	}
}

/* ---- Rule: reads that miss the cache, a working set larger than the cache ------------------------ */

static bool is_direct(const struct direct_set *direct, pid_t pid)
{
	for (size_t i = 0; i < direct->count; i++)
		if (direct->procs[i].pid == pid)
			return true;
	return false;
}

struct miss_row {
	pid_t pid;             /* 0 for a file; for processes of one command, the one that missed most */
	unsigned processes;
	pid_t pids[5];         /* processes of one command: those that missed most */
	pid_t newest;          /* and the newest of them (the highest pid): the likeliest still alive */
	uint64_t memcg;        /* the memory cgroup id of the one that missed most (eBPF), for when none lives */
	char comm[32];
	dev_t dev;             /* a file's */
	uint64_t ino;
	uint64_t accesses, misses; /* pages read or mapped, and of those not cached */
	uint64_t refaults;     /* of the misses, pages reclaim had evicted (eBPF); UINT64_MAX unknown */
};

/* Pages read or mapped, and of those not cached, as eBPF counted them. */
static struct miss_row counted(const struct cache_counters *c)
{
	uint64_t accesses = c->reads + c->maps, hits = cachestat_hits(c);

	return (struct miss_row){ .accesses = accesses, .misses = accesses > hits ? accesses - hits : 0,
				  .refaults = c->refaults };
}

static int compare_misses(const void *a_, const void *b_)
{
	const struct miss_row *a = a_, *b = b_;

	return (b->misses > a->misses) - (b->misses < a->misses);
}

/*
 * Processes whose reads mostly missed, each by its pid; those of one command added into one
 * row (one short-lived process after another, as a shell loop runs them, is one reader),
 * named by the pids that missed most. A process that did not mostly miss is in no row: an
 * idle process is never named for another's misses. O_DIRECT processes and this one left out.
 */
static size_t group_by_command(struct miss_row *rows, size_t nrows, const struct direct_set *direct)
{
	size_t kept = 0;

	if (nrows > 1)
		qsort(rows, nrows, sizeof(*rows), compare_misses);
	for (size_t i = 0; i < nrows; i++) {
		size_t k;

		if (rows[i].pid == getpid() || is_direct(direct, rows[i].pid) || !rows[i].accesses ||
		    rows[i].misses * 2 < rows[i].accesses)
			continue;
		for (k = 0; k < kept && strcmp(rows[k].comm, rows[i].comm); k++)
			;
		if (k == kept) {
			rows[kept] = rows[i];
			rows[kept].processes = 1;
			rows[kept].newest = rows[i].pid;
			rows[kept++].pids[0] = rows[i].pid;
			continue;
		}
		if (rows[i].pid > rows[k].newest)
			rows[k].newest = rows[i].pid;
		if (rows[k].processes < sizeof(rows[k].pids) / sizeof(rows[k].pids[0]))
			rows[k].pids[rows[k].processes] = rows[i].pid;
		rows[k].processes++;
		rows[k].accesses += rows[i].accesses;
		rows[k].misses += rows[i].misses;
		rows[k].refaults = rows[k].refaults == UINT64_MAX || rows[i].refaults == UINT64_MAX
					   ? UINT64_MAX : rows[k].refaults + rows[i].refaults;
	}
	return kept;
}

/* Signs that memory is short, whoever it is short for: stalls on memory, little of it available. */
struct memory_signs {
	double psi_some;   /* percent of the window some task stalled on memory; -1 unknown */
	bool low_available; /* MemAvailable under a tenth of MemTotal at the end */
	bool short_now;     /* either */
};

#define MEMORY_PSI_SHORT 10.0 /* percent of the window: a reader whose pages are evicted now and then stalls 1-7 % */

static struct memory_signs memory_signs(const struct doctor *d, const struct watch *w)
{
	struct memory_signs m = { .psi_some = psi_share(&w->memory_start.some, &w->memory_end.some, d->seconds) };

	m.low_available = w->mem_known && w->mem_end.mem_total && w->mem_end.mem_available < w->mem_end.mem_total / 10;
	m.short_now = m.low_available || m.psi_some >= MEMORY_PSI_SHORT;
	return m;
}

/*
 * The memory cgroup of a row's processes: of the first still alive, else the one eBPF saw them
 * in (a shell loop's readers are short-lived, ended by the time the window is over).
 */
static bool reader_memcg(const struct miss_row *r, struct memcg *out)
{
	for (unsigned i = 0; i < r->processes && i < 5; i++)
		if (memcg_of_pid(r->pids[i], out) == 0)
			return true;
	if (r->newest && memcg_of_pid(r->newest, out) == 0)
		return true;
	return r->memcg && memcg_of_id(r->memcg, out) == 0;
}

static const char *pids_text(const struct miss_row *r, char *buf, size_t len)
{
	size_t used = 0, shown = r->processes < 5 ? r->processes : 5;

	buf[0] = '\0';
	for (size_t i = 0; i < shown && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%d", i ? ", " : "", (int)r->pids[i]);
	if (r->processes > shown && used < len)
		snprintf(buf + used, len - used, ", ...");
	return buf;
}

/*
 * Findings for the rows (processes, or files when names is given) whose reads mostly missed,
 * at a rate that matters: at most 5. A warning when pages evicted are read back (refaults)
 * and there is a sign that memory is short for the reader: its memory cgroup at its limit,
 * memory stalls (PSI), little memory available. Else information: first reads of data not
 * cached yet miss too, and pages something else evicted (DAMON, proactive reclaim) are no
 * shortage of the cache. Returns whether a reader's memory cgroup was at its limit.
 */
static bool report_misses(struct doctor *d, const struct watch *w, struct miss_row *rows, size_t nrows,
			  const struct memory_signs *memory, bool system_refaulting, struct inode_names *names)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	size_t reported = 0;
	bool any_at_limit = false;

	if (nrows > 1)
		qsort(rows, nrows, sizeof(*rows), compare_misses);
	for (size_t i = 0; i < nrows && reported < 5; i++) {
		const struct miss_row *r = &rows[i];
		double rate = (double)(r->misses * page) / d->seconds, hit;
		char rate_text[16], unknown[64], pids[96], limit_text[16], use_text[16], cgroup_text[700] = "",
		     refaults_text[48] = "";
		bool refaulting = r->refaults == UINT64_MAX ? system_refaulting : r->refaults > 0, at_limit = false;
		const char *path = NULL;
		struct memcg cgroup;
		struct doctor_finding *f;

		if (rate < MiB || r->accesses == 0 || r->misses * 2 < r->accesses)
			continue;
		if (!names && reader_memcg(r, &cgroup)) {
			at_limit = memcg_at_limit(&cgroup);
			any_at_limit |= at_limit;
			if (cgroup.max != MEMCG_UNLIMITED)
				doctor_text(cgroup_text, sizeof(cgroup_text), "; memory cgroup %s (v%d): %s used of its %s limit%s, "
				     "%llu pages refaulted since it was made (memory.stat)", cgroup.path, cgroup.version,
				     human_size(cgroup.current, use_text, sizeof(use_text)),
				     human_size(cgroup.max, limit_text, sizeof(limit_text)), at_limit ? ", at its limit" : "",
				     (unsigned long long)cgroup.refaults);
		}
		hit = 100.0 * (double)(r->accesses - (r->misses < r->accesses ? r->misses : r->accesses)) / (double)r->accesses;
		reported++;
		if (refaulting && at_limit)
			f = add_finding(d, SEV_WARNING, "cache-miss",
					"each read that misses waits for the disk, and pages evicted are read back: the "
					"memory cgroup's limit keeps the cache smaller than what is read");
		else if (refaulting && memory->short_now)
			f = add_finding(d, SEV_WARNING, "cache-miss",
					"each read that misses waits for the disk, and pages evicted are read back while "
					"memory is short: the cache is too small for what is read");
		else
			f = add_finding(d, SEV_INFO, "cache-miss",
					refaulting ? "each read that misses waits for the disk; pages evicted are read back, "
						     "but memory is not short (no stalls, memory available): something else "
						     "evicts them (DAMON, proactive reclaim, drop_caches)"
						   : "each read that misses waits for the disk; no evicted page was read "
						     "back, so these may be first reads of data not cached yet");
		if (names) {
			path = inode_names_get(names, r->dev, r->ino, unknown, sizeof(unknown));
			doctor_text(f->what, sizeof(f->what), "file %s: its reads mostly miss the page cache", path);
		} else if (r->processes > 1) {
			doctor_text(f->what, sizeof(f->what), "%u processes named %s (%s): their reads mostly miss the page cache%s",
			     r->processes, r->comm, pids_text(r, pids, sizeof(pids)), at_limit ? " in a memory cgroup at its limit" : "");
		} else {
			doctor_text(f->what, sizeof(f->what), "process %d (%s): its reads mostly miss the page cache%s", (int)r->pid,
			     r->comm, at_limit ? " in a memory cgroup at its limit" : "");
		}
		if (r->refaults != UINT64_MAX)
			doctor_text(refaults_text, sizeof(refaults_text), ", %llu of them refaults", (unsigned long long)r->refaults);
		doctor_text(f->numbers, sizeof(f->numbers), "%.0f %% of %llu pages read or mapped were cached; %llu missed%s, %s/s (%s)%s",
		     hit, (unsigned long long)r->accesses, (unsigned long long)r->misses, refaults_text,
		     human_size((uint64_t)rate, rate_text, sizeof(rate_text)),
		     w->bpf ? "eBPF, as cachetop counts" : "estimated from /proc/PID/io: no eBPF", cgroup_text);
		if (names) {
			doctor_text(f->more, sizeof(f->more), "iolens cachetop --files; iolens pcstat %s", path);
			field_text(&f->data, "file", path);
			doctor_text(unknown, sizeof(unknown), "%u:%u", major(r->dev), minor(r->dev));
			field_text(&f->data, "dev", unknown);
			field_count(&f->data, "ino", r->ino);
		} else {
			struct doctor_fields *list;

			doctor_text(f->more, sizeof(f->more), "iolens cachetop -p %d; iolens cachetop --files%s", (int)r->pid,
			     at_limit ? "; iolens cachetop --cgroup" : "");
			field_int(&f->data, "pid", r->pid);
			field_text(&f->data, "comm", r->comm);
			field_int(&f->data, "processes", (int)r->processes);
			list = field_list(&f->data, "pids");
			for (unsigned k = 0; k < r->processes && k < 5; k++)
				field_int(list, NULL, r->pids[k]);
			if (cgroup_text[0]) {
				field_text(&f->data, "cgroup", cgroup.path);
				field_int(&f->data, "cgroup_version", cgroup.version);
				field_count(&f->data, "cgroup_memory_max", cgroup.max);
				field_count(&f->data, "cgroup_memory_current", cgroup.current);
				field_count(&f->data, "cgroup_refaults", cgroup.refaults);
				field_bool(&f->data, "cgroup_at_limit", at_limit);
			}
		}
		field_count(&f->data, "pages", r->accesses);
		field_count(&f->data, "misses", r->misses);
		field_count_if(&f->data, "refaults", r->refaults, r->refaults != UINT64_MAX);
		field_real(&f->data, "hit_percent", hit);
		field_real(&f->data, "miss_bytes_per_s", rate);
		field_text(&f->data, "counted", w->bpf ? "ebpf" : "proc");
	}
	return any_at_limit;
}

/* Refaults, system-wide: pages read back soon after the cache evicted them (/proc/vmstat). */
struct refault_window {
	uint64_t refaults, read_pages;
	double rate, share; /* bytes/s; percent of the pages read from disks */
	bool high;          /* at a rate that matters, and a large share of what is read */
};

static struct refault_window refault_window(const struct doctor *d, const struct watch *w)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	struct refault_window r = {0};

	if (d->seconds <= 0 || !w->vm_known || w->vm_start.workingset_refault_file == PROCFS_UNKNOWN ||
	    w->vm_end.workingset_refault_file < w->vm_start.workingset_refault_file)
		return r;
	r.refaults = w->vm_end.workingset_refault_file - w->vm_start.workingset_refault_file;
	r.read_pages = w->vm_end.pgpgin >= w->vm_start.pgpgin ? (w->vm_end.pgpgin - w->vm_start.pgpgin) * 1024 / page : 0;
	r.rate = (double)(r.refaults * page) / d->seconds;
	/* Of what was read from disks, the share that had been cached a moment ago. */
	r.share = r.read_pages ? 100.0 * (double)r.refaults / (double)r.read_pages : 100.0;
	r.high = r.rate >= MiB && r.share >= 25;
	return r;
}

/*
 * A warning only with a sign that memory is short (a reader's memory cgroup at its limit,
 * memory stalls, little memory available): refaults alone, on a machine with memory free,
 * are pages something else evicted, said as information.
 */
static void rule_refaults(struct doctor *d, const struct watch *w, const struct refault_window *r,
			  const struct memory_signs *memory, bool cgroup_at_limit)
{
	char rate_text[16], cache_text[16], total_text[16], available_text[16], psi_text[32];
	bool matters = cgroup_at_limit || memory->short_now;
	struct doctor_finding *f;

	if (!r->high)
		return;
	f = add_finding(d, matters ? SEV_WARNING : SEV_INFO, "refaults",
			matters ? "pages the cache evicted are read again soon after: the data in use is larger than "
				  "the cache it gets (memory, or a cgroup's limit), so reads that could hit go to the disk"
				: "pages the cache evicted are read again soon after, but memory is not short (no stalls, "
				  "memory available, no cgroup at its limit): something evicts idle pages (DAMON, "
				  "proactive reclaim, drop_caches) that are then read back");
	doctor_text(f->what, sizeof(f->what), matters ? "the working set is larger than the page cache: evicted pages are read back"
					       : "evicted pages are read back, with memory to spare");
	if (memory->psi_some >= 0)
		doctor_text(psi_text, sizeof(psi_text), "%.1f %%", memory->psi_some);
	else
		doctor_text(psi_text, sizeof(psi_text), "unknown");
	doctor_text(f->numbers, sizeof(f->numbers),
	     "%s/s refaulted (%llu pages: workingset_refault_file in /proc/vmstat), %.0f %% of the pages read from "
	     "disks (pgpgin); page cache %s of %s memory, %s available; memory stalls (PSI some) %s of the time%s",
	     human_size((uint64_t)r->rate, rate_text, sizeof(rate_text)), (unsigned long long)r->refaults,
	     r->share > 100 ? 100 : r->share, w->mem_known ? human_size(w->mem_end.cached, cache_text, sizeof(cache_text)) : "?",
	     w->mem_known ? human_size(w->mem_end.mem_total, total_text, sizeof(total_text)) : "?",
	     w->mem_known ? human_size(w->mem_end.mem_available, available_text, sizeof(available_text)) : "?", psi_text,
	     cgroup_at_limit ? "; a reader's memory cgroup at its limit (see cache-miss)" : "");
	doctor_text(f->more, sizeof(f->more), "iolens cachestat 1 (EVICTIONS, REFAULTS); iolens cachetop --cgroup");
	field_count(&f->data, "refaults", r->refaults);
	field_real(&f->data, "refault_bytes_per_s", r->rate);
	field_count(&f->data, "read_pages", r->read_pages);
	field_real_if(&f->data, "memory_psi_some_percent", memory->psi_some, memory->psi_some >= 0);
	field_count_if(&f->data, "mem_available_bytes", w->mem_end.mem_available, w->mem_known);
	field_bool(&f->data, "cgroup_at_limit", cgroup_at_limit);
}

/*
 * Reads that miss the cache, by process and by file, then refaults system-wide; the same
 * signs of a memory shortage decide whether either is a warning.
 */
static void rule_cache(struct doctor *d, const struct watch *w)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	struct refault_window refaults = refault_window(d, w);
	struct memory_signs memory = memory_signs(d, w);
	struct cachestat_proc *procs = NULL;
	struct cachestat_file *files = NULL;
	size_t nrows = 0, nprocs = 0, nfiles = 0;
	struct miss_row *rows = NULL;
	bool at_limit = false;

	if (d->seconds <= 0)
		return;
	if (w->bpf && cachestat_take(&procs, &nprocs, &files, &nfiles) == 0) {
		rows = xcalloc(nprocs ? nprocs : 1, sizeof(*rows));
		for (size_t i = 0; i < nprocs; i++) {
			rows[nrows] = counted(&procs[i].counters);
			rows[nrows].pid = (pid_t)procs[i].pid;
			rows[nrows].memcg = procs[i].memcg;
			snprintf(rows[nrows].comm, sizeof(rows[nrows].comm), "%.16s", procs[i].comm);
			nrows++;
		}
		free(procs);
	} else {
		/* Without eBPF, as cachetop's estimate: read by system calls against fetched from storage. */
		rows = xcalloc(w->nrates ? w->nrates : 1, sizeof(*rows));
		for (size_t i = 0; i < w->nrates; i++) {
			const struct io_rate *r = &w->rates[i];

			rows[nrows] = (struct miss_row){ .pid = r->pid, .accesses = (uint64_t)(r->rchar_rate * d->seconds) / page,
							 .misses = (uint64_t)(r->read_rate * d->seconds) / page,
							 .refaults = UINT64_MAX };
			snprintf(rows[nrows].comm, sizeof(rows[nrows].comm), "%s", r->comm);
			nrows++;
		}
	}
	nrows = group_by_command(rows, nrows, &w->direct);
	at_limit = report_misses(d, w, rows, nrows, &memory, refaults.high, NULL);
	free(rows);

	/* The same by file, named from what processes have open or mapped. */
	if (files) {
		struct inode_names names = {0};
		struct file_id *ids = xcalloc(nfiles ? nfiles : 1, sizeof(*ids));
		size_t wanted = 0;

		rows = xcalloc(nfiles ? nfiles : 1, sizeof(*rows));
		for (size_t i = 0; i < nfiles; i++) {
			rows[i] = counted(&files[i].counters);
			rows[i].dev = files[i].dev;
			rows[i].ino = files[i].ino;
			if (rows[i].accesses && rows[i].misses * 2 >= rows[i].accesses &&
			    (double)(rows[i].misses * page) / d->seconds >= MiB)
				ids[wanted++] = (struct file_id){ files[i].dev, files[i].ino };
		}
		/* Only the files reported are named, within a second. */
		inode_names_resolve(&names, ids, wanted, NAMING_NS, NULL);
		report_misses(d, w, rows, nfiles, &memory, at_limit || refaults.high, &names);
		inode_names_free(&names);
		free(ids);
		free(rows);
		free(files);
	}
	rule_refaults(d, w, &refaults, &memory, at_limit);
}

/* ---- The command ------------------------------------------------------------------------- */

static _Noreturn void usage(void)
{
	printf("Usage:\n"
	       " %s [options] [seconds]\n"
	       "\n"
	       "Look at the machine for SECONDS (default 5; decimals allowed, 0 to 3600) and say\n"
	       "what is wrong with its I/O, the worst first: what, the numbers that show it, why it\n"
	       "matters, and the iolens command that shows more. A healthy machine gets one line.\n"
	       "\n"
	       "Rules (the thresholds are the defaults; see --set):\n",
	       program_name);
	for (const struct doctor_rule_info *r = doctor_rules; r->name; r++) {
		const char *line = r->help;

		printf("  %-15s", r->name);
		while (*line) {
			size_t n = strcspn(line, "\n");

			printf("%s%.*s\n", line == r->help ? "" : "                 ", (int)n, line);
			line += n + (line[n] == '\n');
		}
	}
	printf("\n"
	       "What is normal here, from " DOCTOR_CONFIG_PATH " (when there), then the flags:\n"
	       "      --config FILE      that file instead (it must exist)\n"
	       "      --no-config        no file\n"
	       "      --disable RULE     no finding of RULE\n"
	       "      --accept 'RULE comm=NAME'  no finding of RULE (or * for any) about processes\n"
	       "                         named NAME (or libvtrace services); 'RULE path=GLOB': about\n"
	       "                         files or mounts matching GLOB (a database that uses O_DIRECT)\n"
	       "      --set NAME=VALUE   a threshold: full.warning_percent (90), full.critical_percent\n"
	       "                         (98), stuck.seconds (3), vtrace-hang.seconds (1),\n"
	       "                         odirect.read_bytes_per_s (1MiB)\n"
	       "\n"
	       "Options:\n"
	       "      --json             one JSON document\n"
	       "  -h, --help             show this help\n"
	       "  -V, --version          show the version\n"
	       "\n"
	       "Exit status: 0 nothing at warning level or worse, 3 a warning, 4 something critical;\n"
	       "1 when the diagnosis itself failed, 2 on bad usage.\n"
	       "\n"
	       "Examples:\n"
	       "  %s             five seconds, then the findings\n"
	       "  %s --json 10   ten seconds, for a script\n",
	       program_name, program_name);
	exit(EXIT_OK);
}

enum { OPT_CONFIG = 0x2000, OPT_NO_CONFIG, OPT_DISABLE, OPT_ACCEPT, OPT_SET };

/*
 * Takes out the findings of disabled rules, and those the configuration accepts: by the
 * process's command (data "comm", or a libvtrace "service"), or a path (data "files",
 * "file", "mount", "segment") matching a glob. The accepted ones go to *out.
 */
static size_t filter_findings(struct doctor *d, struct doctor_accepted **out)
{
	struct doctor_findings *all = &d->findings;
	size_t kept = 0, n = 0;

	*out = NULL;
	for (size_t i = 0; i < all->count; i++) {
		struct doctor_finding *f = &all->list[i];
		const char *paths[8], *comm = doctor_field_text(&f->data, "comm");
		const struct doctor_field *files = doctor_field_get(&f->data, "files");
		const struct doctor_accept *a;
		size_t npaths = 0;

		if (doctor_config_disabled(&d->config, f->rule)) {
			doctor_fields_free(&f->data);
			continue;
		}
		if (files && files->kind == FIELD_LIST)
			for (size_t k = 0; k < files->children.count && npaths < 4; k++)
				paths[npaths++] = files->children.items[k].text;
		paths[npaths++] = doctor_field_text(&f->data, "file");
		paths[npaths++] = doctor_field_text(&f->data, "mount");
		paths[npaths++] = doctor_field_text(&f->data, "segment");
		a = doctor_config_accepted(&d->config, f->rule, comm, paths, npaths);
		if (!a && doctor_field_text(&f->data, "service"))
			a = doctor_config_accepted(&d->config, f->rule, doctor_field_text(&f->data, "service"), NULL, 0);
		if (a) {
			*out = xrealloc(*out, (n + 1) * sizeof(**out));
			(*out)[n].rule = f->rule;
			snprintf((*out)[n].what, sizeof((*out)[n].what), "%s", f->what);
			snprintf((*out)[n].by, sizeof((*out)[n].by), "accept %s %s=%s (%s)", a->rule, a->path ? "path" : "comm",
				 a->value, a->source);
			n++;
			doctor_fields_free(&f->data);
			continue;
		}
		all->list[kept++] = *f;
	}
	all->count = kept;
	return n;
}

static int compare_findings(const void *a_, const void *b_)
{
	const struct doctor_finding *a = a_, *b = b_;

	return (int)b->severity - (int)a->severity;
}

int cmd_doctor(int argc, char **argv)
{
	static const struct option long_options[] = {
		COMMON_LONG_OPTIONS,
		{ "json", no_argument, NULL, OUT_OPT_JSON },
		{ "config", required_argument, NULL, OPT_CONFIG },
		{ "no-config", no_argument, NULL, OPT_NO_CONFIG },
		{ "disable", required_argument, NULL, OPT_DISABLE },
		{ "accept", required_argument, NULL, OPT_ACCEPT },
		{ "set", required_argument, NULL, OPT_SET },
		{ 0 }
	};
	struct doctor d = { .seconds = 5 };
	struct { char *text; const char *flag; } *statements = NULL;
	size_t nstatements = 0;
	const char *config_path = DOCTOR_CONFIG_PATH;
	bool config_given = false;
	char why[512];
	struct doctor_accepted *accepted = NULL;
	size_t naccepted = 0;
	struct watch w = {0};
	pid_t *probes = NULL;
	size_t nprobes = 0;
	enum doctor_severity worst;
	struct doctor_report report;
	int rc;
	bool json = false, cache_by_ebpf, direct_by_ebpf;
	int opt;

	while ((opt = getopt_long(argc, argv, "hV", long_options, NULL)) != -1) {
		switch (opt) {
		case OUT_OPT_JSON:
			json = true;
			break;
		case OPT_CONFIG:
			config_path = optarg;
			config_given = true;
			break;
		case OPT_NO_CONFIG:
			config_path = NULL;
			break;
		case OPT_DISABLE:
		case OPT_ACCEPT:
		case OPT_SET: {
			/* Said after the file, so flags win: kept as statements and run once it is read. */
			size_t n = strlen(optarg) + 16;
			char *statement = xcalloc(1, n);

			snprintf(statement, n, "%s%s", opt == OPT_DISABLE ? "disable " : opt == OPT_ACCEPT ? "accept " : "",
				 optarg);
			statements = xrealloc(statements, (nstatements + 1) * sizeof(*statements));
			statements[nstatements].text = statement;
			statements[nstatements++].flag = opt == OPT_DISABLE ? "--disable" : opt == OPT_ACCEPT ? "--accept" : "--set";
			break;
		}
		case 'h':
			usage();
		case 'V':
			print_version();
		default:
			usage_hint();
		}
	}
	if (optind < argc && parse_seconds(argv[optind++], 3600, true, &d.seconds) != 0)
		usage_error("seconds: '%s' is not a number of seconds from 0 to 3600", argv[optind - 1]);
	if (optind < argc)
		usage_error("too many arguments: '%s'", argv[optind]);
	doctor_config_init(&d.config);
	if (config_path && doctor_config_load(&d.config, config_path, config_given, why, sizeof(why)) < 0)
		usage_error("%s", why);
	for (size_t i = 0; i < nstatements; i++) {
		if (doctor_config_statement(&d.config, statements[i].text, strlen(statements[i].text), statements[i].flag,
					    why, sizeof(why)) != 0)
			usage_error("%s", why);
		free(statements[i].text);
	}
	free(statements);
	if (doctor_config_check(&d.config, "thresholds", why, sizeof(why)) != 0)
		usage_error("%s", why);
	stop_on_signals();

	if ((d.marks_error = bounded_mark_dir(d.marks, sizeof(d.marks))) != 0)
		d.marks[0] = '\0';
	watch_prepare(&w, d.marks, doctor_config_disabled(&d.config, "odirect"));
	cache_by_ebpf = w.bpf;
	direct_by_ebpf = w.direct.ebpf;
	if (geteuid() != 0)
		fprintf(stderr, "%s: not root: other users' processes, their files and their I/O are not seen\n",
			program_name);
	if (!w.bpf)
		fprintf(stderr, "%s: cache misses per process estimated from /proc/PID/io, none per file: %s\n",
			program_name, w.bpf_why ? w.bpf_why : "no eBPF");
	if (!w.direct.ebpf && !w.direct.off)
		fprintf(stderr, "%s: O_DIRECT files looked for in /proc/PID/fdinfo at every sample, which misses one "
			"open only between two: %s\n", program_name, w.direct.why ? w.direct.why : "no eBPF");
	if (d.marks[0])
		nprobes = bounded_mark_holders(d.marks, &probes);
	watch_start(&w);
	if (d.seconds > 0) /* else one sample: no rates */
		d.seconds = watch_run(&w, d.seconds);
	else
		watch_run(&w, 0);
	rule_direct(&d, &w.direct);
	rule_cache(&d, &w);
	rule_swap(&d, &w, rule_disk(&d, &w));
	rule_writeback(&d, &w);
	rule_vtrace(&d, &w);
	rule_stuck(&d, &w, probes, nprobes);
	rule_full(&d);
	watch_free(&w);
	free(probes);
	naccepted = filter_findings(&d, &accepted);

	if (d.findings.count > 1)
		qsort(d.findings.list, d.findings.count, sizeof(*d.findings.list), compare_findings);
	worst = doctor_worst(&d.findings);
	report = (struct doctor_report){
		.seconds = d.seconds,
		.cache_mode = cache_by_ebpf ? "ebpf" : "procfs",
		.odirect_mode = doctor_config_disabled(&d.config, "odirect") ? "off" : direct_by_ebpf ? "ebpf" : "fdinfo",
		.findings = &d.findings,
		.accepted = accepted,
		.naccepted = naccepted,
	};
	rc = json ? doctor_write_json(&report, stdout) : doctor_write_text(&report, stdout);
	free(accepted);
	doctor_config_free(&d.config);
	doctor_findings_free(&d.findings);
	if (rc != 0 || fflush(stdout) != 0)
		return output_failed();
	return worst == SEV_CRITICAL ? EXIT_CRITICAL : worst == SEV_WARNING ? EXIT_WARNING : EXIT_OK;
}
