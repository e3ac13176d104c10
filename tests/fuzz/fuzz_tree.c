/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz_tree.c: libFuzzer target that reads each input as a recorded tree (collect/sysroot_tree.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collect/sysroot_tree.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tree_entry *e = malloc(sizeof(*e));
	size_t at = 0, before;
	int rc;

	if (!e)
		return 0;
	for (before = at; (rc = tree_next(data, size, &at, e)) == 1; before = at) {
		/* Each entry lies in the input, after the one before; its path absolute, never leaving the tree. */
		if (at <= before || at > size || e->data < data || e->data + e->len > data + size)
			abort();
		if (e->path[0] != '/' || strstr(e->path, "/../") || strstr(e->path, "//") ||
		    !strcmp(e->path + strlen(e->path) - 3 > e->path ? e->path + strlen(e->path) - 3 : e->path, "/.."))
			abort();
		if (e->len)
			(void)((volatile const unsigned char *)e->data)[e->len - 1];
	}
	if (rc != 0 && rc != -EINVAL)
		abort();
	free(e);
	return 0;
}
