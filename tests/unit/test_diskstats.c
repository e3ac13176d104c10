/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_diskstats.c: /proc/diskstats lines of every kernel, how sysfs says devices stack, and iostat
 * -x's figures worked out by hand.
 */
#include "unit.h"

#include <errno.h>
#include <math.h>
#include <sys/stat.h>

#include "collect/diskstats.h"
#include "collect/sysroot.h"
#include "model/disk.h"

#define HANDMADE "tests/fixtures/diskstats/handmade"
#define LIVE "tests/fixtures/diskstats/live"

/* Parses a copy of text in a buffer of exactly its length, so reading past len is an ASan error. */
static int parse_exact(const char *text, size_t len, struct diskstats *out)
{
	char *copy = malloc(len ? len : 1);
	int rc;

	assert_non_null(copy);
	memcpy(copy, text, len);
	rc = diskstats_parse(copy, len, out);
	free(copy);
	return rc;
}

static int parse_string(const char *text, struct diskstats *out)
{
	return parse_exact(text, strlen(text), out);
}

static void test_parse_17_fields(void **state)
{
	/* Linux 5.5 and later: discards (4.18) and flushes (5.5) after the original 11. */
	struct diskstats s;
	const struct disk_stats *d;
	(void)state;

	assert_int_equal(parse_string(" 254       0 vda 361292 24919 22552258 65259 30665 78322 12455984 97805 2 30832 "
				      "166820 "
				      "16835 22 11102888 3679 1881 76\n",
				      &s),
			 0);
	assert_int_equal(s.count, 1);
	assert_int_equal(s.skipped, 0);
	d = &s.disk[0];
	assert_int_equal(d->major, 254);
	assert_int_equal(d->minor, 0);
	assert_string_equal(d->name, "vda");
	assert_int_equal(d->nfields, 17);
	assert_int_equal(d->rd_ios, 361292);
	assert_int_equal(d->rd_merges, 24919);
	assert_int_equal(d->rd_sectors, 22552258);
	assert_int_equal(d->rd_ticks, 65259);
	assert_int_equal(d->wr_ios, 30665);
	assert_int_equal(d->wr_merges, 78322);
	assert_int_equal(d->wr_sectors, 12455984);
	assert_int_equal(d->wr_ticks, 97805);
	assert_int_equal(d->in_flight, 2);
	assert_int_equal(d->io_ticks, 30832);
	assert_int_equal(d->time_in_queue, 166820);
	assert_int_equal(d->dc_ios, 16835);
	assert_int_equal(d->dc_merges, 22);
	assert_int_equal(d->dc_sectors, 11102888);
	assert_int_equal(d->dc_ticks, 3679);
	assert_int_equal(d->fl_ios, 1881);
	assert_int_equal(d->fl_ticks, 76);
	/* Parsing alone leaves kind[] there and zero. */
	assert_non_null(s.kind);
	assert_false(s.kind[0].in_total || s.kind[0].partition || s.kind[0].stacked);
	diskstats_free(&s);
	assert_int_equal(s.count, 0);
	assert_null(s.disk);
}

static void test_parse_old_kernels(void **state)
{
	/* Before 4.18: 11 fields (iostats.rst's example); 4.18 to 5.4: 15, with discards. */
	static const char text[] =
	    "   3    0   hda 446216 784926 9550688 4382310 424847 312726 5922052 19310380 0 3376340 23705160\n"
	    "   8   32 sdc 1203 45 98012 2301 504 88 40200 1120 0 2890 3421 12 0 81920 3\n";
	struct diskstats s;
	(void)state;

	assert_int_equal(parse_string(text, &s), 0);
	assert_int_equal(s.count, 2);
	assert_string_equal(s.disk[0].name, "hda");
	assert_int_equal(s.disk[0].nfields, 11);
	assert_int_equal(s.disk[0].time_in_queue, 23705160);
	assert_int_equal(s.disk[0].dc_ios, 0);
	assert_int_equal(s.disk[0].fl_ios, 0);
	assert_string_equal(s.disk[1].name, "sdc");
	assert_int_equal(s.disk[1].nfields, 15);
	assert_int_equal(s.disk[1].dc_ios, 12);
	assert_int_equal(s.disk[1].dc_sectors, 81920);
	assert_int_equal(s.disk[1].dc_ticks, 3);
	assert_int_equal(s.disk[1].fl_ios, 0);
	diskstats_free(&s);
}

static void test_parse_odd_but_valid(void **state)
{
	struct diskstats s;
	(void)state;

	/* A name with '/', as diskstats shows cciss and ida devices (sysfs says cciss!c0d0). */
	assert_int_equal(parse_string(" 104 0 cciss/c0d0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n", &s), 0);
	assert_string_equal(s.disk[0].name, "cciss/c0d0");
	assert_ptr_equal(diskstats_find(&s, "cciss/c0d0"), &s.disk[0]);
	assert_ptr_equal(diskstats_find(&s, "cciss!c0d0"), &s.disk[0]);
	assert_null(diskstats_find(&s, "cciss"));
	assert_null(diskstats_find(&s, "cciss/c0d0p1"));
	diskstats_free(&s);

	/* Fields a future kernel adds are passed over; a partial group counts as absent. */
	assert_int_equal(parse_string("8 0 sda 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20\n"
				      "8 1 sda1 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n"
				      "8 2 sda2 1 2 3 4 5 6 7 8 9 10 11 12 13\n"
				      "8 3 sda3 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 some-word 99\n",
				      &s),
			 0);
	assert_int_equal(s.count, 4);
	assert_int_equal(s.disk[0].nfields, 17);
	assert_int_equal(s.disk[0].fl_ticks, 17);
	assert_int_equal(s.disk[1].nfields, 15);
	assert_int_equal(s.disk[1].dc_ticks, 15);
	assert_int_equal(s.disk[1].fl_ios, 0);
	assert_int_equal(s.disk[2].nfields, 11);
	assert_int_equal(s.disk[2].dc_ios, 0);
	assert_int_equal(s.disk[3].nfields, 17);
	diskstats_free(&s);

	/* Tabs, CRLF, blank lines, the largest counter, and no newline at the end. */
	assert_int_equal(parse_string("\n\t8\t16\tsdb\t18446744073709551615 0 0 0 0 0 0 0 0 0 4294967295\r\n\n   \n"
				      "8 32 sdc 1 1 1 1 1 1 1 1 1 1 1",
				      &s),
			 0);
	assert_int_equal(s.count, 2);
	assert_int_equal(s.skipped, 0);
	assert_true(s.disk[0].rd_ios == UINT64_MAX);
	assert_int_equal(s.disk[0].time_in_queue, 4294967295u);
	assert_int_equal(s.disk[1].time_in_queue, 1);
	diskstats_free(&s);

	/* Nothing at all is no device, not an error (a container without block devices). */
	assert_int_equal(parse_string("", &s), 0);
	assert_int_equal(s.count, 0);
	diskstats_free(&s);
	assert_int_equal(diskstats_parse(NULL, 0, &s), 0);
	diskstats_free(&s);
}

static void test_parse_malformed(void **state)
{
	static const char *const bad[] = {
		"8 0 sda 1 2 3 4 5 6 7 8 9 10\n",                          /* 10 numbers */
		"8 0 sda\n",
		"8 0\n",
		"sda 1 2 3 4 5 6 7 8 9 10 11\n",                           /* no major and minor */
		"x 0 sda 1 2 3 4 5 6 7 8 9 10 11\n",
		"8 y sda 1 2 3 4 5 6 7 8 9 10 11\n",
		"-8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n",
		"8 0 sda 1 2 3 -4 5 6 7 8 9 10 11\n",
		"8 0 sda 1 2 3 4x 5 6 7 8 9 10 11\n",
		"8 0 sda 1 2 3 18446744073709551616 5 6 7 8 9 10 11\n",   /* 2^64 */
		"8 0 sda 1 2 3 99999999999999999999999999 5 6 7 8 9 10 11\n",
		"4294967296 0 sda 1 2 3 4 5 6 7 8 9 10 11\n",              /* major beyond 32 bits */
		"8 0 .. 1 2 3 4 5 6 7 8 9 10 11\n",                        /* would be a path under /sys/class/block */
		"8 0 . 1 2 3 4 5 6 7 8 9 10 11\n",
		"8 0 a123456789b123456789c123456789d123456789e123456789f123456789g123 1 2 3 4 5 6 7 8 9 10 11\n",
		"8 1 2 3 4 5 6 7 8 9 10 11\n",                             /* "2" is a name: 9 numbers are left */
		"\x01\x02\x03",
	};
	struct diskstats s;
	unsigned i;
	(void)state;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		s.count = 42;
		if (parse_string(bad[i], &s) != -EINVAL)
			fail_msg("accepted: %s", bad[i]);
		assert_int_equal(s.count, 0);
		assert_null(s.disk);
	}

	/* A NUL in a name ends nothing: the line is refused, and the next one still read. */
	{
		static const char text[] = "8 0 sd\0a 1 2 3 4 5 6 7 8 9 10 11\n8 16 sdb 1 2 3 4 5 6 7 8 9 10 11\n";
		assert_int_equal(parse_exact(text, sizeof(text) - 1, &s), 0);
		assert_int_equal(s.count, 1);
		assert_int_equal(s.skipped, 1);
		assert_string_equal(s.disk[0].name, "sdb");
		diskstats_free(&s);
	}

	/* Good lines around bad ones are kept; the bad ones are counted. */
	assert_int_equal(parse_string("garbage\n8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n8 1 sda1 1 2\n", &s), 0);
	assert_int_equal(s.count, 1);
	assert_int_equal(s.skipped, 2);
	assert_string_equal(s.disk[0].name, "sda");
	diskstats_free(&s);

	/* A 63-byte name fits; len cuts the last number short, and nothing past len is read. */
	{
		static const char text[] = "8 0 a123456789b123456789c123456789d123456789e123456789f123456789g12 "
					   "1 2 3 4 5 6 7 8 9 10 1234";
		assert_int_equal(parse_exact(text, sizeof(text) - 1 - 3, &s), 0);
		assert_int_equal(strlen(s.disk[0].name), 63);
		assert_int_equal(s.disk[0].time_in_queue, 1);
		diskstats_free(&s);
		/* Cut before the 11th number: 10 numbers. */
		assert_int_equal(parse_exact(text, sizeof(text) - 1 - 5, &s), -EINVAL);
	}
}

static const struct disk_kind *kind_of(const struct diskstats *s, const char *name)
{
	const struct disk_stats *d = diskstats_find(s, name);

	if (!d)
		fail_msg("no device %s", name);
	return &s->kind[d - s->disk];
}

static void test_read_handmade(void **state)
{
	struct diskstats s;
	const struct disk_kind *k;
	char total[256] = "";
	unsigned i;
	(void)state;

	assert_int_equal(sysroot_set(HANDMADE), 0);
	assert_int_equal(diskstats_read(&s), 0);
	assert_int_equal(s.count, 13);
	assert_int_equal(s.skipped, 0);
	for (i = 0; i < s.count; i++)
		assert_true(s.kind[i].in_sysfs);

	/* Only whole devices that are not stacked on others count in a total: each I/O once. */
	for (i = 0; i < s.count; i++)
		if (s.kind[i].in_total) {
			strcat(total, " ");
			strcat(total, s.disk[i].name);
		}
	assert_string_equal(total, " hda sda sdb sdc cciss/c0d0 sr0");

	k = kind_of(&s, "sda");
	assert_false(k->partition || k->stacked || k->has_holders || k->removable);
	k = kind_of(&s, "sda1"); /* dm-0 is on it */
	assert_true(k->partition && k->has_holders);
	assert_false(k->stacked || k->in_total);
	k = kind_of(&s, "sda2"); /* half of md0 */
	assert_true(k->partition && k->has_holders);
	assert_false(k->in_total);
	k = kind_of(&s, "sdb1");
	assert_true(k->partition && k->has_holders);
	k = kind_of(&s, "sdb");
	assert_true(k->in_total);
	assert_false(k->has_holders);
	k = kind_of(&s, "md0");
	assert_true(k->stacked);
	assert_false(k->partition || k->in_total || k->has_holders);
	k = kind_of(&s, "dm-0");
	assert_true(k->stacked);
	assert_false(k->in_total);
	k = kind_of(&s, "loop0"); /* stacks on a file: its I/O is counted again on the disk below */
	assert_true(k->stacked);
	assert_false(k->in_total || k->partition);
	k = kind_of(&s, "cciss/c0d0"); /* sysfs spells it cciss!c0d0 */
	assert_true(k->in_total);
	k = kind_of(&s, "cciss/c0d0p1");
	assert_true(k->partition);
	assert_false(k->in_total);
	k = kind_of(&s, "sr0");
	assert_true(k->removable && k->in_total);

	assert_int_equal(diskstats_find(&s, "hda")->nfields, 11);
	assert_int_equal(diskstats_find(&s, "sdc")->nfields, 15);
	assert_int_equal(diskstats_find(&s, "sda")->nfields, 17);
	assert_int_equal(diskstats_find(&s, "sda")->in_flight, 1);

	/* Read again: the same answers, from what was remembered and looked at again. */
	{
		struct diskstats again;
		assert_int_equal(diskstats_read(&again), 0);
		assert_int_equal(again.count, s.count);
		for (i = 0; i < s.count; i++) {
			assert_string_equal(again.disk[i].name, s.disk[i].name);
			assert_memory_equal(&again.kind[i], &s.kind[i], sizeof(s.kind[i]));
		}
		diskstats_free(&again);
	}
	diskstats_free(&s);
}

#define assert_near(actual, expected)                                                                              \
	do {                                                                                                       \
		double a_ = (actual), e_ = (expected);                                                              \
		if (!(fabs(a_ - e_) <= 1e-9 * (fabs(e_) > 1 ? fabs(e_) : 1)))                                      \
			fail_msg("%s = %.12g, expected %.12g", #actual, a_, e_);                                   \
	} while (0)

static void test_read_live(void **state)
{
	struct diskstats t0, t1;
	const struct disk_stats *a, *b;
	struct disk_ext x;
	double seconds = 0;
	uint64_t total0 = 0, total1 = 0;
	FILE *f;
	unsigned i;
	(void)state;

	f = fopen(LIVE "/seconds", "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%lf", &seconds), 1);
	fclose(f);
	assert_near(seconds, 3.000);

	assert_int_equal(sysroot_set(LIVE "/t0"), 0);
	assert_int_equal(diskstats_read(&t0), 0);
	assert_int_equal(sysroot_set(LIVE "/t1"), 0); /* another root: nothing of t0 is reused */
	assert_int_equal(diskstats_read(&t1), 0);
	assert_int_equal(t0.count, 12);
	assert_int_equal(t1.count, 12);

	/* loop0 was attached to a file on vda, with two partitions; loop1-7 were not attached. */
	assert_true(kind_of(&t1, "vda")->in_total);
	assert_true(kind_of(&t1, "zram0")->in_total);
	assert_true(kind_of(&t1, "loop1")->in_total);
	assert_true(kind_of(&t1, "loop0")->stacked);
	assert_false(kind_of(&t1, "loop0")->in_total);
	assert_true(kind_of(&t1, "loop0p1")->partition);
	assert_true(kind_of(&t1, "loop0p2")->partition);
	assert_false(kind_of(&t1, "loop0p2")->in_total);

	/* dd oflag=direct bs=1M on vda for the 3 seconds (numbers worked out from the two files). */
	a = diskstats_find(&t0, "vda");
	b = diskstats_find(&t1, "vda");
	assert_int_equal(b->nfields, 17);
	disk_ext_compute(a, b, seconds, &x);
	assert_near(x.r_s, 0);
	assert_near(x.w_s, 6360 / 3.0);               /* 39982 - 33622 */
	assert_near(x.wkb_s, 8085504 / 2 / 3.0);      /* 23567416 - 15481912 sectors: 1347584 KiB/s */
	assert_near(x.wareq_sz, 8085504 / 2 / 6360.0); /* 635.65 KiB: 1 MiB writes, split */
	assert_near(x.w_await, 3460 / 6360.0);        /* 103599 - 100139 ms */
	assert_near(x.wrqm_s, 0);
	assert_near(x.aqu_sz, 3459 / 3.0 / 1000);     /* 172661 - 169202 */
	assert_near(x.util, 2260 / 3.0 / 10);         /* 34056 - 31796: 75.33 % */
	assert_true(x.has_discards && x.has_flushes);

	a = diskstats_find(&t0, "loop0");
	b = diskstats_find(&t1, "loop0");
	disk_ext_compute(a, b, seconds, &x);
	assert_near(x.r_s, (70016 - 22530) / 3.0);
	assert_near(x.w_s, (35074 - 11266) / 3.0);
	assert_near(x.wareq_sz, 64); /* dd bs=64k on loop0p1 */
	assert_near(x.rareq_sz, (2769232 - 1249680) / 2.0 / (70016 - 22530));

	/* The total holds vda's writes once: loop0's own (buffered in vda's page cache) are not added. */
	for (i = 0; i < t0.count; i++)
		if (t0.kind[i].in_total)
			total0 += t0.disk[i].wr_sectors;
	for (i = 0; i < t1.count; i++)
		if (t1.kind[i].in_total)
			total1 += t1.disk[i].wr_sectors;
	assert_int_equal(total1 - total0, 8085504);

	diskstats_free(&t0);
	diskstats_free(&t1);
}

static void test_ext_by_hand(void **state)
{
	/* Two seconds apart; every delta chosen so the figures come out round. */
	struct disk_stats before = {
		.nfields = 17,
		.rd_ios = 1000, .rd_merges = 100, .rd_sectors = 80000, .rd_ticks = 5000,
		.wr_ios = 2000, .wr_merges = 500, .wr_sectors = 160000, .wr_ticks = 12000,
		.io_ticks = 30000, .time_in_queue = 90000,
		.dc_ios = 10, .dc_merges = 0, .dc_sectors = 20480, .dc_ticks = 40,
		.fl_ios = 50, .fl_ticks = 100,
	};
	struct disk_stats after = before;
	struct disk_ext x;
	(void)state;

	after.rd_ios += 400;        /* r/s 200 */
	after.rd_merges += 100;     /* rrqm/s 50, %rrqm 100 / (100 + 400) = 20 */
	after.rd_sectors += 25600;  /* rkB/s 25600 / 2 / 2 = 6400, rareq-sz 25600 / 400 / 2 = 32 */
	after.rd_ticks += 800;      /* r_await 800 / 400 = 2 */
	after.wr_ios += 600;        /* w/s 300 */
	after.wr_merges += 200;     /* wrqm/s 100, %wrqm 200 / 800 = 25 */
	after.wr_sectors += 76800;  /* wkB/s 19200, wareq-sz 64 */
	after.wr_ticks += 3000;     /* w_await 5 */
	after.dc_ios += 4;          /* d/s 2 */
	after.dc_sectors += 8192;   /* dkB/s 2048, dareq-sz 1024 */
	after.dc_ticks += 20;       /* d_await 5 */
	after.fl_ios += 10;         /* f/s 5 */
	after.fl_ticks += 30;       /* f_await 3 */
	after.io_ticks += 1500;     /* %util 1500 ms of 2000 = 75 */
	after.time_in_queue += 4200; /* aqu-sz 4200 / 2000 = 2.1 */

	disk_ext_compute(&before, &after, 2.0, &x);
	assert_near(x.r_s, 200);
	assert_near(x.w_s, 300);
	assert_near(x.d_s, 2);
	assert_near(x.f_s, 5);
	assert_near(x.rkb_s, 6400);
	assert_near(x.wkb_s, 19200);
	assert_near(x.dkb_s, 2048);
	assert_near(x.rrqm_s, 50);
	assert_near(x.wrqm_s, 100);
	assert_near(x.drqm_s, 0);
	assert_near(x.rrqm_pct, 20);
	assert_near(x.wrqm_pct, 25);
	assert_near(x.drqm_pct, 0);
	assert_near(x.r_await, 2);
	assert_near(x.w_await, 5);
	assert_near(x.d_await, 5);
	assert_near(x.f_await, 3);
	assert_near(x.rareq_sz, 32);
	assert_near(x.wareq_sz, 64);
	assert_near(x.dareq_sz, 1024);
	assert_near(x.aqu_sz, 2.1);
	assert_near(x.util, 75);
	assert_true(x.has_discards && x.has_flushes);

	/* The measured interval, not a nominal one: 2.5 s. */
	disk_ext_compute(&before, &after, 2.5, &x);
	assert_near(x.r_s, 160);
	assert_near(x.util, 60);
	assert_near(x.r_await, 2); /* awaits and sizes do not depend on time */

	/* Busy longer than the interval (io_ticks runs ahead of the sampler's clock): at most 100. */
	after.io_ticks = before.io_ticks + 2100;
	disk_ext_compute(&before, &after, 2.0, &x);
	assert_near(x.util, 100);

	/* Old kernels: no discard or flush fields, so those figures are unknown. */
	before.nfields = 11;
	disk_ext_compute(&before, &after, 2.0, &x);
	assert_false(x.has_discards || x.has_flushes);
	before.nfields = 15;
	disk_ext_compute(&before, &after, 2.0, &x);
	assert_true(x.has_discards);
	assert_false(x.has_flushes);
}

/* The same from two /proc/diskstats lines as the kernel writes them (17 fields), every figure worked out by hand. */
static void test_ext_from_lines(void **state)
{
	static const char one[] =
	    "   8       0 sda 1000 100 80000 5000 2000 500 160000 12000 0 30000 90000 10 2 20480 40 50 100\n";
	static const char two[] =
	    "   8       0 sda 1400 200 105600 5800 2600 700 236800 15000 3 31500 94200 14 6 28672 60 60 130\n";
	struct diskstats a = { 0 }, b = { 0 };
	struct disk_ext x;
	(void)state;

	assert_int_equal(diskstats_parse(one, sizeof(one) - 1, &a), 0);
	assert_int_equal(diskstats_parse(two, sizeof(two) - 1, &b), 0);
	assert_int_equal(a.count, 1);
	assert_int_equal(b.disk[0].nfields, 17);
	disk_ext_compute(&a.disk[0], &b.disk[0], 2.0, &x);
	assert_near(x.r_s, 200);      /* (1400 - 1000) / 2 */
	assert_near(x.rkb_s, 6400);   /* (105600 - 80000) / 2 / 2 */
	assert_near(x.rrqm_s, 50);    /* (200 - 100) / 2 */
	assert_near(x.rrqm_pct, 20);  /* 100 / (100 + 400) * 100 */
	assert_near(x.r_await, 2);    /* (5800 - 5000) / 400 */
	assert_near(x.rareq_sz, 32);  /* 25600 / 400 / 2 */
	assert_near(x.w_s, 300);      /* 600 / 2 */
	assert_near(x.wkb_s, 19200);  /* 76800 / 2 / 2 */
	assert_near(x.wrqm_s, 100);   /* 200 / 2 */
	assert_near(x.wrqm_pct, 25);  /* 200 / (200 + 600) * 100 */
	assert_near(x.w_await, 5);    /* 3000 / 600 */
	assert_near(x.wareq_sz, 64);  /* 76800 / 600 / 2 */
	assert_near(x.d_s, 2);        /* (14 - 10) / 2 */
	assert_near(x.dkb_s, 2048);   /* 8192 / 2 / 2 */
	assert_near(x.drqm_s, 2);     /* (6 - 2) / 2 */
	assert_near(x.drqm_pct, 50);  /* 4 / (4 + 4) * 100 */
	assert_near(x.d_await, 5);    /* 20 / 4 */
	assert_near(x.dareq_sz, 1024); /* 8192 / 4 / 2 */
	assert_near(x.f_s, 5);        /* (60 - 50) / 2 */
	assert_near(x.f_await, 3);    /* 30 / 10 */
	assert_near(x.aqu_sz, 2.1);   /* (94200 - 90000) / 2 / 1000 */
	assert_near(x.util, 75);      /* (31500 - 30000) / 2 / 10 */
	assert_true(x.has_discards && x.has_flushes);
	diskstats_free(&a);
	diskstats_free(&b);
}

static void assert_all_finite(const struct disk_ext *x)
{
	const double *v = &x->r_s;
	const double *end = &x->util;

	for (; v <= end; v++)
		if (!isfinite(*v))
			fail_msg("figure %d is %g", (int)(v - &x->r_s), *v);
}

static void test_ext_no_requests(void **state)
{
	struct disk_stats same = {.nfields = 17, .rd_ios = 5, .rd_ticks = 7, .wr_ios = 9, .io_ticks = 100};
	struct disk_ext x;
	(void)state;

	disk_ext_compute(&same, &same, 1.0, &x);
	assert_all_finite(&x);
	assert_near(x.r_await, 0);
	assert_near(x.w_await, 0);
	assert_near(x.f_await, 0);
	assert_near(x.rareq_sz, 0);
	assert_near(x.rrqm_pct, 0);
	assert_near(x.util, 0);

	/* Time spent but no request completed (one still in flight): awaits 0, util counts. */
	{
		struct disk_stats later = same;
		later.rd_ticks += 300;
		later.io_ticks += 500;
		later.in_flight = 1;
		disk_ext_compute(&same, &later, 1.0, &x);
		assert_near(x.r_await, 0);
		assert_near(x.util, 50);
	}

	/* No time, or no sensible time: no rate, and nothing infinite. */
	{
		struct disk_stats later = same;
		later.rd_ios += 10;
		later.rd_ticks += 20;
		disk_ext_compute(&same, &later, 0, &x);
		assert_all_finite(&x);
		assert_near(x.r_s, 0);
		assert_near(x.r_await, 2);
		disk_ext_compute(&same, &later, -1, &x);
		assert_near(x.r_s, 0);
		disk_ext_compute(&same, &later, NAN, &x);
		assert_all_finite(&x);
		disk_ext_compute(&same, &later, INFINITY, &x);
		assert_all_finite(&x);
	}
}

static void test_ext_backwards(void **state)
{
	struct disk_stats before = {
		.nfields = 17,
		.rd_ios = 1000, .rd_merges = 100, .rd_sectors = 80000, .rd_ticks = 5000,
		.wr_ios = 2000, .wr_merges = 500, .wr_sectors = 160000, .wr_ticks = 12000,
		.io_ticks = 30000, .time_in_queue = 90000,
	};
	struct disk_stats after = before;
	struct disk_ext x;
	(void)state;

	/* Writes went backwards, merges on: every write figure that uses wr_ios is 0, not a spike. */
	after.wr_ios = 1990;
	after.wr_merges += 200;
	after.wr_sectors += 1600;
	after.wr_ticks += 30;
	after.rd_ios += 10;
	after.rd_ticks += 40;
	disk_ext_compute(&before, &after, 1.0, &x);
	assert_all_finite(&x);
	assert_near(x.w_s, 0);
	assert_near(x.w_await, 0);
	assert_near(x.wareq_sz, 0);
	assert_near(x.wrqm_pct, 0);
	assert_near(x.wrqm_s, 200);  /* merges themselves moved forward */
	assert_near(x.wkb_s, 800);
	assert_near(x.r_s, 10);
	assert_near(x.r_await, 4);   /* reads are unaffected */

	/* A small drop of a ms counter is not a wrap: 0. */
	after = before;
	after.rd_ios += 10;
	after.rd_ticks -= 10;
	after.io_ticks -= 1;
	after.time_in_queue -= 5;
	disk_ext_compute(&before, &after, 1.0, &x);
	assert_near(x.r_s, 10);
	assert_near(x.r_await, 0);
	assert_near(x.util, 0);
	assert_near(x.aqu_sz, 0);

	/* ms counters are 32 bits in the kernel: past 4294967295 they start again from 0. */
	before.rd_ticks = 4294967000u;
	before.time_in_queue = 4294967290u;
	before.io_ticks = 4294967000u;
	after = before;
	after.rd_ios += 4;
	after.rd_ticks = 200;         /* 296 + 200 = 496 ms */
	after.time_in_queue = 1194;   /* 6 + 1194 = 1200 ms */
	after.io_ticks = 204;         /* 296 + 204 = 500 ms */
	disk_ext_compute(&before, &after, 1.0, &x);
	assert_near(x.r_await, 124);
	assert_near(x.aqu_sz, 1.2);
	assert_near(x.util, 50);

	/* Everything smaller: the device was removed and added back. Nothing but zeros. */
	{
		struct disk_stats reborn = {.nfields = 17, .rd_ios = 3, .rd_sectors = 24, .rd_ticks = 2, .io_ticks = 2,
					    .time_in_queue = 2};
		disk_ext_compute(&before, &reborn, 1.0, &x);
		assert_near(x.r_s, 0);
		assert_near(x.rkb_s, 0);
		assert_near(x.r_await, 0);
		assert_near(x.util, 0);
		assert_near(x.aqu_sz, 0);
	}
}

static void write_file(const char *root, const char *path, const char *text)
{
	char *full;
	FILE *f;

	assert_true(asprintf(&full, "%s/%s", root, path) > 0);
	/* "w" truncates in place: the collector's open file sees the new text, as it would procfs's. */
	f = fopen(full, "w");
	if (!f)
		fail_msg("cannot write %s", full);
	fputs(text, f);
	fclose(f);
	free(full);
}

static void make_dir(const char *root, const char *path)
{
	char *full;

	assert_true(asprintf(&full, "%s/%s", root, path) > 0);
	assert_int_equal(mkdir(full, 0755), 0);
	free(full);
}

static void remove_tree(const char *root, const char *path)
{
	char *command;

	assert_true(asprintf(&command, "rm -rf '%s/%s'", root, path) > 0);
	assert_int_equal(system(command), 0);
	free(command);
}

static void test_devices_come_and_go(void **state)
{
	char *root = unit_tmpdir();
	struct diskstats s;
	(void)state;

	make_dir(root, "proc");
	make_dir(root, "sys");
	make_dir(root, "sys/class");
	make_dir(root, "sys/class/block");
	make_dir(root, "sys/class/block/sda");
	write_file(root, "sys/class/block/sda/removable", "0\n");
	write_file(root, "proc/diskstats", "   8       0 sda 10 0 80 5 0 0 0 0 0 5 5 0 0 0 0 0 0\n");
	assert_int_equal(sysroot_set(root), 0);
	assert_int_equal(diskstats_read(&s), 0);
	assert_int_equal(s.count, 1);
	assert_true(s.kind[0].in_total);
	diskstats_free(&s);

	/* loop1 appears, not yet attached: a whole device of its own. */
	make_dir(root, "sys/class/block/loop1");
	write_file(root, "sys/class/block/loop1/removable", "0\n");
	write_file(root, "proc/diskstats", "   7       1 loop1 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
					   "   8       0 sda 12 0 96 6 0 0 0 0 0 6 6 0 0 0 0 0 0\n");
	assert_int_equal(diskstats_read(&s), 0);
	assert_int_equal(s.count, 2);
	assert_true(kind_of(&s, "loop1")->in_total);
	assert_true(kind_of(&s, "sda")->in_total);
	diskstats_free(&s);

	/* Attached between two samples: stacked from the next sample on, nothing stale remembered. */
	make_dir(root, "sys/class/block/loop1/loop");
	write_file(root, "sys/class/block/loop1/loop/backing_file", "/srv/image\n");
	assert_int_equal(diskstats_read(&s), 0);
	assert_true(kind_of(&s, "loop1")->stacked);
	assert_false(kind_of(&s, "loop1")->in_total);
	diskstats_free(&s);

	/* It gets a partition, and sda a holder. */
	make_dir(root, "sys/class/block/loop1p1");
	write_file(root, "sys/class/block/loop1p1/partition", "1\n");
	make_dir(root, "sys/class/block/sda/holders");
	write_file(root, "sys/class/block/sda/holders/md0", "");
	write_file(root, "proc/diskstats", "   7       1 loop1 3 0 24 1 0 0 0 0 0 1 1 0 0 0 0 0 0\n"
					   " 259       0 loop1p1 3 0 24 1 0 0 0 0 0 1 1 0 0 0 0 0 0\n"
					   "   8       0 sda 12 0 96 6 0 0 0 0 0 6 6 0 0 0 0 0 0\n");
	assert_int_equal(diskstats_read(&s), 0);
	assert_int_equal(s.count, 3);
	assert_true(kind_of(&s, "loop1p1")->partition);
	assert_true(kind_of(&s, "sda")->has_holders);
	diskstats_free(&s);

	/* Detached and gone, and sda with it; sda comes back as a partition-less removable disk. */
	remove_tree(root, "sys/class/block/loop1p1");
	remove_tree(root, "sys/class/block/loop1");
	write_file(root, "proc/diskstats", "   8       0 sda 12 0 96 6 0 0 0 0 0 6 6 0 0 0 0 0 0\n");
	assert_int_equal(diskstats_read(&s), 0);
	assert_int_equal(s.count, 1);
	assert_null(diskstats_find(&s, "loop1"));
	diskstats_free(&s);
	write_file(root, "proc/diskstats", "");
	remove_tree(root, "sys/class/block/sda");
	assert_int_equal(diskstats_read(&s), 0);
	assert_int_equal(s.count, 0);
	diskstats_free(&s);
	make_dir(root, "sys/class/block/sda");
	write_file(root, "sys/class/block/sda/removable", "1\n");
	write_file(root, "proc/diskstats", "   8       0 sda 1 0 8 1 0 0 0 0 0 1 1 0 0 0 0 0 0\n");
	assert_int_equal(diskstats_read(&s), 0);
	assert_true(kind_of(&s, "sda")->removable);
	assert_false(kind_of(&s, "sda")->has_holders);
	diskstats_free(&s);

	/* A device sysfs does not know: its kind is unknown, so it is in no total. */
	write_file(root, "proc/diskstats", "   8       0 sda 1 0 8 1 0 0 0 0 0 1 1 0 0 0 0 0 0\n"
					   "   8      16 sdb 1 0 8 1 0 0 0 0 0 1 1 0 0 0 0 0 0\n");
	assert_int_equal(diskstats_read(&s), 0);
	assert_false(kind_of(&s, "sdb")->in_sysfs);
	assert_false(kind_of(&s, "sdb")->in_total);
	assert_true(kind_of(&s, "sda")->in_total);
	diskstats_free(&s);

	/* A root without the file: an error, and nothing made up. */
	remove_tree(root, "proc/diskstats");
	{
		char *other;
		assert_true(asprintf(&other, "%s/sys", root) > 0);
		assert_int_equal(sysroot_set(other), 0);
		assert_int_equal(diskstats_read(&s), -ENOENT);
		assert_int_equal(s.count, 0);
		free(other);
	}
	assert_int_equal(sysroot_set("/"), 0);
	unit_rmtree(root);
}

/*
 * How devices stack is remembered while the devices stay the same, except for drivers
 * whose slaves change under one device (dm, md): a dm table loaded between samples shows
 * at once; a loop device is stacked by its major, bound or not.
 */
static void test_stacking_remembered(void **state)
{
	char *root = unit_tmpdir();
	struct diskstats s;
	static const char lines[] = "   7       0 loop0 1 0 8 1 0 0 0 0 0 1 1 0 0 0 0 0 0\n"
				    "   8       0 sda 10 0 80 5 0 0 0 0 0 5 5 0 0 0 0 0 0\n"
				    " 253       0 dm-0 2 0 16 1 0 0 0 0 0 1 1 0 0 0 0 0 0\n";
	(void)state;

	make_dir(root, "proc");
	make_dir(root, "sys");
	make_dir(root, "sys/class");
	make_dir(root, "sys/class/block");
	make_dir(root, "sys/class/block/loop0");
	make_dir(root, "sys/class/block/sda");
	make_dir(root, "sys/class/block/dm-0");
	make_dir(root, "sys/class/block/dm-0/slaves");
	write_file(root, "proc/devices", "Character devices:\n  7 vcs\n\nBlock devices:\n  7 loop\n  8 sd\n"
					 "253 device-mapper\n");
	write_file(root, "proc/diskstats", lines);
	assert_int_equal(sysroot_set(root), 0);
	assert_int_equal(diskstats_read(&s), 0);
	assert_true(kind_of(&s, "loop0")->stacked); /* by its major: no loop/ in sysfs */
	assert_true(kind_of(&s, "sda")->in_total);
	assert_true(kind_of(&s, "dm-0")->in_total); /* no table yet */
	diskstats_free(&s);

	/* A table loaded on sda, with no device added: dm-0 is looked at again, sda is not. */
	make_dir(root, "sys/class/block/dm-0/slaves/sda");
	make_dir(root, "sys/class/block/sda/slaves");
	make_dir(root, "sys/class/block/sda/slaves/bogus");
	assert_int_equal(diskstats_read(&s), 0);
	assert_true(kind_of(&s, "dm-0")->stacked);
	assert_false(kind_of(&s, "dm-0")->in_total);
	assert_true(kind_of(&s, "sda")->in_total); /* remembered: sd devices do not restack */
	diskstats_free(&s);

	/* A device added: everything is looked at again. */
	make_dir(root, "sys/class/block/sdb");
	{
		char *more;
		assert_true(asprintf(&more, "%s   8      16 sdb 1 0 8 1 0 0 0 0 0 1 1 0 0 0 0 0 0\n", lines) > 0);
		write_file(root, "proc/diskstats", more);
		free(more);
	}
	assert_int_equal(diskstats_read(&s), 0);
	assert_int_equal(s.count, 4);
	assert_true(kind_of(&s, "sda")->stacked);
	assert_true(kind_of(&s, "sdb")->in_total);
	diskstats_free(&s);
	assert_int_equal(sysroot_set("/"), 0);
	unit_rmtree(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_17_fields),
		cmocka_unit_test(test_parse_old_kernels),
		cmocka_unit_test(test_parse_odd_but_valid),
		cmocka_unit_test(test_parse_malformed),
		cmocka_unit_test(test_read_handmade),
		cmocka_unit_test(test_read_live),
		cmocka_unit_test(test_ext_by_hand),
		cmocka_unit_test(test_ext_from_lines),
		cmocka_unit_test(test_ext_no_requests),
		cmocka_unit_test(test_ext_backwards),
		cmocka_unit_test(test_devices_come_and_go),
		cmocka_unit_test(test_stacking_remembered),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
