/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_when.c: TIME as people write it (issue 35), in UTC and in Europe/Paris: every form to the
 * nanosecond, the time of day that is the most recent one, yesterday across a month and a year, DST
 * days, and each refusal with its why. Expected seconds come from date(1), its command beside them.
 */
#include "unit.h"

#include <errno.h>
#include <time.h>

#include "common/when.h"

#define S(seconds) ((uint64_t)(seconds)*1000000000ull)

static char why[128];

static void zone(const char *tz)
{
	setenv("TZ", tz, 1);
	tzset();
}

/* What text means at now_ns (it must be a time). */
static uint64_t at(const char *text, uint64_t now_ns)
{
	uint64_t out_ns = 1;

	if (when_parse(text, now_ns, &out_ns, why, sizeof(why)) != 0)
		fail_msg("%s: refused: %s", text, why);
	assert_string_equal(why, "");
	return out_ns;
}

/* The why of a text refused at now_ns: one line of at most 100 characters, out_ns left alone. */
static const char *refused(const char *text, uint64_t now_ns)
{
	uint64_t out_ns = 7;

	if (when_parse(text, now_ns, &out_ns, why, sizeof(why)) != -EINVAL)
		fail_msg("%s: taken as %llu", text ? text : "(null)", (unsigned long long)out_ns);
	assert_int_equal(out_ns, 7);
	assert_true(strlen(why) > 0 && strlen(why) <= 100);
	assert_null(strchr(why, '\n'));
	assert_int_not_equal(why[strlen(why) - 1], '.');
	return why;
}

#define REFUSED(text, now_ns, word)                                                                                    \
	do {                                                                                                           \
		const char *said = refused(text, now_ns);                                                              \
		if (!strstr(said, word))                                                                               \
			fail_msg("%s: \"%s\" does not say \"%s\"", text, said, word);                                  \
	} while (0)

/* TZ=UTC date -d '2026-12-04 09:00:00' +%s: 1796374800, and a fraction of a second. */
#define UTC_NOW (S(1796374800) + 123456789)

static void test_words(void **state)
{
	(void)state;
	zone("UTC");
	assert_int_equal(at("now", UTC_NOW), UTC_NOW);
	assert_int_equal(at("  NOW\t", UTC_NOW), UTC_NOW);
	/* TZ=UTC date -d '2026-12-04 00:00' +%s; TZ=UTC date -d '2026-12-03 00:00' +%s */
	assert_int_equal(at("today", UTC_NOW), S(1796342400));
	assert_int_equal(at("Yesterday", UTC_NOW), S(1796256000));
	/* TZ=UTC date -d '2026-12-04 03:00' +%s; TZ=UTC date -d '2026-12-03 03:00' +%s */
	assert_int_equal(at("today 03:00", UTC_NOW), S(1796353200));
	assert_int_equal(at("yesterday   03:00", UTC_NOW), S(1796266800));
	/* TZ=UTC date -d '2026-12-03 03:00:30' +%s */
	assert_int_equal(at("YESTERDAY 03:00:30", UTC_NOW), S(1796266830));
	/* today's later hour is still today's: the words name the day */
	assert_int_equal(at("today 10:00", UTC_NOW), S(1796374800 + 3600));
}

/* HH:MM is the most recent such moment not in the future, on both sides of it. */
static void test_recent_clock(void **state)
{
	/* TZ=UTC date -d '2026-12-04 02:00' +%s */
	const uint64_t two = S(1796349600);

	(void)state;
	zone("UTC");
	/* at 09:00, 03:00 is today's (TZ=UTC date -d '2026-12-04 03:00' +%s) */
	assert_int_equal(at("03:00", UTC_NOW), S(1796353200));
	assert_int_equal(at("3:00", UTC_NOW), S(1796353200));
	/* 09:00:00 is 0.12 s ago, 09:00:00.123456789 is now: today's; 09:00:00.2 is to come: yesterday's */
	assert_int_equal(at("09:00", UTC_NOW), S(1796374800));
	assert_int_equal(at("09:00:00.123456789", UTC_NOW), UTC_NOW);
	assert_int_equal(at("09:00:00.2", UTC_NOW), S(1796374800 - 86400) + 200000000);
	assert_int_equal(at("10:00", UTC_NOW), S(1796374800 + 3600 - 86400));
	/* at 02:00, 03:00 is yesterday's (TZ=UTC date -d '2026-12-03 03:00' +%s) */
	assert_int_equal(at("03:00", two), S(1796266800));
	assert_int_equal(at("02:00", two), two);
	assert_int_equal(at("01:59", two), two - S(60));
	assert_int_equal(at("02:01", two), two - S(86400 - 60));
	/* a leap second's :60 is the next minute's :00 */
	assert_int_equal(at("01:58:60", two), two - S(60));
}

/* Yesterday across a year and a month. */
static void test_boundaries(void **state)
{
	/* TZ=UTC date -d '2027-01-01 01:00' +%s; TZ=UTC date -d '2026-03-01 01:00' +%s */
	const uint64_t new_year = S(1798765200), march = S(1772326800);

	(void)state;
	zone("UTC");
	/* TZ=UTC date -d '2026-12-31 00:00' +%s; TZ=UTC date -d '2026-12-31 23:30' +%s */
	assert_int_equal(at("yesterday", new_year), S(1798675200));
	assert_int_equal(at("yesterday 23:30", new_year), S(1798759800));
	assert_int_equal(at("23:30", new_year), S(1798759800));
	assert_int_equal(at("03:00", new_year), S(1798675200 + 3 * 3600));
	/* TZ=UTC date -d '2026-02-28 00:00' +%s */
	assert_int_equal(at("yesterday", march), S(1772236800));
	assert_int_equal(at("yesterday 12:00", march), S(1772236800 + 12 * 3600));
}

static void test_relative(void **state)
{
	const uint64_t now = UTC_NOW;

	(void)state;
	zone("UTC");
	assert_int_equal(at("-2h", now), now - S(7200));
	assert_int_equal(at("-90s", now), now - S(90));
	assert_int_equal(at("-30m", now), now - S(1800));
	assert_int_equal(at("-1d", now), now - S(86400));
	assert_int_equal(at("-1h30m", now), now - S(5400));
	assert_int_equal(at("-2w", now), now - S(14 * 86400));
	assert_int_equal(at("-0s", now), now);
	assert_int_equal(at("2h ago", now), now - S(7200));
	assert_int_equal(at(" 1H30M  AGO ", now), now - S(5400));
	/* all the way back to the epoch, not one second more */
	assert_int_equal(at("-1796374800s", S(1796374800)), 0);
	/* a fraction of a unit */
	assert_int_equal(at("-1.5h", now), now - S(5400));
	/* terms whose sum would wrap 64 bits: refused, not a short span */
	assert_int_equal(when_parse("-18446744072.9s1m", now, &(uint64_t){ 0 }, NULL, 0), -EINVAL);
	/* a span is the same in any zone */
	zone("Europe/Paris");
	assert_int_equal(at("-1d", now), now - S(86400));
}

/* A span alone (record --max-age): a bare number is seconds; fractions; terms added; 100 years at most. */
static void test_span(void **state)
{
	static const char *const refused[] = { "", "3x", "h", "-1d", "1h30", "1.h", ".5h", "1e3", " 5", "5 ", "40000d",
					       "99999999999999999999s", "18446744072.9s1m", "18446744072.9s1s" };
	uint64_t ns = 7;

	(void)state;
	assert_int_equal(when_span("90", &ns), 0);
	assert_int_equal(ns, S(90));
	assert_int_equal(when_span("1.5", &ns), 0);
	assert_int_equal(ns, S(1) + 500000000ull);
	assert_int_equal(when_span("0", &ns), 0);
	assert_int_equal(ns, 0);
	assert_int_equal(when_span("30m", &ns), 0);
	assert_int_equal(ns, S(1800));
	assert_int_equal(when_span("1.5d", &ns), 0);
	assert_int_equal(ns, S(129600));
	assert_int_equal(when_span("1h30m", &ns), 0);
	assert_int_equal(ns, S(5400));
	assert_int_equal(when_span("2w", &ns), 0);
	assert_int_equal(ns, S(14 * 86400));
	assert_int_equal(when_span("36500d", &ns), 0);
	assert_int_equal(ns, S(36500ull * 86400));
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		ns = 7;
		assert_int_equal(when_span(refused[i], &ns), -EINVAL);
		assert_int_equal(ns, 7);
	}
}

static void test_absolute(void **state)
{
	(void)state;
	zone("UTC");
	/* TZ=UTC date -d '2026-12-04 00:00' +%s; TZ=UTC date -d '2026-12-04 03:00' +%s */
	assert_int_equal(at("2026-12-04", UTC_NOW), S(1796342400));
	assert_int_equal(at("2026-12-04 03:00", UTC_NOW), S(1796353200));
	assert_int_equal(at("2026-12-04T03:00", UTC_NOW), S(1796353200));
	assert_int_equal(at("2026-12-04t03:00:00", UTC_NOW), S(1796353200));
	assert_int_equal(at("2026-12-4 3:00", UTC_NOW), S(1796353200));
	assert_int_equal(at("2026-12-04T03:00:07.5", UTC_NOW), S(1796353207) + 500000000);
	assert_int_equal(at("2026-12-04T03:00:07.0000000019", UTC_NOW), S(1796353207) + 1);
	assert_int_equal(at("2026-12-04T03:00Z", UTC_NOW), S(1796353200));
	assert_int_equal(at("2026-12-04T03:00:60Z", UTC_NOW), S(1796353260));
	/* TZ=UTC date -d '2026-12-04T03:00+01:00' +%s; TZ=UTC date -d '2026-12-04T03:00-05:00' +%s */
	assert_int_equal(at("2026-12-04T03:00+01:00", UTC_NOW), S(1796349600));
	assert_int_equal(at("2026-12-04T03:00-0500", UTC_NOW), S(1796371200));
	/* a day in the future is a day: the caller finds nothing recorded there */
	assert_int_equal(at("2026-12-05", UTC_NOW), S(1796342400 + 86400));
	/* TZ=UTC date -d '2028-02-29' +%s */
	assert_int_equal(at("2028-02-29", UTC_NOW), S(1835395200));
	assert_int_equal(at("1970-01-01T00:00Z", UTC_NOW), 0);
	assert_int_equal(at("1970-01-01T01:00+01:00", UTC_NOW), 0);
	assert_int_equal(at("@1764817200", UTC_NOW), S(1764817200));
	assert_int_equal(at("@1764817200.25", UTC_NOW), S(1764817200) + 250000000);
	assert_int_equal(at("@0", UTC_NOW), 0);
	/* the last second 64 bits of nanoseconds hold: UINT64_MAX is 18446744073.709551615 s */
	assert_int_equal(at("@18446744073.709551615", UTC_NOW), UINT64_MAX);
}

/* Local time with an offset: Paris, CET in winter, CEST in summer. */
static void test_paris(void **state)
{
	/* TZ=Europe/Paris date -d '2026-12-04 00:30' +%s (2026-12-03 23:30 in UTC) */
	const uint64_t now = S(1796340600);

	(void)state;
	zone("Europe/Paris");
	/* TZ=Europe/Paris date -d '2026-12-04 00:00' +%s; ... -d '2026-12-03 00:00' +%s */
	assert_int_equal(at("today", now), S(1796338800));
	assert_int_equal(at("yesterday", now), S(1796252400));
	/* TZ=Europe/Paris date -d '2026-12-03 03:00' +%s: 03:00 is still to come today */
	assert_int_equal(at("03:00", now), S(1796263200));
	/* TZ=Europe/Paris date -d '2026-12-04 00:15' +%s */
	assert_int_equal(at("00:15", now), S(1796339700));
	/* TZ=Europe/Paris date -d '2026-12-04 03:00' +%s */
	assert_int_equal(at("2026-12-04", now), S(1796338800));
	assert_int_equal(at("2026-12-04 03:00", now), S(1796349600));
	assert_int_equal(at("2026-12-04T03:00+01:00", now), S(1796349600));
	/* Z is not local: TZ=UTC date -d '2026-12-04 03:00' +%s */
	assert_int_equal(at("2026-12-04T03:00Z", now), S(1796353200));
	/* summer: TZ=Europe/Paris date -d '2026-07-01 03:00' +%s */
	assert_int_equal(at("2026-07-01 03:00", now), S(1782867600));
	/* the same moment in UTC is still the 3rd: TZ=UTC date -d '2026-12-03 00:00' +%s */
	zone("UTC");
	assert_int_equal(at("today", now), S(1796256000));
	/* new year's night in Paris, still 2026 in UTC: TZ=Europe/Paris date -d '2027-01-01 00:30' +%s */
	zone("Europe/Paris");
	/* TZ=Europe/Paris date -d '2026-12-31 00:00' +%s */
	assert_int_equal(at("yesterday", S(1798759800)), S(1798671600));
}

/* Days of 23 and 25 hours in Paris. */
static void test_dst(void **state)
{
	/* TZ=Europe/Paris date -d '2026-03-29 12:00' +%s; TZ=Europe/Paris date -d '2026-10-25 12:00' +%s */
	const uint64_t spring = S(1774778400), autumn = S(1792926000);
	uint64_t gap;

	(void)state;
	zone("Europe/Paris");
	/* TZ=Europe/Paris date -d '2026-03-28 00:00' +%s; -d '2026-03-29 00:00'; -d '2026-03-29 03:00' */
	assert_int_equal(at("yesterday", spring), S(1774652400));
	assert_int_equal(at("today", spring), S(1774738800));
	assert_int_equal(at("03:00", spring), S(1774746000));
	/* a span is not a calendar day: -1d is 86400 s even on a 23-hour day */
	assert_int_equal(at("-1d", spring), spring - S(86400));
	/* 02:30 was skipped (date(1) refuses it): whatever mktime gives, in the hour around the gap */
	gap = at("02:30", spring);
	assert_true(gap >= S(1774746000 - 3600) && gap <= S(1774746000 + 3600));
	/* TZ=Europe/Paris date -d '2026-10-24 00:00' +%s; TZ=Europe/Paris date -d '2026-10-25 01:00' +%s */
	assert_int_equal(at("yesterday", autumn), S(1792792800));
	assert_int_equal(at("01:00", autumn), S(1792882800));
	/* 1970-01-01 00:00 in Paris was 1969-12-31 23:00 in UTC */
	REFUSED("1970-01-01", autumn, "before 1970");
}

static void test_refused(void **state)
{
	(void)state;
	zone("UTC");
	assert_string_equal(refused("tomorow", UTC_NOW),
			    "'tomorow': not a time (03:00, yesterday 03:00, 2026-12-04T03:00Z, -2h, @EPOCH)");
	assert_string_equal(refused(" 03:75 ", UTC_NOW), "'03:75': not a time of day");
	assert_string_equal(refused("+2h", UTC_NOW), "'+2h': in the future, which is never recorded (-2h, 2h ago)");
	REFUSED("+1h30m", UTC_NOW, "future");
	REFUSED("24:00", UTC_NOW, "not a time of day");
	REFUSED("12:60", UTC_NOW, "not a time of day");
	REFUSED("12:00:61", UTC_NOW, "not a time of day");
	REFUSED("today 25:00", UTC_NOW, "not a time of day");
	REFUSED("2026-12-04 24:00", UTC_NOW, "not a time of day");
	REFUSED("2026-12-32", UTC_NOW, "no such date");
	REFUSED("2026-13-01", UTC_NOW, "no such date");
	REFUSED("2026-00-10", UTC_NOW, "no such date");
	REFUSED("2026-12-00", UTC_NOW, "no such date");
	REFUSED("2026-02-30", UTC_NOW, "no such date");
	REFUSED("2026-02-29", UTC_NOW, "no such date");
	REFUSED("2100-02-29", UTC_NOW, "no such date");
	REFUSED("1969-12-31", UTC_NOW, "before 1970");
	REFUSED("1969-12-31T23:59:59Z", UTC_NOW, "before 1970");
	REFUSED("1970-01-01T00:30+01:00", UTC_NOW, "before 1970");
	REFUSED("-30000d", UTC_NOW, "before 1970");
	REFUSED("-1796374801s", S(1796374800), "before 1970");
	REFUSED("-99999999999d", UTC_NOW, "out of range");
	REFUSED("-99999999999999999999999s", UTC_NOW, "out of range");
	REFUSED("@99999999999999999999", UTC_NOW, "out of range");
	REFUSED("@18446744074", UTC_NOW, "out of range");
	REFUSED("9999-12-31", UTC_NOW, "out of range");
	REFUSED("2026-12-04T03:00+25:00", UTC_NOW, "not a UTC offset");
	REFUSED("2026-12-04T03:00+0160", UTC_NOW, "not a UTC offset");
	REFUSED("2026-12-04T03:00+1", UTC_NOW, "not a UTC offset");
}

/* Texts of no form at all: each says so, with the forms. */
static void test_not_a_time(void **state)
{
	/* clang-format off */
	static const char *const texts[] = {
		"", "   ", "-2y", "2h", "-", "-h", "ago", "-2h ago", "+2h ago", "-1h30", "@", "@-5", "@1.", "@1x",
		"yesterday 3", "todayish", "now please", "03:00.5", "3:7", "2026-12-04T", "2026-12-04 03:00 Z",
		"2026/12/04", "12026-12-04", "20261204", "2026-12-04Z", "2026-12-04 03", "1h 30m ago", "today03:00",
		"-2 h", "2026-12-", "2026-", "yesterday at 3", "today :00",
	};
	/* clang-format on */

	(void)state;
	zone("UTC");
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		REFUSED(texts[i], UTC_NOW, "': not a time (03:00,");
	REFUSED(NULL, UTC_NOW, "'': not a time");
	/* a long text is cut short in the why, a control character hidden */
	assert_string_equal(refused("a very long text that is no time at all", UTC_NOW),
			    "'a very long text that...': not a time (03:00, yesterday 03:00, 2026-12-04T03:00Z, "
			    "-2h, @EPOCH)");
	REFUSED("\033[31m-2h", UTC_NOW, "'?[31m-2h'");
	/* a why too small is cut, none asked is fine */
	assert_int_equal(when_parse("tomorow", UTC_NOW, &(uint64_t){ 0 }, why, 6), -EINVAL);
	assert_string_equal(why, "'tomo");
	assert_int_equal(when_parse("tomorow", UTC_NOW, &(uint64_t){ 0 }, NULL, 0), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_words),    cmocka_unit_test(test_recent_clock), cmocka_unit_test(test_boundaries),
		cmocka_unit_test(test_relative), cmocka_unit_test(test_absolute),     cmocka_unit_test(test_paris),
		cmocka_unit_test(test_dst),      cmocka_unit_test(test_refused),      cmocka_unit_test(test_not_a_time),
		cmocka_unit_test(test_span),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
