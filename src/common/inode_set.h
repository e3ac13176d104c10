/* SPDX-License-Identifier: GPL-2.0-or-later */
/* inode_set.h: a set of (device, inode) pairs, to count hard links once and detect directory cycles. */
#ifndef IOLENS_INODE_SET_H
#define IOLENS_INODE_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct inode_set {
	struct inode_key { dev_t dev; ino_t ino; } *slots;
	size_t capacity; /* a power of two, or 0 */
	size_t count;
};

/* Adds the pair; true when it was new, false when it was already there. */
bool inode_set_add(struct inode_set *set, dev_t dev, ino_t ino);
bool inode_set_contains(const struct inode_set *set, dev_t dev, ino_t ino);
void inode_set_free(struct inode_set *set);

#endif
