/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * when.h: a moment as people write it on a command line (--from, --to, --at of the flight recorder,
 * issue 35): now, today, yesterday, 03:00, -2h, 2h ago, 2026-12-04T03:00Z, @EPOCH.
 */
#ifndef IOLENS_WHEN_H
#define IOLENS_WHEN_H

#include <stddef.h>
#include <stdint.h>

/*
 * TIME as people write it, as UTC nanoseconds since the epoch; now_ns is the present (UTC ns)
 * for the relative forms, local time from the TZ environment as date(1) does. 0, or -EINVAL
 * with why said ("03:75: not a time of day"...).
 *
 * Words are case-insensitive, surrounding spaces ignored. The forms:
 *   now; today, yesterday (00:00 local of that day); today 03:00, yesterday 03:00[:SS];
 *   HH:MM[:SS] (local): the most recent such moment not after now_ns;
 *   -2h, -1h30m, -1.5d, 2h ago (units s m h d w; a + is refused: the future is never recorded);
 *   YYYY-MM-DD (00:00 local), YYYY-MM-DD HH:MM[:SS[.FRACTION]] or with a T, local unless
 *   followed by Z, +HH:MM or -HHMM;
 *   @SECONDS[.FRACTION] since the epoch.
 * Refused: anything else, a field out of its range (hour 24, minute 60, second 61, day 32,
 * February 30), a moment before 1970 or past what 64 bits of nanoseconds hold. Local times are
 * mktime's with tm_isdst = -1 (across a DST change, what it gives). why (when not NULL) is one
 * line naming the text, "" on success; out_ns is left alone on failure.
 */
int when_parse(const char *text, uint64_t now_ns, uint64_t *out_ns, char *why, size_t why_len);

/*
 * A span of time as people write it, as nanoseconds: 90 (seconds), 30m, 1.5d, 1h30m (units s m h
 * d w, each term NUMBER[.FRACTION]UNIT), at most 100 years. 0, or -EINVAL.
 */
int when_span(const char *text, uint64_t *out_ns);

#endif
