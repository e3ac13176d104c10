/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_store.c: the flight recorder's store: what was appended is read back whole (compressed
 * or not), a torn last frame (a stop mid-write) is said and cut, a corrupt frame skipped with the
 * others kept, a write that fails (the file size limit standing in for a full disk) leaves no part
 * of its frame, one writer at a time, rotation and pruning by size, a frame appended unsynced
 * synced by the next append or the segment's close, and a store directory that another user
 * could write, or a link, refused.
 */
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "store/store.h"

static char *dir;
static char store_dir[4200];

/*
 * The store's fdatasync calls, counted (this definition is the one the store's code calls here),
 * and failed with EIO while datasync_fails is set.
 */
static unsigned datasyncs;
static bool datasync_fails;

int fdatasync(int fd)
{
	datasyncs++;
	if (datasync_fails) {
		errno = EIO;
		return -1;
	}
	return (int)syscall(SYS_fdatasync, fd);
}

static int setup(void **state)
{
	(void)state;
	dir = unit_tmpdir();
	snprintf(store_dir, sizeof(store_dir), "%s/record", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unit_rmtree(dir);
	return 0;
}

static struct store_options options(void)
{
	return (struct store_options){ .dir = store_dir, .max_bytes = 1u << 30, .segment_bytes = 64u << 20,
				       .compress = true };
}

/* Frame i's payload: text that compresses (even i) or bytes that do not (odd i), of a length from i. */
static size_t payload(unsigned i, unsigned char *out)
{
	size_t len = 100 + (size_t)i * 37;
	uint32_t x = i * 2654435761u + 1;

	for (size_t k = 0; k < len; k++) {
		x = x * 1103515245u + 12345u;
		out[k] = i % 2 ? (unsigned char)(x >> 16) : (unsigned char)("disk vda r/s 12.5\n"[k % 18]);
	}
	return len;
}

struct seen {
	unsigned n;
	bool wrong;
};

static int check_frame(void *context, const struct store_frame *f)
{
	struct seen *seen = context;
	unsigned char want[8192];
	unsigned i = (unsigned)(f->real_ns / 1000);
	size_t len = payload(i, want);

	if (f->kind != i % 7 || f->mono_ns != f->real_ns + 5 || f->len != len || memcmp(f->data, want, len))
		seen->wrong = true;
	seen->n++;
	return 0;
}

static void append_frames(struct store *s, unsigned from, unsigned to)
{
	unsigned char buf[8192];
	char why[256];

	for (unsigned i = from; i < to; i++) {
		size_t len = payload(i, buf);
		assert_int_equal(store_append(s, i % 7, (uint64_t)i * 1000, (uint64_t)i * 1000 + 5, buf, len, why,
					      sizeof(why)),
				 0);
	}
}

/* The one segment's bytes (read whole). */
static unsigned char *read_segment(const char *name, size_t *len, char *path, size_t path_size)
{
	FILE *f;
	unsigned char *buf = malloc(4u << 20);

	snprintf(path, path_size, "%s/%s", store_dir, name);
	f = fopen(path, "rb");
	assert_non_null(f);
	*len = fread(buf, 1, 4u << 20, f);
	fclose(f);
	return buf;
}

static void only_segment(char *name, size_t size)
{
	struct store_segment *list;
	char why[256];
	int n = store_list(store_dir, &list, why, sizeof(why));

	assert_true(n >= 1);
	snprintf(name, size, "%s", list[n - 1].name);
	free(list);
}

static void test_crc32c(void **state)
{
	(void)state;
	/* The check value of CRC-32C (RFC 3720's polynomial). */
	assert_int_equal(store_crc32c(0, "123456789", 9), 0xe3069283u);
	assert_int_equal(store_crc32c(store_crc32c(0, "1234", 4), "56789", 5), 0xe3069283u);
	/* Eight bytes a step: every length and alignment, held to the definition, a bit at a time. */
	{
		unsigned char bytes[300];

		for (size_t i = 0; i < sizeof(bytes); i++)
			bytes[i] = (unsigned char)(i * 131 + (i >> 3) * 7);
		for (size_t at = 0; at < 8; at++)
			for (size_t len = 0; at + len <= sizeof(bytes); len += 1 + len / 16) {
				uint32_t crc = 0xffffffffu;

				for (size_t i = at; i < at + len; i++) {
					crc ^= bytes[i];
					for (int k = 0; k < 8; k++)
						crc = crc & 1 ? (crc >> 1) ^ 0x82f63b78u : crc >> 1;
				}
				assert_int_equal(store_crc32c(0, bytes + at, len), ~crc);
				uint32_t first = store_crc32c(0, bytes + at, len / 3);

				assert_int_equal(store_crc32c(first, bytes + at + len / 3, len - len / 3), ~crc);
			}
	}
}

static void test_round_trip(void **state)
{
	struct store_options o = options();
	struct store *s;
	struct store_segment *list;
	struct store_scan scan;
	struct seen seen = { 0 };
	char why[256], name[64], path[4300];
	size_t len;
	unsigned char *buf;
	(void)state;

	assert_int_equal(store_open(&s, &o, why, sizeof(why)), 0);
	append_frames(s, 1, 101);
	store_close(s);
	assert_int_equal(store_list(store_dir, &list, why, sizeof(why)), 1);
	assert_int_equal(list[0].frames, 100);
	assert_int_equal(list[0].skipped, 0);
	assert_false(list[0].torn);
	assert_int_equal(list[0].first_real_ns, 1000);
	assert_int_equal(list[0].last_real_ns, 100000);
	snprintf(name, sizeof(name), "%s", list[0].name);
	free(list);
	buf = read_segment(name, &len, path, sizeof(path));
	assert_int_equal(store_segment_scan(buf, len, check_frame, &seen, &scan), 0);
	assert_int_equal(seen.n, 100);
	assert_false(seen.wrong);
	assert_string_equal(scan.problem, "");
	/* Compressed: the text frames (half of them) take little; the random ones as much as they hold. */
	assert_true(len < (100 * 40 + 100 * 100 + 37 * 5050) * 6 / 10);
	free(buf);
}

/* A stop in the middle of a write: the segment ends inside a frame. */
static void test_torn(void **state)
{
	struct store_options o = options();
	struct store *s;
	struct store_scan scan;
	struct seen seen = { 0 };
	char why[256], name[64], path[4300];
	size_t len;
	unsigned char *buf;
	(void)state;

	assert_int_equal(store_open(&s, &o, why, sizeof(why)), 0);
	append_frames(s, 1, 11);
	store_close(s);
	only_segment(name, sizeof(name));
	buf = read_segment(name, &len, path, sizeof(path));
	assert_int_equal(truncate(path, (off_t)len - 30), 0);
	assert_int_equal(store_segment_scan(buf, len - 30, check_frame, &seen, &scan), 0);
	assert_true(scan.torn);
	assert_int_equal(seen.n, 9);
	assert_false(seen.wrong);
	assert_non_null(strstr(scan.problem, "cut short"));
	free(buf);
	/* The next writer cuts it back to its whole frames, says so, and writes on in a segment of its own. */
	assert_int_equal(store_open(&s, &o, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "torn last frame cut off"));
	buf = read_segment(name, &len, path, sizeof(path));
	seen.n = 0;
	assert_int_equal(store_segment_scan(buf, len, check_frame, &seen, &scan), 0);
	assert_false(scan.torn);
	assert_int_equal(seen.n, 9);
	assert_int_equal(len, scan.good_end);
	free(buf);
	append_frames(s, 11, 13);
	store_close(s);
}

/* A byte flipped in the fifth frame: that one skipped, the ones after it read. */
static void test_corrupt(void **state)
{
	struct store_options o = options();
	struct store *s;
	struct store_scan scan;
	struct seen seen = { 0 };
	char why[256], name[64], path[4300];
	size_t len, at = STORE_SEGMENT_HEADER;
	unsigned char *buf;
	(void)state;

	o.compress = false;
	assert_int_equal(store_open(&s, &o, why, sizeof(why)), 0);
	append_frames(s, 1, 11);
	store_close(s);
	only_segment(name, sizeof(name));
	buf = read_segment(name, &len, path, sizeof(path));
	for (unsigned i = 1; i < 5; i++)
		at += STORE_FRAME_HEADER + 100 + (size_t)i * 37;
	buf[at + STORE_FRAME_HEADER + 50] ^= 0x20;
	assert_int_equal(store_segment_scan(buf, len, check_frame, &seen, &scan), 0);
	assert_int_equal(seen.n, 9);
	assert_false(seen.wrong);
	assert_int_equal(scan.skipped, 1);
	assert_false(scan.torn);
	assert_non_null(strstr(scan.problem, "corrupt"));
	/* Its length field broken instead: the same. */
	buf[at + STORE_FRAME_HEADER + 50] ^= 0x20;
	buf[at + 10] = 0x7f;
	seen.n = 0;
	assert_int_equal(store_segment_scan(buf, len, check_frame, &seen, &scan), 0);
	assert_int_equal(seen.n, 9);
	assert_int_equal(scan.skipped, 1);
	/* Not a segment at all. */
	assert_int_equal(store_segment_scan((const unsigned char *)"IOLREC", 6, NULL, NULL, &scan), -EINVAL);
	free(buf);
}

/* The file size limit makes the write of a frame short, as a full disk does: no part of it stays. */
static void test_failed_write(void **state)
{
	struct store_options o = options();
	struct store *s;
	struct rlimit old, small;
	struct store_scan scan;
	struct seen seen = { 0 };
	char why[256], name[64], path[4300];
	unsigned char buf[8192];
	size_t len, flen;
	unsigned char *seg;
	(void)state;

	o.compress = false;
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(store_open(&s, &o, why, sizeof(why)), 0);
	append_frames(s, 1, 4);
	only_segment(name, sizeof(name));
	seg = read_segment(name, &flen, path, sizeof(path));
	free(seg);
	getrlimit(RLIMIT_FSIZE, &old);
	small = old;
	small.rlim_cur = flen + 60; /* inside the next frame */
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	len = payload(4, buf);
	assert_true(store_append(s, 4 % 7, 4000, 4005, buf, len, why, sizeof(why)) < 0);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	seg = read_segment(name, &len, path, sizeof(path));
	assert_int_equal(len, flen);
	free(seg);
	/* Space back: recording goes on, in a new segment (after a failed write its size is not trusted). */
	append_frames(s, 4, 6);
	store_close(s);
	seg = read_segment(name, &len, path, sizeof(path));
	assert_int_equal(store_segment_scan(seg, len, check_frame, &seen, &scan), 0);
	assert_int_equal(seen.n, 3);
	assert_false(seen.wrong || scan.torn || scan.skipped);
	free(seg);
	only_segment(name, sizeof(name));
	seg = read_segment(name, &len, path, sizeof(path));
	seen.n = 0;
	assert_int_equal(store_segment_scan(seg, len, check_frame, &seen, &scan), 0);
	assert_int_equal(seen.n, 2);
	assert_false(seen.wrong || scan.torn || scan.skipped);
	free(seg);
}

static void test_one_writer(void **state)
{
	struct store_options o = options();
	struct store *a, *b;
	char why[256];
	(void)state;

	assert_int_equal(store_open(&a, &o, why, sizeof(why)), 0);
	assert_int_equal(store_open(&b, &o, why, sizeof(why)), -EBUSY);
	assert_non_null(strstr(why, "another recorder"));
	store_close(a);
	assert_int_equal(store_open(&b, &o, why, sizeof(why)), 0);
	store_close(b);
}

/* Segments of about 4 KiB, a store of 16 KiB: many segments made, the oldest gone, the newest kept. */
static void test_rotation(void **state)
{
	struct store_options o = options();
	struct store *s;
	struct store_segment *list;
	char why[256];
	uint64_t total = 0;
	int n;
	(void)state;

	o.compress = false;
	o.segment_bytes = 4096;
	o.max_bytes = 16384;
	assert_int_equal(store_open(&s, &o, why, sizeof(why)), 0);
	append_frames(s, 1, 60);
	store_close(s);
	n = store_list(store_dir, &list, why, sizeof(why));
	assert_true(n >= 3);
	for (int i = 0; i < n; i++) {
		total += list[i].bytes;
		assert_int_equal(list[i].skipped, 0);
		if (i)
			assert_true(list[i].first_real_ns > list[i - 1].last_real_ns);
	}
	assert_true(total <= 16384 + 4096 + 8192);
	assert_int_equal(list[n - 1].last_real_ns, 59000);
	assert_true(list[0].first_real_ns > 1000); /* the first segments were removed */
	free(list);
}

/*
 * Frames appended unsynced (a doctor window's, that the system frame follows at once): no flush
 * of their own, synced by the next append, by the close of their segment when it is the next to
 * begin, and by the store's close; all read back whole.
 */
static void test_unsynced(void **state)
{
	struct store_options o = options();
	struct store_segment *list;
	unsigned char buf[8192];
	struct store *s;
	char why[256];
	unsigned frames = 0, before;
	int n;
	(void)state;

	o.compress = false;
	o.segment_bytes = 4096; /* a new segment every few frames */
	assert_int_equal(store_open(&s, &o, why, sizeof(why)), 0);
	for (unsigned i = 1; i < 40; i++) {
		size_t len = payload(i, buf);
		uint64_t t = (uint64_t)i * 1000;

		before = datasyncs;
		if (i % 2) {
			assert_int_equal(store_append_unsynced(s, i % 7, t, t + 5, buf, len, why, sizeof(why)), 0);
			/* (a segment begun for it syncs its header: the frame itself is not) */
			assert_true(datasyncs - before <= 1);
		} else {
			assert_int_equal(store_append(s, i % 7, t, t + 5, buf, len, why, sizeof(why)), 0);
			assert_true(datasyncs - before >= 1);
		}
	}
	/* the last (39) unsynced: the close syncs it */
	before = datasyncs;
	store_close(s);
	assert_int_equal(datasyncs - before, 1);
	n = store_list(store_dir, &list, why, sizeof(why));
	assert_true(n >= 3);
	for (int i = 0; i < n; i++) {
		struct seen seen = { 0 };
		struct store_scan scan;
		char path[4300];
		size_t len;
		unsigned char *bytes = read_segment(list[i].name, &len, path, sizeof(path));

		assert_int_equal(store_segment_scan(bytes, len, check_frame, &seen, &scan), 0);
		assert_false(seen.wrong);
		assert_int_equal(list[i].skipped, 0);
		frames += seen.n;
		free(bytes);
	}
	free(list);
	assert_int_equal(frames, 39);
	/*
	 * An unsynced frame whose segment is closed for the next (each frame its own segment here):
	 * synced as it closes, then the new one's header and the frame after it.
	 */
	o.segment_bytes = 1;
	assert_int_equal(store_open(&s, &o, why, sizeof(why)), 0);
	assert_int_equal(store_append_unsynced(s, 1, 50000, 50005, buf, payload(50, buf), why, sizeof(why)), 0);
	before = datasyncs;
	assert_int_equal(store_append(s, 2, 51000, 51005, buf, payload(51, buf), why, sizeof(why)), 0);
	assert_int_equal(datasyncs - before, 3);
	/* Its sync failing as its segment closes: said, as the append's failure; the next one writes. */
	assert_int_equal(store_append_unsynced(s, 3, 52000, 52005, buf, payload(52, buf), why, sizeof(why)), 0);
	datasync_fails = true;
	assert_int_equal(store_append(s, 4, 53000, 53005, buf, payload(53, buf), why, sizeof(why)), -EIO);
	datasync_fails = false;
	assert_non_null(strstr(why, ".seg: "));
	assert_int_equal(store_append(s, 5, 54000, 54005, buf, payload(54, buf), why, sizeof(why)), 0);
	store_close(s);
}

static void test_hostile_dir(void **state)
{
	struct store_options o = options();
	struct store *s;
	char why[256], link[4300];
	(void)state;

	assert_int_equal(mkdir(store_dir, 0700), 0);
	assert_int_equal(chmod(store_dir, 0777), 0);
	assert_int_equal(store_open(&s, &o, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "writable by none other"));
	assert_int_equal(chmod(store_dir, 0700), 0);
	snprintf(link, sizeof(link), "%s/link", dir);
	assert_int_equal(symlink(store_dir, link), 0);
	o.dir = link;
	assert_true(store_open(&s, &o, why, sizeof(why)) < 0);
	assert_non_null(strstr(why, "symbolic link"));
	/* "link/": open(2) would follow it. */
	strcat(link, "/");
	assert_true(store_open(&s, &o, why, sizeof(why)) < 0);
	assert_non_null(strstr(why, "symbolic link"));
	link[strlen(link) - 1] = '\0';
	unlink(link);
}

/* A store that cannot be made: said, and nothing of the process's closed (its stdin). */
static void test_cannot_make(void **state)
{
	struct store_options o = options();
	struct store *s;
	char why[256], missing[4300];
	int stdin_open = fcntl(0, F_GETFD) != -1;
	(void)state;

	snprintf(missing, sizeof(missing), "%s/no/such/dir", dir);
	o.dir = missing;
	assert_int_equal(store_open(&s, &o, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "no/such/dir"));
	assert_int_equal(fcntl(0, F_GETFD) != -1, stdin_open);
}

/* Segments older than the store's age removed; files not of the store's naming never touched. */
static void test_age_and_strangers(void **state)
{
	struct store_options o = options();
	struct store *s;
	struct store_segment *list;
	struct timespec old[2] = { { .tv_sec = 1000000 }, { .tv_sec = 1000000 } };
	char why[256], path[4300];
	int n;
	(void)state;

	o.compress = false;
	o.segment_bytes = 4096;
	o.max_bytes = 1;
	assert_int_equal(store_open(&s, &o, why, sizeof(why)), 0);
	append_frames(s, 1, 3);
	for (const char *const *name = (const char *const[]){ "notes.seg", "20260101T000000Z-000000.seg.bak", NULL };
	     *name; name++) {
		snprintf(path, sizeof(path), "%s/%s", store_dir, *name);
		fclose(fopen(path, "w"));
	}
	append_frames(s, 3, 40); /* many segments, each pruning all but the current */
	store_close(s);
	n = store_list(store_dir, &list, why, sizeof(why));
	assert_int_equal(n, 1);
	free(list);
	snprintf(path, sizeof(path), "%s/notes.seg", store_dir);
	assert_int_equal(access(path, F_OK), 0);
	snprintf(path, sizeof(path), "%s/20260101T000000Z-000000.seg.bak", store_dir);
	assert_int_equal(access(path, F_OK), 0);
	/* By age: the old segment (mtime set back) goes at the next rotation, the new ones stay. */
	o.max_bytes = 0;
	o.max_age_ns = 86400ull * 1000000000u;
	assert_int_equal(store_open(&s, &o, why, sizeof(why)), 0);
	n = store_list(store_dir, &list, why, sizeof(why));
	snprintf(path, sizeof(path), "%s/%s", store_dir, list[0].name);
	free(list);
	assert_int_equal(utimensat(AT_FDCWD, path, old, 0), 0);
	append_frames(s, 40, 80);
	store_close(s);
	assert_int_equal(access(path, F_OK), -1);
	n = store_list(store_dir, &list, why, sizeof(why));
	assert_true(n >= 2);
	free(list);
}

/* The clock stepped back between two segments: names still sort as the segments were made. */
static void test_clock_step(void **state)
{
	struct store_options o = options();
	struct store *s;
	struct store_segment *list;
	unsigned char buf[256];
	char why[256];
	int n;
	(void)state;

	o.segment_bytes = 1;
	assert_int_equal(store_open(&s, &o, why, sizeof(why)), 0);
	memset(buf, 'x', sizeof(buf));
	assert_int_equal(store_append(s, 1, 2000000000000000000ull, 10, buf, sizeof(buf), why, sizeof(why)), 0);
	assert_int_equal(store_append(s, 1, 1000000000000000000ull, 20, buf, sizeof(buf), why, sizeof(why)), 0);
	assert_int_equal(store_append(s, 1, 1000000001000000000ull, 30, buf, sizeof(buf), why, sizeof(why)), 0);
	store_close(s);
	n = store_list(store_dir, &list, why, sizeof(why));
	assert_int_equal(n, 3);
	assert_int_equal(list[0].first_real_ns, 2000000000000000000ull);
	assert_int_equal(list[1].first_real_ns, 1000000000000000000ull);
	assert_int_equal(list[2].first_real_ns, 1000000001000000000ull);
	free(list);
	/* A kind past 16 bits is refused, not cut. */
	assert_int_equal(store_open(&s, &o, why, sizeof(why)), 0);
	assert_int_equal(store_append(s, 70000, 1, 1, buf, 1, why, sizeof(why)), -EINVAL);
	store_close(s);
}

static int collect(void *context, const struct store_frame *f)
{
	char *out = context;

	snprintf(out + strlen(out), 1000 - strlen(out), "%u:%.*s|", f->kind, (int)f->len, (const char *)f->data);
	return 0;
}

/* Segments written by another encoder of the format (tests/unit/store_seeds.py): read frame for frame. */
static void test_independent_encoder(void **state)
{
	const char *top = getenv("TOP");
	char path[4300], got[1000] = "", want[1000];
	struct store_scan scan;
	size_t len;
	unsigned char *buf;
	FILE *f;
	(void)state;

	if (!top)
		skip();
	buf = malloc(1 << 16);
	snprintf(want, sizeof(want), "1:disk vda r/s 12.5\n|2:");
	for (int i = 0; i < 20; i++)
		strcat(want, "cpu 1 2 3\n");
	strcat(want, "|");
	snprintf(path, sizeof(path), "%s/tests/fuzz/corpus/store/two_frames", top);
	assert_non_null(f = fopen(path, "rb"));
	len = fread(buf, 1, 1 << 16, f);
	fclose(f);
	assert_int_equal(store_segment_scan(buf, len, collect, got, &scan), 0);
	assert_string_equal(got, want);
	assert_false(scan.torn || scan.skipped);
	assert_int_equal(scan.created_real_ns, 1765000000000000000ull);
	got[0] = '\0';
	assert_int_equal(store_segment_scan(buf, len - 7, collect, got, &scan), 0);
	assert_string_equal(got, "1:disk vda r/s 12.5\n|");
	assert_true(scan.torn);

	/* Frames compressed against their kind's keyframe (zlib's zdict, Python's): read back exactly; one
	 * whose kind has no keyframe in the segment skipped and said. */
	snprintf(path, sizeof(path), "%s/tests/fuzz/corpus/store/keyframes", top);
	assert_non_null(f = fopen(path, "rb"));
	len = fread(buf, 1, 1 << 16, f);
	fclose(f);
	got[0] = '\0';
	assert_int_equal(store_segment_scan(buf, len, collect, got, &scan), 0);
	want[0] = '\0';
	for (int k = 3; k <= 5; k++) {
		strcat(want, "1:");
		for (int i = 0; i < 20; i++)
			snprintf(want + strlen(want), sizeof(want) - strlen(want), "cpu 1 2 %d\n", k);
		strcat(want, "|");
	}
	assert_string_equal(got, want);
	assert_int_equal(scan.skipped, 1);
	assert_non_null(strstr(scan.problem, "does not decompress"));
	free(buf);
}

/* Counts a segment's frames by codec (byte 34 of each header), and their bytes, walking the headers. */
static void codecs_of(const unsigned char *buf, size_t len, unsigned counts[3], size_t bytes[3])
{
	size_t at = STORE_SEGMENT_HEADER;

	memset(counts, 0, 3 * sizeof(*counts));
	memset(bytes, 0, 3 * sizeof(*bytes));
	while (at + STORE_FRAME_HEADER <= len) {
		uint32_t payload = (uint32_t)buf[at + 8] | (uint32_t)buf[at + 9] << 8 | (uint32_t)buf[at + 10] << 16 |
				   (uint32_t)buf[at + 11] << 24;
		if (buf[at + 34] < 3) {
			counts[buf[at + 34]]++;
			bytes[buf[at + 34]] += STORE_FRAME_HEADER + payload;
		}
		at += STORE_FRAME_HEADER + payload;
	}
}

/* Interval n's text: 60 counters, the same names each interval; one in six moves a little, as /proc's. */
static size_t interval_text(unsigned n, char *text, size_t size)
{
	size_t used = 0;

	for (unsigned line = 0; line < 60; line++)
		used += (size_t)snprintf(text + used, size - used, "counter_%u %u\n", line,
					 line * 104729 + (line % 6 ? 0 : n * 13));
	return used;
}

static int same_as_written(void *context, const struct store_frame *f)
{
	char text[4096];
	size_t len = interval_text((unsigned)(f->real_ns - 1000), text, sizeof(text));

	(void)context;
	return f->len == len && !memcmp(f->data, text, len) ? 0 : -1;
}

/*
 * Intervals whose text differs only in figures, as /proc's: after a keyframe each frame is
 * compressed against it, a keyframe again every 61st frame of the kind; all read back exactly,
 * and the frames after the first take a fraction of a keyframe's bytes.
 */
static void test_keyframes(void **state)
{
	struct store_options o = { .dir = store_dir, .compress = true };
	char why[256], text[4096];
	struct store_segment *list;
	(void)state;
	struct store *s;
	unsigned counts[3];
	size_t bytes[3];
	struct store_scan scan;
	unsigned char *buf = malloc(1 << 20);
	size_t len = 0, first;
	FILE *f;
	char path[4300];

	assert_int_equal(store_open(&s, &o, why, sizeof(why)), 0);
	for (unsigned n = 0; n < 130; n++) {
		size_t used = interval_text(n, text, sizeof(text));
		assert_int_equal(store_append(s, 1, 1000 + n, 1000 + n, text, used, why, sizeof(why)), 0);
	}
	store_close(s);
	assert_int_equal(store_list(store_dir, &list, why, sizeof(why)), 1);
	assert_int_equal(list[0].frames, 130);
	snprintf(path, sizeof(path), "%s/%s", store_dir, list[0].name);
	free(list);
	assert_non_null(f = fopen(path, "rb"));
	len = fread(buf, 1, 1 << 20, f);
	fclose(f);
	codecs_of(buf, len, counts, bytes);
	assert_int_equal(counts[1], 3); /* frames 0, 61 and 122 */
	assert_int_equal(counts[2], 127);
	first = bytes[1] / 3;
	assert_true(bytes[2] / 127 < first / 3); /* 432 bytes a keyframe, 122 the others (40 of them the header) */
	/* Every frame read back as written. */
	assert_int_equal(store_segment_scan(buf, len, same_as_written, NULL, &scan), 0);
	assert_int_equal(scan.frames, 130);
	assert_int_equal(scan.skipped, 0);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crc32c),
		cmocka_unit_test(test_independent_encoder),
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_keyframes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_torn, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_writer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rotation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unsynced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cannot_make, setup, teardown),
		cmocka_unit_test_setup_teardown(test_age_and_strangers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_clock_step, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
