/* SPDX-License-Identifier: GPL-2.0-or-later */
/* inode_set.c: open addressing with linear probing; inode 0 never names a file, so it marks empty slots. */
#include "common/inode_set.h"

#include <stdint.h>
#include <stdlib.h>

#include "common/util.h"

static size_t slot_of(const struct inode_set *set, dev_t dev, ino_t ino)
{
	uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15ull ^ (uint64_t)dev * 0xc2b2ae3d27d4eb4full;

	h ^= h >> 29;
	return (size_t)h & (set->capacity - 1);
}

/* The one pair that would read as an empty slot is stored as another impossible one. */
static ino_t stored_ino(dev_t dev, ino_t ino)
{
	return dev == 0 && ino == 0 ? ~(ino_t)0 : ino;
}

bool inode_set_contains(const struct inode_set *set, dev_t dev, ino_t ino)
{
	ino = stored_ino(dev, ino);
	if (!set->capacity)
		return false;
	for (size_t i = slot_of(set, dev, ino);; i = (i + 1) & (set->capacity - 1)) {
		const struct inode_key *key = &set->slots[i];
		if (key->ino == 0 && key->dev == 0)
			return false;
		if (key->dev == dev && key->ino == ino)
			return true;
	}
}

static void insert(struct inode_set *set, dev_t dev, ino_t ino)
{
	size_t i = slot_of(set, dev, ino);

	while (set->slots[i].ino || set->slots[i].dev)
		i = (i + 1) & (set->capacity - 1);
	set->slots[i].dev = dev;
	set->slots[i].ino = ino;
	set->count++;
}

static void grow(struct inode_set *set)
{
	struct inode_set bigger = { .capacity = set->capacity ? set->capacity * 2 : 256 };

	bigger.slots = xcalloc(bigger.capacity, sizeof(*bigger.slots));
	for (size_t i = 0; i < set->capacity; i++)
		if (set->slots[i].ino || set->slots[i].dev)
			insert(&bigger, set->slots[i].dev, set->slots[i].ino);
	free(set->slots);
	*set = bigger;
}

bool inode_set_add(struct inode_set *set, dev_t dev, ino_t ino)
{
	if (inode_set_contains(set, dev, ino))
		return false;
	if ((set->count + 1) * 4 > set->capacity * 3)
		grow(set);
	insert(set, dev, stored_ino(dev, ino));
	return true;
}

void inode_set_free(struct inode_set *set)
{
	free(set->slots);
	*set = (struct inode_set){0};
}
