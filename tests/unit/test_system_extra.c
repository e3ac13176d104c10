/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_system_extra.c: the parsers of iolens stat's dstat plugins (vmstat's reclaim sums, zoneinfo,
 * /proc/PID/stat) on texts as kernels write them, bad input, and the live system.
 */
#include "unit.h"

#include <errno.h>
#include <unistd.h>

#include "collect/procfs.h"
#include "collect/sysroot.h"
#include "collect/system_extra.h"

/* The text in a buffer of exactly its length, with no NUL after it: ASan sees a parser reading on. */
static char *exact_copy(const char *text, size_t *len)
{
	char *copy;

	*len = strlen(text);
	copy = malloc(*len ? *len : 1);
	assert_non_null(copy);
	memcpy(copy, text, *len);
	return copy;
}

static void test_vm_adv(void **state)
{
	/* A 6.1 kernel's names: pgsteal and pgscan by kswapd, direct and khugepaged, allocstall by zone. */
	static const char text[] = "nr_free_pages 100\n"
				   "pgsteal_kswapd 10\npgsteal_direct 20\npgsteal_khugepaged 1\npgsteal_anon "
				   "5\npgsteal_file 26\n"
				   "pgscan_kswapd 100\npgscan_direct 200\npgscan_khugepaged 7\npgscan_direct_throttle "
				   "9\n"
				   "pgscan_anon 50\npgscan_file 257\n"
				   "pageoutrun 3\nallocstall_dma 1\nallocstall_dma32 2\nallocstall_normal "
				   "4\nallocstall_movable 8\n";
	struct vm_adv v;
	size_t len;
	char *copy = exact_copy(text, &len);

	(void)state;
	assert_int_equal(vm_adv_parse(copy, len, &v), 0);
	/* As dstat's fnmatch patterns: pgsteal_*, pgscan_kswapd_*, pgscan_direct_*; allocstall in every zone. */
	assert_true(v.pgsteal == 10 + 20 + 1 + 5 + 26);
	assert_true(v.pgscan_kswapd == 100);
	assert_true(v.pgscan_direct == 200);
	assert_true(v.pageoutrun == 3);
	assert_true(v.allocstall == 1 + 2 + 4 + 8);
	free(copy);

	/* An old kernel: allocstall alone, pgsteal and pgscan by zone. */
	static const char old[] = "pgsteal_kswapd_normal 4\npgsteal_direct_normal 6\npgscan_kswapd_normal 40\n"
				  "pgscan_direct_dma32 2\npgscan_direct_normal 60\npageoutrun 7\nallocstall 9\n";
	copy = exact_copy(old, &len);
	assert_int_equal(vm_adv_parse(copy, len, &v), 0);
	assert_true(v.pgsteal == 10);
	assert_true(v.pgscan_kswapd == 40);
	assert_true(v.pgscan_direct == 62);
	assert_true(v.pageoutrun == 7);
	assert_true(v.allocstall == 9);
	free(copy);

	/* None of them, or a number that is not one. */
	copy = exact_copy("nr_free_pages 1\n", &len);
	assert_int_equal(vm_adv_parse(copy, len, &v), -EINVAL);
	free(copy);
	copy = exact_copy("pageoutrun x\n", &len);
	assert_int_equal(vm_adv_parse(copy, len, &v), -EINVAL);
	free(copy);
	assert_int_equal(vm_adv_parse("", 0, &v), -EINVAL);
}

static void test_zones(void **state)
{
	/* Two nodes; the per-cpu pagesets' "high:" and "high_min:" after the zone's own high are not it. */
	static const char text[] = "Node 0, zone      DMA\n  per-node stats\n  pages free     3840\n        boost    "
				   "0\n"
				   "        min      4\n        low      5\n        high     6\n"
				   "Node 0, zone    DMA32\n  pages free     772807\n        min      7000\n        "
				   "high     9096\n"
				   "        spanned  1044480\n  pagesets\n    cpu: 0\n              count: 1\n"
				   "              high:     3790\n              high_min: 3790\n"
				   "Node 0, zone   Normal\n  pages free     1038124\n        high     16000\n"
				   "              high:     99\n"
				   "Node 1, zone   Normal\n  pages free     100\n        high     20\n"
				   "Node 1, zone  Movable\n  pages free     0\n        high     0\n";
	struct zones z;
	size_t len;
	char *copy = exact_copy(text, &len);

	(void)state;
	assert_int_equal(zones_parse(copy, len, &z), 0);
	assert_true(z.dma32_free == 772807);
	assert_true(z.dma32_high == 9096);
	assert_true(z.normal_free == 1038124 + 100); /* the nodes summed */
	assert_true(z.normal_high == 16000 + 20);
	assert_int_equal(z.has_dma32, 1);
	assert_int_equal(z.has_normal, 2);
	free(copy);

	/* A machine without DMA32 (32-bit, some arm64): its columns unknown, not 0. */
	copy = exact_copy("Node 0, zone   Normal\n  pages free     5\n        high     6\n", &len);
	assert_int_equal(zones_parse(copy, len, &z), 0);
	assert_int_equal(z.has_dma32, 0);
	assert_true(z.normal_free == 5 && z.normal_high == 6);
	free(copy);
	/* Cut short, garbage: no crash. */
	copy = exact_copy("Node 0, zone", &len);
	assert_int_equal(zones_parse(copy, len, &z), 0);
	assert_int_equal(z.has_dma32 + z.has_normal, 0);
	free(copy);
	assert_int_equal(zones_parse("", 0, &z), -EINVAL);
}

static void test_proc_stat(void **state)
{
	struct proc_entry e;

	(void)state;
	/* A name with spaces and parentheses: the last ')' ends it. rsslim (field 25) is beyond 2^63. */
	assert_int_equal(proc_stat_parse("42 (a) (b c)) S 1 42 42 0 -1 4194560 100 0 0 0 700 300 0 0 20 0 1 0 12345 "
					 "1000000 250 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n",
					 &e),
			 0);
	assert_string_equal(e.name, "a) (b c)");
	assert_true(e.cpu_ticks == 1000);
	assert_true(e.start_ticks == 12345);
	assert_true(e.rss_pages == 250);
	/* Too long a name is cut to what comm holds. */
	assert_int_equal(proc_stat_parse("1 (0123456789abcdefXYZ) R 0 0 0 0 0 0 0 0 0 0 1 2 0 0 0 0 1 0 5 0 3\n", &e),
			 0);
	assert_string_equal(e.name, "0123456789abcde");
	assert_true(e.cpu_ticks == 3 && e.rss_pages == 3);
	/* Malformed: no parentheses, cut short, not numbers. */
	assert_int_equal(proc_stat_parse("1 name S 0", &e), -EINVAL);
	assert_int_equal(proc_stat_parse("1 (x) S 1 2 3", &e), -EINVAL);
	assert_int_equal(proc_stat_parse("1 (x) S a b c d e f g h i j k l m n o p q r s t u", &e), -EINVAL);
	assert_int_equal(proc_stat_parse("1 (x)", &e), -EINVAL);
	assert_int_equal(proc_stat_parse(")(", &e), -EINVAL);
}

/* The live system: this process is in the table, with its name; the count of processes is near it. */
static void test_live(void **state)
{
	struct proc_table table;
	struct proc_entry self = { .pid = (int)getpid() };
	const struct proc_entry *found;
	struct vm_adv v;
	struct zones z;
	uint64_t count;
	char text[1024];

	(void)state;
	assert_int_equal(sysroot_set("/"), 0);
	assert_int_equal(proc_table_read(&table, PROCS_IO | PROCS_SCHED | PROCS_OOM), 0);
	snprintf(text, sizeof(text), "/proc/%d/stat", (int)getpid());
	assert_true(sysroot_read_small(text, text, sizeof(text)) > 0);
	assert_int_equal(proc_stat_parse(text, &self), 0);
	found = proc_table_find(&table, &self);
	assert_non_null(found);
	assert_string_equal(found->name, self.name);
	assert_true(found->have & PROCS_STAT);
	self.start_ticks++; /* another process with the same pid: not it */
	assert_null(proc_table_find(&table, &self));
	for (unsigned i = 1; i < table.count; i++)
		assert_true(table.proc[i - 1].pid < table.proc[i].pid);
	assert_int_equal(proc_count_read(&count), 0);
	assert_true(count + 50 > table.count && table.count + 50 > count);
	proc_table_free(&table);
	assert_int_equal(vm_adv_read(&v), 0);
	if (access("/proc/zoneinfo", R_OK) == 0)
		assert_int_equal(zones_read(&z), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vm_adv),
		cmocka_unit_test(test_zones),
		cmocka_unit_test(test_proc_stat),
		cmocka_unit_test(test_live),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
