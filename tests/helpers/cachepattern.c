/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cachepattern.c: one way a real program reads or writes a file, made on cue, with the truth it
 * knows of what it did (tests/cli/cache_accuracy.py).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096L

static const char *usage_text =
	"usage: cachepattern [--go] PATTERN FILE [ARGS]\n"
	"  --go: say 'ready PID' on stdout and wait for a line on stdin before the work\n"
	"  read FILE PASSES BLOCK same|new   read it whole PASSES times, BLOCK bytes a read, one fd or a new one each "
	"pass\n"
	"  random FILE READS SEED            POSIX_FADV_RANDOM, READS preads of one page at random pages\n"
	"  threads FILE                      two threads, each reads its half\n"
	"  mmap FILE STEP normal|random|sequential PASSES [populate|willneed]\n"
	"                                    map it, touch every STEP-th page, unmap; PASSES times\n"
	"  sendfile FILE | splice FILE       the whole file to /dev/null through sendfile(2) or a pipe\n"
	"  copy FILE DEST                    copy_file_range(2) of the whole file into a new DEST\n"
	"  direct-read FILE | direct-write FILE   O_DIRECT, 1 MiB at a time, the whole file\n"
	"  overwrite FILE                    pwrite every page in place, then fdatasync\n"
	"  append FILE BYTES                 write BYTES to a new FILE, 64 KiB at a time, then fdatasync\n"
	"  truncate FILE | unlink FILE\n"
	"  rename FILE NEWNAME               read half, rename, say 'renamed', wait for a line, read the rest\n"
	"  coldloop FILE SECONDS             read it whole and drop it from the cache (POSIX_FADV_DONTNEED),\n"
	"                                    again and again for SECONDS: a reader whose reads all miss\n"
	"  idle FILE SECONDS                 open it, read one page, then do nothing for SECONDS\n"
	"Prints one JSON line of what it did: pages read, mapped or written, its faults, and the pages\n"
	"it found cached just before it read or touched them (cachestat(2): the truth of a warm file's hits).\n";

static long long minor_faults, major_faults, cached_reads = -1;

/*
 * The pages of [from, from + len) in the page cache, by cachestat(2) (Linux 6.5), which
 * changes nothing; before 6.5, by mincore(2) on a mapping of them that is never touched (no
 * fault, no page mapped: nothing counted); -1 when it cannot tell.
 */
static long long pages_cached(int fd, off_t from, off_t len)
{
	struct { uint64_t off, len; } range = { (uint64_t)from, (uint64_t)len };
	struct { uint64_t cache, dirty, writeback, evicted, recently_evicted; } counts;
	off_t start = from - from % PAGE, size;
	unsigned char *resident;
	struct stat st;
	long long cached = 0;
	size_t pages;
	void *map;

	if (syscall(451, fd, &range, &counts, 0) == 0)
		return (long long)counts.cache;
	if (errno != ENOSYS || fstat(fd, &st) != 0)
		return -1;
	size = st.st_size;
	if (from + len > size)
		len = size > from ? size - from : 0;
	pages = (size_t)((from + len - start + PAGE - 1) / PAGE);
	if (!pages)
		return 0;
	map = mmap(NULL, pages * PAGE, PROT_READ, MAP_SHARED, fd, start);
	resident = malloc(pages);
	if (map == MAP_FAILED || !resident || mincore(map, pages * PAGE, resident) != 0)
		cached = -1;
	for (size_t i = 0; cached >= 0 && i < pages; i++)
		cached += resident[i] & 1;
	if (map != MAP_FAILED)
		munmap(map, pages * PAGE);
	free(resident);
	return cached;
}

static int page_cached(int fd, off_t page)
{
	long long cached = pages_cached(fd, page * PAGE, PAGE);

	return cached < 0 ? -1 : cached > 0;
}

/*
 * Truth for a warm file: the pages found cached just before each access (before_access), so
 * that pages something else evicted meanwhile (a kernel thread evicts idle pages) are known.
 */
static long long found_cached, found_unknown;

static void before_access(int fd, off_t from, off_t len)
{
	long long cached = pages_cached(fd, from - from % PAGE, len + from % PAGE);

	if (cached < 0)
		found_unknown = 1;
	else
		__atomic_fetch_add(&found_cached, cached, __ATOMIC_RELAXED); /* two threads read at once */
}

static void faults(long long *minor, long long *major)
{
	struct rusage usage;

	getrusage(RUSAGE_SELF, &usage);
	*minor = usage.ru_minflt;
	*major = usage.ru_majflt;
}

static void die(const char *what)
{
	fprintf(stderr, "cachepattern: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int open_or_die(const char *path, int flags)
{
	int fd = open(path, flags, 0644);

	if (fd < 0)
		die(path);
	return fd;
}

static off_t size_of(int fd)
{
	struct stat st;

	if (fstat(fd, &st) != 0)
		die("fstat");
	return st.st_size;
}

static void wait_line(void)
{
	char line[64];

	if (!fgets(line, sizeof(line), stdin))
		exit(1);
}

/* Reads [from, to) with reads of block bytes; the pages it returned. */
static long long read_range(int fd, off_t from, off_t to, size_t block, char *buffer)
{
	long long pages = 0;

	for (off_t at = from; at < to;) {
		size_t want = (size_t)(to - at) < block ? (size_t)(to - at) : block;
		ssize_t got;

		before_access(fd, at, (off_t)want);
		got = pread(fd, buffer, want, at);

		if (got < 0)
			die("pread");
		if (got == 0)
			break;
		pages += (at + got + PAGE - 1) / PAGE - at / PAGE;
		at += got;
	}
	return pages;
}

struct half {
	int fd;
	off_t from, to;
	long long pages;
};

static void *read_half(void *arg)
{
	struct half *half = arg;
	char *buffer = malloc(1 << 20);

	half->pages = read_range(half->fd, half->from, half->to, 1 << 20, buffer);
	free(buffer);
	return NULL;
}

/* What a pattern did: pages read, mapped and written, and the file it leaves open (or -1). */
struct counts {
	long long read, mapped, written;
	int fd;
};

/* 1 MiB of x, page-aligned: what the patterns read into and write from. */
static char *buffer;

/* read(2) of the whole file, passes times, in blocks; a new descriptor each pass when asked */
static void pattern_read(char **argv, struct counts *c)
{
	int passes = atoi(argv[3]);
	size_t block = strtoul(argv[4], NULL, 10);
	bool new_fd = strcmp(argv[5], "new") == 0;

	c->fd = open_or_die(argv[2], O_RDONLY);
	for (int pass = 0; pass < passes; pass++) {
		if (new_fd && pass) {
			close(c->fd);
			c->fd = open_or_die(argv[2], O_RDONLY);
		}
		/* read(2) from the file offset, as cat does; lseek back for the next pass */
		lseek(c->fd, 0, SEEK_SET);
		for (;;) {
			off_t at = lseek(c->fd, 0, SEEK_CUR);
			ssize_t got;

			before_access(c->fd, at, (off_t)block);
			got = read(c->fd, buffer, block);

			if (got < 0)
				die("read");
			if (got == 0)
				break;
			c->read += (at + got + PAGE - 1) / PAGE - at / PAGE;
		}
	}
}

/* reads of random pages, counting those that were cached hits (cached_reads) */
static void pattern_random(char **argv, struct counts *c)
{
	long reads = atol(argv[3]);
	off_t pages;

	char *cached_at_start, *read_before;

	srand((unsigned)atoi(argv[4]));
	c->fd = open_or_die(argv[2], O_RDONLY);
	pages = size_of(c->fd) / PAGE;
	posix_fadvise(c->fd, 0, 0, POSIX_FADV_RANDOM);
	/*
	 * A read is a hit when its page is cached just before it and was so when the run began,
	 * or when this run read it before: a page its own read-ahead brought in is a miss when
	 * first read, as a page it had to wait for.
	 */
	cached_at_start = calloc((size_t)pages + 1, 1);
	read_before = calloc((size_t)pages + 1, 1);
	for (off_t page = 0; page < pages; page++)
		cached_at_start[page] = page_cached(c->fd, page) == 1;
	cached_reads = 0;
	for (long i = 0; i < reads && pages > 0; i++) {
		off_t page = (off_t)(((unsigned long)rand() << 16 ^ (unsigned long)rand()) % (unsigned long)pages);
		int cached = page_cached(c->fd, page);

		if (cached < 0 || cached_reads < 0)
			cached_reads = -1;
		else
			cached_reads += cached && (cached_at_start[page] || read_before[page]);
		read_before[page] = 1;
		if (pread(c->fd, buffer, PAGE, page * PAGE) != PAGE)
			die("pread");
		c->read++;
	}
}

/* every step-th page of a mapping touched, passes times, with an madvise advice */
static void pattern_mmap(char **argv, struct counts *c)
{
	long step = atol(argv[3]);
	int advice = strcmp(argv[4], "random") == 0 ? MADV_RANDOM
		     : strcmp(argv[4], "sequential") == 0 ? MADV_SEQUENTIAL : MADV_NORMAL;
	int passes = atoi(argv[5]);
	const char *how = argv[6] ? argv[6] : "" /* argv ends with NULL */;
	off_t size;

	c->fd = open_or_die(argv[2], O_RDONLY);
	size = size_of(c->fd);
	for (int pass = 0; pass < passes; pass++) {
		char *map = mmap(NULL, (size_t)size, PROT_READ,
				 MAP_SHARED | (strcmp(how, "populate") == 0 ? MAP_POPULATE : 0), c->fd, 0);
		volatile char sum = 0;

		if (map == MAP_FAILED)
			die("mmap");
		madvise(map, (size_t)size, advice);
		if (strcmp(how, "willneed") == 0)
			madvise(map, (size_t)size, MADV_WILLNEED);
		for (off_t at = 0; at < size; at += step * PAGE) {
			before_access(c->fd, at, PAGE);
			sum += map[at];
			c->mapped++;
		}
		munmap(map, (size_t)size);
	}
}

/* the file sent to /dev/null by sendfile(2), or by splice(2) through a pipe */
static void pattern_pipe(char **argv, struct counts *c)
{
	int null = open_or_die("/dev/null", O_WRONLY), pipes[2];
	off_t size, at = 0;

	c->fd = open_or_die(argv[2], O_RDONLY);
	size = size_of(c->fd);
	if (argv[1][1] == 'e') {
		while (at < size) {
			ssize_t sent;

			before_access(c->fd, at, 1 << 20);
			sent = sendfile(null, c->fd, &at, 1 << 20);

			if (sent <= 0)
				die("sendfile");
		}
	} else {
		if (pipe(pipes) != 0)
			die("pipe");
		while (at < size) {
			ssize_t moved;

			before_access(c->fd, at, 1 << 16);
			moved = splice(c->fd, &at, pipes[1], NULL, 1 << 16, 0);

			if (moved <= 0)
				die("splice");
			if (splice(pipes[0], NULL, null, NULL, (size_t)moved, 0) != moved)
				die("splice out");
		}
	}
	c->read = (size + PAGE - 1) / PAGE;
}

/* the file read or written with O_DIRECT, 1 MiB at a time */
static void pattern_direct(char **argv, struct counts *c)
{
	bool writing = argv[1][7] == 'w';
	off_t size;

	c->fd = open_or_die(argv[2], (writing ? O_WRONLY : O_RDONLY) | O_DIRECT);
	size = size_of(c->fd);
	for (off_t at = 0; at < size; at += 1 << 20) {
		size_t want = (size_t)(size - at) < (1u << 20) ? (size_t)(size - at) : (1u << 20);
		ssize_t done = writing ? pwrite(c->fd, buffer, want, at) : pread(c->fd, buffer, want, at);

		if (done != (ssize_t)want)
			die(writing ? "pwrite O_DIRECT" : "pread O_DIRECT");
	}
	if (writing)
		c->written = (size + PAGE - 1) / PAGE;
}

int main(int argc, char **argv)
{
	struct counts c = { .fd = -1 };
	long long minor0, major0;
	bool go = argc > 1 && strcmp(argv[1], "--go") == 0;
	const char *pattern, *path;

	if (go) {
		argv++;
		argc--;
	}
	if (argc < 3) {
		fputs(usage_text, stderr);
		return 2;
	}
	pattern = argv[1];
	path = argv[2];
	buffer = aligned_alloc(PAGE, 1 << 20);
	memset(buffer, 'x', 1 << 20);
	if (go) {
		/*
		 * Every page mapped now (its program and libraries) is faulted in and locked, so
		 * that code run for the first time after the cue adds no accesses of its own.
		 */
		if (mlockall(MCL_CURRENT) != 0)
			die("mlockall");
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		wait_line();
	}
	faults(&minor0, &major0);

	if (strcmp(pattern, "read") == 0 && argc == 6) {
		pattern_read(argv, &c);
	} else if (strcmp(pattern, "random") == 0 && argc == 5) {
		pattern_random(argv, &c);
	} else if (strcmp(pattern, "threads") == 0 && argc == 3) {
		struct half halves[2];
		pthread_t threads[2];
		off_t size;

		c.fd = open_or_die(path, O_RDONLY);
		size = size_of(c.fd);
		for (int i = 0; i < 2; i++) {
			halves[i] = (struct half){ .fd = c.fd, .from = i ? size / 2 : 0, .to = i ? size : size / 2 };
			pthread_create(&threads[i], NULL, read_half, &halves[i]);
		}
		for (int i = 0; i < 2; i++) {
			pthread_join(threads[i], NULL);
			c.read += halves[i].pages;
		}
	} else if (strcmp(pattern, "mmap") == 0 && (argc == 6 || argc == 7)) {
		pattern_mmap(argv, &c);
	} else if ((strcmp(pattern, "sendfile") == 0 || strcmp(pattern, "splice") == 0) && argc == 3) {
		pattern_pipe(argv, &c);
	} else if (strcmp(pattern, "copy") == 0 && argc == 4) {
		int out = open_or_die(argv[3], O_WRONLY | O_CREAT | O_EXCL);
		off_t size;
		loff_t in_at = 0;

		c.fd = open_or_die(path, O_RDONLY);
		size = size_of(c.fd);
		while (in_at < size) {
			ssize_t copied;

			before_access(c.fd, in_at, 1 << 20);
			copied = copy_file_range(c.fd, &in_at, out, NULL, 1 << 20, 0);

			if (copied <= 0)
				die("copy_file_range");
		}
		fdatasync(out);
		close(out);
		c.read = (size + PAGE - 1) / PAGE;
	} else if ((strcmp(pattern, "direct-read") == 0 || strcmp(pattern, "direct-write") == 0) && argc == 3) {
		pattern_direct(argv, &c);
	} else if (strcmp(pattern, "overwrite") == 0 && argc == 3) {
		off_t size;

		c.fd = open_or_die(path, O_WRONLY);
		size = size_of(c.fd);
		for (off_t at = 0; at < size; at += PAGE)
			if (pwrite(c.fd, buffer, PAGE, at) != PAGE)
				die("pwrite");
		fdatasync(c.fd);
		c.written = (size + PAGE - 1) / PAGE;
	} else if (strcmp(pattern, "append") == 0 && argc == 4) {
		long long bytes = atoll(argv[3]);

		c.fd = open_or_die(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND);
		for (long long done = 0; done < bytes;) {
			size_t want = bytes - done < 65536 ? (size_t)(bytes - done) : 65536;

			if (write(c.fd, buffer, want) != (ssize_t)want)
				die("write");
			done += (long long)want;
		}
		fdatasync(c.fd);
		c.written = (bytes + PAGE - 1) / PAGE;
	} else if (strcmp(pattern, "truncate") == 0 && argc == 3) {
		c.fd = open_or_die(path, O_WRONLY);
		if (ftruncate(c.fd, 0) != 0)
			die("ftruncate");
	} else if (strcmp(pattern, "unlink") == 0 && argc == 3) {
		c.fd = -1;
		if (unlink(path) != 0)
			die("unlink");
	} else if (strcmp(pattern, "rename") == 0 && argc == 4) {
		off_t size;

		c.fd = open_or_die(path, O_RDONLY);
		size = size_of(c.fd);
		c.read = read_range(c.fd, 0, size / 2, 1 << 20, buffer);
		if (rename(path, argv[3]) != 0)
			die("rename");
		printf("renamed\n");
		fflush(stdout);
		wait_line();
		c.read += read_range(c.fd, size / 2, size, 1 << 20, buffer);
	} else if (strcmp(pattern, "coldloop") == 0 && argc == 4) {
		double seconds = atof(argv[3]);
		struct timespec start, now;

		c.fd = open_or_die(path, O_RDONLY);
		clock_gettime(CLOCK_MONOTONIC, &start);
		do {
			posix_fadvise(c.fd, 0, 0, POSIX_FADV_DONTNEED);
			c.read += read_range(c.fd, 0, size_of(c.fd), 1 << 20, buffer);
			clock_gettime(CLOCK_MONOTONIC, &now);
		} while ((double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
	} else if (strcmp(pattern, "idle") == 0 && argc == 4) {
		c.fd = open_or_die(path, O_RDONLY);
		c.read = read_range(c.fd, 0, PAGE, PAGE, buffer);
		sleep((unsigned)atoi(argv[3]));
	} else {
		fputs(usage_text, stderr);
		return 2;
	}

	faults(&minor_faults, &major_faults);
	printf("{\"pid\":%d,\"pages_read\":%lld,\"pages_mapped\":%lld,\"pages_written\":%lld,"
	       "\"minor_faults\":%lld,\"major_faults\":%lld,\"cached_reads\":%lld,\"found_cached\":%lld}\n",
	       (int)getpid(), c.read, c.mapped, c.written, minor_faults - minor0, major_faults - major0,
	       cached_reads, found_unknown ? -1 : found_cached);
	fflush(stdout);
	if (c.fd >= 0)
		close(c.fd);
	return 0;
}
