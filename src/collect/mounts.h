/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mounts.h: the mount table (/proc/self/mounts under the root), read in one place by whoever lists mounts. */
#ifndef IOLENS_MOUNTS_H
#define IOLENS_MOUNTS_H

#include <stdbool.h>
#include <stddef.h>

/* One line of the table, its fields as the kernel names them, the \040-style escapes undone. */
struct mount {
	char *source, *dir, *type, *options;
};

struct mounts {
	struct mount *list; /* in the table's order: a later mount on the same point is over the earlier */
	size_t count;
};

/* Parses the table's text (len bytes, no NUL needed): 0, or -EINVAL when no line is well formed. */
int mounts_parse(const char *text, size_t len, struct mounts *out);
/* Reads ROOT/proc/self/mounts: 0, or -errno (out is then empty). */
int mounts_read(struct mounts *out);
/* Whether option is one of the mount's comma-separated options ("ro", "nosuid"). */
bool mount_option(const struct mount *m, const char *option);
void mounts_free(struct mounts *m);

#endif
