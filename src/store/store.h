/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * store.h: the flight recorder's on-disk store: a directory of append-only segments, each a
 * header and frames; a frame is one interval's record (its kind, UTC and monotonic stamps, a
 * payload, compressed when zlib is there), checksummed (CRC-32C) so that a torn or corrupt
 * frame is found, said and skipped. One writer at a time (a lock in the directory); segments
 * rotated by size and age, the oldest removed past the store's size or age.
 *
 * Segment: "IOLREC" 0 1 (8 bytes), version (u32), 0 (u32), created UTC ns (u64), created
 * monotonic ns (u64); then frames: "IOLF" (u32), CRC-32C of the payload (u32), payload length
 * (u32), raw length (u32), UTC ns (u64), monotonic ns (u64), kind (u16), codec (u8: 0 raw, 1
 * zlib), 0 (u8), CRC-32C of the 36 bytes before it (u32), payload. Little-endian. The header's
 * own checksum lets a reader find the next frame after a damaged one without reading payloads.
 * Segments are named YYYYMMDDTHHMMSSZ-NNNNNN.seg, in the order they were made (a clock stepped
 * back keeps the newest name's time, with a higher number).
 */
#ifndef IOLENS_STORE_STORE_H
#define IOLENS_STORE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STORE_SEGMENT_HEADER 32
#define STORE_FRAME_HEADER 40
#define STORE_FRAME_MAX (16u << 20) /* a frame's payload, raw or compressed: at most this */
#define STORE_VERSION 1

/* The kinds of frame: what its payload is. */
enum {
	STORE_KIND_SYSTEM = 1, /* a tree (collect/sysroot_tree.h): what the system's sources read in /proc and /sys */
	STORE_KIND_DOCTOR = 2, /* doctor's snapshot of the interval before its stamp, as text (doctor/snapshot.h) */
};

/* One frame as read: data is its raw payload (decompressed), valid during the callback. */
struct store_frame {
	uint64_t real_ns, mono_ns;
	unsigned kind;
	const unsigned char *data;
	size_t len;
	uint64_t offset; /* of its header in the segment */
};

/* What a scan of a segment found beside its frames. */
struct store_scan {
	unsigned frames;   /* handed to the callback */
	unsigned skipped;  /* frames found corrupt (checksum, lengths, payload) and passed over */
	bool torn;         /* no whole frame after good_end: the write in progress when the writer stopped */
	uint64_t good_end; /* the end of the last whole frame (where a writer would truncate to) */
	uint64_t created_real_ns, created_mono_ns;
	char problem[160]; /* the first problem found, for a message ("" when none) */
};

/* A callback's non-zero return stops the scan and is returned by it. */
typedef int (*store_frame_fn)(void *context, const struct store_frame *frame);

/*
 * Reads a segment from memory: every whole frame whose checksum holds, in order. A corrupt
 * frame is skipped by looking for the next frame header whose checksum holds; a segment cut
 * inside a frame is torn. -EINVAL when it is no segment (its header), else 0 or the callback's.
 */
int store_segment_scan(const unsigned char *buf, size_t len, store_frame_fn fn, void *context,
		       struct store_scan *out);

/* CRC-32C (Castagnoli) of len bytes, continuing crc (0 to start). */
uint32_t store_crc32c(uint32_t crc, const void *data, size_t len);

/* The limits: 0 for none. */
struct store_options {
	const char *dir;          /* the store's directory: made 0700 when missing */
	uint64_t max_bytes;       /* the segments' total: the oldest removed beyond it */
	uint64_t max_age_ns;      /* segments whose last write is older are removed */
	uint64_t segment_bytes;   /* a segment is closed past this size... */
	uint64_t segment_age_ns;  /* ...or this age, and a new one begun */
	bool compress;            /* zlib, when it can be loaded */
};

struct store;

/*
 * Opens the store for writing: its directory must be a directory (not a link), owned by this
 * user and writable by no other; its lock taken (-EBUSY: another recorder writes it). A segment
 * left torn by a writer that stopped is cut back to its last whole frame, and why says so (else
 * it is empty). 0, or -errno with why said.
 */
int store_open(struct store **out, const struct store_options *options, char *why, size_t why_len);
/*
 * Appends one frame (kind below 65536) with one write, then fdatasync: a stop at any moment
 * leaves whole frames only, or a torn last one that store_open cuts. A failed write or sync
 * (ENOSPC, EFBIG, EIO) is undone (the segment cut back to where the frame began) and the segment
 * closed, the next frame beginning another; -errno, why said.
 */
int store_append(struct store *s, unsigned kind, uint64_t real_ns, uint64_t mono_ns, const void *data, size_t len,
		 char *why, size_t why_len);
/*
 * The same, but not synced: the next append's fdatasync (or the segment's close) syncs it with
 * its own, for a frame that another follows at once (one flush for both). Lost by a power cut
 * before then, not by the writer's end: the kernel has it.
 */
int store_append_unsynced(struct store *s, unsigned kind, uint64_t real_ns, uint64_t mono_ns, const void *data,
			  size_t len, char *why, size_t why_len);
void store_close(struct store *s);

/* A segment of a store, as listed: its name, size, and its frames' first and last stamps. */
struct store_segment {
	char name[64];
	uint64_t bytes;
	unsigned frames, skipped;
	bool torn;
	uint64_t first_real_ns, last_real_ns;
};
/*
 * The segments of a store, oldest first (*out to free): their count, or -errno with why said. A
 * segment that cannot be read is listed with skipped 1 and no frames.
 */
int store_list(const char *dir, struct store_segment **out, char *why, size_t why_len);

/*
 * The store when none is named: $IOLENS_RECORD_DIR, else root's STORE_DEFAULT_DIR, another
 * user's under $XDG_STATE_HOME or ~/.local/state (iolens/record). With make, its parents are made.
 */
#define STORE_DEFAULT_DIR "/var/lib/iolens/record"
const char *store_default_dir(bool make);

/*
 * Reading a window back: the frames of every segment whose stamps fall in [from_ns, to_ns]
 * (UTC), oldest first; frames outside it are passed over without decompressing them.
 */
struct store_reader;
int store_reader_open(struct store_reader **out, const char *dir, uint64_t from_ns, uint64_t to_ns, char *why,
		      size_t why_len);
/* The next frame of the window: 1 with *frame set (valid until the next call), or 0 at the end. */
int store_reader_next(struct store_reader *r, struct store_frame *frame);
/* What was found wrong since last asked (a torn or corrupt frame, a segment unreadable), or NULL. */
const char *store_reader_said(struct store_reader *r);
void store_reader_close(struct store_reader *r);

#endif
