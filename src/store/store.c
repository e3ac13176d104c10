/* SPDX-License-Identifier: GPL-2.0-or-later */
/* store.c: the flight recorder's segments: frames written whole, read back with their checksums. */
#include "store/store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <zlib.h>

#include "common/dl.h"
#include "common/util.h"

static const unsigned char segment_magic[8] = { 'I', 'O', 'L', 'R', 'E', 'C', 0, 1 };
#define FRAME_MAGIC 0x464c4f49u /* "IOLF" */
#define CODEC_RAW 0
#define CODEC_ZLIB 1  /* a keyframe: zlib alone */
#define CODEC_ZDICT 2 /* zlib with the raw payload of the segment's last keyframe of its kind as dictionary */
#define KEY_EVERY 60  /* frames of a kind between keyframes: what a lost keyframe can take with it */
/*
 * zlib's levels: a keyframe's, 6; a frame against its keyframe, 3, which takes 60 % of level 6's
 * time for a fifth more bytes (a system frame of 20.8 KB: 113 us and 747 bytes, 67 us and 901).
 */
#define KEY_LEVEL 6
#define FRAME_LEVEL 3
/* A doctor's snapshot, rows of numbers packed: level 5 (lazy matching) takes a fifth off a busy
 * window's (98 KB: 24.3 -> 21.6 KB) for a tenth more time. */
#define SNAPSHOT_LEVEL 5

/* ---- CRC-32C ------------------------------------------------------------------------------ */

static uint32_t get32(const unsigned char *p);

/* Slicing by 8 (Intel's): eight bytes a step, each through a table of its own (4x the bytewise loop). */
static uint32_t crc_table[8][256];

static void crc_table_make(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
		crc_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_table[t][i] = crc_table[0][crc_table[t - 1][i] & 0xff] ^ (crc_table[t - 1][i] >> 8);
}

uint32_t store_crc32c(uint32_t crc, const void *data, size_t len)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	const unsigned char *p = data;

	pthread_once(&once, crc_table_make);
	crc = ~crc;
	for (; len >= 8; len -= 8, p += 8) {
		uint32_t low = crc ^ get32(p);

		crc = crc_table[7][low & 0xff] ^ crc_table[6][(low >> 8) & 0xff] ^ crc_table[5][(low >> 16) & 0xff] ^
		      crc_table[4][low >> 24] ^ crc_table[3][p[4]] ^ crc_table[2][p[5]] ^ crc_table[1][p[6]] ^
		      crc_table[0][p[7]];
	}
	while (len--)
		crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

/* ---- zlib, opened when first needed --------------------------------------------------------- */

static DLSYM_POINTER(compress2);
static DLSYM_POINTER(compressBound);
static DLSYM_POINTER(uncompress);
static DLSYM_POINTER(deflateInit_);
static DLSYM_POINTER(deflateSetDictionary);
static DLSYM_POINTER(deflate);
static DLSYM_POINTER(deflateEnd);
static DLSYM_POINTER(deflateReset);
static DLSYM_POINTER(inflateInit_);
static DLSYM_POINTER(inflateInit2_);
static DLSYM_POINTER(adler32);
static DLSYM_POINTER(inflateSetDictionary);
static DLSYM_POINTER(inflate);
static DLSYM_POINTER(inflateEnd);
static void *libz;

static bool zlib_load(void)
{
	static int state; /* 0 not tried, 1 loaded, -1 not there */
	char why[256];

	if (!state)
		state = dl_open_many(&libz, ZLIB_SONAME, why, sizeof(why), DLSYM_ARG(compress2),
				     DLSYM_ARG(compressBound), DLSYM_ARG(uncompress), DLSYM_ARG(deflateInit_),
				     DLSYM_ARG(deflateSetDictionary), DLSYM_ARG(deflate), DLSYM_ARG(deflateEnd),
				     DLSYM_ARG(deflateReset),
				     DLSYM_ARG(inflateInit_), DLSYM_ARG(inflateInit2_), DLSYM_ARG(adler32),
				     DLSYM_ARG(inflateSetDictionary), DLSYM_ARG(inflate), DLSYM_ARG(inflateEnd),
				     NULL) == 0
			    ? 1
			    : -1;
	return state > 0;
}

/*
 * The dictionaries of a segment: by kind, the raw payload of its last keyframe, which the
 * frames after it (CODEC_ZDICT) are compressed against: /proc's text of one interval is
 * the next one's but for its figures.
 */
#define DICT_KINDS 8
struct dicts {
	struct dict {
		unsigned kind;
		unsigned char *data;
		size_t len;
		unsigned since; /* frames written against it */
		uint32_t id;    /* its Adler-32, as a stream names it (id_known: computed) */
		bool id_known;
	} d[DICT_KINDS];
	unsigned n;
};

static struct dict *dict_of(struct dicts *dicts, unsigned kind)
{
	for (unsigned i = 0; i < dicts->n; i++)
		if (dicts->d[i].kind == kind)
			return &dicts->d[i];
	return NULL;
}

static void dict_set(struct dicts *dicts, unsigned kind, const unsigned char *data, size_t len)
{
	struct dict *d = dict_of(dicts, kind);

	if (!d && dicts->n == DICT_KINDS)
		return; /* more kinds than slots: the others' frames are keyframes */
	if (!d) {
		d = &dicts->d[dicts->n++];
		d->kind = kind;
	}
	free(d->data);
	d->data = xcalloc(1, len ? len : 1);
	memcpy(d->data, data, len);
	d->len = len;
	d->since = 0;
	d->id_known = false;
}

static void dicts_clear(struct dicts *dicts)
{
	for (unsigned i = 0; i < dicts->n; i++)
		free(dicts->d[i].data);
	memset(dicts, 0, sizeof(*dicts));
}

/*
 * data deflated against dict into out (room bytes) by *z at level (one *z a level), made at the
 * first call and reset at the next (its quarter MiB of state allocated once, not a frame): its
 * length, or 0 when it does not fit or fails.
 */
static size_t deflate_with(z_stream **z, int level, const struct dict *dict, const void *data, size_t len,
			   unsigned char *out, size_t room)
{
	if (!*z) {
		*z = xcalloc(1, sizeof(**z));
		if (sym_deflateInit_(*z, level, ZLIB_VERSION, (int)sizeof(**z)) != Z_OK) {
			free(*z);
			*z = NULL;
			return 0;
		}
	} else if (sym_deflateReset(*z) != Z_OK) {
		return 0;
	}
	(*z)->next_in = (Bytef *)(uintptr_t)data;
	(*z)->avail_in = (uInt)len;
	(*z)->next_out = out;
	(*z)->avail_out = (uInt)room;
	if (sym_deflateSetDictionary(*z, dict->data, (uInt)dict->len) == Z_OK &&
	    sym_deflate(*z, Z_FINISH) == Z_STREAM_END)
		return (*z)->total_out;
	return 0;
}

static void deflate_free(z_stream **z)
{
	if (*z)
		sym_deflateEnd(*z);
	free(*z);
	*z = NULL;
}

/*
 * A CODEC_ZDICT payload inflated against dict into out, exactly raw bytes: true, or false. The
 * payload is a zlib stream (CMF, FLG with FDICT, the dictionary's Adler-32, deflate data, the
 * data's Adler-32), read raw: the dictionary's id held to the keyframe's, computed once a
 * keyframe; the data's sum not computed again (the frame's CRC-32C was checked). zlib itself
 * summed the dictionary (176 KB for a busy window's snapshot) and the data anew each frame: a
 * sixth of doctor --from's time over a day.
 */
static bool inflate_with(struct dict *dict, const unsigned char *in, size_t len, unsigned char *out, size_t raw)
{
	z_stream z = {0};
	int rc;

	if (len < 10 || (in[0] & 0x0f) != Z_DEFLATED || in[0] >> 4 > 7 || ((unsigned)in[0] << 8 | in[1]) % 31 ||
	    !(in[1] & 0x20))
		return false;
	if (!dict->id_known) {
		dict->id = (uint32_t)sym_adler32(sym_adler32(0, NULL, 0), dict->data, (uInt)dict->len);
		dict->id_known = true;
	}
	if (((uint32_t)in[2] << 24 | (uint32_t)in[3] << 16 | (uint32_t)in[4] << 8 | in[5]) != dict->id)
		return false; /* compressed against another keyframe's (one lost) */
	if (sym_inflateInit2_(&z, -MAX_WBITS, ZLIB_VERSION, (int)sizeof(z)) != Z_OK)
		return false;
	rc = sym_inflateSetDictionary(&z, dict->data, (uInt)dict->len);
	z.next_in = (Bytef *)(uintptr_t)(in + 6);
	z.avail_in = (uInt)(len - 6);
	z.next_out = out;
	z.avail_out = (uInt)raw;
	if (rc == Z_OK)
		rc = sym_inflate(&z, Z_FINISH);
	rc = rc == Z_STREAM_END && z.total_out == raw && z.avail_in == 4;
	sym_inflateEnd(&z);
	return rc;
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
 * The frame at p (left bytes there): FRAME_SOUND (*size its length), FRAME_SHORT (cut short by
 * the end: no whole header, or a sound header whose payload runs past the end), FRAME_NONE (no
 * sound header here), FRAME_CORRUPT (a sound header, *size its length, a payload that fails
 * its checksum).
 */
enum { FRAME_NONE, FRAME_SHORT, FRAME_SOUND, FRAME_CORRUPT };
static int frame_at(const unsigned char *p, size_t left, size_t *size)
{
	uint32_t payload;

	if (left < STORE_FRAME_HEADER)
		return left < 4 || get32(p) == FRAME_MAGIC ? FRAME_SHORT : FRAME_NONE;
	if (get32(p) != FRAME_MAGIC || store_crc32c(0, p, STORE_FRAME_HEADER - 4) != get32(p + 36))
		return FRAME_NONE;
	payload = get32(p + 8);
	if (payload > STORE_FRAME_MAX || get32(p + 12) > STORE_FRAME_MAX || p[35])
		return FRAME_NONE;
	if (left - STORE_FRAME_HEADER < payload)
		return FRAME_SHORT;
	*size = STORE_FRAME_HEADER + payload;
	return store_crc32c(0, p + STORE_FRAME_HEADER, payload) == get32(p + 4) ? FRAME_SOUND : FRAME_CORRUPT;
}

/* The next offset after at where a whole frame stands (sound or not), or len. */
static size_t next_frame(const unsigned char *buf, size_t len, size_t at)
{
	size_t size;

	for (at++; at + 4 <= len; at++) {
		int found;
		if (get32(buf + at) != FRAME_MAGIC)
			continue;
		found = frame_at(buf + at, len - at, &size);
		if (found == FRAME_SOUND || found == FRAME_CORRUPT)
			return at;
	}
	return len;
}

/* A sound frame's payload, raw: data and len (a buffer of *scratch when decompressed); false when it cannot be. */
static bool payload_of(const unsigned char *p, unsigned char **scratch, const unsigned char **data, size_t *len,
		       struct dicts *dicts)
{
	uint32_t payload = get32(p + 8), raw = get32(p + 12);
	unsigned kind = (unsigned)p[32] | (unsigned)p[33] << 8;
	struct dict *dict = p[34] == CODEC_ZDICT ? dict_of(dicts, kind) : NULL;
	uLongf got = raw;

	if (p[34] == CODEC_RAW) {
		*data = p + STORE_FRAME_HEADER;
		*len = payload;
		return raw == payload;
	}
	if ((p[34] != CODEC_ZLIB && !dict) || !zlib_load())
		return false;
	free(*scratch);
	*scratch = malloc(raw ? raw : 1);
	if (!*scratch)
		return false;
	if (dict) {
		if (!inflate_with(dict, p + STORE_FRAME_HEADER, payload, *scratch, raw))
			return false;
	} else if (sym_uncompress(*scratch, &got, p + STORE_FRAME_HEADER, payload) != Z_OK || got != raw) {
		return false;
	} else {
		dict_set(dicts, kind, *scratch, raw); /* a keyframe: the next frames of its kind are read against it */
	}
	*data = *scratch;
	*len = raw;
	return true;
}

/*
 * The next sound frame of buf from *at, its header read into *f (not its payload): true, or false
 * at the end. Damage passed over is counted and said in out; *at is left after the frame.
 */
static bool scan_next(const unsigned char *buf, size_t len, size_t *at, struct store_frame *f, struct store_scan *out)
{
	while (*at < len) {
		size_t size = 0, next;
		int found = frame_at(buf + *at, len - *at, &size);

		if (found == FRAME_CORRUPT) {
			out->skipped++;
			said(out, "a corrupt frame", *at);
			*at += size;
			out->good_end = *at;
			continue;
		}
		if (found != FRAME_SOUND) {
			/* Damage: read on from the next whole frame; none after it: torn (a write cut short). */
			next = next_frame(buf, len, *at);
			if (next >= len) {
				out->torn = true;
				said(out, "a frame cut short (the write in progress when the recorder stopped)", *at);
				*at = len;
				return false;
			}
			out->skipped++;
			said(out, "a corrupt frame", *at);
			*at = next;
			continue;
		}
		memset(f, 0, sizeof(*f));
		f->offset = *at;
		f->real_ns = get64(buf + *at + 16);
		f->mono_ns = get64(buf + *at + 24);
		f->kind = (unsigned)buf[*at + 32] | (unsigned)buf[*at + 33] << 8;
		*at += size;
		out->good_end = *at;
		return true;
	}
	return false;
}

/* A segment's header checked, its stamps in out: 0, or -EINVAL said in out. */
static int segment_header(const unsigned char *buf, size_t len, struct store_scan *out)
{
	memset(out, 0, sizeof(*out));
	if (len < STORE_SEGMENT_HEADER || memcmp(buf, segment_magic, sizeof(segment_magic)) ||
	    get32(buf + 8) < 1 || get32(buf + 8) > STORE_VERSION) {
		snprintf(out->problem, sizeof(out->problem), "not a segment of iolens record (version %d)",
			 STORE_VERSION);
		return -EINVAL;
	}
	out->created_real_ns = get64(buf + 16);
	out->created_mono_ns = get64(buf + 24);
	out->good_end = STORE_SEGMENT_HEADER;
	return 0;
}

int store_segment_scan(const unsigned char *buf, size_t len, store_frame_fn fn, void *context,
		       struct store_scan *out)
{
	unsigned char *scratch = NULL;
	size_t at = STORE_SEGMENT_HEADER;
	struct store_frame f;
	struct dicts dicts = {0};
	int rc = segment_header(buf, len, out);

	while (!rc && scan_next(buf, len, &at, &f, out)) {
		if (!payload_of(buf + f.offset, &scratch, &f.data, &f.len, &dicts)) {
			out->skipped++;
			said(out, "a frame whose payload does not decompress", f.offset);
		} else {
			out->frames++;
			rc = fn ? fn(context, &f) : 0;
		}
	}
	free(scratch);
	dicts_clear(&dicts);
	return rc;
}

/* ---- the segments of a directory ---------------------------------------------------------- */

/* YYYYMMDDTHHMMSSZ-NNNNNN.seg: the names this store gives, and the only files it reads or removes. */
static bool is_segment_name(const char *name)
{
	static const char pattern[] = "DDDDDDDDTDDDDDDZ-DDDDDD.seg";

	for (size_t i = 0; i < sizeof(pattern); i++)
		if (pattern[i] == 'D' ? name[i] < '0' || name[i] > '9' : name[i] != pattern[i])
			return false;
	return true;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct store_segment *)a)->name, ((const struct store_segment *)b)->name);
}

static uint64_t ns_of(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000u + (uint64_t)t->tv_nsec;
}

/* The segments' names and sizes (last_real_ns: the file's mtime), oldest first: their count or -errno. */
static int segments_of(int dir, struct store_segment **out)
{
	int fd = fcntl(dir, F_DUPFD_CLOEXEC, 0);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct store_segment *list = NULL;
	size_t n = 0, room = 0;
	struct dirent *e;

	*out = NULL;
	if (!d) {
		int err = -errno;
		if (fd >= 0)
			close(fd);
		return err;
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
		snprintf(list[n].name, sizeof(list[n].name), "%.63s", e->d_name);
		list[n].bytes = (uint64_t)st.st_size;
		list[n++].last_real_ns = ns_of(&st.st_mtim);
	}
	closedir(d);
	if (n)
		qsort(list, n, sizeof(*list), by_name);
	*out = list;
	return (int)n;
}

/*
 * A segment's bytes, read whole (not mapped: a writer cutting it back would make a reader of the
 * mapping fault). At most max bytes are read; NULL with *err set when it cannot be.
 */
static unsigned char *read_segment(int dir, const char *name, uint64_t max, size_t *len, int *err)
{
	int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	unsigned char *buf;
	size_t got = 0;

	*len = 0;
	*err = 0;
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > max ||
	    (uint64_t)st.st_size > SIZE_MAX) {
		*err = fd < 0 ? -errno : -EINVAL;
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	buf = malloc((size_t)st.st_size + 1);
	while (buf && got < (size_t)st.st_size) {
		ssize_t n = pread(fd, buf + got, (size_t)st.st_size - got, (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (!buf)
		*err = -ENOMEM;
	*len = got;
	return buf;
}

/* ---- writing ------------------------------------------------------------------------------ */

#define SEGMENT_READ_MAX (4ull << 30) /* a segment read back whole: at most this */

struct store {
	struct store_options o;
	char *dir_name;         /* the store's directory as given, for messages */
	int dir;                /* the store's directory */
	int lock;               /* its lock file, flocked */
	int fd;                 /* the segment being written, -1 before the first frame */
	char name[64];          /* its name */
	uint64_t segment_bytes; /* its size */
	uint64_t segment_began; /* CLOCK_MONOTONIC when it was made */
	unsigned sequence;      /* for the names of segments made within one second */
	bool unsynced;          /* its last frame written, not yet synced (store_append_unsynced) */
	struct dicts dicts;     /* its keyframes, by kind */
	z_stream *deflating, *deflating_snapshot; /* deflate_with's, at FRAME_LEVEL and SNAPSHOT_LEVEL */
};

static uint64_t mono_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return ns_of(&t);
}

/*
 * The newest segment, left by a writer that stopped: cut back to its last whole frame when torn,
 * removed when not even its header was written. What was done is said in note.
 */
static void mend_last(struct store *s, char *note, size_t note_len)
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
	p = read_segment(s->dir, list[n - 1].name, SEGMENT_READ_MAX, &len, &err);
	if (p && len < STORE_SEGMENT_HEADER) {
		if (unlinkat(s->dir, list[n - 1].name, 0) == 0)
			snprintf(note, note_len, "%s: a segment without its header removed", list[n - 1].name);
	} else if (p && store_segment_scan(p, len, NULL, NULL, &scan) == 0 && scan.torn) {
		int fd = openat(s->dir, list[n - 1].name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0) {
			if (ftruncate(fd, (off_t)scan.good_end) == 0 && fdatasync(fd) == 0)
				snprintf(note, note_len, "%s: a torn last frame cut off (%llu bytes kept)",
					 list[n - 1].name, (unsigned long long)scan.good_end);
			close(fd);
		}
	}
	free(p);
	free(list);
}

/* The directory's path without trailing slashes: open(2) follows a link named "link/" whatever O_NOFOLLOW says. */
static char *plain_path(const char *dir)
{
	char *path = xstrdup(dir);
	size_t n = strlen(path);

	while (n > 1 && path[n - 1] == '/')
		path[--n] = '\0';
	return path;
}

int store_open(struct store **out, const struct store_options *options, char *why, size_t why_len)
{
	struct store *s = xcalloc(1, sizeof(*s));
	struct stat st;
	int err;

	*out = NULL;
	why[0] = '\0';
	s->o = *options;
	s->fd = s->lock = s->dir = -1;
	s->dir_name = plain_path(options->dir);
	if (mkdir(s->dir_name, 0700) && errno != EEXIST) {
		err = -errno;
		snprintf(why, why_len, "%s: %s", s->dir_name, strerror(-err));
		goto fail;
	}
	s->dir = open(s->dir_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->dir < 0 || fstat(s->dir, &st)) {
		bool link = !lstat(s->dir_name, &st) && S_ISLNK(st.st_mode);

		err = link ? -ELOOP : -errno;
		snprintf(why, why_len, "%s: %s", s->dir_name, link ? "a symbolic link" : strerror(-err));
		goto fail;
	}
	if (st.st_uid != geteuid() || (st.st_mode & 022)) {
		snprintf(why, why_len, "%s: owned by uid %u, mode %03o: must be this user's, writable by none other",
			 s->dir_name, (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777));
		err = -EPERM;
		goto fail;
	}
	s->lock = openat(s->dir, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (s->lock < 0 || flock(s->lock, LOCK_EX | LOCK_NB)) {
		err = errno == EWOULDBLOCK ? -EBUSY : -errno;
		snprintf(why, why_len, "%s: %s", s->dir_name,
			 err == -EBUSY ? "another recorder writes this store" : strerror(-err));
		goto fail;
	}
	mend_last(s, why, why_len);
	*out = s;
	return 0;
fail:
	store_close(s);
	return err;
}

/*
 * Removes the oldest segments past the store's size or age, never the one being written. A
 * segment whose mtime is ahead of the clock (a clock stepped back) is of age 0.
 */
static void prune(struct store *s)
{
	struct store_segment *list = NULL;
	int n = segments_of(s->dir, &list);
	uint64_t total = 0, now;
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	now = ns_of(&t);
	for (int i = 0; i < n; i++)
		total += list[i].bytes;
	for (int i = 0; i < n; i++) {
		uint64_t age = now > list[i].last_real_ns ? now - list[i].last_real_ns : 0;
		bool too_big = s->o.max_bytes && total > s->o.max_bytes;
		bool too_old = s->o.max_age_ns && age > s->o.max_age_ns;

		if (!strcmp(list[i].name, s->name))
			continue;
		if (!too_big && !too_old)
			break;
		if (unlinkat(s->dir, list[i].name, 0) == 0)
			total -= list[i].bytes;
	}
	free(list);
}

/*
 * The name of a new segment: its UTC time and a number, after every name there (a clock stepped
 * back: the newest one's time, with a higher number).
 */
static void next_name(struct store *s, uint64_t real_ns, char *name, size_t size)
{
	struct store_segment *list = NULL;
	int n = segments_of(s->dir, &list);
	time_t t = (time_t)(real_ns / 1000000000u);
	struct tm tm;
	char when[32];

	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y%m%dT%H%M%SZ", &tm);
	if (n > 0 && strncmp(when, list[n - 1].name, 16) <= 0) {
		unsigned last = (unsigned)strtoul(list[n - 1].name + 17, NULL, 10);

		snprintf(when, sizeof(when), "%.16s", list[n - 1].name);
		if (s->sequence <= last)
			s->sequence = last + 1;
	}
	snprintf(name, size, "%s-%06u.seg", when, s->sequence++ % 1000000);
	free(list);
}

/* The segment closed, what was written to it unsynced synced first: 0, or -errno of that sync. */
static int close_segment(struct store *s)
{
	int err = 0;

	if (s->fd >= 0) {
		if (s->unsynced && fdatasync(s->fd) != 0)
			err = -errno;
		close(s->fd);
	}
	s->fd = -1;
	s->unsynced = false;
	return err;
}

/* A new segment: its header written, its directory entry synced, the store pruned. */
static int begin_segment(struct store *s, uint64_t real_ns, uint64_t mono_ns, char *why, size_t why_len)
{
	unsigned char header[STORE_SEGMENT_HEADER] = { 0 };
	char name[64];
	int err = 0;

	if ((err = close_segment(s))) { /* (the last frame, written unsynced, may be lost: said) */
		snprintf(why, why_len, "%s/%s: %s", s->dir_name, s->name, strerror(-err));
		return err;
	}
	dicts_clear(&s->dicts); /* each segment read on its own: its first frame of a kind is a keyframe */
	for (unsigned tries = 0; tries < 1000 && s->fd < 0; tries++) {
		next_name(s, real_ns, name, sizeof(name));
		s->fd = openat(s->dir, name, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (s->fd < 0 && errno != EEXIST)
			break;
	}
	if (s->fd < 0) {
		err = -errno;
		snprintf(why, why_len, "%s/%s: %s", s->dir_name, name, strerror(-err));
		return err;
	}
	memcpy(header, segment_magic, sizeof(segment_magic));
	put32(header + 8, STORE_VERSION);
	put64(header + 16, real_ns);
	put64(header + 24, mono_ns);
	errno = EIO;
	if (write(s->fd, header, sizeof(header)) != (ssize_t)sizeof(header) || fdatasync(s->fd) ||
	    fsync(s->dir)) {
		err = -errno;
		snprintf(why, why_len, "%s/%s: %s", s->dir_name, name, strerror(-err));
		close(s->fd);
		unlinkat(s->dir, name, 0);
		s->fd = -1;
		return err;
	}
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->segment_bytes = sizeof(header);
	s->segment_began = mono_now();
	prune(s);
	return 0;
}

/* Writes all of len bytes: 0, or -errno (a short write's cause, as the write after it says). */
static int write_all(int fd, const unsigned char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -ENOSPC;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The frame of a record: header and payload, compressed when that makes it smaller. */
static unsigned char *make_frame(struct store *s, unsigned kind, uint64_t real_ns, uint64_t mono_ns,
				 const void *data, size_t len, size_t *size)
{
	bool zlib = s->o.compress && zlib_load();
	size_t room = zlib ? sym_compressBound(len) + 64 : len;
	unsigned char *frame = xcalloc(1, STORE_FRAME_HEADER + room);
	struct dict *dict = zlib ? dict_of(&s->dicts, kind) : NULL;
	size_t payload = len, packed = 0;
	unsigned codec = CODEC_RAW;

	if (dict && dict->since < KEY_EVERY) {
		bool snapshot = kind == STORE_KIND_DOCTOR;

		packed = deflate_with(snapshot ? &s->deflating_snapshot : &s->deflating,
				      snapshot ? SNAPSHOT_LEVEL : FRAME_LEVEL, dict, data, len,
				      frame + STORE_FRAME_HEADER, room);
	}
	if (packed && packed < len) {
		payload = packed;
		codec = CODEC_ZDICT;
		dict->since++;
	} else if (zlib) {
		uLongf got = sym_compressBound(len);
		if (sym_compress2(frame + STORE_FRAME_HEADER, &got, data, len, KEY_LEVEL) == Z_OK && got < len) {
			payload = got;
			codec = CODEC_ZLIB;
			dict_set(&s->dicts, kind, data, len);
		}
	}
	if (codec == CODEC_RAW && len)
		memcpy(frame + STORE_FRAME_HEADER, data, len);
	put32(frame, FRAME_MAGIC);
	put32(frame + 4, store_crc32c(0, frame + STORE_FRAME_HEADER, payload));
	put32(frame + 8, (uint32_t)payload);
	put32(frame + 12, (uint32_t)len);
	put64(frame + 16, real_ns);
	put64(frame + 24, mono_ns);
	frame[32] = (unsigned char)kind;
	frame[33] = (unsigned char)(kind >> 8);
	frame[34] = (unsigned char)codec;
	put32(frame + 36, store_crc32c(0, frame, STORE_FRAME_HEADER - 4));
	*size = STORE_FRAME_HEADER + payload;
	return frame;
}

static int append(struct store *s, unsigned kind, uint64_t real_ns, uint64_t mono_ns, const void *data, size_t len,
		  bool sync, char *why, size_t why_len)
{
	unsigned char *frame;
	size_t size;
	int err = 0;

	if (len > STORE_FRAME_MAX || kind > 0xffff) {
		snprintf(why, why_len, "a record of %zu bytes, kind %u: at most %u bytes, kind 65535", len, kind,
			 STORE_FRAME_MAX);
		return -EINVAL;
	}
	if (s->fd < 0 || (s->o.segment_bytes && s->segment_bytes >= s->o.segment_bytes) ||
	    (s->o.segment_age_ns && mono_now() - s->segment_began >= s->o.segment_age_ns))
		if ((err = begin_segment(s, real_ns, mono_ns, why, why_len)))
			return err;
	frame = make_frame(s, kind, real_ns, mono_ns, data, len, &size);
	err = write_all(s->fd, frame, size);
	if (!err && sync && fdatasync(s->fd) != 0)
		err = -errno;
	free(frame);
	if (!err) {
		s->segment_bytes += size;
		s->unsynced = !sync;
		return 0;
	}
	/*
	 * Undone: no part of the frame stays for a reader to take for a torn one. The segment is
	 * closed either way: after a failed sync its size on disk is not known for sure.
	 */
	snprintf(why, why_len, "%s/%s: %s", s->dir_name, s->name, strerror(-err));
	/* The cut synced as it closes, with frames written unsynced before (a torn one left: store_open's). */
	if (ftruncate(s->fd, (off_t)s->segment_bytes) == 0)
		s->unsynced = true;
	(void)close_segment(s);
	return err;
}

int store_append(struct store *s, unsigned kind, uint64_t real_ns, uint64_t mono_ns, const void *data, size_t len,
		 char *why, size_t why_len)
{
	return append(s, kind, real_ns, mono_ns, data, len, true, why, why_len);
}

int store_append_unsynced(struct store *s, unsigned kind, uint64_t real_ns, uint64_t mono_ns, const void *data,
			  size_t len, char *why, size_t why_len)
{
	return append(s, kind, real_ns, mono_ns, data, len, false, why, why_len);
}

void store_close(struct store *s)
{
	if (!s)
		return;
	(void)close_segment(s);
	if (s->lock >= 0)
		close(s->lock);
	if (s->dir >= 0)
		close(s->dir);
	dicts_clear(&s->dicts);
	deflate_free(&s->deflating);
	deflate_free(&s->deflating_snapshot);
	free(s->dir_name);
	free(s);
}

/* ---- listing ------------------------------------------------------------------------------ */

int store_list(const char *dir, struct store_segment **out, char *why, size_t why_len)
{
	char *path = plain_path(dir);
	int d = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), n, err;

	*out = NULL;
	if (d < 0) {
		err = -errno;
		snprintf(why, why_len, "%s: %s", path, strerror(-err));
		free(path);
		return err;
	}
	n = segments_of(d, out);
	if (n < 0)
		snprintf(why, why_len, "%s: %s", path, strerror(-n));
	for (int i = 0; i < n; i++) {
		/* The frames' headers and checksums only: nothing decompressed. */
		struct store_segment *seg = &(*out)[i];
		struct store_scan scan;
		struct store_frame f;
		size_t len, at = STORE_SEGMENT_HEADER;
		unsigned char *p = read_segment(d, seg->name, SEGMENT_READ_MAX, &len, &err);

		seg->last_real_ns = 0;
		seg->skipped = 1; /* unless it reads */
		if (!p || segment_header(p, len, &scan) != 0) {
			free(p);
			continue;
		}
		while (scan_next(p, len, &at, &f, &scan)) {
			if (!seg->frames++)
				seg->first_real_ns = f.real_ns;
			seg->last_real_ns = f.real_ns;
		}
		seg->skipped = scan.skipped;
		seg->torn = scan.torn;
		free(p);
	}
	close(d);
	free(path);
	return n;
}

/* ---- reading a window --------------------------------------------------------------------- */

struct store_reader {
	int dir;
	struct store_segment *segments;
	int count, next;         /* the segments, and the next to read */
	unsigned char *buf;      /* the segment being read */
	size_t len, at;
	struct store_scan scan;  /* what its reading found */
	unsigned char *scratch;
	struct dicts dicts;      /* the segment's keyframes, by kind */
	uint64_t from_ns, to_ns;
	char said[256];
};

int store_reader_open(struct store_reader **out, const char *dir, uint64_t from_ns, uint64_t to_ns, char *why,
		      size_t why_len)
{
	struct store_reader *r = xcalloc(1, sizeof(*r));
	char *path = plain_path(dir);

	*out = NULL;
	r->dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	r->count = r->dir < 0 ? -errno : segments_of(r->dir, &r->segments);
	if (r->count < 0) {
		int err = r->count;
		snprintf(why, why_len, "%s: %s", path, strerror(-err));
		free(path);
		store_reader_close(r);
		return err;
	}
	free(path);
	r->from_ns = from_ns;
	r->to_ns = to_ns;
	*out = r;
	return 0;
}

/* The next segment that may hold frames of the window read whole: false when none is left. */
static bool reader_segment(struct store_reader *r)
{
	free(r->buf);
	r->buf = NULL;
	while (r->next < r->count) {
		struct store_segment *seg = &r->segments[r->next++];
		int err;

		if (seg->last_real_ns < r->from_ns) /* last written before the window */
			continue;
		r->buf = read_segment(r->dir, seg->name, SEGMENT_READ_MAX, &r->len, &err);
		if (!r->buf) {
			snprintf(r->said, sizeof(r->said), "%s: %s: passed over", seg->name, strerror(-err));
			continue;
		}
		if (segment_header(r->buf, r->len, &r->scan) != 0) {
			snprintf(r->said, sizeof(r->said), "%s: %s: passed over", seg->name, r->scan.problem);
			free(r->buf);
			r->buf = NULL;
			continue;
		}
		r->at = STORE_SEGMENT_HEADER;
		dicts_clear(&r->dicts);
		return true;
	}
	return false;
}

/* What the segment just read found wrong, said once. */
static void reader_damage(struct store_reader *r)
{
	if (r->buf && r->scan.problem[0] && !r->said[0])
		snprintf(r->said, sizeof(r->said), "%s: %s", r->segments[r->next - 1].name, r->scan.problem);
}

int store_reader_next(struct store_reader *r, struct store_frame *frame)
{
	for (;;) {
		if (!r->buf && !reader_segment(r))
			return 0;
		if (!scan_next(r->buf, r->len, &r->at, frame, &r->scan)) {
			reader_damage(r);
			free(r->buf);
			r->buf = NULL;
			continue;
		}
		if (frame->real_ns < r->from_ns) {
			/* Before the window: passed over, but a keyframe is read for the frames after it. */
			if (r->buf[frame->offset + 34] == CODEC_ZLIB)
				payload_of(r->buf + frame->offset, &r->scratch, &frame->data, &frame->len, &r->dicts);
			continue;
		}
		if (frame->real_ns > r->to_ns) {
			/* Past the window: later segments begin later still. */
			r->next = r->count;
			free(r->buf);
			r->buf = NULL;
			return 0;
		}
		if (payload_of(r->buf + frame->offset, &r->scratch, &frame->data, &frame->len, &r->dicts))
			return 1;
		r->scan.skipped++;
		said(&r->scan, "a frame whose payload does not decompress", frame->offset);
	}
}

const char *store_reader_said(struct store_reader *r)
{
	static char text[256];

	reader_damage(r);
	if (!r->said[0])
		return NULL;
	snprintf(text, sizeof(text), "%s", r->said);
	r->said[0] = '\0';
	if (r->buf)
		r->scan.problem[0] = '\0'; /* said */
	return text;
}

void store_reader_close(struct store_reader *r)
{
	if (!r)
		return;
	if (r->dir >= 0)
		close(r->dir);
	free(r->segments);
	free(r->buf);
	free(r->scratch);
	dicts_clear(&r->dicts);
	free(r);
}

const char *store_default_dir(bool make)
{
	static char path[4096];
	const char *state = getenv("XDG_STATE_HOME"), *home = getenv("HOME"), *env = getenv("IOLENS_RECORD_DIR");

	if (env && *env)
		return env;
	if (geteuid() == 0) {
		if (make)
			mkdir("/var/lib/iolens", 0755); /* as StateDirectory= would; the store itself 0700 */
		return STORE_DEFAULT_DIR;
	}
	if (state && *state == '/') {
		snprintf(path, sizeof(path), "%s/iolens", state);
	} else if (home && *home == '/') {
		snprintf(path, sizeof(path), "%s/.local", home);
		if (make)
			mkdir(path, 0700);
		snprintf(path, sizeof(path), "%s/.local/state", home);
		if (make)
			mkdir(path, 0700);
		snprintf(path, sizeof(path), "%s/.local/state/iolens", home);
	} else {
		return STORE_DEFAULT_DIR;
	}
	if (make)
		mkdir(path, 0700);
	strncat(path, "/record", sizeof(path) - strlen(path) - 1);
	return path;
}
