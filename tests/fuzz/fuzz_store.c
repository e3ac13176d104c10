/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz_store.c: libFuzzer target that reads each input as a segment of iolens record's store (store/store.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int frame(void *context, const struct store_frame *f)
{
	size_t *end = context; /* [0] the last frame's end, [1] the input's size */

	/* Every frame handed over lies within the segment, after the one before, its payload whole. */
	if (f->offset < STORE_SEGMENT_HEADER || f->offset < *end || f->len > STORE_FRAME_MAX || (f->len && !f->data))
		abort();
	if (f->offset + STORE_FRAME_HEADER > end[1])
		abort();
	*end = f->offset + STORE_FRAME_HEADER;
	if (f->len)
		(void)((volatile const unsigned char *)f->data)[f->len - 1];
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct store_scan scan;
	size_t end[2] = { 0, size }; /* the last frame's end, the input's */
	int rc = store_segment_scan(data, size, frame, end, &scan);

	if (rc != 0 && rc != -EINVAL)
		abort();
	if (rc == 0 && (scan.good_end > size || scan.good_end < STORE_SEGMENT_HEADER ||
			(scan.torn && scan.good_end >= size)))
		abort();
	return 0;
}
