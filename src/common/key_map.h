/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * key_map.h: a hash table from keys (bytes: a name, a device and inode) to pointers, keyed with a
 * secret of the process's, so that keys others choose cannot make it slow.
 */
#ifndef IOLENS_KEY_MAP_H
#define IOLENS_KEY_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct key_map {
	struct key_slot {
		uint64_t hash;   /* 0: empty; 1: an entry removed */
		void *key;       /* a copy, len bytes and a NUL (a name's is a string) */
		size_t len;
		void *value;
	} *slots;
	size_t capacity;         /* a power of two, or 0 */
	size_t count;
	size_t removed;          /* slots of entries removed, until the table is rebuilt */
};

/*
 * SipHash-2-4 of the bytes under a key drawn from getrandom at the first call: who does not
 * know the key cannot find keys that collide (file names in /dev/shm are anyone's choice).
 */
uint64_t key_hash(const void *data, size_t len);
/* SipHash-2-4 itself (little-endian key words, as the reference reads its 16 bytes). */
uint64_t siphash24(const uint64_t key[2], const void *data, size_t len);

/* The value of key, or NULL. */
void *key_map_get(const struct key_map *map, const void *key, size_t len);
/* Sets key's value (a copy of the key is kept); returns the value it replaced, or NULL. Not during a walk. */
void *key_map_put(struct key_map *map, const void *key, size_t len, void *value);
/* Takes key out; returns its value, or NULL. */
void *key_map_remove(struct key_map *map, const void *key, size_t len);
/*
 * The entries, in no order: for (size_t i = 0; key_map_next(map, &i, &key, &len, &value);).
 * Entries may be removed during the walk, and values changed (none added).
 */
bool key_map_next(const struct key_map *map, size_t *i, const void **key, size_t *len, void **value);
void key_map_free(struct key_map *map);

/* The same with a string as the key. */
static inline void *name_map_get(const struct key_map *map, const char *name)
{
	return key_map_get(map, name, __builtin_strlen(name));
}

static inline void *name_map_put(struct key_map *map, const char *name, void *value)
{
	return key_map_put(map, name, __builtin_strlen(name), value);
}

static inline void *name_map_remove(struct key_map *map, const char *name)
{
	return key_map_remove(map, name, __builtin_strlen(name));
}

#endif
