/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_inode_set.c: the (device, inode) set that counts hard links once. */
#include "unit.h"

#include "common/inode_set.h"

static void test_add_and_contains(void **state)
{
	struct inode_set set = {0};
	(void)state;

	assert_false(inode_set_contains(&set, 1, 2));
	assert_true(inode_set_add(&set, 1, 2));
	assert_false(inode_set_add(&set, 1, 2));
	assert_true(inode_set_contains(&set, 1, 2));
	assert_false(inode_set_contains(&set, 2, 1));
	assert_true(inode_set_add(&set, 2, 1));
	/* The pair that looks like an empty slot is a member like any other. */
	assert_false(inode_set_contains(&set, 0, 0));
	assert_true(inode_set_add(&set, 0, 0));
	assert_false(inode_set_add(&set, 0, 0));
	assert_true(inode_set_contains(&set, 0, 0));
	assert_int_equal(set.count, 3);
	inode_set_free(&set);
	assert_false(inode_set_contains(&set, 1, 2));
}

static void test_grows(void **state)
{
	struct inode_set set = {0};
	(void)state;

	for (ino_t i = 1; i <= 100000; i++)
		assert_true(inode_set_add(&set, (dev_t)(i % 3), i * 7919));
	for (ino_t i = 1; i <= 100000; i++) {
		assert_true(inode_set_contains(&set, (dev_t)(i % 3), i * 7919));
		assert_false(inode_set_contains(&set, (dev_t)(i % 3 + 1), i * 7919));
	}
	assert_int_equal(set.count, 100000);
	assert_true(set.capacity * 3 >= set.count * 4);
	inode_set_free(&set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_and_contains),
		cmocka_unit_test(test_grows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
