/* SPDX-License-Identifier: GPL-2.0-or-later */
/* store.c: the flight recorder's segments: frames written whole, read back with their checksums. */
#include "store/store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <zlib.h>

#include "common/dl.h"
#include "common/util.h"

static const unsigned char segment_magic[8] = { 'I', 'O', 'L', 'R', 'E', 'C', 0, 1 };
#define FRAME_MAGIC 0x464c4f49u /* "IOLF" */
#define CODEC_RAW 0
#define CODEC_ZLIB 1

/* ---- CRC-32C ------------------------------------------------------------------------------ */

uint32_t store_crc32c(uint32_t crc, const void *data, size_t len)
{
	static uint32_t table[256];
	const unsigned char *p = data;

	if (!table[1])
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;
			for (int k = 0; k < 8; k++)
				c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
			table[i] = c;
		}
	crc = ~crc;
	while (len--)
		crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

/* ---- zlib, opened when first needed --------------------------------------------------------- */

static DLSYM_POINTER(compress2);
static DLSYM_POINTER(compressBound);
static DLSYM_POINTER(uncompress);
static void *libz;

static bool zlib_load(void)
{
	static int state; /* 0 not tried, 1 loaded, -1 not there */
	char why[256];

	if (!state)
		state = dl_open_many(&libz, ZLIB_SONAME, why, sizeof(why), DLSYM_ARG(compress2),
				     DLSYM_ARG(compressBound), DLSYM_ARG(uncompress), NULL) == 0 ? 1 : -1;
	return state > 0;
}

/* ---- little-endian fields ----------------------------------------------------------------- */

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const unsigned char *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

/* ---- reading ------------------------------------------------------------------------------ */

static void said(struct store_scan *out, const char *what, uint64_t offset)
{
	if (!out->problem[0])
		snprintf(out->problem, sizeof(out->problem), "%s at byte %llu", what, (unsigned long long)offset);
}

/*
 * The frame at p (left bytes there): 1 whole and sound (*size its length), 0 cut short by the
 * end (torn), -1 not a sound frame here.
 */
static int frame_at(const unsigned char *p, size_t left, size_t *size)
{
	uint32_t payload;

	if (left < 4 || get32(p) != FRAME_MAGIC)
		return left < 4 ? 0 : -1;
	if (left < STORE_FRAME_HEADER)
		return 0;
	payload = get32(p + 8);
	if (payload > STORE_FRAME_MAX || get32(p + 12) > STORE_FRAME_MAX || p[35] || get32(p + 36))
		return -1;
	if (left - STORE_FRAME_HEADER < payload)
		return 0;
	if (store_crc32c(0, p + 8, STORE_FRAME_HEADER - 8 + payload) != get32(p + 4))
		return -1;
	*size = STORE_FRAME_HEADER + payload;
	return 1;
}

/* A sound frame's payload, raw: data and len (a buffer of *scratch when decompressed); false when it cannot be. */
static bool payload_of(const unsigned char *p, unsigned char **scratch, const unsigned char **data, size_t *len)
{
	uint32_t payload = get32(p + 8), raw = get32(p + 12);
	uLongf got = raw;

	if (p[34] == CODEC_RAW) {
		*data = p + STORE_FRAME_HEADER;
		*len = payload;
		return raw == payload;
	}
	if (p[34] != CODEC_ZLIB || !zlib_load())
		return false;
	free(*scratch);
	*scratch = malloc(raw ? raw : 1);
	if (!*scratch || sym_uncompress(*scratch, &got, p + STORE_FRAME_HEADER, payload) != Z_OK || got != raw)
		return false;
	*data = *scratch;
	*len = raw;
	return true;
}

int store_segment_scan(const unsigned char *buf, size_t len, store_frame_fn fn, void *context,
		       struct store_scan *out)
{
	unsigned char *scratch = NULL;
	size_t at = STORE_SEGMENT_HEADER;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (len < STORE_SEGMENT_HEADER || memcmp(buf, segment_magic, sizeof(segment_magic)) ||
	    get32(buf + 8) < 1 || get32(buf + 8) > STORE_VERSION) {
		snprintf(out->problem, sizeof(out->problem), "not a segment of iolens record (version %d)",
			 STORE_VERSION);
		return -EINVAL;
	}
	out->created_real_ns = get64(buf + 16);
	out->created_mono_ns = get64(buf + 24);
	out->good_end = at;
	while (at < len && !rc) {
		size_t size = 0;
		int found = frame_at(buf + at, len - at, &size);
		struct store_frame f = { .offset = at };

		if (found != 1) {
			/* Resynchronised at the next sound frame; none after a cut-short one: torn. */
			size_t next = at + 1;
			while (next < len && frame_at(buf + next, len - next, &size) != 1)
				next++;
			if (next >= len && found == 0) {
				out->torn = true;
				said(out, "a frame cut short (the write in progress when the recorder stopped)", at);
				break;
			}
			out->skipped++;
			said(out, "a corrupt frame", at);
			if (next >= len)
				break;
			at = next;
			continue;
		}
		f.real_ns = get64(buf + at + 16);
		f.mono_ns = get64(buf + at + 24);
		f.kind = (unsigned)buf[at + 32] | (unsigned)buf[at + 33] << 8;
		if (!payload_of(buf + at, &scratch, &f.data, &f.len)) {
			out->skipped++;
			said(out, "a frame whose payload does not decompress", at);
		} else {
			out->frames++;
			rc = fn ? fn(context, &f) : 0;
		}
		at += size;
		out->good_end = at;
	}
	free(scratch);
	return rc;
}

/* ---- writing ------------------------------------------------------------------------------ */

struct store {
	struct store_options o;
	int dir;                /* the store's directory */
	int lock;               /* its lock file, flocked */
	int fd;                 /* the segment being written, -1 before the first frame */
	uint64_t segment_bytes; /* its size */
	uint64_t segment_began; /* CLOCK_MONOTONIC when it was made */
	unsigned sequence;      /* for the names of segments made within one second */
};

static uint64_t mono_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static bool is_segment_name(const char *name)
{
	size_t n = strlen(name);

	return n > 4 && n < 64 && !strcmp(name + n - 4, ".seg") && name[0] != '.';
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct store_segment *)a)->name, ((const struct store_segment *)b)->name);
}

/* The segments' names and sizes in the directory, oldest first (names begin with their UTC time). */
static int segments_of(int dir, struct store_segment **out)
{
	int fd = dup(dir);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct store_segment *list = NULL;
	size_t n = 0, room = 0;
	struct dirent *e;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	rewinddir(d);
	while ((e = readdir(d))) {
		struct stat st;
		if (!is_segment_name(e->d_name) || fstatat(dir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode))
			continue;
		if (n == room) {
			room = room ? 2 * room : 16;
			list = xrealloc(list, room * sizeof(*list));
		}
		memset(&list[n], 0, sizeof(list[n]));
		snprintf(list[n].name, sizeof(list[n].name), "%s", e->d_name);
		list[n].bytes = (uint64_t)st.st_size;
		list[n++].last_real_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
	}
	closedir(d);
	if (n)
		qsort(list, n, sizeof(*list), by_name);
	*out = list;
	return (int)n;
}

/* A segment's bytes, mapped (NULL for an empty one); *len its size. */
static unsigned char *map_segment(int dir, const char *name, size_t *len, int *err)
{
	int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	void *p = NULL;

	*len = 0;
	*err = 0;
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		*err = fd < 0 ? -errno : -EINVAL;
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	if (st.st_size > 0) {
		p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (p == MAP_FAILED) {
			*err = -errno;
			p = NULL;
		} else {
			*len = (size_t)st.st_size;
		}
	}
	close(fd);
	return p;
}

/* The newest segment, left torn by a writer that stopped: cut back to its last whole frame. */
static void mend_last(struct store *s)
{
	struct store_segment *list = NULL;
	int n = segments_of(s->dir, &list), err;
	size_t len;
	unsigned char *p;
	struct store_scan scan;

	if (n <= 0) {
		free(list);
		return;
	}
	p = map_segment(s->dir, list[n - 1].name, &len, &err);
	if (p && store_segment_scan(p, len, NULL, NULL, &scan) == 0 && scan.torn) {
		int fd = openat(s->dir, list[n - 1].name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0) {
			if (ftruncate(fd, (off_t)scan.good_end) == 0)
				warn_msg("record: %s: a torn last frame cut off (%llu bytes kept)", list[n - 1].name,
					 (unsigned long long)scan.good_end);
			close(fd);
		}
	}
	if (p)
		munmap(p, len);
	free(list);
}

int store_open(struct store **out, const struct store_options *options, char *why, size_t why_len)
{
	struct store *s = xcalloc(1, sizeof(*s));
	struct stat st;

	*out = NULL;
	s->o = *options;
	s->fd = s->lock = -1;
	if (mkdir(options->dir, 0700) && errno != EEXIST) {
		snprintf(why, why_len, "%s: %s", options->dir, strerror(errno));
		goto fail;
	}
	s->dir = open(options->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->dir < 0 || fstat(s->dir, &st)) {
		int err = errno;
		bool link = !lstat(options->dir, &st) && S_ISLNK(st.st_mode);

		snprintf(why, why_len, "%s: %s", options->dir, link ? "a symbolic link" : strerror(err));
		errno = link ? ELOOP : err;
		goto fail;
	}
	if (st.st_uid != geteuid() || (st.st_mode & 022)) {
		snprintf(why, why_len, "%s: owned by uid %u, mode %03o: must be this user's, writable by none other",
			 options->dir, (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777));
		errno = EPERM;
		goto fail;
	}
	s->lock = openat(s->dir, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (s->lock < 0 || flock(s->lock, LOCK_EX | LOCK_NB)) {
		snprintf(why, why_len, "%s: %s", options->dir,
			 errno == EWOULDBLOCK ? "another recorder writes this store" : strerror(errno));
		if (errno == EWOULDBLOCK)
			errno = EBUSY;
		goto fail;
	}
	mend_last(s);
	*out = s;
	return 0;
fail:;
	int err = -errno;
	store_close(s);
	return err;
}

/* Removes the oldest segments past the store's size or age (never the one being written). */
static void prune(struct store *s, const char *current)
{
	struct store_segment *list = NULL;
	int n = segments_of(s->dir, &list);
	uint64_t total = 0;
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	for (int i = 0; i < n; i++)
		total += list[i].bytes;
	for (int i = 0; i < n && strcmp(list[i].name, current); i++) {
		uint64_t age = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec - list[i].last_real_ns;
		if (total <= s->o.max_bytes && (!s->o.max_age_ns || age <= s->o.max_age_ns))
			break;
		if (unlinkat(s->dir, list[i].name, 0) == 0)
			total -= list[i].bytes;
	}
	free(list);
}

/* A new segment, named after its UTC time: its header written. */
static int begin_segment(struct store *s, uint64_t real_ns, uint64_t mono_ns, char *why, size_t why_len)
{
	unsigned char header[STORE_SEGMENT_HEADER] = { 0 };
	char name[64];
	time_t t = (time_t)(real_ns / 1000000000u);
	struct tm tm;

	if (s->fd >= 0)
		close(s->fd);
	gmtime_r(&t, &tm);
	/* Names sort as the segments were made: UTC time, then a number past any of that second's. */
	for (unsigned tries = 0; tries < 1000; tries++) {
		strftime(name, sizeof(name), "%Y%m%dT%H%M%SZ", &tm);
		snprintf(name + strlen(name), sizeof(name) - strlen(name), "-%06u.seg", s->sequence++ % 1000000);
		s->fd = openat(s->dir, name, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (s->fd >= 0 || errno != EEXIST)
			break;
	}
	if (s->fd < 0) {
		snprintf(why, why_len, "%s/%s: %s", s->o.dir, name, strerror(errno));
		return -errno;
	}
	memcpy(header, segment_magic, sizeof(segment_magic));
	put32(header + 8, STORE_VERSION);
	put64(header + 16, real_ns);
	put64(header + 24, mono_ns);
	if (write(s->fd, header, sizeof(header)) != (ssize_t)sizeof(header)) {
		int err = errno ? -errno : -EIO;
		snprintf(why, why_len, "%s/%s: %s", s->o.dir, name, strerror(-err));
		close(s->fd);
		unlinkat(s->dir, name, 0);
		s->fd = -1;
		return err;
	}
	s->segment_bytes = sizeof(header);
	s->segment_began = mono_now();
	prune(s, name);
	return 0;
}

int store_append(struct store *s, unsigned kind, uint64_t real_ns, uint64_t mono_ns, const void *data, size_t len,
		 char *why, size_t why_len)
{
	unsigned char *frame;
	size_t payload = len;
	unsigned codec = CODEC_RAW;
	ssize_t wrote;
	int err = 0;

	if (len > STORE_FRAME_MAX) {
		snprintf(why, why_len, "a record of %zu bytes: at most %u", len, STORE_FRAME_MAX);
		return -EFBIG;
	}
	if (s->fd < 0 || s->segment_bytes >= s->o.segment_bytes ||
	    (s->o.segment_age_ns && mono_now() - s->segment_began >= s->o.segment_age_ns))
		if ((err = begin_segment(s, real_ns, mono_ns, why, why_len)))
			return err;
	frame = xcalloc(1, STORE_FRAME_HEADER + (s->o.compress && zlib_load() ? sym_compressBound(len) : len));
	if (s->o.compress && zlib_load()) {
		uLongf size = sym_compressBound(len);
		if (sym_compress2(frame + STORE_FRAME_HEADER, &size, data, len, 6) == Z_OK && size < len) {
			payload = size;
			codec = CODEC_ZLIB;
		}
	}
	if (codec == CODEC_RAW && len)
		memcpy(frame + STORE_FRAME_HEADER, data, len);
	memset(frame, 0, STORE_FRAME_HEADER);
	put32(frame, FRAME_MAGIC);
	put32(frame + 8, (uint32_t)payload);
	put32(frame + 12, (uint32_t)len);
	put64(frame + 16, real_ns);
	put64(frame + 24, mono_ns);
	frame[32] = (unsigned char)kind;
	frame[33] = (unsigned char)(kind >> 8);
	frame[34] = (unsigned char)codec;
	put32(frame + 4, store_crc32c(0, frame + 8, STORE_FRAME_HEADER - 8 + payload));
	wrote = write(s->fd, frame, STORE_FRAME_HEADER + payload);
	if (wrote != (ssize_t)(STORE_FRAME_HEADER + payload)) {
		err = wrote < 0 ? -errno : -ENOSPC;
		/* Undone: no part of a frame is left for a reader to take for a torn one. */
		if (ftruncate(s->fd, (off_t)s->segment_bytes) != 0)
			err = -errno;
		snprintf(why, why_len, "%s: %s", s->o.dir, strerror(-err));
	} else if (fdatasync(s->fd) != 0) {
		err = -errno;
		snprintf(why, why_len, "%s: %s", s->o.dir, strerror(-err));
	} else {
		s->segment_bytes += (uint64_t)wrote;
	}
	free(frame);
	return err;
}

void store_close(struct store *s)
{
	if (!s)
		return;
	if (s->fd >= 0)
		close(s->fd);
	if (s->lock >= 0)
		close(s->lock);
	if (s->dir >= 0)
		close(s->dir);
	free(s);
}

/* ---- listing ------------------------------------------------------------------------------ */

static int stamp(void *context, const struct store_frame *f)
{
	struct store_segment *seg = context;

	if (!seg->first_real_ns)
		seg->first_real_ns = f->real_ns;
	seg->last_real_ns = f->real_ns;
	return 0;
}

int store_list(const char *dir, struct store_segment **out, char *why, size_t why_len)
{
	int d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), n;

	*out = NULL;
	if (d < 0) {
		snprintf(why, why_len, "%s: %s", dir, strerror(errno));
		return -errno;
	}
	n = segments_of(d, out);
	for (int i = 0; i < n; i++) {
		struct store_segment *seg = &(*out)[i];
		struct store_scan scan;
		size_t len;
		int err;
		unsigned char *p = map_segment(d, seg->name, &len, &err);

		seg->last_real_ns = 0;
		if (p || !err) {
			if (store_segment_scan(p ? p : (const unsigned char *)"", len, stamp, seg, &scan) == 0) {
				seg->frames = scan.frames;
				seg->skipped = scan.skipped;
				seg->torn = scan.torn;
			} else {
				seg->skipped = 1;
			}
		}
		if (p)
			munmap(p, len);
	}
	close(d);
	return n;
}
