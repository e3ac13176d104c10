/* SPDX-License-Identifier: GPL-2.0-or-later */
/* recorded.h: what the commands that look back share: a doctor's window kept at a time, moments as said. */
#ifndef IOLENS_CMD_RECORDED_H
#define IOLENS_CMD_RECORDED_H

#include <stdint.h>

#include "doctor/snapshot.h"

/*
 * --at TIME: the snapshot of the first window of iolens record --doctor in the store dir (NULL:
 * the default) that ends at TIME or after, and its window (UTC ns); a window that begins after
 * TIME is said. 0, or EXIT_FAIL said on stderr (a TIME that is none: a usage error).
 */
int recorded_snapshot_at(const char *dir, const char *when, struct doctor_snapshot *out, uint64_t *start_ns,
			 uint64_t *end_ns);

/*
 * --from FROM and --to TO (NULL: now) as UTC ns, refused as usage errors when they are no time
 * or TO comes first; *dir (NULL: the store's default) set.
 */
void recorded_range(const char *from, const char *to, const char **dir, uint64_t *from_ns, uint64_t *to_ns);

/* "2026-12-06 14:03:56", a stamp (UTC ns) in local time, as what looks back says moments ("@EPOCH" else). */
const char *recorded_clock(uint64_t ns, char *buf, size_t size);
/* The same, the time alone ("14:03:56") when the stamp is of today. */
const char *recorded_moment(uint64_t ns, char *buf, size_t size);

/* The last frame's stamps and boot, for saying what came between it and the next. */
struct recorded_gap {
	uint64_t real_ns, mono_ns; /* 0: no frame yet */
	char boot[40];
};
/*
 * The next frame's stamps and its machine's boot id ("" when not known): a restart since the
 * last frame (another boot id, or the monotonic clock gone back) or the clock set by more than a
 * second is said on stderr. 1 on a restart (counters begin again), else 0.
 */
int recorded_gap(struct recorded_gap *gap, uint64_t real_ns, uint64_t mono_ns, const char *boot);
/* The boot id kept in a system frame's tree (empty when it has none): buf. */
const char *recorded_boot(const unsigned char *tree, size_t len, char *buf, size_t size);

#endif
