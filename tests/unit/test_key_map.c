/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_key_map.c: the hash table of names and other keys that readers of /dev/shm keep: SipHash, removal, growth. */
#include "unit.h"

#include "common/key_map.h"

/* The reference implementation's vectors: key 00..0f, messages 00, 00 01, ... (their first and 16th). */
static void test_siphash_vectors(void **state)
{
	const uint64_t key[2] = { 0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull };
	unsigned char message[64];
	(void)state;

	for (unsigned i = 0; i < sizeof(message); i++)
		message[i] = (unsigned char)i;
	assert_true(siphash24(key, message, 0) == 0x726fdb47dd0e0e31ull);
	assert_true(siphash24(key, message, 15) == 0xa129ca6149be45e5ull);
	/* The process's own key: the same bytes give the same hash, others another. */
	assert_true(key_hash("vtrace.a.1", 10) == key_hash("vtrace.a.1", 10));
	assert_true(key_hash("vtrace.a.1", 10) != key_hash("vtrace.a.2", 10));
}

static void test_put_get_remove(void **state)
{
	struct key_map map = {0};
	int a, b;
	(void)state;

	assert_null(name_map_get(&map, "x"));
	assert_null(name_map_remove(&map, "x"));
	assert_null(name_map_put(&map, "x", &a));
	assert_ptr_equal(name_map_get(&map, "x"), &a);
	assert_ptr_equal(name_map_put(&map, "x", &b), &a); /* replaced */
	assert_ptr_equal(name_map_get(&map, "x"), &b);
	assert_null(name_map_get(&map, "xx"));
	/* Keys are bytes: a NUL inside is part of them. */
	assert_null(key_map_put(&map, "x\0y", 3, &a));
	assert_ptr_equal(key_map_get(&map, "x\0y", 3), &a);
	assert_ptr_equal(name_map_get(&map, "x"), &b);
	assert_int_equal(map.count, 2);
	assert_ptr_equal(name_map_remove(&map, "x"), &b);
	assert_null(name_map_get(&map, "x"));
	assert_ptr_equal(key_map_get(&map, "x\0y", 3), &a);
	assert_int_equal(map.count, 1);
	key_map_free(&map);
	assert_null(name_map_get(&map, "x"));
}

/* Many keys in and out: every one found while in, none after, the table never fills with marks. */
static void test_churn(void **state)
{
	struct key_map map = {0};
	char name[32];
	(void)state;

	for (int round = 0; round < 4; round++) {
		for (int i = 0; i < 50000; i++) {
			snprintf(name, sizeof(name), "vtrace.s%d.%d", round, i);
			assert_null(name_map_put(&map, name, (void *)(intptr_t)(i + 1)));
		}
		for (int i = 0; i < 50000; i++) {
			snprintf(name, sizeof(name), "vtrace.s%d.%d", round, i);
			assert_int_equal((intptr_t)name_map_get(&map, name), i + 1);
			if (i % 2)
				assert_int_equal((intptr_t)name_map_remove(&map, name), i + 1);
		}
		for (int i = 0; i < 50000; i++) {
			snprintf(name, sizeof(name), "vtrace.s%d.%d", round, i);
			assert_int_equal((intptr_t)name_map_get(&map, name), i % 2 ? 0 : i + 1);
			if (!(i % 2))
				name_map_remove(&map, name);
		}
		assert_int_equal(map.count, 0);
	}
	/* Four rounds of 50,000 in and out: the table stays the size of one round's. */
	assert_true(map.capacity <= 262144);
	key_map_free(&map);
}

/* A walk sees every entry once, and may remove them as it goes. */
static void test_walk_and_remove(void **state)
{
	struct key_map map = {0};
	const void *key;
	size_t len, seen = 0;
	void *value;
	char name[16];
	(void)state;

	for (int i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		name_map_put(&map, name, (void *)(intptr_t)(i + 1));
	}
	for (size_t i = 0; key_map_next(&map, &i, &key, &len, &value);) {
		seen++;
		if ((intptr_t)value % 3 == 0)
			assert_non_null(key_map_remove(&map, key, len));
	}
	assert_int_equal(seen, 1000);
	assert_int_equal(map.count, 1000 - 333);
	key_map_free(&map);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_siphash_vectors),
		cmocka_unit_test(test_put_get_remove),
		cmocka_unit_test(test_churn),
		cmocka_unit_test(test_walk_and_remove),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
