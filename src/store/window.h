/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * window.h: a recorded window played back: each frame of the system's kind in turn, a tree
 * (collect/sysroot_tree.h) for the collectors to read through the sysroot (sysroot_memory_set)
 * as they read the live /proc.
 */
#ifndef IOLENS_STORE_WINDOW_H
#define IOLENS_STORE_WINDOW_H

#include <stddef.h>
#include <stdint.h>

struct store_window;

/* The frames of the store in dir stamped within [from_ns, to_ns] (UTC): 0, or -errno with why said. */
int store_window_open(struct store_window **out, const char *dir, uint64_t from_ns, uint64_t to_ns, char *why,
		      size_t why_len);
/*
 * The next frame at least step_ns (monotonic) after the last handed out: frames closer are
 * passed over, but the window's last frame is always handed out; a frame whose clock began
 * again (a restart) too. *tree is its payload (valid until the next call). 1, or 0 at the end.
 */
int store_window_next(struct store_window *w, uint64_t step_ns, const unsigned char **tree, size_t *len,
		      uint64_t *real_ns, uint64_t *mono_ns);
/* What the store's reading found wrong since last asked (a torn or corrupt frame), or NULL. */
const char *store_window_said(struct store_window *w);
void store_window_close(struct store_window *w);

#endif
