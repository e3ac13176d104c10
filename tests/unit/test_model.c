/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_model.c: the figures of src/model/ from samples whose counts the test wrote (cpu shares,
 * a disks' total, PSI, memory used, page-cache hits), and df's Use% held to df(1) itself.
 */
#include "unit.h"

#include <math.h>
#include <sys/statvfs.h>

#include "model/cache.h"
#include "model/cpu.h"
#include "model/disk.h"
#include "model/filesystem.h"
#include "model/memory.h"
#include "model/pressure.h"

static void procstat_of(const char *text, struct system_sample *s)
{
	memset(s, 0, sizeof(*s));
	assert_int_equal(procstat_parse(text, strlen(text), &s->procstat), 0);
	s->have = SYS_PROCSTAT;
}

/* 400 jiffies pass on cpu1: user 100 + nice 20, system 80, idle 160, iowait 40; cpu7 is not there. */
static void test_cpu_shares(void **state)
{
	struct system_sample a, b, none = { 0 };
	struct cpu_shares c;
	(void)state;

	procstat_of("cpu  1000 100 500 9000 300 0 0 0 0 0\n"
		    "cpu0 500 50 250 4500 150 0 0 0 0 0\ncpu1 500 50 250 4500 150 0 0 0 0 0\n",
		    &a);
	procstat_of("cpu  1100 120 580 9160 340 0 0 0 0 0\n"
		    "cpu0 500 50 250 4500 150 0 0 0 0 0\ncpu1 600 70 330 4660 190 0 0 0 0 0\n",
		    &b);
	assert_true(sample_cpu_shares(&a, &b, "1", &c));
	assert_true(fabs(c.user - 30) < 1e-9);   /* (100 + 20) / 400 */
	assert_true(fabs(c.system - 20) < 1e-9); /* 80 / 400 */
	assert_true(fabs(c.idle - 40) < 1e-9);
	assert_true(fabs(c.iowait - 10) < 1e-9);
	assert_true(sample_cpu_shares(&a, &b, "total", &c));
	assert_true(fabs(c.user - 30) < 1e-9);
	/* cpu0 did nothing: no share, not a division by zero. */
	assert_true(sample_cpu_shares(&a, &b, "0", &c));
	assert_true(c.user == 0 && c.idle == 0);
	assert_false(sample_cpu_shares(&a, &b, "7", &c));
	assert_false(sample_cpu_shares(&a, &b, "x", &c));
	/* The first line: since boot, from zero. */
	assert_true(sample_cpu_shares(&none, &b, "1", &c));
	assert_true(fabs(c.idle - 100.0 * 4660 / (600 + 70 + 330 + 4660 + 190)) < 1e-9);
	procstat_free(&a.procstat);
	procstat_free(&b.procstat);
}

static void disks_of(const char *text, struct system_sample *s)
{
	memset(s, 0, sizeof(*s));
	assert_int_equal(diskstats_parse(text, strlen(text), &s->disks), 0);
	s->have = SYS_DISKSTATS;
	for (unsigned i = 0; i < s->disks.count; i++) {
		s->disks.kind[i].in_sysfs = true;
		s->disks.kind[i].partition = strchr(s->disks.disk[i].name, '1') != NULL;
		s->disks.kind[i].in_total = !s->disks.kind[i].partition;
	}
}

/*
 * The total sums whole disks (sda, sdb), not sda1 (a partition, counted in sda), and leaves
 * out sdc, whose counts went back (replaced between the samples): neither a spike nor a dip.
 */
static void test_disk_total(void **state)
{
	struct system_sample a, b;
	struct disk_stats x, y;
	struct disk_ext e;
	(void)state;

	disks_of("8 0 sda 100 0 800 50 10 0 80 5 0 40 55\n8 1 sda1 90 0 720 45 10 0 80 5 0 40 50\n"
		 "8 16 sdb 20 0 160 10 0 0 0 0 0 10 10\n8 32 sdc 5000 0 40000 10 0 0 0 0 0 10 10\n",
		 &a);
	disks_of("8 0 sda 300 0 2400 150 30 0 240 15 0 240 165\n8 1 sda1 290 0 2320 145 30 0 240 15 0 240 160\n"
		 "8 16 sdb 70 0 560 35 0 0 0 0 0 35 35\n8 32 sdc 4 0 32 1 0 0 0 0 0 1 1\n",
		 &b);
	assert_true(sample_disk_counters(&a, &b, "total", &x, &y));
	assert_int_equal(y.rd_ios - x.rd_ios, 200 + 50);
	assert_int_equal(y.wr_sectors - x.wr_sectors, 160);
	assert_true(sample_disk_counters(&a, &b, "sda1", &x, &y));
	assert_int_equal(y.rd_ios - x.rd_ios, 200);
	assert_false(sample_disk_counters(&a, &b, "sdz", &x, &y));
	/* iostat -x of sda over 2 s: 100 r/s, 800 sectors/s (400 KiB/s), 200 ms busy in 2 s (10 %). */
	assert_true(sample_disk_ext(&a, &b, "sda", 2.0, &e));
	assert_true(fabs(e.r_s - 100) < 1e-9 && fabs(e.rkb_s - 400) < 1e-9 && fabs(e.util - 10) < 1e-9);
	assert_true(fabs(e.r_await - 0.5) < 1e-9); /* 100 ms over 200 reads */
	assert_false(sample_disk_ext(&a, &b, "total", 2.0, &e));
	diskstats_free(&a.disks);
	diskstats_free(&b.disks);
}

static void test_psi(void **state)
{
	(void)state;
	assert_true(fabs(psi_share(1000000, 1250000, 0.5) - 50) < 1e-9);
	assert_true(psi_share(1250000, 1000000, 0.5) == 0); /* went back */
	assert_true(psi_share(0, 1000, 0) == 0);
}

/* dstat's and free(1)'s used: total - free - buffers - cached + shmem - sreclaimable (bytes). */
static void test_memory(void **state)
{
	struct meminfo m = { .mem_total = 1000, .mem_free = 200, .buffers = 50, .cached = 300 };
	struct system_sample s = { .have = SYS_SWAPS };
	struct swap_area areas[2] = { { .size = 100, .used = 30 }, { .size = 50, .used = 60 } };
	double used, free_bytes;
	(void)state;

	m.shmem = 40;
	m.sreclaimable = 10;
	assert_true(mem_used(&m) == 1000 - 200 - 50 - 300 + 40 - 10);
	m.shmem = m.sreclaimable = PROCFS_UNKNOWN;
	assert_true(mem_used(&m) == 450);
	m.mem_free = 990;
	assert_true(mem_used(&m) == 0); /* never below 0 */
	strcpy(areas[0].name, "/dev/vdb");
	strcpy(areas[1].name, "/swapfile");
	s.swaps.count = 2;
	s.swaps.area = areas;
	assert_true(sample_swap(&s, "total", &used, &free_bytes));
	assert_true(used == 90 && free_bytes == 70); /* an area whose used passes its size has none free */
	assert_true(sample_swap(&s, "/swapfile", &used, &free_bytes) && used == 60 && free_bytes == 0);
	assert_false(sample_swap(&s, "/dev/nothing", &used, &free_bytes));
}

static void test_cache(void **state)
{
	struct cache_counters a = { .reads = 10, .maps = 5, .hits = 20, .misses = 7 }, b = a, d;
	(void)state;

	assert_int_equal(cache_hits(&a), 15); /* never above what was read or mapped */
	a.hits = 12;
	assert_int_equal(cache_hits(&a), 12);
	b.reads = 30;
	b.misses = 3; /* went back */
	cache_delta(&a, &b, &d);
	assert_int_equal(d.reads, 20);
	assert_int_equal(d.misses, 0);
	assert_int_equal(d.hits, 8);
}

/* df's Use% of the test's own filesystem is the one df prints (it rounds up); writes of others may move it once. */
static void test_df(void **state)
{
	const char *dir = getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR") : "/tmp";
	bool same = false;
	(void)state;

	for (int round = 0; round < 5 && !same; round++) {
		struct statvfs v;
		char command[4200], line[64];
		int percent = -1;
		FILE *p;

		snprintf(command, sizeof(command), "df --output=pcent '%s'", dir);
		assert_int_equal(statvfs(dir, &v), 0);
		p = popen(command, "r");
		assert_non_null(p);
		while (fgets(line, sizeof(line), p))
			sscanf(line, " %d%%", &percent);
		assert_int_equal(pclose(p), 0);
		assert_true(percent >= 0);
		same = (int)ceil(df_use_percent(v.f_blocks, v.f_bfree, v.f_bavail)) == percent;
	}
	assert_true(same);
	assert_true(df_use_percent(0, 0, 0) == 0);
	assert_true(fabs(df_use_percent(100, 40, 30) - 100.0 * 60 / 90) < 1e-9); /* root's reserve is not "available" */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpu_shares), cmocka_unit_test(test_disk_total), cmocka_unit_test(test_psi),
		cmocka_unit_test(test_memory),     cmocka_unit_test(test_cache),      cmocka_unit_test(test_df),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
