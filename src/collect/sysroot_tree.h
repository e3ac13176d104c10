/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sysroot_tree.h: what the collectors read under the root, kept as one buffer (the recorder's
 * frame), which the sysroot answers from again (sysroot_memory_set) for the same parsers.
 *
 * A tree is a sequence of entries: type (u8: 'F' a file's bytes as read, 'E' a path found, its
 * data "d" for a directory and "f" for anything else, 'D' a directory's names, each ended by a
 * NUL), path length (u16), the path (absolute, no empty, "." or ".." component), data length
 * (u32), the data. Little-endian.
 */
#ifndef IOLENS_SYSROOT_TREE_H
#define IOLENS_SYSROOT_TREE_H

#include <stdbool.h>
#include <stddef.h>

struct sysroot_capture {
	unsigned char *data;
	size_t len, capacity;
};

/* While set (NULL: off), every read of a file, path found and directory listed under the root is added to it. */
void sysroot_capture_set(struct sysroot_capture *capture);
/* Adds an entry; the path is made absolute ("proc/stat" is "/proc/stat"). */
void sysroot_capture_add(struct sysroot_capture *capture, char type, const char *path, const void *data, size_t len);
/* Raw bytes added to a capture's buffer (for a 'D' entry's names). */
void sysroot_capture_bytes(struct sysroot_capture *capture, const void *data, size_t len);
void sysroot_capture_free(struct sysroot_capture *capture);

/* One entry of a tree as read: path NUL-terminated, data valid until the next call. */
struct tree_entry {
	char type;
	char path[4096];
	const unsigned char *data;
	size_t len;
};
/* The entry at *at of a tree of len bytes: 1 and *at after it, 0 at the end, -EINVAL when it is no tree. */
int tree_next(const unsigned char *tree, size_t len, size_t *at, struct tree_entry *entry);

/* Appends to out (NULL: none) the entries of tree that keep() keeps; their count, or -EINVAL when it is no tree. */
int tree_select(const unsigned char *tree, size_t len, bool (*keep)(const struct tree_entry *),
		struct sysroot_capture *out);

#endif
