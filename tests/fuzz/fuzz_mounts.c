/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz_mounts.c: libFuzzer target that feeds each input to the mount table's parser (collect/mounts.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collect/mounts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mounts m;

	/* The input has no NUL after it: ASan stops any parser that reads past size. */
	if (mounts_parse((const char *)data, size, &m) == 0) {
		/* Every mount kept has a path for its point and four fields. */
		for (size_t i = 0; i < m.count; i++) {
			if (m.list[i].dir[0] != '/' || !m.list[i].source || !m.list[i].type || !m.list[i].options)
				abort();
			mount_option(&m.list[i], "ro");
		}
	} else if (m.count || m.list) {
		abort();
	}
	mounts_free(&m);
	return 0;
}
