/* SPDX-License-Identifier: GPL-2.0-or-later */
/* warm.c: iolens warm: read into the page cache only what is not there yet, verify, and optionally lock it. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cmd/command.h"
#include "collect/files.h"
#include "collect/pagecache.h"
#include "common/util.h"
#include "render/out.h"

enum {
	COL_NAME,
	COL_SIZE,
	COL_PAGES,
	COL_BEFORE,
	COL_LOADED,
	COL_AFTER,
	COL_PERCENT,
	COL_READ_BYTES,
	COL_LOCKED,
	COL_COUNT
};

static const struct out_column columns[COL_COUNT] = {
	[COL_NAME] = { "name", "Name", NULL, OUT_TEXT, true, "file name" },
	[COL_SIZE] = { "size", "Size (bytes)", "Size", OUT_BYTES, false, "file size" },
	[COL_PAGES] = { "pages", "Pages", NULL, OUT_COUNT, true, "pages the file (or --range) covers" },
	[COL_BEFORE] = { "cached_before", "Cached before", NULL, OUT_COUNT, true, "pages cached before" },
	[COL_LOADED] = { "loaded", "Loaded", NULL, OUT_COUNT, true, "pages that came into the cache" },
	[COL_AFTER] = { "cached_after", "Cached after", NULL, OUT_COUNT, true, "pages cached after" },
	[COL_PERCENT] = { "percent", "Percent", NULL, OUT_PERCENT, true, "pages cached after, in percent",
			  .total_ratio = "cached_after/pages" },
	[COL_READ_BYTES] = { "read_bytes", "Read (bytes)", "Read", OUT_BYTES, false,
			     "bytes read to load them (cached ranges are skipped)" },
	[COL_LOCKED] = { "locked", "Locked", NULL, OUT_COUNT, false, "pages locked in memory (--lock)" },
};

/* Partly cached ranges at most this large are not split further: mincore says which pages are missing. */
#define SPLIT_PAGES 512u
#define READ_CHUNK (1u << 20)

struct locked_file {
	void *address;
	size_t length;
};

struct warm {
	struct out_table *table;
	bool lock;
	char *buffer;
	struct locked_file *locked;
	size_t nlocked;
	bool failed;
	/* Progress on a terminal. */
	bool progress;
	bool rows_on_terminal; /* standard output is a terminal too */
	uint64_t progress_bytes, progress_shown_at;
	const char *current;
	struct refusals refused;
	uint64_t range_offset, range_length; /* --range */
	bool quiet;                          /* -q: no rows */
	/* Block devices loaded without --lock: looked at again once closed (their cache may go then). */
	struct warmed_device { char *path; uint64_t offset, length, cached; } *devices;
	size_t ndevices;
};

static volatile sig_atomic_t stop_signal;

/* --help: a screen; --help-all: the whole list below. */
static const char brief_help[] =
	"Usage:\n"
	" iolens warm [options] PATH...\n"
	"\n"
	"Load files into the page cache: only what is not cached yet is read, then the\n"
	"cache is measured again to verify. --lock keeps the pages in memory (mlock)\n"
	"until Ctrl-C.\n"
	"\n"
	"Options:\n"
	"  -R, --recursive        every file in the directories, and below\n"
	"  -l, --lock             keep the files resident until Ctrl-C, SIGTERM or SIGHUP\n"
	"      --range OFF[:LEN]  only the bytes from OFF, LEN of them (64k, 1.5M, 2G)\n"
	"      --total            add a TOTAL row\n"
	"  -q, --quiet            no table\n"
	"  -o, --output LIST      columns to show; +LIST adds to the defaults\n"
	"      --json, --csv      JSON or CSV instead of the table\n"
	"  -h, --help             this help; --help-all: every option and column\n"
	"\n"
	"Examples:\n"
	"  iolens warm big.db                     load what is missing of one file\n"
	"  iolens warm --lock /srv/hot.idx        keep it in memory until Ctrl-C\n";

static _Noreturn void usage(bool all)
{
	if (!all)
		help_brief("warm", brief_help);
	printf("Usage:\n"
	       " %s [options] PATH...\n"
	       "\n"
	       "Load files into the page cache. Only the ranges not cached yet are read, then\n"
	       "the cache is measured again to verify. With --lock the pages are locked in\n"
	       "memory (mlock) and stay until Ctrl-C.\n"
	       "\n"
	       "Options:\n",
	       program_name);
	files_help_options(stdout);
	fputs("  -l, --lock             keep the files resident (mlock) until Ctrl-C, SIGTERM or SIGHUP\n"
	      "      --range OFF[:LEN]  only the bytes from OFF, LEN of them (4096, 64k, 1.5M, 2G, 1T)\n"
	      "      --total            add a TOTAL row\n"
	      "  -h, --help             a screen of help; --help-all: all of this\n"
	      "  -V, --version          show the version\n"
	      "\n",
	      stdout);
	out_help_options(stdout);
	putchar('\n');
	out_help_columns(stdout, columns, COL_COUNT);
	printf("\n"
	       "A block device's page cache lasts only while someone holds it open: warm one\n"
	       "with --lock, or while the program that will read it has it open.\n"
	       "\n"
	       "Examples:\n"
	       "  %s big.db                   load what is missing of one file\n"
	       "  %s -R /srv/www              a whole tree\n"
	       "  %s --lock /srv/hot.idx      keep it in memory until Ctrl-C\n",
	       program_name, program_name, program_name);
	exit(EXIT_OK);
}

static void show_progress(struct warm *w, bool force)
{
	uint64_t now;
	char size[16];

	if (!w->progress)
		return;
	now = monotonic_ns();
	if (!force && now - w->progress_shown_at < 200000000ull)
		return;
	w->progress_shown_at = now;
	fprintf(stderr, "\r\033[K%s: %s %s", program_name, w->lock ? "loading and locking" : "loading",
		human_size(w->progress_bytes, size, sizeof(size)));
	if (w->current)
		fprintf(stderr, " (%s)", printable_name(w->current));
}

static void clear_progress(const struct warm *w)
{
	if (w->progress)
		fputs("\r\033[K", stderr);
}

/* Reads [offset, offset + length) so that it is in the cache. Stops at the end of the file. */
static int read_range(struct warm *w, int fd, uint64_t offset, uint64_t length, uint64_t *read_bytes)
{
	while (length && !stop_signal) {
		size_t chunk = length < READ_CHUNK ? (size_t)length : READ_CHUNK;
		ssize_t got = pread(fd, w->buffer, chunk, (off_t)offset);

		if (got < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (got == 0)
			break;
		offset += (uint64_t)got;
		length -= (uint64_t)got;
		*read_bytes += (uint64_t)got;
		w->progress_bytes += (uint64_t)got;
		show_progress(w, false);
	}
	return 0;
}

/* Reads the runs of missing pages of a small range, page by page from mincore's vector. */
static int load_missing_pages(struct warm *w, int fd, uint64_t offset, uint64_t length, uint64_t *read_bytes)
{
	const uint64_t page = page_size();
	uint64_t first = offset / page, npages = pages_for(length, page);
	unsigned char resident[SPLIT_PAGES];
	int rc = pagecache_resident(fd, first, npages, resident);

	if (rc)
		return rc == -EPERM ? read_range(w, fd, offset, length, read_bytes) : rc;
	for (uint64_t i = 0; i < npages && !rc;) {
		uint64_t run = 0;
		if (resident[i]) {
			i++;
			continue;
		}
		while (i + run < npages && !resident[i + run])
			run++;
		rc = read_range(w, fd, (first + i) * page, run * page, read_bytes);
		i += run;
	}
	return rc;
}

/*
 * Loads what is missing of a range: a fully cached range costs one cachestat call and
 * no reads; a partly cached one is split in halves until pieces are small, and of those
 * only the missing pages are read.
 */
static int load_missing(struct warm *w, int fd, uint64_t offset, uint64_t length, uint64_t *read_bytes)
{
	struct pagecache_stat stat;
	uint64_t half;
	int rc;

	if (!length || stop_signal)
		return 0;
	rc = pagecache_query(fd, offset, length, &stat);
	if (rc == -EPERM)
		return read_range(w, fd, offset, length, read_bytes); /* cannot tell: read it all */
	if (rc)
		return rc;
	if (stat.cached >= stat.pages)
		return 0;
	if (stat.cached == 0)
		return read_range(w, fd, offset, length, read_bytes);
	if (stat.pages <= SPLIT_PAGES)
		return load_missing_pages(w, fd, offset, length, read_bytes);
	half = (length / 2 + page_size() - 1) / page_size() * page_size();
	rc = load_missing(w, fd, offset, half, read_bytes);
	return rc ? rc : load_missing(w, fd, offset + half, length - half, read_bytes);
}

/* Maps the range and locks it, in pieces so that progress can show. */
static int lock_file(struct warm *w, const struct files_entry *entry, uint64_t offset, uint64_t range_length)
{
	const size_t piece = 64u << 20;
	const uint64_t start = offset / page_size() * page_size(); /* mmap wants a page boundary */
	size_t length = (size_t)(range_length + (offset - start));
	void *address;

	if (!range_length)
		return 0;
	address = mmap(NULL, length, PROT_READ, MAP_SHARED, entry->fd, (off_t)start);
	if (address == MAP_FAILED)
		return -errno;
	for (size_t done = 0; done < length && !stop_signal; done += piece) {
		size_t count = length - done < piece ? length - done : piece;
		/* The system call itself: AddressSanitizer makes mlock() a silent no-op. */
		if (syscall(SYS_mlock, (char *)address + done, count) != 0) {
			int err = errno;
			munmap(address, length);
			return -err;
		}
		w->progress_bytes += count;
		show_progress(w, false);
	}
	w->locked = xrealloc(w->locked, (w->nlocked + 1) * sizeof(*w->locked));
	w->locked[w->nlocked++] = (struct locked_file){ address, length };
	return 0;
}

static void lock_error(const char *path, int err)
{
	struct rlimit limit;

	if ((err == ENOMEM || err == EPERM || err == EAGAIN) && getrlimit(RLIMIT_MEMLOCK, &limit) == 0 &&
	    limit.rlim_cur != RLIM_INFINITY)
		warn_msg("%s: mlock: %s (limit %llu KiB: ulimit -l, or root)",
			 printable_name(path), strerror(err), (unsigned long long)limit.rlim_cur / 1024);
	else
		warn_msg("%s: mlock: %s", printable_name(path), strerror(err));
}

/* Pages that are not cached after loading: the reason, when it is one we can tell. */
static void explain_not_cached(struct warm *w, const struct files_entry *entry, uint64_t missing, uint64_t pages)
{
	const char *name = printable_name(entry->path), *fs;
	struct stat now;

	clear_progress(w);
	switch (pagecache_backing(entry->fd, &fs)) {
	case PAGECACHE_BACKING_NONE:
		/* Nothing to load: not a failure of warm. */
		warn_msg("%s: a %s file has no page cache", name, fs);
		warn_detail("the kernel makes a %s file's contents each time it is read", fs);
		return;
	case PAGECACHE_BACKING_MEMORY:
		warn_msg("%s: %llu of %llu pages are holes: on %s they have no page cache",
			 name, (unsigned long long)missing, (unsigned long long)pages, fs);
		warn_detail("on %s a file's pages are its memory: a part never written has none", fs);
		return;
	case PAGECACHE_BACKING_DISK:
		break;
	}
	if (fstat(entry->fd, &now) == 0 && S_ISREG(now.st_mode) && (uint64_t)now.st_size < entry->size) {
		warn_msg("%s: truncated while loading, from %llu to %llu bytes",
			 name, (unsigned long long)entry->size, (unsigned long long)now.st_size);
	} else {
		warn_msg("%s: %llu of %llu pages are not cached after loading (memory pressure?)", name,
			 (unsigned long long)missing, (unsigned long long)pages);
	}
	w->failed = true;
}

/*
 * The kernel drops a block device's page cache when its last opener closes it. Opened again
 * after warm closed it, a device nobody else holds shows what stayed: say so when it went.
 */
static void check_devices(struct warm *w)
{
	for (size_t i = 0; i < w->ndevices; i++) {
		struct warmed_device *device = &w->devices[i];
		struct pagecache_stat stat;
		int fd = open(device->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

		if (fd >= 0 && pagecache_query(fd, device->offset, device->length, &stat) == 0 &&
		    stat.cached < device->cached) {
			warn_msg("%s: its page cache went when warm closed it (%llu of %llu pages left)",
				 printable_name(device->path), (unsigned long long)stat.cached,
				 (unsigned long long)device->cached);
			warn_detail("a block device's cache lasts while someone holds it open: warm it with --lock");
			w->failed = true;
		}
		if (fd >= 0)
			close(fd);
		free(device->path);
	}
	free(w->devices);
	w->devices = NULL;
	w->ndevices = 0;
}

static int visit(const struct files_entry *entry, void *context)
{
	struct warm *w = context;
	struct pagecache_stat before, after;
	uint64_t read_bytes = 0, pages, offset, length;
	int before_rc, after_rc, rc;
	bool locked = false;
	struct out_row *row;

	if (entry->fd < 0) {
		clear_progress(w);
		if (report_walk_error(entry))
			w->failed = true;
		return 0;
	}
	w->current = entry->path;
	files_range(entry->size, w->range_offset, w->range_length, &offset, &length);
	before_rc = pagecache_query(entry->fd, offset, length, &before);
	pages = before_rc == 0 ? before.pages : pages_for(length, page_size());
	rc = load_missing(w, entry->fd, offset, length, &read_bytes);
	if (rc) {
		clear_progress(w);
		warn_errno(printable_name(entry->path), -rc);
		w->failed = true;
	}
	if (w->lock && !rc && !stop_signal) {
		rc = lock_file(w, entry, offset, length);
		if (rc) {
			clear_progress(w);
			lock_error(entry->path, -rc);
			w->failed = true;
		}
		locked = rc == 0;
	}
	after_rc = pagecache_query(entry->fd, offset, length, &after);
	w->current = NULL;

	if (!w->quiet) {
		if (w->rows_on_terminal)
			clear_progress(w); /* rows are printed as they come: the one before may be now */
		row = out_row_add(w->table);
		out_set_text(row, COL_NAME, entry->path);
		out_set_count_if(row, COL_SIZE, entry->size, true);
		out_set_count_if(row, COL_PAGES, pages, true);
		out_set_count_if(row, COL_BEFORE, before.cached, before_rc == 0);
		out_set_count_if(row, COL_AFTER, after.cached, after_rc == 0);
		out_set_count_if(row, COL_LOADED, after.cached > before.cached ? after.cached - before.cached : 0,
		    before_rc == 0 && after_rc == 0);
		out_set_count_if(row, COL_READ_BYTES, read_bytes, true);
		out_set_count_if(row, COL_LOCKED, locked ? pages : 0, true);
		if (after_rc == 0)
			out_set_percent(row, COL_PERCENT, pages ? 100.0 * (double)after.cached / (double)pages : 0.0);
	}
	if (before_rc == -EPERM || after_rc == -EPERM) /* read whole; the counts unknown: said, not a failure */
		refusal_note(&w->refused, entry->path);
	else if (before_rc || after_rc) {
		warn_errno(printable_name(entry->path), -(before_rc ? before_rc : after_rc));
		w->failed = true;
	}

	if (after_rc == 0 && after.cached < pages && !rc && !stop_signal)
		explain_not_cached(w, entry, pages - after.cached, pages);
	if (after_rc == 0 && after.cached && S_ISBLK(entry->st.st_mode) && !locked && !stop_signal) {
		w->devices = xrealloc(w->devices, (w->ndevices + 1) * sizeof(*w->devices));
		w->devices[w->ndevices++] =
		    (struct warmed_device){ xstrdup(entry->path), offset, length, after.cached };
	}
	return stop_signal ? 1 : 0;
}


static void on_signal(int signal)
{
	stop_signal = signal;
}

/* Holds the locks until a signal ends the wait. */
static void wait_for_signal(const struct warm *w)
{
	sigset_t none;

	fprintf(stderr, "%s: %zu file%s locked in memory; Ctrl-C, SIGTERM or SIGHUP releases them\n", program_name,
		w->nlocked, w->nlocked == 1 ? "" : "s");
	sigemptyset(&none);
	while (!stop_signal)
		sigsuspend(&none);
}

int cmd_warm(int argc, char **argv)
{
	enum { OPT_TOTAL = 0x2000, OPT_RANGE };
	static const struct option long_options[] = {
		FILES_LONG_OPTIONS,
		OUT_LONG_OPTIONS,
		COMMON_LONG_OPTIONS,
		{ "lock", no_argument, NULL, 'l' },
		{ "total", no_argument, NULL, OPT_TOTAL },
		{ "range", required_argument, NULL, OPT_RANGE },
		{ 0 }
	};
	struct files_args files = { .walk.blocking = true };
	struct out_options output = {0};
	struct warm w = {0};
	bool want_total = false;
	struct sigaction action = { .sa_handler = on_signal };
	sigset_t block;
	int opt;

	while ((opt = next_option(argc, argv, FILES_SHORT_OPTIONS OUT_SHORT_OPTIONS "lhV", long_options, NULL)) != -1) {
		if (files_parse_option(&files, opt, optarg) || out_parse_option(&output, opt, optarg))
			continue;
		switch (opt) {
		case 'l':
			w.lock = true;
			break;
		case OPT_TOTAL:
			want_total = true;
			break;
		case OPT_RANGE:
			files_parse_range(optarg, &w.range_offset, &w.range_length);
			break;
		default:
			command_option_rest(opt, usage);
		}
	}
	files_args_paths(&files, argc, argv, optind);
	if (!files.npaths)
		usage_error("no file given");
	w.quiet = files.quiet;
	w.table = out_table_new(columns, COL_COUNT, &output, "files");
	if (!w.table) {
		files_args_free(&files);
		return EXIT_USAGE;
	}
	out_table_stream(w.table, stdout);
	if (want_total)
		out_table_total(w.table, COL_NAME, "TOTAL");
	if (w.lock)
		out_show_column(w.table, COL_LOCKED);
	w.buffer = xrealloc(NULL, READ_CHUNK);
	w.progress = isatty(STDERR_FILENO);
	w.rows_on_terminal = w.progress && isatty(STDOUT_FILENO);

	/* Ctrl-C stops loading cleanly (what is done is reported) and, with --lock, releases. */
	sigaction(SIGINT, &action, NULL);
	sigaction(SIGTERM, &action, NULL);
	sigaction(SIGHUP, &action, NULL);
	if (w.lock) {
		struct rlimit unlimited = { RLIM_INFINITY, RLIM_INFINITY };
		setrlimit(RLIMIT_MEMLOCK, &unlimited); /* works for root; others keep their limit */
	}

	files_walk(files.paths, (int)files.npaths, &files.walk, visit, &w);
	clear_progress(&w);
	check_devices(&w);
	if (stop_signal) {
		warn_msg("interrupted: what is shown is what was loaded");
		w.failed = true;
	}
	refusal_report(&w.refused, "read whole; ");
	if (!w.quiet && !print_file_table(w.table))
		w.failed = true;
	if (w.nlocked && !stop_signal) {
		sigemptyset(&block);
		sigaddset(&block, SIGINT);
		sigaddset(&block, SIGTERM);
		sigaddset(&block, SIGHUP);
		sigprocmask(SIG_BLOCK, &block, NULL);
		wait_for_signal(&w);
	}
	for (size_t i = 0; i < w.nlocked; i++)
		munmap(w.locked[i].address, w.locked[i].length);
	out_table_free(w.table);
	free(w.locked);
	free(w.buffer);
	files_args_free(&files);
	return w.failed ? EXIT_FAIL : EXIT_OK;
}
