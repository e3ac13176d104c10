/* vmtouch.c: a link named vmtouch takes vmtouch's flags (-t -e -l -L -v -q -m -p -i -I -b -0 -f -F -h) and prints its summary. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cmd/common.h"
#include "cmd/compat.h"
#include "collect/files.h"
#include "collect/pagecache.h"
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
		"A file that cannot be looked at is said on stderr and the exit status is 1\n"
		"(vmtouch says it and exits 0).\n",
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

	if (entry->fd < 0) {
		if (entry->skipped)
			vt->files++; /* vmtouch counts a file -m leaves out */
		else
			vt->failed = true;
		if (!vt->quiet)
			report_walk_error(entry);
		return 0;
	}
	vt->files++;
	if (!entry->size)
		return 0;
	if (vt->max_length && vt->offset + vt->max_length < entry->size) {
		length = vt->max_length;
	} else if (vt->offset >= entry->size) {
		if (!vt->quiet)
			warn_msg("%s: smaller than the offset of -p: skipped", printable_name(entry->path));
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
			file_error(vt, entry->path, "posix_fadvise", rc);
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
		if (rc == 0 && make_chart(vt, entry->fd, vt->offset / page, pages, chart) == 0)
			fputs(chart, stdout);
		else
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
		printf("%s\n", chart);
	}
	if (vt->lock || vt->lock_all) {
		rc = lock_range(vt, entry->fd, vt->offset, length);
		if (rc)
			file_error(vt, entry->path, vt->lock_all ? "mmap" : "mlock", -rc);
	}
	return stop_signal ? 1 : 0;
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
	struct files_options files = { .recursive = true };
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
		case 'f': files.follow_symlinks = true; break;
		case 'F': files.one_filesystem = true; break;
		case 'h': files.count_hard_links = true; break;
		case 'i':
			ignore = xrealloc(ignore, (files.nignore + 1) * sizeof(*ignore));
			ignore[files.nignore++] = optarg;
			break;
		case 'I':
			only = xrealloc(only, (files.nonly + 1) * sizeof(*only));
			only[files.nonly++] = optarg;
			break;
		case 'p': parse_vmtouch_range(optarg, &vt.offset, &vt.max_length); break;
		case 'b': list = optarg; break;
		case '0': nul = true; break;
		case 'P': pidfile = optarg; break;
		case 'm':
			if (parse_size(optarg, &files.max_size))
				usage_error("-m: '%s' is not a size (4096, 4k, 100M, 1.5G)", optarg);
			break;
		case 'd':
		case 'w':
			usage_error("-%c: daemon mode is not supported here: run '%s -l' under systemd, nohup or setsid",
				    opt, program_name);
		default:
			vmtouch_usage(stderr, EXIT_USAGE);
		}
	}
	files.ignore = ignore;
	files.only = only;
	files.blocking = vt.touch; /* only touching reads (pread); the rest never waits on the file */
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
	files_quiet = vt.quiet;
	files.directories = &vt.directories;
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
	for (size_t i = 0; i < nlisted + (size_t)(argc - optind) && !stop_signal; i++) {
		char *path = i < nlisted ? listed[i] : argv[optind + (int)(i - nlisted)];
		size_t len = strlen(path);
		struct stat st;

		while (len > 1 && path[len - 1] == '/')
			path[--len] = '\0'; /* as vmtouch: no double slashes in the names it prints */
		/* vmtouch looks at a symbolic link named on the command line only with -f. */
		if (!files.follow_symlinks && lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
			if (!vt.quiet)
				warn_msg("%s: a symbolic link: not followed without -f", printable_name(path));
			continue;
		}
		files_walk(&path, 1, &files, visit, &vt);
	}
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
			printf("LOCKED %llu pages (%s)\n", (unsigned long long)vt.pages, pretty_size(vt.pages * page_size()));
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
			printf("   Touched Pages: %llu (%s)\n", (unsigned long long)vt.pages, pretty_size(vt.pages * page_size()));
		} else if (vt.evict) {
			printf("   Evicted Pages: %llu (%s)\n", (unsigned long long)vt.pages, pretty_size(vt.pages * page_size()));
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
	free(ignore);
	free(only);
	return vt.failed ? EXIT_FAIL : EXIT_OK;
}
