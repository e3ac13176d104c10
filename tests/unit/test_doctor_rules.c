/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_doctor_rules.c: doctor's rules as pure functions of a snapshot: each judged alone,
 * thresholds from the configuration, a snapshot's text read back as written.
 */
#include "unit.h"

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor/config.h"
#include "doctor/finding.h"
#include "doctor/rules.h"
#include "doctor/snapshot.h"

static const char snapshot_text[] =
	"iolens-doctor-snapshot 1\n"
	"seconds 2\n"
	"page_size 4096\n"
	"samples 9\n"
	"# a filesystem 95 % used, a thread in D all window long, a hung op\n"
	"mount /srv\\x20data ext4 /dev/sdb 0 0 1000 50 50 100 90 90 4096 0 0 -1 -1 -\n"
	"task 42 42 cat folio_wait_bit_common 0 8 9 2000000000 1 7 7 0\n"
	"vtrace 77 svc /dev/shm/vtrace.svc.77\n"
	"op READ 0 3 2 1000 5000000000 2 1000\n"
	"# the thread in D is in a container\n"
	"container 42 cat docker 3f2a9c1b0d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8 web - - 0 "
	"web\\x20(3f2a9c1b0d4e)\n";

static void load(struct doctor_snapshot *s)
{
	char why[256] = "";

	assert_int_equal(doctor_snapshot_parse(snapshot_text, strlen(snapshot_text), s, why, sizeof(why)), 0);
}

static void test_each_rule_alone(void **state)
{
	struct doctor_snapshot s;
	struct doctor_config config;
	struct doctor_findings found = {0};
	(void)state;

	load(&s);
	doctor_config_init(&config);
	rule_full.judge(&s, &config, &found);
	assert_int_equal(found.count, 1);
	assert_string_equal(found.list[0].rule, "full");
	assert_int_equal(found.list[0].severity, DOCTOR_WARNING);
	assert_string_equal(doctor_field_text(&found.list[0].data, "mount"), "/srv data");
	assert_string_equal(found.list[0].more, "df -h '/srv data'"); /* runs as printed: the space quoted */
	{
		char word[32];

		assert_string_equal(doctor_shell_word("/srv/it's", word, sizeof(word)), "'/srv/it'\\''s'");
		assert_string_equal(doctor_shell_word("/dev/loop7", word, sizeof(word)), "/dev/loop7");
		assert_string_equal(doctor_shell_word("$(reboot)", word, sizeof(word)), "'$(reboot)'");
		assert_string_equal(doctor_shell_word("/a/long/path/that/is/cut/short/here", word, 12), "/a/long/pat");
		assert_string_equal(doctor_shell_word("/a long/path/that/is/cut/short", word, 12), "'/a long/p'");
	}
	doctor_findings_free(&found);
	/* stuck reads the hung server off the snapshot, whether vtrace-hang runs or not */
	rule_stuck.judge(&s, &config, &found);
	assert_int_equal(found.count, 1);
	assert_int_equal(found.list[0].severity, DOCTOR_INFO); /* 2 s: under the 3 s of a warning */
	assert_string_equal(found.list[0].more, "cat /proc/42/task/42/stack; iolens vstat"); /* the hung server's */
	/* named with its container, in the text and as data */
	assert_string_equal(found.list[0].what,
			    "process 42 (cat) in container web (3f2a9c1b0d4e) is stuck in uninterruptible "
			    "sleep (D) in folio_wait_bit_common");
	{
		const struct doctor_field *container = doctor_field_get(&found.list[0].data, "container");

		assert_non_null(container);
		assert_int_equal(container->kind, FIELD_OBJECT);
		assert_string_equal(doctor_field_text(&container->children, "name"), "web");
		assert_string_equal(doctor_field_text(&container->children, "runtime"), "docker");
	}
	doctor_findings_free(&found);
	rule_vtrace_hang.judge(&s, &config, &found);
	assert_int_equal(found.count, 1);
	assert_string_equal(doctor_field_text(&found.list[0].data, "op"), "READ");
	doctor_findings_free(&found);
	rule_inodes.judge(&s, &config, &found); /* 10 % of its inodes used */
	rule_swap.judge(&s, &config, &found);   /* no vmstat in the snapshot: unknown, nothing said */
	assert_int_equal(found.count, 0);
	doctor_config_free(&config);
	doctor_snapshot_free(&s);
}

static void test_thresholds(void **state)
{
	struct doctor_snapshot s;
	struct doctor_config config;
	struct doctor_findings found = {0};
	const char *conf = "full.warning_percent=96\nstuck.seconds=1.5\nvtrace-hang.seconds=9";
	char why[256];
	(void)state;

	load(&s);
	doctor_config_init(&config);
	assert_int_equal(doctor_config_parse(&config, conf, strlen(conf), "t", why, sizeof(why)), 0);
	doctor_judge(&s, &config, &found);
	assert_int_equal(found.count, 1); /* full under 96 %, no hang under 9 s: only stuck, now a warning */
	assert_string_equal(found.list[0].rule, "stuck");
	assert_int_equal(found.list[0].severity, DOCTOR_WARNING);
	assert_non_null(strstr(found.list[0].more, "iolens stat -x 1"));
	doctor_findings_free(&found);
	doctor_config_free(&config);
	doctor_snapshot_free(&s);
}

static void test_written_reads_back(void **state)
{
	struct doctor_snapshot s, again;
	char *text = NULL, *text2 = NULL, why[256];
	size_t len = 0, len2 = 0;
	FILE *f;
	(void)state;

	load(&s);
	f = open_memstream(&text, &len);
	assert_int_equal(doctor_snapshot_write(&s, f), 0);
	fclose(f);
	assert_int_equal(doctor_snapshot_parse(text, len, &again, why, sizeof(why)), 0);
	f = open_memstream(&text2, &len2);
	assert_int_equal(doctor_snapshot_write(&again, f), 0);
	fclose(f);
	assert_string_equal(text, text2);
	assert_string_equal(again.mounts[0].dir, "/srv data");
	assert_int_equal(again.ncontainers, 1);
	assert_string_equal(again.containers[0].label, "web (3f2a9c1b0d4e)");
	free(text);
	free(text2);
	doctor_snapshot_free(&again);
	doctor_snapshot_free(&s);
}

/* A snapshot's text, or its packed form (doctor_snapshot_pack), in *out (len bytes) to free. */
static void written(const struct doctor_snapshot *s, bool packed, char **out, size_t *len)
{
	FILE *f = open_memstream(out, len);

	assert_non_null(f);
	assert_int_equal(packed ? doctor_snapshot_pack(s, f) : doctor_snapshot_write(s, f), 0);
	fclose(f);
}

/*
 * Packed, as the flight recorder keeps it: every fixture's snapshot (each rule's case: disks,
 * direct readers, vtrace ops, cgroups, containers, mounts) reads back to the same text; every
 * one of its prefixes, and every byte changed in turn, is refused with a reason or read whole,
 * never past its end (ASan's word).
 */
static void test_packed_reads_back(void **state)
{
	glob_t found;
	(void)state;

	assert_int_equal(glob("tests/fixtures/doctor/*/snapshot", 0, NULL, &found), 0);
	assert_true(found.gl_pathc >= 20);
	for (size_t i = 0; i < found.gl_pathc; i++) {
		struct doctor_snapshot s, again;
		char *text, *packed, *text2, why[512] = "";
		size_t len, plen, len2;

		if (doctor_snapshot_load(found.gl_pathv[i], &s, why, sizeof(why)) != 0)
			fail_msg("%s: %s", found.gl_pathv[i], why);
		written(&s, false, &text, &len);
		written(&s, true, &packed, &plen);
		assert_true(plen > 0 && packed[0] == '\0');
		assert_int_equal(doctor_snapshot_parse(packed, plen, &again, why, sizeof(why)), 0);
		written(&again, false, &text2, &len2);
		if (len != len2 || memcmp(text, text2, len))
			fail_msg("%s: packed and read back, a different snapshot:\n%s", found.gl_pathv[i], text2);
		doctor_snapshot_free(&again);
		for (size_t cut = 0; cut < plen; cut++) {
			char *copy = malloc(cut ? cut : 1); /* (exactly cut bytes: a read past them is ASan's) */

			memcpy(copy, packed, cut);
			why[0] = '\0';
			if (doctor_snapshot_parse(copy, cut, &again, why, sizeof(why)) == 0)
				doctor_snapshot_free(&again); /* (cut between two records) */
			else
				assert_true(why[0] != '\0');
			free(copy);
		}
		for (size_t at = 0; at < plen; at++) {
			packed[at] ^= 0x5a;
			why[0] = '\0';
			if (doctor_snapshot_parse(packed, plen, &again, why, sizeof(why)) == 0)
				doctor_snapshot_free(&again);
			else
				assert_true(why[0] != '\0');
			packed[at] ^= 0x5a;
		}
		free(text);
		free(text2);
		free(packed);
		doctor_snapshot_free(&s);
	}
	globfree(&found);
}

/* What no packer writes is refused, said by its record. */
static void test_packed_refused(void **state)
{
	static const struct {
		const char *bytes;
		size_t len;
		const char *said;
	} bad[] = {
		/* magic, version 2, page_size (record 1) 4096 */
#define PACKED "\0iolens-doctor-packed\x02\x01\x80\x20"
		{ PACKED "\x7f", sizeof(PACKED) - 1 + 1, "record 3: no record of that number" },
		{ "\0iolens-doctor-packed\x09", 23, "version 9" },
		{ PACKED "\x01\x80", sizeof(PACKED) - 1 + 2, "page_size missing (cut short)" },
		{ PACKED "\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", sizeof(PACKED) - 1 + 11, "more than 64 bits" },
		/* seconds (record 0): a real, NaN (0, then its 8 bytes), then the whole number 10^14 (1 + it) */
		{ PACKED "\x00\x00\x00\x00\x00\x00\x00\x00\xf8\x7f", sizeof(PACKED) - 1 + 10, "seconds: nan" },
		{ PACKED "\x00\x81\x80\xe9\x83\xb1\xde\x16", sizeof(PACKED) - 1 + 8,
		  "seconds: 100000000000000 is not" },
		/* cache_mechanism (record 8): a text with a NUL, then one longer than its field */
		{ PACKED "\x08\x03" "a\0b", sizeof(PACKED) - 1 + 5, "a NUL byte" },
		{ PACKED "\x08\x7f", sizeof(PACKED) - 1 + 2, "longer than" },
		/* disk_sample (a child of disk, record 12: 64 + 12 * 16) before any disk */
		{ PACKED "\x80\x02", sizeof(PACKED) - 1 + 2, "before any disk line" },
#undef PACKED
	};
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct doctor_snapshot s;
		char why[512] = "";

		assert_int_equal(doctor_snapshot_parse(bad[i].bytes, bad[i].len, &s, why, sizeof(why)), -1);
		if (!strstr(why, bad[i].said))
			fail_msg("case %zu: said '%s', not '%s'", i, why, bad[i].said);
	}
}

static void test_refused(void **state)
{
	struct doctor_snapshot s;
	char why[256];
	const char *short_task = "iolens-doctor-snapshot 1\npage_size 4096\ntask 1\n";

	assert_int_equal(doctor_snapshot_parse(short_task, strlen(short_task), &s, why, sizeof(why)), -1);
	assert_string_equal(why, "line 3: tid missing");
	assert_int_equal(doctor_snapshot_parse("page_size 4096\n", 15, &s, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "not a doctor snapshot"));
	{
		const char *bad_runtime = "iolens-doctor-snapshot 1\npage_size 4096\ncontainer 1 sh rkt - - - - 0 x\n",
			   *bad_id = "iolens-doctor-snapshot 1\npage_size 4096\ncontainer 1 sh docker 3f2a - - - 0 x\n";

		assert_int_equal(doctor_snapshot_parse(bad_runtime, strlen(bad_runtime), &s, why, sizeof(why)), -1);
		assert_non_null(strstr(why, "line 3: runtime"));
		assert_int_equal(doctor_snapshot_parse(bad_id, strlen(bad_id), &s, why, sizeof(why)), -1);
		assert_non_null(strstr(why, "line 3: id"));
	}
	{
		/* A process's reads apart (since record --doctor kept them): never more than its requests. */
#define HEAD "iolens-doctor-snapshot 1\npage_size 4096\nbio_proc 7 dd 0 4 4096 7 0 0 0 0"
		const char *old = HEAD "\n", *reads = HEAD " 3 3072\n", *more = HEAD " 5 3072\n";
#undef HEAD

		assert_int_equal(doctor_snapshot_parse(old, strlen(old), &s, why, sizeof(why)), 0);
		assert_false(s.bio_procs[0].ops_known);
		doctor_snapshot_free(&s);
		assert_int_equal(doctor_snapshot_parse(reads, strlen(reads), &s, why, sizeof(why)), 0);
		assert_true(s.bio_procs[0].ops_known);
		assert_int_equal(s.bio_procs[0].read_requests, 3);
		assert_int_equal(s.bio_procs[0].read_bytes, 3072);
		doctor_snapshot_free(&s);
		assert_int_equal(doctor_snapshot_parse(more, strlen(more), &s, why, sizeof(why)), -1);
		assert_non_null(strstr(why, "line 3: bio_proc: more reads than requests"));
	}
	{
		/* Reads' and writes' own figures (biotop --at's rows): in order, summed no more than the requests. */
#define HEAD "iolens-doctor-snapshot 2\npage_size 4096\nbio_proc 7 dd 0 4 4096 7 0 0 0 0 3 3072"
		const char *ops = HEAD " 1 1024 150 100 200 300 50 50 50 50\n",
			   *many = HEAD " 2 1024 150 100 200 300 50 50 50 50\n",
			   *negative = HEAD " 1 1024 150 100 200 300 50 -5 50 50\n";
#undef HEAD

		assert_int_equal(doctor_snapshot_parse(ops, strlen(ops), &s, why, sizeof(why)), 0);
		assert_true(s.bio_procs[0].op_figures_known);
		assert_int_equal(s.bio_procs[0].write_requests, 1);
		assert_true(s.bio_procs[0].op[0].avg_ns == 150 && s.bio_procs[0].op[0].p99_ns == 200 &&
			    s.bio_procs[0].op[0].max_ns == 300 && s.bio_procs[0].op[1].p50_ns == 50);
		doctor_snapshot_free(&s);
		assert_int_equal(doctor_snapshot_parse(many, strlen(many), &s, why, sizeof(why)), -1);
		assert_non_null(strstr(why, "line 3: bio_proc: more reads and writes than requests"));
		assert_int_equal(doctor_snapshot_parse(negative, strlen(negative), &s, why, sizeof(why)), -1);
		assert_non_null(strstr(why, "line 3: bio_proc: a write latency below 0"));
	}
	{
		/* A process's cgroup (since cachetop --at --cgroup): optional, and named by a cgroup line. */
		const char *cg = "iolens-doctor-snapshot 2\npage_size 4096\ncache_proc 7 cat 0 1024 0 0 4242\n"
				 "cache_proc 8 sh 0 10 2 0\ncgroup 4242 /a\\x20b\n";

		assert_int_equal(doctor_snapshot_parse(cg, strlen(cg), &s, why, sizeof(why)), 0);
		assert_true(s.cache_procs[0].cgroup_known);
		assert_int_equal(s.cache_procs[0].cgroup, 4242);
		assert_false(s.cache_procs[1].cgroup_known);
		assert_int_equal(s.ncgroups, 1);
		assert_string_equal(s.cgroups[0].path, "/a b");
		doctor_snapshot_free(&s);
	}
	(void)state;
}

/* The format's version: a header without one is version 1 (read as the same snapshot); a later one is refused. */
static void test_versions(void **state)
{
	const char *v1 = "iolens-doctor-snapshot 1\npage_size 4096\nswaps 2 1\n",
		   *unversioned = "iolens-doctor-snapshot\npage_size 4096\nswaps 2 1\n",
		   *later = "iolens-doctor-snapshot 99\npage_size 4096\n", *zero = "iolens-doctor-snapshot 0\n";
	struct doctor_snapshot s;
	char why[256], *text = NULL;
	size_t len = 0;
	FILE *f;

	assert_int_equal(doctor_snapshot_parse(unversioned, strlen(unversioned), &s, why, sizeof(why)), 0);
	assert_int_equal(s.swaps, 2);
	assert_int_equal(s.swaps_zram, 1);
	f = open_memstream(&text, &len);
	assert_int_equal(doctor_snapshot_write(&s, f), 0);
	fclose(f);
	assert_int_equal(strncmp(text, "iolens-doctor-snapshot ", 23), 0);
	assert_non_null(strstr(text, "\nswaps 2 1\n"));
	doctor_snapshot_free(&s);
	free(text);
	assert_int_equal(doctor_snapshot_parse(v1, strlen(v1), &s, why, sizeof(why)), 0);
	doctor_snapshot_free(&s);
	assert_int_equal(doctor_snapshot_parse(later, strlen(later), &s, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "line 1: version 99: this doctor reads up to version "));
	assert_int_equal(doctor_snapshot_parse(zero, strlen(zero), &s, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "line 1: version 0"));
	(void)state;
}

/* iolens-doctor(1)'s RULES, as the table makes them: each rule's name and paragraph, in its order. */
static char *man_rules(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	for (const struct doctor_rule *const *rule = doctor_rules_listed(); *rule; rule++) {
		fputs(".TP\n.B ", f);
		for (const char *c = (*rule)->name; *c; c++)
			fputs(*c == '-' ? "\\-" : (char[]){ *c, 0 }, f);
		fprintf(f, "\n%s", (*rule)->man);
	}
	fclose(f);
	return text;
}

/*
 * The man page's RULES list is the table's: between its two markers, what man_rules makes.
 * DOCTOR_MAN_WRITE=1 rewrites it so (after a rule's .man changed, or a rule came).
 */
static void test_man_page(void **state)
{
	static const char begin[] = ".\\\" From here to the end marker: the rule table",
			  end[] = ".\\\" End of the rule table.\n";
	const char *top = getenv("TOP");
	char path[4096], *page = NULL, *from, *to, *rules = man_rules();
	size_t len = 0;
	FILE *f;
	(void)state;

	snprintf(path, sizeof(path), "%s/docs/iolens-doctor.1", top ? top : ".");
	f = fopen(path, "r");
	if (!f)
		skip();
	assert_int_equal(getdelim(&page, &len, '\0', f) > 0, 1);
	fclose(f);
	from = strstr(page, begin);
	assert_non_null(from);
	from = strchr(from, '\n') + 1;
	to = strstr(from, end);
	assert_non_null(to);
	if (getenv("DOCTOR_MAN_WRITE")) {
		f = fopen(path, "w");
		assert_non_null(f);
		fprintf(f, "%.*s%s%s", (int)(from - page), page, rules, to);
		assert_int_equal(fclose(f), 0);
	} else if (strlen(rules) != (size_t)(to - from) || memcmp(rules, from, (size_t)(to - from))) {
		fail_msg("%s: RULES is not the rule table's (DOCTOR_MAN_WRITE=1 %s rewrites it)", path,
			 "test_doctor_rules");
	}
	free(page);
	free(rules);
}

/*
 * Each file of src/doctor/rules/ is one rule named after it (full.c: rule_full, "full"; vtrace_hang.c:
 * "vtrace-hang"), and its ranks are its own: two rules of one rank would be listed or judged in an
 * order no file says.
 */
static void test_registered(void **state)
{
	static const struct {
		const struct doctor_rule *rule;
		const char *file;
	} files[] = {
#define FILE_RULE(n) { &rule_##n, #n },
		doctor_rules(FILE_RULE)
#undef FILE_RULE
	};
	const struct doctor_rule *const *listed = doctor_rules_listed(), *const *judged = doctor_rules_judged();
	size_t n = sizeof(files) / sizeof(files[0]);
	(void)state;

	assert_int_equal(n, DOCTOR_RULE_COUNT);
	for (size_t i = 0; i < n; i++) {
		char name[64];

		snprintf(name, sizeof(name), "%s", files[i].file);
		for (char *c = name; *c; c++)
			*c = *c == '_' ? '-' : *c;
		if (strcmp(files[i].rule->name, name))
			fail_msg("src/doctor/rules/%s.c: its rule is named \"%s\", not \"%s\"", files[i].file,
				 files[i].rule->name, name);
		for (size_t k = 0; k < i; k++)
			if (files[k].rule->list_rank == files[i].rule->list_rank ||
			    files[k].rule->judge_rank == files[i].rule->judge_rank)
				fail_msg("rules %s and %s: one list_rank or judge_rank", files[k].rule->name,
					 files[i].rule->name);
	}
	for (size_t i = 0; i < n; i++) {
		assert_non_null(listed[i]);
		assert_non_null(judged[i]);
		if (i)
			assert_true(listed[i - 1]->list_rank < listed[i]->list_rank &&
				    judged[i - 1]->judge_rank < judged[i]->judge_rank);
	}
	assert_null(listed[n]);
	assert_null(judged[n]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registered),
		cmocka_unit_test(test_each_rule_alone),
		cmocka_unit_test(test_thresholds),
		cmocka_unit_test(test_written_reads_back),
		cmocka_unit_test(test_packed_reads_back),
		cmocka_unit_test(test_packed_refused),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_versions),
		cmocka_unit_test(test_man_page),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
