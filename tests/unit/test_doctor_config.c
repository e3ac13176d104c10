/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_doctor_config.c: doctor's configuration: statements, their errors with the line, thresholds,
 * accepts by command and by path glob.
 */
#include "unit.h"

#include <stdlib.h>
#include <string.h>

#include "doctor/config.h"

static int parse(struct doctor_config *c, const char *text, char *why)
{
	doctor_config_init(c);
	why[0] = '\0';
	return doctor_config_parse(c, text, strlen(text), "doctor.conf", why, 512);
}

static void test_statements(void **state)
{
	struct doctor_config c;
	char why[512];
	const char *db[] = { "/srv/db/data.ibd" }, *other[] = { "/home/x/file" };
	(void)state;

	assert_int_equal(parse(&c,
			       "# what is normal here\n\n  disable inodes  \naccept odirect comm=postgres # by design\n"
			       "accept * path=/srv/db/*\r\nfull.warning_percent = 85\nodirect.read_bytes_per_s=4MiB\n"
			       "stuck.seconds=10",
			       why),
			 0);
	assert_true(doctor_config_disabled(&c, "inodes"));
	assert_false(doctor_config_disabled(&c, "full"));
	assert_true(c.threshold[TH_FULL_WARNING] == 85);
	assert_true(c.threshold[TH_FULL_CRITICAL] == 98); /* the default stays */
	assert_true(c.threshold[TH_ODIRECT_READ] == 4 << 20);
	assert_true(c.threshold[TH_STUCK_SECONDS] == 10);
	assert_non_null(doctor_config_accepted(&c, "odirect", "postgres", NULL, 0));
	assert_null(doctor_config_accepted(&c, "odirect", "postgres2", NULL, 0)); /* a command is exact */
	assert_null(doctor_config_accepted(&c, "stuck", "postgres", NULL, 0));    /* of its rule only */
	assert_string_equal(doctor_config_accepted(&c, "stuck", NULL, db, 1)->source,
			    "doctor.conf:5"); /* "*": any rule */
	assert_null(doctor_config_accepted(&c, "stuck", NULL, other, 1));
	doctor_config_free(&c);
}

static void test_errors(void **state)
{
	static const struct { const char *text, *why; } cases[] = {
		{ "disable nosuch\n", "doctor.conf:1: disable: unknown rule 'nosuch'" },
		{ "\n\naccept odirect\n", "doctor.conf:3: accept odirect: comm=NAME" },
		{ "accept odirect user=x\n", "doctor.conf:1: accept odirect: comm=NAME" },
		{ "accept odirect comm=a-name-longer-than-15\n", "doctor.conf:1: accept odirect: comm=NAME" },
		{ "disable odirect swap\n", "doctor.conf:1: disable takes one rule" },
		{ "full.warning_percent = 101\n", "doctor.conf:1: full.warning_percent: '101' is not a number from 1 "
						  "to 100" },
		{ "stuck.seconds = 3s\n", "doctor.conf:1: stuck.seconds: '3s' is not a number" },
		{ "odirect.read_bytes_per_s = lots\n", "doctor.conf:1: odirect.read_bytes_per_s: 'lots' is not a "
						       "size" },
		{ "nosuch = 1\n", "doctor.conf:1: unknown setting 'nosuch'" },
		{ "hello\n", "doctor.conf:1: 'hello': disable RULE" },
		{ "disable odirect\x1b[31m\n", "doctor.conf:1: a control character" },
		{ "full.warning_percent=95\nfull.critical_percent=90\n", "doctor.conf: full.critical_percent (90) "
									 "below" },
	};
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct doctor_config c;
		char why[512];

		assert_int_equal(parse(&c, cases[i].text, why), -1);
		if (strncmp(why, cases[i].why, strlen(cases[i].why)))
			fail_msg("case %zu: '%s', expected '%s...'", i, why, cases[i].why);
		doctor_config_free(&c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_statements),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
