/* SPDX-License-Identifier: GPL-2.0-or-later */
/* window.c: a recorded window played back, a frame at a time, a step apart. */
#include "store/window.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "store/store.h"

struct store_window {
	struct store_reader *reader;
	uint64_t last_mono_ns; /* the last frame handed out (0: none yet) */
	/* The last frame passed over since (closer than the step): handed out at the window's end. */
	unsigned char *pending;
	size_t pending_len;
	uint64_t pending_real_ns, pending_mono_ns;
	unsigned char *handed; /* a pending frame handed out: freed at the next call */
};

int store_window_open(struct store_window **out, const char *dir, uint64_t from_ns, uint64_t to_ns, char *why,
		      size_t why_len)
{
	struct store_window *w = xcalloc(1, sizeof(*w));
	int rc = store_reader_open(&w->reader, dir, from_ns, to_ns, why, why_len);

	*out = NULL;
	if (rc) {
		free(w);
		return rc;
	}
	*out = w;
	return 0;
}

/* Keeps a copy of a frame passed over, the last one. */
static void keep_pending(struct store_window *w, const struct store_frame *f)
{
	free(w->pending);
	w->pending = xcalloc(1, f->len ? f->len : 1);
	memcpy(w->pending, f->data, f->len);
	w->pending_len = f->len;
	w->pending_real_ns = f->real_ns;
	w->pending_mono_ns = f->mono_ns;
}

/* The next frame to hand out: 1 with *f set (its data the reader's or pending's), or 0 at the end. */
static int next_frame(struct store_window *w, uint64_t step_ns, struct store_frame *f)
{
	int rc;

	while ((rc = store_reader_next(w->reader, f)) == 1) {
		if (f->kind != STORE_KIND_SYSTEM)
			continue;
		/* The first, one a step after the last, or one after a restart (the clock begun again). */
		if (!w->last_mono_ns || f->mono_ns < w->last_mono_ns || f->mono_ns - w->last_mono_ns >= step_ns) {
			free(w->pending);
			w->pending = NULL;
			return 1;
		}
		keep_pending(w, f);
	}
	if (!w->pending)
		return 0;
	f->data = w->pending;
	f->len = w->pending_len;
	f->real_ns = w->pending_real_ns;
	f->mono_ns = w->pending_mono_ns;
	f->kind = STORE_KIND_SYSTEM;
	w->pending = NULL; /* freed at the next call */
	return 2;
}

int store_window_next(struct store_window *w, uint64_t step_ns, const unsigned char **tree, size_t *len,
		      uint64_t *real_ns, uint64_t *mono_ns)
{
	struct store_frame f;
	int rc;

	free(w->handed);
	w->handed = NULL;
	rc = next_frame(w, step_ns, &f);
	if (rc == 0)
		return 0;
	if (rc == 2)
		w->handed = (unsigned char *)f.data;
	w->last_mono_ns = f.mono_ns;
	*tree = f.data;
	*len = f.len;
	*real_ns = f.real_ns;
	*mono_ns = f.mono_ns;
	return 1;
}

const char *store_window_said(struct store_window *w)
{
	return store_reader_said(w->reader);
}

void store_window_close(struct store_window *w)
{
	if (!w)
		return;
	free(w->pending);
	free(w->handed);
	store_reader_close(w->reader);
	free(w);
}
