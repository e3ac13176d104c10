/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz_tree.c: libFuzzer target: each input as a recorded tree (collect/sysroot_tree.h), and the sysroot reading it. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collect/sysroot.h"
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
	/* The sysroot answering from it: a refused tree is an empty one; what it answers lies in the input. */
	if (sysroot_memory_set(data, size) == 0 && rc == 0) {
		char buf[64];
		ssize_t n = sysroot_read_small("/proc/stat", buf, sizeof(buf));
		if (n > (ssize_t)sizeof(buf) - 1 || (n >= 0 && buf[n] != '\0'))
			abort();
		(void)sysroot_exists("/sys/class/block/vda");
		(void)sysroot_dir_has_entries("/sys/class/block/vda/holders");
	} else if (sysroot_exists("/proc/stat")) {
		abort();
	}
	sysroot_memory_set(NULL, 0);
	free(e);
	return 0;
}
