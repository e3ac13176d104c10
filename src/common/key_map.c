/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * key_map.c: open addressing with linear probing over SipHash-2-4; removed entries leave a mark
 * until the table is rebuilt.
 */
#include "common/key_map.h"

#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"

#define EMPTY 0u
#define REMOVED 1u

static uint64_t secret[2];

static inline uint64_t rotl(uint64_t x, int b)
{
	return (x << b) | (x >> (64 - b));
}

#define SIPROUND                                                                                                   \
	do {                                                                                                       \
		v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32);                                          \
		v2 += v3; v3 = rotl(v3, 16); v3 ^= v2;                                                             \
		v0 += v3; v3 = rotl(v3, 21); v3 ^= v0;                                                             \
		v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32);                                          \
	} while (0)

static void draw_secret(void)
{
	struct timespec ts;

	if (secret[0] | secret[1])
		return;
	if (getrandom(secret, sizeof(secret), GRND_NONBLOCK) != (ssize_t)sizeof(secret)) {
		/* Early in boot: not a secret from a determined attacker, but never the same twice. */
		clock_gettime(CLOCK_MONOTONIC, &ts);
		secret[0] = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
		secret[1] = (uint64_t)ts.tv_sec * 0xc2b2ae3d27d4eb4full ^ (uint64_t)(uintptr_t)&ts;
	}
	secret[1] |= 1; /* never both zero: drawn once */
}

uint64_t siphash24(const uint64_t key[2], const void *data, size_t len)
{
	const unsigned char *in = data, *end = in + (len & ~(size_t)7);
	uint64_t v0, v1, v2, v3, m, last = (uint64_t)len << 56;

	v0 = 0x736f6d6570736575ull ^ key[0];
	v1 = 0x646f72616e646f6dull ^ key[1];
	v2 = 0x6c7967656e657261ull ^ key[0];
	v3 = 0x7465646279746573ull ^ key[1];
	for (; in < end; in += 8) {
		memcpy(&m, in, 8); /* little-endian machines: the reference's byte order */
		v3 ^= m;
		SIPROUND;
		SIPROUND;
		v0 ^= m;
	}
	for (size_t i = 0; i < (len & 7); i++)
		last |= (uint64_t)in[i] << (8 * i);
	v3 ^= last;
	SIPROUND;
	SIPROUND;
	v0 ^= last;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

uint64_t key_hash(const void *data, size_t len)
{
	draw_secret();
	return siphash24(secret, data, len);
}

/* A key's hash as stored: never one of the two marks. */
static uint64_t stored_hash(const void *key, size_t len)
{
	uint64_t hash = key_hash(key, len);

	return hash > REMOVED ? hash : hash + 2;
}

/* The slot of key, or of the empty slot where it would go (capacity must not be 0). */
static size_t find(const struct key_map *map, uint64_t hash, const void *key, size_t len)
{
	size_t mask = map->capacity - 1;

	for (size_t i = (size_t)hash & mask;; i = (i + 1) & mask) {
		const struct key_slot *slot = &map->slots[i];

		if (slot->hash == EMPTY)
			return i;
		if (slot->hash == hash && slot->len == len && !memcmp(slot->key, key, len))
			return i;
	}
}

void *key_map_get(const struct key_map *map, const void *key, size_t len)
{
	size_t i;

	if (!map->count)
		return NULL;
	i = find(map, stored_hash(key, len), key, len);
	return map->slots[i].hash > REMOVED ? map->slots[i].value : NULL;
}

/* Into a table of capacity slots (at least twice the entries): the removed ones' marks are gone. */
static void rebuild(struct key_map *map, size_t capacity)
{
	struct key_map bigger = { .capacity = capacity, .count = map->count };

	bigger.slots = xcalloc(capacity, sizeof(*bigger.slots));
	for (size_t i = 0; i < map->capacity; i++) {
		struct key_slot *slot = &map->slots[i];

		if (slot->hash > REMOVED)
			bigger.slots[find(&bigger, slot->hash, slot->key, slot->len)] = *slot;
	}
	free(map->slots);
	*map = bigger;
}

void *key_map_put(struct key_map *map, const void *key, size_t len, void *value)
{
	uint64_t hash = stored_hash(key, len);
	struct key_slot *slot = map->capacity ? &map->slots[find(map, hash, key, len)] : NULL;
	void *old;

	if (slot && slot->hash > REMOVED) {
		old = slot->value;
		slot->value = value;
		return old;
	}
	/* At most 3/4 full, marks counted: a lookup always meets an empty slot soon. */
	if ((map->count + map->removed + 1) * 4 > map->capacity * 3) {
		size_t capacity = map->capacity ? map->capacity : 16;

		while ((map->count + 1) * 2 > capacity)
			capacity *= 2;
		rebuild(map, capacity);
		slot = &map->slots[find(map, hash, key, len)];
	}
	slot->hash = hash;
	slot->key = xrealloc(NULL, len + 1); /* with a NUL after: a name stays a string */
	memcpy(slot->key, key, len);
	((char *)slot->key)[len] = '\0';
	slot->len = len;
	slot->value = value;
	map->count++;
	return NULL;
}

void *key_map_remove(struct key_map *map, const void *key, size_t len)
{
	struct key_slot *slot;
	void *value;

	if (!map->count)
		return NULL;
	slot = &map->slots[find(map, stored_hash(key, len), key, len)];
	if (slot->hash <= REMOVED)
		return NULL;
	value = slot->value;
	free(slot->key);
	*slot = (struct key_slot){ .hash = REMOVED };
	map->count--;
	map->removed++;
	return value;
}

bool key_map_next(const struct key_map *map, size_t *i, const void **key, size_t *len, void **value)
{
	for (; *i < map->capacity; (*i)++) {
		const struct key_slot *slot = &map->slots[*i];

		if (slot->hash > REMOVED) {
			if (key)
				*key = slot->key;
			if (len)
				*len = slot->len;
			if (value)
				*value = slot->value;
			(*i)++;
			return true;
		}
	}
	return false;
}

void key_map_free(struct key_map *map)
{
	for (size_t i = 0; i < map->capacity; i++)
		if (map->slots[i].hash > REMOVED)
			free(map->slots[i].key);
	free(map->slots);
	*map = (struct key_map){0};
}
