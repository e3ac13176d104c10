/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * when.c: a moment as people write it, read by shape (a word, a sign, an @, a date, a time of day, a
 * span then "ago") with a cursor over a trimmed lowercase copy; local times through mktime.
 */
#include "common/when.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define NS_PER_S 1000000000ull
#define TEXT_MAX 64 /* longer than any form: not a time */
#define SHOWN_MAX 24 /* of the text in a why, so that it stays one short line */

/* What is wrong with a text, each with what a why says of it. */
enum verdict { FINE, NOT_A_TIME, NOT_A_TIME_OF_DAY, NO_SUCH_DATE, BAD_OFFSET, FUTURE, BEFORE_1970, TOO_LARGE };

static const char *const verdict_says[] = {
	[NOT_A_TIME] = "not a time (03:00, yesterday 03:00, 2026-12-04T03:00Z, -2h, @EPOCH)",
	[NOT_A_TIME_OF_DAY] = "not a time of day",
	[NO_SUCH_DATE] = "no such date",
	[BAD_OFFSET] = "not a UTC offset (Z, +01:00, -0500)",
	[FUTURE] = "in the future, which is never recorded (-2h, 2h ago)",
	[BEFORE_1970] = "before 1970",
	[TOO_LARGE] = "out of range",
};

/* A time of day; nanos is the fraction of its second. */
struct clock_time {
	int hour, minute, second;
	uint32_t nanos;
};

/* Exactly count digits at *p as a number, *p moved past them; false (not moved) when fewer. */
static bool digits(const char **p, int count, int *value)
{
	int number = 0;

	for (int i = 0; i < count; i++) {
		if (!isdigit((unsigned char)(*p)[i]))
			return false;
		number = number * 10 + ((*p)[i] - '0');
	}
	*p += count;
	*value = number;
	return true;
}

/* One or two digits (an hour, a month, a day). */
static bool one_or_two_digits(const char **p, int *value)
{
	return digits(p, isdigit((unsigned char)(*p)[0]) && isdigit((unsigned char)(*p)[1]) ? 2 : 1, value);
}

/* Decimal digits at *p, one at least, *p moved past them. */
static enum verdict number(const char **p, uint64_t *value)
{
	if (!isdigit((unsigned char)**p))
		return NOT_A_TIME;
	for (*value = 0; isdigit((unsigned char)**p); ++*p) {
		if (*value > (UINT64_MAX - 9) / 10)
			return TOO_LARGE;
		*value = *value * 10 + (uint64_t)(**p - '0');
	}
	return FINE;
}

/* "." and digits: the first nine as nanoseconds, the rest (below a nanosecond) dropped. */
static bool fraction(const char **p, uint32_t *nanos)
{
	uint32_t scale = 100000000;

	*nanos = 0;
	if (**p != '.')
		return true;
	if (!isdigit((unsigned char)(*p)[1]))
		return false;
	for (++*p; isdigit((unsigned char)**p); ++*p, scale /= 10)
		*nanos += (uint32_t)(**p - '0') * scale;
	return true;
}

/* H:MM, HH:MM, HH:MM:SS, HH:MM:SS.FRACTION; the range checked (a leap second's 60 kept). */
static enum verdict clock_parse(const char **p, struct clock_time *clock)
{
	*clock = (struct clock_time){ 0 };
	if (!one_or_two_digits(p, &clock->hour) || *(*p)++ != ':' || !digits(p, 2, &clock->minute))
		return NOT_A_TIME;
	if (**p == ':' && (++*p, !digits(p, 2, &clock->second) || !fraction(p, &clock->nanos)))
		return NOT_A_TIME;
	return clock->hour > 23 || clock->minute > 59 || clock->second > 60 ? NOT_A_TIME_OF_DAY : FINE;
}

/* Spaces, then a time of day that ends the text. */
static enum verdict clock_alone(const char *p, struct clock_time *clock)
{
	enum verdict verdict;

	p += strspn(p, " ");
	verdict = clock_parse(&p, clock);
	return verdict == FINE && *p ? NOT_A_TIME : verdict;
}

/* Seconds since the epoch and a fraction as nanoseconds, refused before 1970 or past 64 bits. */
static enum verdict to_ns(int64_t seconds, uint32_t nanos, uint64_t *out_ns)
{
	if (seconds < 0)
		return BEFORE_1970;
	if ((uint64_t)seconds > (UINT64_MAX - nanos) / NS_PER_S)
		return TOO_LARGE;
	*out_ns = (uint64_t)seconds * NS_PER_S + nanos;
	return FINE;
}

/* The local day days_back before now_ns's, at clock (mktime says across a DST change). */
static enum verdict local_day(uint64_t now_ns, int days_back, const struct clock_time *clock, uint64_t *out_ns)
{
	time_t now = (time_t)(now_ns / NS_PER_S);
	struct tm tm;

	if (!localtime_r(&now, &tm))
		return TOO_LARGE;
	tm.tm_mday -= days_back;
	tm.tm_hour = clock->hour;
	tm.tm_min = clock->minute;
	tm.tm_sec = clock->second;
	tm.tm_isdst = -1;
	return to_ns(mktime(&tm), clock->nanos, out_ns);
}

/* "today" or "yesterday", alone (00:00) or with a time of day after spaces. */
static enum verdict day_parse(const char *p, int days_back, uint64_t now_ns, uint64_t *out_ns)
{
	struct clock_time clock = { 0 };
	enum verdict verdict;

	if (*p && *p != ' ')
		return NOT_A_TIME;
	if (*p && (verdict = clock_alone(p, &clock)) != FINE)
		return verdict;
	return local_day(now_ns, days_back, &clock, out_ns);
}

/* A time of day alone: today's, or yesterday's when today's is still to come. */
static enum verdict recent_clock_parse(const char *p, uint64_t now_ns, uint64_t *out_ns)
{
	struct clock_time clock;
	enum verdict verdict = clock_alone(p, &clock);

	if (verdict != FINE || (verdict = local_day(now_ns, 0, &clock, out_ns)) != FINE || *out_ns <= now_ns)
		return verdict;
	return local_day(now_ns, 1, &clock, out_ns);
}

/*
 * NUMBER[.FRACTION]UNIT, once or more (1h30m, 1.5d), as nanoseconds; with bare, a lone number
 * without a unit is seconds (90). *p moved past it.
 */
static enum verdict span_parse(const char **p, bool bare, uint64_t *ns)
{
	static const char units[] = "smhdw";
	static const uint64_t unit_seconds[] = { 1, 60, 3600, 86400, 604800 };
	const char *unit;
	uint64_t count, unit_ns;
	uint32_t nanos;
	enum verdict verdict;
	bool first = true;

	*ns = 0;
	do {
		if ((verdict = number(p, &count)) != FINE)
			return verdict;
		if (!fraction(p, &nanos))
			return NOT_A_TIME;
		if (bare && first && !**p) /* the whole text one number: seconds */
			unit = units;
		else if (!**p || !(unit = strchr(units, **p)))
			return NOT_A_TIME;
		else
			++*p;
		unit_ns = unit_seconds[unit - units] * NS_PER_S;
		if (count >= (UINT64_MAX - *ns) / unit_ns) /* room for the fraction too, below one unit */
			return TOO_LARGE;
		*ns += count * unit_ns + (uint64_t)nanos * unit_seconds[unit - units];
		first = false;
	} while (isdigit((unsigned char)**p));
	return FINE;
}

int when_span(const char *text, uint64_t *out_ns)
{
	uint64_t ns;

	if (span_parse(&text, true, &ns) != FINE || *text || ns > 100ull * 365 * 86400 * NS_PER_S)
		return -EINVAL;
	*out_ns = ns;
	return 0;
}

/* -SPAN, or SPAN ago (after spaces): that long before now_ns. */
static enum verdict ago_parse(const char *p, bool minus, uint64_t now_ns, uint64_t *out_ns)
{
	uint64_t ns;
	enum verdict verdict = span_parse(&p, false, &ns);

	if (verdict != FINE)
		return verdict;
	if (!minus) {
		if (*p != ' ' || strcmp(p + strspn(p, " "), "ago"))
			return NOT_A_TIME;
	} else if (*p) {
		return NOT_A_TIME;
	}
	if (ns > now_ns)
		return BEFORE_1970;
	*out_ns = now_ns - ns;
	return FINE;
}

/* @SECONDS[.FRACTION]. */
static enum verdict epoch_parse(const char *p, uint64_t *out_ns)
{
	uint64_t seconds;
	uint32_t nanos;
	enum verdict verdict = number(&p, &seconds);

	if (verdict != FINE)
		return verdict;
	if (!fraction(&p, &nanos) || *p)
		return NOT_A_TIME;
	return seconds > INT64_MAX ? TOO_LARGE : to_ns((int64_t)seconds, nanos, out_ns);
}

/* Z, +HH:MM, -HHMM after a date and time, as seconds east of UTC; *utc false when none (local). */
static enum verdict offset_parse(const char *p, bool *utc, int *east)
{
	int hours, minutes, sign = *p == '-' ? -1 : 1;

	*utc = *p != '\0';
	*east = 0;
	if (!*p || !strcmp(p, "z"))
		return FINE;
	if (*p != '+' && *p != '-')
		return NOT_A_TIME;
	p++;
	if (!digits(&p, 2, &hours))
		return BAD_OFFSET;
	p += *p == ':';
	if (!digits(&p, 2, &minutes) || *p || hours > 23 || minutes > 59)
		return BAD_OFFSET;
	*east = sign * (hours * 3600 + minutes * 60);
	return FINE;
}

static int days_in_month(int year, int month)
{
	static const int days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;

	return month == 2 && leap ? 29 : days[month - 1];
}

/* YYYY-MM-DD, then maybe a time of day after a T or spaces, then maybe Z or an offset. */
static enum verdict date_parse(const char *p, uint64_t *out_ns)
{
	struct clock_time clock = { 0 };
	struct tm tm = { .tm_isdst = -1 };
	enum verdict verdict;
	bool utc = false;
	int east = 0;

	if (!digits(&p, 4, &tm.tm_year) || *p++ != '-' || !one_or_two_digits(&p, &tm.tm_mon) || *p++ != '-' ||
	    !one_or_two_digits(&p, &tm.tm_mday))
		return NOT_A_TIME;
	if (*p == 't' || *p == ' ') {
		p += *p == 't';
		p += strspn(p, " ");
		if ((verdict = clock_parse(&p, &clock)) != FINE)
			return verdict;
		if ((verdict = offset_parse(p, &utc, &east)) != FINE)
			return verdict;
	} else if (*p) {
		return NOT_A_TIME;
	}
	if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > days_in_month(tm.tm_year, tm.tm_mon))
		return NO_SUCH_DATE;
	if (tm.tm_year < 1970)
		return BEFORE_1970;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	tm.tm_hour = clock.hour;
	tm.tm_min = clock.minute;
	tm.tm_sec = clock.second;
	return to_ns(utc ? (int64_t)timegm(&tm) - east : (int64_t)mktime(&tm), clock.nanos, out_ns);
}

/* The form a trimmed lowercase text has, read. */
static enum verdict read_form(const char *text, uint64_t now_ns, uint64_t *out_ns)
{
	size_t lead = strspn(text, "0123456789");
	uint64_t ignored;

	if (!strcmp(text, "now")) {
		*out_ns = now_ns;
		return FINE;
	}
	if (!strncmp(text, "today", 5))
		return day_parse(text + 5, 0, now_ns, out_ns);
	if (!strncmp(text, "yesterday", 9))
		return day_parse(text + 9, 1, now_ns, out_ns);
	if (text[0] == '@')
		return epoch_parse(text + 1, out_ns);
	if (text[0] == '-')
		return ago_parse(text + 1, true, now_ns, out_ns);
	if (text[0] == '+')
		return ago_parse(text + 1, true, UINT64_MAX, &ignored) == FINE ? FUTURE : NOT_A_TIME;
	if (lead == 4 && text[4] == '-')
		return date_parse(text, out_ns);
	if (lead && text[lead] == ':')
		return recent_clock_parse(text, now_ns, out_ns);
	return ago_parse(text, false, now_ns, out_ns);
}

int when_parse(const char *text, uint64_t now_ns, uint64_t *out_ns, char *why, size_t why_len)
{
	char copy[TEXT_MAX + 1], shown[SHOWN_MAX + 1];
	enum verdict verdict = NOT_A_TIME;
	size_t len;

	if (why && why_len)
		why[0] = '\0';
	if (!text)
		text = "";
	while (isspace((unsigned char)*text))
		text++;
	for (len = strlen(text); len && isspace((unsigned char)text[len - 1]); len--)
		;
	if (len <= TEXT_MAX) {
		for (size_t i = 0; i < len; i++)
			copy[i] = (char)tolower((unsigned char)text[i]);
		copy[len] = '\0';
		if ((verdict = read_form(copy, now_ns, out_ns)) == FINE)
			return 0;
	}
	/* The text as written, cut short and its control characters hidden, so the why stays one line. */
	for (size_t i = 0; i < len && i < SHOWN_MAX; i++)
		shown[i] = isprint((unsigned char)text[i]) ? text[i] : '?';
	shown[len < SHOWN_MAX ? len : SHOWN_MAX] = '\0';
	if (len > SHOWN_MAX)
		memcpy(shown + SHOWN_MAX - 3, "...", 4);
	if (why && why_len)
		snprintf(why, why_len, "'%s': %s", shown, verdict_says[verdict]);
	return -EINVAL;
}
