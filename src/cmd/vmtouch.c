/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vmtouch.c: a link named vmtouch takes vmtouch's flags (-t -e -l -L -v -q -m -p -i -I -b -0 -f -F
 * -h), walks as it walks and prints its summary and warnings.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cmd/command.h"
#include "cmd/compat.h"
#include "collect/files.h"
#include "collect/pagecache.h"
#include "common/inode_set.h"
#include "common/path_walk.h"
#include "common/util.h"

/* vmtouch's -v bar: at most this many cells, each 'O' all resident, 'o' some, ' ' none. */
#define CHART_WIDTH 60
#define STATUS_PIECE 65536u
#define READ_CHUNK (1u << 20)

struct vmtouch {
	bool touch, evict, lock, lock_all, verbose, quiet;
	uint64_t offset, max_length; /* -p: the range of every file (max_length 0: to the end) */
	uint64_t files, directories, pages, pages_resident;
	unsigned char *status;
	char *buffer;
	struct { void *address; size_t length; } *locked;
	size_t nlocked;
	struct refusals refused;
	bool failed;
	/* The walk, as vmtouch's vmtouch_crawl() does it. */
	bool follow, one_filesystem, count_hard_links;
	char *const *ignore, *const *only;
	size_t nignore, nonly;
	uint64_t max_size;
	struct inode_set seen;           /* files and directories with several names, met once */
	struct { dev_t dev; ino_t ino; } *crawl; /* the directories from the argument down */
	size_t depth, crawl_capacity;
	dev_t root_dev;
	char *path;
	size_t path_capacity;
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int signal)
{
	stop_signal = signal;
}

static _Noreturn void vmtouch_usage(FILE *stream, int status)
{
	fprintf(stream,
		"Usage:\n"
		" %s [OPTIONS] ... FILES OR DIRECTORIES ...\n"
		"\n"
		"vmtouch's flags, run by iolens (iolens pcstat, warm and evict do the same work\n"
		"with tables, JSON and CSV). Directories are always walked, as vmtouch does.\n"
		"\n"
		"Options:\n"
		"  -t            touch: load the pages into the page cache (iolens warm)\n"
		"  -e            evict the pages from the page cache (iolens evict)\n"
		"  -l            touch and lock the pages (mlock) until Ctrl-C (warm --lock)\n"
		"  -L            touch and lock them with mlockall(2): NOT -L of iolens pcstat,\n"
		"                evict and warm, which follows symbolic links (here that is -f)\n"
		"  -m SIZE       skip files larger than SIZE (4096, 4k, 100M, 1.5G)\n"
		"  -p RANGE      only this part of each file: A-B, A- or B (sizes as -m)\n"
		"  -f            follow symbolic links\n"
		"  -F            do not cross into other filesystems\n"
		"  -h            count a file again under each of its hard links (NOT help)\n"
		"  -i PATTERN    skip files and directories whose name matches (fnmatch)\n"
		"  -I PATTERN    only files whose name matches\n"
		"  -b LISTFILE   the files and directories in LISTFILE, one a line (- is stdin)\n"
		"  -0            with -b, names end with a NUL byte, not a line feed\n"
		"  -P PIDFILE    with -l or -L, write the process id there\n"
		"  -v            a line and a residency bar per file\n"
		"  -q            quiet: no summary, no warnings\n"
		"  -d, -w        daemon mode: not here; run vmtouch -l under systemd or nohup\n"
		"\n"
		"What vmtouch skips is said in its words (vmtouch: WARNING: ...), exit status 0.\n",
		program_name);
	exit(status);
}

/* vmtouch's sizes: 1023, then whole K, M, G, rounded down. */
static const char *pretty_size(uint64_t bytes)
{
	static char out[32];
	static const char *const units[] = { "", "K", "M", "G" };
	unsigned unit = 0;

	while (bytes >= 1024 && unit < 3) {
		bytes /= 1024;
		unit++;
	}
	snprintf(out, sizeof(out), "%llu%s", (unsigned long long)bytes, units[unit]);
	return out;
}

/*
 * Writes "\r[OOo  ] resident/pages" into out (CHART_WIDTH + 48 bytes), from the page cache
 * now, a piece of mincore's vector at a time.
 */
static int make_chart(struct vmtouch *vt, int fd, uint64_t first_page, uint64_t pages, char *out)
{
	uint64_t per_cell = pages <= CHART_WIDTH ? 1 : pages / CHART_WIDTH + 1;
	uint64_t in_cell = 0, cached_in_cell = 0, resident = 0;
	size_t used = 2;
	int rc;

	memcpy(out, "\r[", 2);
	for (uint64_t done = 0; done < pages; done += STATUS_PIECE) {
		uint64_t count = pages - done < STATUS_PIECE ? pages - done : STATUS_PIECE;

		rc = pagecache_resident(fd, first_page + done, count, vt->status);
		if (rc)
			return rc;
		for (uint64_t i = 0; i < count; i++) {
			resident += vt->status[i] & 1;
			cached_in_cell += vt->status[i] & 1;
			if (++in_cell == per_cell) {
				out[used++] = cached_in_cell == per_cell ? 'O' : cached_in_cell ? 'o' : ' ';
				in_cell = cached_in_cell = 0;
			}
		}
	}
	if (in_cell)
		out[used++] = cached_in_cell == in_cell ? 'O' : cached_in_cell ? 'o' : ' ';
	snprintf(out + used, 48, "] %llu/%llu", (unsigned long long)resident, (unsigned long long)pages);
	return 0;
}

static int touch_range(struct vmtouch *vt, int fd, uint64_t offset, uint64_t length)
{
	while (length && !stop_signal) {
		ssize_t got = pread(fd, vt->buffer, length < READ_CHUNK ? (size_t)length : READ_CHUNK, (off_t)offset);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (got == 0)
			break;
		offset += (uint64_t)got;
		length -= (uint64_t)got;
	}
	return 0;
}

static int lock_range(struct vmtouch *vt, int fd, uint64_t offset, uint64_t length)
{
	void *address = mmap(NULL, (size_t)length, PROT_READ, MAP_SHARED, fd, (off_t)offset);

	if (address == MAP_FAILED)
		return -errno;
	/* The system call itself: AddressSanitizer makes mlock() a silent no-op. */
	if (!vt->lock_all && syscall(SYS_mlock, address, (size_t)length) != 0) {
		int err = errno;
		munmap(address, (size_t)length);
		return -err;
	}
	vt->locked = xrealloc(vt->locked, (vt->nlocked + 1) * sizeof(*vt->locked));
	vt->locked[vt->nlocked].address = address;
	vt->locked[vt->nlocked++].length = (size_t)length;
	return 0;
}

/* vmtouch's warning(): "vmtouch: WARNING: ..." on stderr, none with -q; the exit status stays 0. */
__attribute__((format(printf, 2, 3))) static void warning(const struct vmtouch *vt, const char *format, ...)
{
	va_list args;

	if (vt->quiet)
		return;
	fprintf(stderr, "%s: WARNING: ", program_name);
	va_start(args, format);
	vfprintf(stderr, format, args);
	va_end(args);
	fputc('\n', stderr);
}

static void file_error(struct vmtouch *vt, const char *path, const char *what, int err)
{
	if (!vt->quiet)
		warn_msg("%s: %s%s%s", printable_name(path), what, *what ? ": " : "", strerror(err));
	vt->failed = true;
}

static int visit(const struct files_entry *entry, void *context)
{
	struct vmtouch *vt = context;
	const uint64_t page = page_size();
	uint64_t length, pages;
	struct pagecache_stat stat;
	char chart[CHART_WIDTH + 48];
	int rc;

	if (!entry->size)
		return 0;
	if (vt->max_length && vt->offset + vt->max_length < entry->size) {
		length = vt->max_length;
	} else if (vt->offset >= entry->size) {
		warning(vt, "file %s smaller than offset, skipping", printable_name(entry->path));
		return 0;
	} else {
		length = entry->size - vt->offset;
	}
	pages = pages_for(length, page);
	vt->pages += pages;

	if (vt->evict) {
		if (vt->verbose)
			printf("Evicting %s\n", printable_name(entry->path));
		/* Dirty pages cannot be dropped: write them back first, as iolens evict does. */
		rc = pagecache_query(entry->fd, vt->offset, length, &stat);
		if ((rc || !stat.detail_known || stat.dirty || stat.writeback) && fdatasync(entry->fd) != 0 &&
		    errno != EINVAL)
			file_error(vt, entry->path, "fdatasync", errno);
		rc = posix_fadvise(entry->fd, (off_t)vt->offset, (off_t)length, POSIX_FADV_DONTNEED);
		if (rc)
			warning(vt, "unable to posix_fadvise file %s (%s)", printable_name(entry->path), strerror(rc));
		return stop_signal ? 1 : 0;
	}

	rc = pagecache_query(entry->fd, vt->offset, length, &stat);
	if (rc == -EPERM) {
		refusal_note(&vt->refused, entry->path);
		vt->failed = true;
	} else if (rc) {
		file_error(vt, entry->path, "", -rc);
		return 0;
	} else {
		vt->pages_resident += stat.cached;
	}
	if (vt->verbose) {
		printf("%s\n", printable_name(entry->path));
		if (rc == 0 && make_chart(vt, entry->fd, vt->offset / page, pages, chart) == 0) {
			fputs(chart, stdout);
			fflush(stdout); /* as vmtouch flushes each bar: its warnings come after it */
		} else
			chart[0] = '\0';
	}
	if (vt->touch) {
		rc = touch_range(vt, entry->fd, vt->offset, length);
		if (rc)
			file_error(vt, entry->path, "read", -rc);
	}
	if (vt->verbose) {
		/* Touched, the cache is looked at again; else it is the same bar, as vmtouch prints it twice. */
		if (vt->touch && make_chart(vt, entry->fd, vt->offset / page, pages, chart) != 0)
			chart[0] = '\0';
		fputs(chart, stdout);
		fflush(stdout);
		putchar('\n');
	}
	if (vt->lock || vt->lock_all) {
		rc = lock_range(vt, entry->fd, vt->offset, length);
		if (rc)
			file_error(vt, entry->path, vt->lock_all ? "mmap" : "mlock", -rc);
	}
	return stop_signal ? 1 : 0;
}

/* Whether the last component of path matches one of the patterns (vmtouch: fnmatch on basename()). */
static bool name_matches(char *const *patterns, size_t count, const char *path)
{
	const char *name = strrchr(path, '/');

	name = name && name[1] ? name + 1 : path;
	for (size_t i = 0; i < count; i++)
		if (fnmatch(patterns[i], name, 0) == 0)
			return true;
	return false;
}

/* vmtouch_file(): a regular file or block device, already counted. */
static int crawl_file(struct vmtouch *vt, int dirfd, const char *name)
{
	struct files_entry entry = { .path = vt->path };
	int rc;

	entry.fd = openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (entry.fd < 0) {
		warning(vt, "unable to open %s (%s), skipping", printable_name(vt->path), strerror(errno));
		return 0;
	}
	if (fstat(entry.fd, &entry.st) != 0) {
		warning(vt, "unable to fstat %s (%s), skipping", printable_name(vt->path), strerror(errno));
		close(entry.fd);
		return 0;
	}
	entry.size = (uint64_t)entry.st.st_size;
	if (S_ISBLK(entry.st.st_mode) && ioctl(entry.fd, BLKGETSIZE64, &entry.size) != 0) {
		warning(vt, "unable to ioctl %s (%s), skipping", printable_name(vt->path), strerror(errno));
		close(entry.fd);
		return 0;
	}
	if (!S_ISREG(entry.st.st_mode) && !S_ISBLK(entry.st.st_mode)) {
		/* It changed since it was looked at (a FIFO opened O_NONBLOCK does not block). */
		warning(vt, "skipping non-regular file: %s", printable_name(vt->path));
		close(entry.fd);
		return 0;
	}
	if (vt->max_size && entry.size > vt->max_size) {
		warning(vt, "file %s too large, skipping", printable_name(vt->path));
		close(entry.fd);
		return 0;
	}
	/* Only touching and locking read the file: the rest never waits on it. (Of the open's flags
	 * F_SETFL changes none but O_NONBLOCK: no F_GETFL needed.) */
	if (vt->touch || vt->lock || vt->lock_all)
		fcntl(entry.fd, F_SETFL, O_RDONLY);
	rc = visit(&entry, vt);
	close(entry.fd);
	return rc;
}

static int crawl(struct vmtouch *vt, int dirfd, const char *name, size_t path_len);

/* A deep tree keeps a directory open per level: take the file limit the system allows. */
static void raise_open_file_limit(void)
{
	struct rlimit limit;

	if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
		limit.rlim_cur = limit.rlim_max;
		setrlimit(RLIMIT_NOFILE, &limit);
	}
}

/* The entries of a directory counted and open as fd, each by vmtouch_crawl(). */
static int crawl_entries(struct vmtouch *vt, int fd, size_t path_len)
{
	DIR *dir = fdopendir(fd);
	struct dirent *de;
	int rc = 0;

	if (!dir) {
		warning(vt, "unable to opendir %s (%s), skipping", printable_name(vt->path), strerror(errno));
		close(fd);
		return 0;
	}
	while (!rc && !stop_signal && (errno = 0, de = readdir(dir)) != NULL) {
		size_t len = strlen(de->d_name);

		if (de->d_name[0] == '.' && (!de->d_name[1] || (de->d_name[1] == '.' && !de->d_name[2])))
			continue;
		if (path_len + len + 2 > vt->path_capacity) {
			vt->path_capacity = (path_len + len + 2) * 2;
			vt->path = xrealloc(vt->path, vt->path_capacity);
		}
		vt->path[path_len] = '/';
		memcpy(vt->path + path_len + 1, de->d_name, len + 1);
		rc = crawl(vt, dirfd(dir), de->d_name, path_len + 1 + len);
		vt->path[path_len] = '\0';
	}
	closedir(dir);
	return rc;
}

/*
 * vmtouch_crawl(): vt->path (path_len bytes) is name in dirfd. Symbolic links are followed
 * only with -f; a file or directory with several names is met once unless -h; a directory
 * that is one of those above it is a loop. What is skipped is said in vmtouch's words.
 */
static int crawl(struct vmtouch *vt, int dirfd, const char *name, size_t path_len)
{
	struct stat st;
	int fd, rc;

	if (vt->nignore && name_matches(vt->ignore, vt->nignore, vt->path))
		return 0;
	if (fstatat(dirfd, name, &st, vt->follow ? 0 : AT_SYMLINK_NOFOLLOW) != 0) {
		warning(vt, "unable to stat %s (%s)", printable_name(vt->path), strerror(errno));
		return 0;
	}
	if (S_ISLNK(st.st_mode)) {
		warning(vt, "not following symbolic link %s", printable_name(vt->path));
		return 0;
	}
	/* -F: anything below the argument on another filesystem, a file too (vmtouch's words say "recursing"). */
	if (!vt->depth)
		vt->root_dev = st.st_dev;
	else if (vt->one_filesystem && st.st_dev != vt->root_dev) {
		warning(vt, "not recursing into separate filesystem %s", printable_name(vt->path));
		return 0;
	}
	if (!vt->count_hard_links && st.st_nlink > 1 && !inode_set_add(&vt->seen, st.st_dev, st.st_ino))
		return 0; /* met before: vmtouch says nothing */
	if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)) {
		if (vt->nonly && !name_matches(vt->only, vt->nonly, vt->path))
			return 0;
		vt->files++; /* counted even when it cannot be opened or -m skips it, as vmtouch does */
		return crawl_file(vt, dirfd, name);
	}
	if (!S_ISDIR(st.st_mode)) {
		warning(vt, "skipping non-regular file: %s", printable_name(vt->path));
		return 0;
	}
	for (size_t i = 0; i < vt->depth; i++) {
		if (vt->crawl[i].dev == st.st_dev && vt->crawl[i].ino == st.st_ino) {
			warning(vt, "symbolic link loop detected: %s", printable_name(vt->path));
			return 0;
		}
	}
	vt->directories++;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (vt->follow ? 0 : O_NOFOLLOW));
	if (fd < 0) {
		warning(vt, "unable to opendir %s (%s), skipping", printable_name(vt->path), strerror(errno));
		return 0;
	}
	if (vt->depth == vt->crawl_capacity) {
		vt->crawl_capacity = vt->crawl_capacity ? vt->crawl_capacity * 2 : 32;
		vt->crawl = xrealloc(vt->crawl, vt->crawl_capacity * sizeof(*vt->crawl));
	}
	vt->crawl[vt->depth].dev = st.st_dev;
	vt->crawl[vt->depth++].ino = st.st_ino;
	rc = crawl_entries(vt, fd, path_len);
	vt->depth--;
	return rc;
}

/* One argument (or line of -b): vmtouch strips one trailing slash, so names print without '//'. */
static int crawl_argument(struct vmtouch *vt, const char *argument)
{
	size_t len = strlen(argument);

	if (len + 1 > vt->path_capacity) {
		vt->path_capacity = (len + 1) * 2;
		vt->path = xrealloc(vt->path, vt->path_capacity);
	}
	memcpy(vt->path, argument, len + 1);
	if (len > 1 && vt->path[len - 1] == '/')
		vt->path[--len] = '\0';
	vt->depth = 0;
	return crawl(vt, AT_FDCWD, vt->path, len);
}

/* vmtouch's -p: "A-B", "A-" or "B"; the offset rounded down to a page. */
static void parse_vmtouch_range(const char *text, uint64_t *offset, uint64_t *length)
{
	const char *dash = strchr(text, '-');
	uint64_t lower = 0, upper = 0;
	char head[64];

	if (!dash) {
		if (parse_size(text, &upper))
			usage_error("-p: '%s' is not a range (A-B, A- or B; sizes such as 4096, 4k, 100M, 1.5G)", text);
	} else {
		if (strchr(dash + 1, '-'))
			usage_error("-p: malformed range: multiple hyphens");
		if ((size_t)(dash - text) >= sizeof(head))
			usage_error("-p: '%s' is not a range", text);
		memcpy(head, text, (size_t)(dash - text));
		head[dash - text] = '\0';
		if ((*head && parse_size(head, &lower)) || (dash[1] && parse_size(dash + 1, &upper)))
			usage_error("-p: '%s' is not a range (A-B, A- or B; sizes such as 4096, 4k, 100M, 1.5G)", text);
	}
	*offset = lower / page_size() * page_size();
	*length = 0;
	if (upper) {
		if (upper <= *offset)
			usage_error("-p: range limits out of order");
		*length = upper - *offset;
	}
}

int cmd_vmtouch(int argc, char **argv)
{
	struct vmtouch vt = {0};
	char **ignore = NULL, **only = NULL, **listed = NULL;
	const char *list = NULL, *pidfile = NULL;
	size_t nlisted = 0;
	bool nul = false;
	uint64_t started;
	int opt;

	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--help"))
			vmtouch_usage(stdout, EXIT_OK);
	while ((opt = next_option(argc, argv, "tevqlLdfFhi:I:p:b:m:w0P:", NULL, NULL)) != -1) {
		switch (opt) {
		case 't': vt.touch = true; break;
		case 'e': vt.evict = true; break;
		case 'q': vt.quiet = true; break;
		case 'v': vt.verbose = true; break;
		case 'l': vt.lock = vt.touch = true; break;
		case 'L': vt.lock_all = vt.touch = true; break;
		case 'f': vt.follow = true; break;
		case 'F': vt.one_filesystem = true; break;
		case 'h': vt.count_hard_links = true; break;
		case 'i':
			ignore = xrealloc(ignore, (vt.nignore + 1) * sizeof(*ignore));
			ignore[vt.nignore++] = optarg;
			break;
		case 'I':
			only = xrealloc(only, (vt.nonly + 1) * sizeof(*only));
			only[vt.nonly++] = optarg;
			break;
		case 'p': parse_vmtouch_range(optarg, &vt.offset, &vt.max_length); break;
		case 'b': list = optarg; break;
		case '0': nul = true; break;
		case 'P': pidfile = optarg; break;
		case 'm':
			if (parse_size(optarg, &vt.max_size))
				usage_error("-m: '%s' is not a size (4096, 4k, 100M, 1.5G)", optarg);
			break;
		case 'd':
		case 'w':
			usage_error(
			    "-%c: daemon mode is not supported here: run '%s -l' under systemd, nohup or setsid", opt,
			    program_name);
		default:
			vmtouch_usage(stderr, EXIT_USAGE);
		}
	}
	vt.ignore = ignore;
	vt.only = only;
	if (vt.touch && vt.evict)
		usage_error("invalid option combination: -t and -e");
	if (vt.evict && (vt.lock || vt.lock_all))
		usage_error("invalid option combination: -e and -l");
	if (vt.lock && vt.lock_all)
		usage_error("invalid option combination: -l and -L");
	if (vt.quiet && vt.verbose)
		usage_error("invalid option combination: -q and -v");
	if (pidfile && !vt.lock && !vt.lock_all)
		usage_error("-P goes with -l or -L");
	if (list)
		listed = files_read_list(list, nul, &nlisted);
	if (optind >= argc && !nlisted) {
		fprintf(stderr, "%s: no files or directories specified\n", program_name);
		vmtouch_usage(stderr, EXIT_USAGE);
	}
	vt.buffer = xrealloc(NULL, READ_CHUNK);
	vt.status = xrealloc(NULL, STATUS_PIECE);
	if (vt.lock || vt.lock_all) {
		struct rlimit unlimited = { RLIM_INFINITY, RLIM_INFINITY };
		setrlimit(RLIMIT_MEMLOCK, &unlimited); /* works for root; others keep their limit */
	}
	struct sigaction action = { .sa_handler = on_signal };
	sigaction(SIGINT, &action, NULL);
	sigaction(SIGTERM, &action, NULL);
	sigaction(SIGHUP, &action, NULL);

	started = monotonic_ns();
	raise_open_file_limit();
	for (size_t i = 0; i < nlisted + (size_t)(argc - optind) && !stop_signal; i++)
		if (crawl_argument(&vt, i < nlisted ? listed[i] : argv[optind + (int)(i - nlisted)]))
			break;
	/* In microseconds, as vmtouch's gettimeofday measures it, so "%.5g" prints as many digits. */
	double elapsed = (double)((monotonic_ns() - started + 500) / 1000) / 1e6;
	if (vt.verbose && !vt.lock && !vt.lock_all)
		putchar('\n');
	fflush(stdout);
	refusal_report(&vt.refused, "");

	if ((vt.lock || vt.lock_all) && !stop_signal) {
		sigset_t none;

		if (vt.lock_all && syscall(SYS_mlockall, MCL_CURRENT) != 0) {
			warn_errno("mlockall", errno);
			return EXIT_FAIL;
		}
		if (!vt.quiet)
			printf("LOCKED %llu pages (%s)\n", (unsigned long long)vt.pages,
			       pretty_size(vt.pages * page_size()));
		fflush(stdout);
		struct path_output pidfile_out = { .fd = -1, .dir_fd = -1 };
		char why[512];

		if (pidfile && pidfile_write(pidfile, &pidfile_out, why, sizeof(why)) != 0)
			warn_msg("%s: %s", printable_name(pidfile), why);
		sigemptyset(&none);
		while (!stop_signal)
			sigsuspend(&none);
		path_output_close(&pidfile_out, true);
	} else if (!vt.quiet) {
		printf("           Files: %llu\n", (unsigned long long)vt.files);
		printf("     Directories: %llu\n", (unsigned long long)vt.directories);
		if (vt.touch) {
			printf("   Touched Pages: %llu (%s)\n", (unsigned long long)vt.pages,
			       pretty_size(vt.pages * page_size()));
		} else if (vt.evict) {
			printf("   Evicted Pages: %llu (%s)\n", (unsigned long long)vt.pages,
			       pretty_size(vt.pages * page_size()));
		} else {
			printf("  Resident Pages: %llu/%llu  ", (unsigned long long)vt.pages_resident,
			       (unsigned long long)vt.pages);
			printf("%s/", pretty_size(vt.pages_resident * page_size()));
			printf("%s  ", pretty_size(vt.pages * page_size()));
			if (vt.pages)
				printf("%.3g%%", 100.0 * (double)vt.pages_resident / (double)vt.pages);
			putchar('\n');
		}
		printf("         Elapsed: %.5g seconds\n", elapsed);
	}
	if (fflush(stdout) || ferror(stdout)) {
		warn_errno("output", errno);
		vt.failed = true;
	}
	for (size_t i = 0; i < vt.nlocked; i++)
		munmap(vt.locked[i].address, vt.locked[i].length);
	for (size_t i = 0; i < nlisted; i++)
		free(listed[i]);
	free(listed);
	free(vt.locked);
	free(vt.buffer);
	free(vt.status);
	free(vt.path);
	free(vt.crawl);
	inode_set_free(&vt.seen);
	free(ignore);
	free(only);
	return vt.failed ? EXIT_FAIL : EXIT_OK;
}
