/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_capacity.c: a disk's identity from a recorded /sys (WWN, serial, model and size; a
 * partition's disk), capacity files saved and read back, bench JSON refused with a reason.
 */
#include "unit.h"

#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "workload/profile.h"
#include "collect/capacity.h"
#include "collect/sysroot.h"

static void put(const char *root, const char *path, const char *text)
{
	char *full, *slash;

	assert_true(asprintf(&full, "%s%s", root, path) > 0);
	/* mkdir -p of its directory */
	for (slash = strchr(full + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(full, 0755);
		*slash = '/';
	}
	if (text) {
		FILE *f = fopen(full, "w");

		assert_non_null(f);
		fputs(text, f);
		fclose(f);
	} else {
		mkdir(full, 0755);
	}
	free(full);
}

static void link_to(const char *root, const char *path, const char *target)
{
	char *full;

	assert_true(asprintf(&full, "%s%s", root, path) > 0);
	assert_int_equal(symlink(target, full), 0);
	free(full);
}

/* A disk NAME as devices/virtual/block/NAME, with /sys/block/NAME and /sys/dev/block/MAJ:MIN linked to it. */
static void disk(const char *root, const char *name, unsigned maj, unsigned min, const char *size)
{
	char path[256], target[256];

	snprintf(path, sizeof(path), "/sys/devices/virtual/block/%s/size", name);
	put(root, path, size);
	snprintf(path, sizeof(path), "/sys/block/%s", name);
	snprintf(target, sizeof(target), "../devices/virtual/block/%s", name);
	link_to(root, path, target);
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", maj, min);
	snprintf(target, sizeof(target), "../../devices/virtual/block/%s", name);
	link_to(root, path, target);
}

static char *fake_sys(void)
{
	char *root = unit_tmpdir();

	put(root, "/sys/block", NULL);
	put(root, "/sys/dev/block", NULL);
	/* sdb: a SCSI t10 WWN padded with spaces, and a partition */
	disk(root, "sdb", 8, 16, "1000\n");
	put(root, "/sys/devices/virtual/block/sdb/device/wwid", "t10.ATA     Samsung SSD 860   S3Z9NB0K123456   \n");
	put(root, "/sys/devices/virtual/block/sdb/device/serial", "S3Z9NB0K123456\n");
	put(root, "/sys/devices/virtual/block/sdb/sdb1/partition", "1\n");
	link_to(root, "/sys/dev/block/8:17", "../../devices/virtual/block/sdb/sdb1");
	/* sdc: an empty wwid, a serial with a space and a slash */
	disk(root, "sdc", 8, 32, "1000\n");
	put(root, "/sys/devices/virtual/block/sdc/wwid", "\n");
	put(root, "/sys/devices/virtual/block/sdc/device/serial", "AB 12/34\n");
	/* loop0: nothing but its size */
	disk(root, "loop0", 7, 0, "2048\n");
	/* sdd: a model */
	disk(root, "sdd", 8, 48, "100\n");
	put(root, "/sys/devices/virtual/block/sdd/device/model", "QEMU HARDDISK   \n");
	/* loop1: detached, size 0 */
	disk(root, "loop1", 7, 1, "0\n");
	assert_int_equal(sysroot_set(root), 0);
	return root;
}

static void test_identity(void **state)
{
	char *root = fake_sys(), why[256];
	struct capacity_identity id;

	(void)state;
	assert_int_equal(capacity_identity(makedev(8, 17), &id, why, sizeof(why)), 0);
	assert_string_equal(id.disk, "sdb"); /* the partition's disk */
	assert_string_equal(id.source, "wwid");
	assert_string_equal(id.key, "wwid-t10.ATA_Samsung_SSD_860_S3Z9NB0K123456");
	assert_int_equal(capacity_identity(makedev(8, 32), &id, why, sizeof(why)), 0);
	assert_string_equal(id.key, "serial-AB_12_34"); /* the empty wwid passed over */
	assert_string_equal(id.source, "serial");
	assert_int_equal(capacity_identity(makedev(7, 0), &id, why, sizeof(why)), 0);
	assert_string_equal(id.key, "model-loop-1048576");
	assert_string_equal(id.source, "model");
	assert_int_equal(capacity_identity(makedev(8, 48), &id, why, sizeof(why)), 0);
	assert_string_equal(id.key, "model-QEMU_HARDDISK-51200");
	assert_int_equal(capacity_identity(makedev(7, 1), &id, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "loop1: no WWN or serial in sysfs, and no size"));
	assert_int_equal(capacity_identity(makedev(9, 9), &id, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "no block device 9:9"));
	sysroot_set("/");
	unit_rmtree(root);
}

static const char document[] =
	"{\"rw\":null,\"sweep\":\"profile\",\"points\":[{\"case\":\"seq1m_q8t1_read\",\"rw\":\"read\","
	"\"mode\":\"direct\","
	"\"bs\":1048576,\"qd\":8,\"bytes_per_s\":1e9,\"iops\":953.674,\"lat_ns\":{\"p50\":5000,\"p99\":7000},"
	"\"runs\":{\"count\":3,\"bytes_per_s\":[9e8,1e9,1.2e9],\"spread\":0.3}}],"
	"\"capacity\":{\"key\":\"%s\",\"disk\":\"sdb\",\"source\":\"wwid\",\"saved_s\":1796172595}}\n";

static void test_save_load(void **state)
{
	char *root = fake_sys(), *dir, why[512], text[2048], path[4096];
	struct capacity_identity id;
	struct bench_result_doc *doc = calloc(1, sizeof(*doc));
	struct stat st;

	(void)state;
	assert_true(asprintf(&dir, "%s/var/lib/iolens/capacity", root) > 0);
	assert_int_equal(capacity_load(dir, makedev(8, 16), doc, path, sizeof(path), why, sizeof(why)), 1);
	assert_non_null(strstr(why, "wwid-t10.ATA_Samsung_SSD_860_S3Z9NB0K123456.json does not exist"));
	assert_int_equal(capacity_identity(makedev(8, 16), &id, why, sizeof(why)), 0);
	snprintf(text, sizeof(text), document, id.key);
	assert_int_equal(capacity_save(dir, &id, text, strlen(text), why, sizeof(why)), 0); /* makes the directories */
	assert_int_equal(capacity_save(dir, &id, text, strlen(text), why, sizeof(why)), 0); /* replaces */
	assert_int_equal(capacity_load(dir, makedev(8, 17), doc, path, sizeof(path), why, sizeof(why)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	assert_int_equal(doc->ncases, 1);
	assert_string_equal(doc->cases[0].name, "seq1m_q8t1_read");
	assert_true(doc->cases[0].runs == 3 && doc->cases[0].runs_min == 9e8 && doc->cases[0].runs_max == 1.2e9);
	assert_true(doc->cases[0].lat_p99_ns == 7000);
	assert_true(doc->has_capacity && !strcmp(doc->capacity_key, id.key) && !strcmp(doc->capacity_source, "wwid"));
	/* Only the file: the temporary one was renamed. */
	{
		char *command;
		FILE *ls;
		char line[512];
		int files = 0;

		assert_true(asprintf(&command, "ls -A '%s'", dir) > 0);
		ls = popen(command, "r");
		while (fgets(line, sizeof(line), ls))
			files++;
		pclose(ls);
		free(command);
		assert_int_equal(files, 1);
	}
	/* Another disk's file under this key: refused. */
	snprintf(text, sizeof(text), document, "serial-OTHER");
	assert_int_equal(capacity_save(dir, &id, text, strlen(text), why, sizeof(why)), 0);
	assert_int_equal(capacity_load(dir, makedev(8, 16), doc, path, sizeof(path), why, sizeof(why)), -1);
	assert_non_null(strstr(why, "its key is serial-OTHER"));
	sysroot_set("/");
	free(doc);
	free(dir);
	unit_rmtree(root);
}

/* dir's mtime set to when, as a directory left untouched since. */
static void set_mtime(const char *dir, time_t when)
{
	struct timespec times[2] = { { 0, UTIME_OMIT }, { when, 0 } };

	assert_int_equal(utimensat(AT_FDCWD, dir, times, 0), 0);
}

/*
 * capacity_none_saved against the files the test puts in the directory: asked again when the
 * directory changes (mtime, ctime, or another directory in its place).
 */
static void test_none_saved(void **state)
{
	char *root = unit_tmpdir(), *dir, *other, *file, *notes;
	time_t old = time(NULL) - 60;

	(void)state;
	assert_true(asprintf(&dir, "%s/capacity", root) > 0 && asprintf(&other, "%s/other", root) > 0);
	assert_true(asprintf(&file, "%s/sda.json", dir) > 0 && asprintf(&notes, "%s/notes.txt", dir) > 0);
	assert_true(capacity_none_saved(dir)); /* no directory */
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_true(capacity_none_saved(dir));
	put(dir, "/notes.txt", "not a capacity");
	assert_true(capacity_none_saved(dir));
	put(dir, "/sda.json", "{}"); /* changed a moment ago: read again */
	assert_false(capacity_none_saved(dir));
	assert_int_equal(unlink(file), 0);
	assert_true(capacity_none_saved(dir));
	/* Untouched for a minute: known, and not read again while its mtime stays. */
	set_mtime(dir, old);
	assert_true(capacity_none_saved(dir));
	put(dir, "/sda.json", "{}");
	assert_false(capacity_none_saved(dir)); /* its mtime moved */
	/* Another directory renamed over it, with the same mtime: read. */
	assert_int_equal(unlink(file), 0);
	assert_int_equal(unlink(notes), 0);
	set_mtime(dir, old);
	assert_true(capacity_none_saved(dir));
	assert_int_equal(mkdir(other, 0755), 0);
	put(other, "/sdb.json", "{}");
	assert_int_equal(rename(other, dir), 0);
	set_mtime(dir, old);
	assert_false(capacity_none_saved(dir));
	free(file);
	free(notes);
	free(dir);
	free(other);
	unit_rmtree(root);
}

static void refused(const char *text, const char *reason)
{
	static struct bench_result_doc doc;
	char why[512] = "";

	assert_int_equal(bench_result_parse(text, strlen(text), &doc, why, sizeof(why)), -1);
	if (!strstr(why, reason))
		fail_msg("'%s': '%s', not '%s'", text, why, reason);
	assert_int_equal(doc.ncases, 0);
}

static void test_parse_refusals(void **state)
{
	(void)state;
	refused("", "not JSON");
	refused("{\"points\":[", "not JSON (it ends early");
	refused("[1,2]", "not a bench --json document");
	refused("{\"points\":{}}", "not a bench --json document");
	refused("{\"points\":[]}", "no points");
	refused("{\"points\":[{\"bs\":0,\"qd\":1}]}", "points[0]: no block size");
	refused("{\"points\":[{\"bs\":4096,\"qd\":1.5}]}", "points[0]: no queue depth");
	refused("{\"points\":[{\"bs\":4096,\"qd\":1,\"iops\":1}]}", "points[0]: no bytes_per_s");
	refused("{\"points\":[{\"bs\":4096,\"qd\":1,\"bytes_per_s\":-1,\"iops\":1}]}", "points[0]: no bytes_per_s");
	refused("{\"points\":[{\"bs\":4096,\"qd\":1,\"bytes_per_s\":1,\"iops\":1}]}", "points[0]: no case and no mode");
	refused("{\"points\":[{\"case\":\"a\",\"bs\":4096,\"qd\":1,\"bytes_per_s\":1,\"iops\":1},"
		"{\"case\":\"a\",\"bs\":4096,\"qd\":1,\"bytes_per_s\":1,\"iops\":1}]}", "points[1]: case a twice");
	refused("{\"points\":[{\"case\":\"a\",\"bs\":4096,\"qd\":1,\"bytes_per_s\":1,\"iops\":1,"
		"\"runs\":{\"count\":2,\"bytes_per_s\":[1]}}]}", "runs: count 2 and 1 values");
	refused("{\"points\":[{\"case\":\"a\",\"bs\":4096,\"qd\":1,\"bytes_per_s\":5,\"iops\":1,"
		"\"runs\":{\"count\":2,\"bytes_per_s\":[1,2]}}]}", "outside its runs");
	refused("{\"points\":[{\"case\":\"a\",\"bs\":4096,\"qd\":1,\"bytes_per_s\":1,\"iops\":1}]} x",
		"more after the JSON");
	refused("{\"points\":[{\"case\":\"a\",\"bs\":4096,\"qd\":1,\"bytes_per_s\":1,\"iops\":1}],\"capacity\":{}}",
		"capacity:");
}

static void test_compare_rule(void **state)
{
	struct bench_case a = { .bytes_per_s = 100, .runs = 3, .runs_min = 90, .runs_max = 110 };
	struct bench_case b = a;
	double change;

	(void)state;
	b.bytes_per_s = 105, b.runs_min = 95, b.runs_max = 115; /* overlapping: noise */
	assert_int_equal(bench_case_compare(&a, &b, 5, &change), 0);
	assert_true(change > 4.99 && change < 5.01);
	b.bytes_per_s = 50, b.runs_min = 45, b.runs_max = 89.9; /* all below */
	assert_int_equal(bench_case_compare(&a, &b, 5, &change), -1);
	assert_true(change > -50.01 && change < -49.99);
	b.bytes_per_s = 125, b.runs_min = 112, b.runs_max = 130; /* all above, medians 25 apart: more than A's 20 */
	assert_int_equal(bench_case_compare(&a, &b, 5, &change), 1);
	b.runs_min = 110; /* touching: within */
	assert_int_equal(bench_case_compare(&a, &b, 5, &change), 0);
	b.bytes_per_s = 120, b.runs_min = 110.1; /* apart, but the medians only as far as A's range is wide */
	assert_int_equal(bench_case_compare(&a, &b, 5, &change), 0);
	b.bytes_per_s = 150, b.runs_min = 111, b.runs_max = 200; /* apart, but B's range wider than the move */
	assert_int_equal(bench_case_compare(&a, &b, 5, &change), 0);
	/* A machine drifting: narrow ranges 2.3 % apart. Noise within the margin; a change without one. */
	a.bytes_per_s = 100, a.runs_min = 99.5, a.runs_max = 100.5;
	b.bytes_per_s = 97.7, b.runs_min = 97.4, b.runs_max = 98;
	assert_int_equal(bench_case_compare(&a, &b, 5, &change), 0);
	assert_int_equal(bench_case_compare(&a, &b, 2, &change), -1);
	assert_int_equal(bench_case_compare(&a, &b, 0, &change), -1);
	b.bytes_per_s = 70, b.runs_min = 69, b.runs_max = 71; /* 30 % down: slower at the default margin */
	assert_int_equal(bench_case_compare(&a, &b, BENCH_COMPARE_MARGIN_PERCENT, &change), -1);
}

/* A profile's eight cases: IOPS at rnd4k QD1/QD32 and seq1m QD1/QD8, bytes/s = IOPS x bs. */
static void profile(struct bench_result_doc *doc)
{
	static const struct { const char *name; uint64_t bs; unsigned qd; double iops; } cases[] = {
		{ "seq1m_q8t1_read", 1 << 20, 8, 400 },   { "seq1m_q8t1_write", 1 << 20, 8, 300 },
		{ "seq1m_q1t1_read", 1 << 20, 1, 100 },   { "seq1m_q1t1_write", 1 << 20, 1, 80 },
		{ "rnd4k_q32t1_read", 4096, 32, 16000 },  { "rnd4k_q32t1_write", 4096, 32, 12000 },
		{ "rnd4k_q1t1_read", 4096, 1, 1000 },     { "rnd4k_q1t1_write", 4096, 1, 900 },
	};

	memset(doc, 0, sizeof(*doc));
	for (unsigned i = 0; i < 8; i++) {
		struct bench_case *c = &doc->cases[doc->ncases++];
		snprintf(c->name, sizeof(c->name), "%s", cases[i].name);
		c->bs = cases[i].bs, c->qd = cases[i].qd, c->iops = cases[i].iops;
		c->bytes_per_s = cases[i].iops * (double)cases[i].bs;
	}
}

static void test_share_rule(void **state)
{
	struct bench_result_doc *doc = calloc(1, sizeof(*doc));
	double iops, bytes;
	(void)state;

	profile(doc);
	/* The cases themselves. */
	assert_true(capacity_at(doc, false, 4096, 1, &iops, &bytes));
	assert_true(fabs(iops - 1000) < 1e-9 && fabs(bytes - 4096000) < 1e-6);
	assert_true(capacity_at(doc, false, 4096, 32, &iops, &bytes) && fabs(iops - 16000) < 1e-9);
	assert_true(capacity_at(doc, true, 1 << 20, 8, &iops, &bytes) && fabs(iops - 300) < 1e-9);
	/* Held at the ends: below QD1, beyond the deep case, below 4 KiB, above 1 MiB. */
	assert_true(capacity_at(doc, false, 512, 0.1, &iops, &bytes) && fabs(iops - 1000) < 1e-9);
	assert_true(capacity_at(doc, false, 4 << 20, 64, &iops, &bytes) && fabs(iops - 400) < 1e-9);
	/* 64 KiB (half-way in log2 between 4 KiB and 1 MiB) at depth 4: rnd4k half-way from QD1 to
	 * QD32 in log2 (2/5 of the way), seq1m 2/3 of the way from QD1 to QD8. */
	double small = 1000 + 0.4 * 15000, large = 100 + 2.0 / 3 * 300;
	double small_b = small * 4096, large_b = large * (1 << 20);
	assert_true(capacity_at(doc, false, 65536, 4, &iops, &bytes));
	assert_true(fabs(iops - (small + large) / 2) < 1e-6);
	assert_true(fabs(bytes - (small_b + large_b) / 2) < 1e-3);
	/* The share: each direction's larger share, added. */
	struct capacity_demand load = { .iops = { 500, 90 }, .bytes_per_s = { 500 * 4096.0, 90 * 1048576.0 },
					.size = { 4096, 1048576 }, .depth = 1 };
	assert_true(fabs(capacity_share(doc, &load) - (50 + 112.5)) < 1e-9);
	/* No request: 0; a case missing: NaN. */
	struct capacity_demand idle = { .depth = 0 };
	assert_true(capacity_share(doc, &idle) == 0);
	doc->ncases = 7; /* rnd4k_q1t1_write gone */
	assert_true(isnan(capacity_share(doc, &load)));
	load.iops[1] = load.bytes_per_s[1] = 0; /* reads alone need no write case */
	assert_true(fabs(capacity_share(doc, &load) - 50) < 1e-9);
	free(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identity),
		cmocka_unit_test(test_save_load),
		cmocka_unit_test(test_none_saved),
		cmocka_unit_test(test_parse_refusals),
		cmocka_unit_test(test_compare_rule),
		cmocka_unit_test(test_share_rule),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
