/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * window.h: a recorded window played back: each frame of the system's kind laid out in turn as
 * a tree in a private directory, for the collectors to read through the sysroot as they read
 * the live /proc.
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
 * The next frame at least step_ns (monotonic) after the last handed out, laid out: frames
 * closer are passed over, but the window's last frame is always handed out; a frame whose
 * clock began again (a restart) too. *root is its tree's directory (valid until the next call,
 * which removes it). 1, 0 at the end, or -errno (why said; the frame passed over).
 */
int store_window_next(struct store_window *w, uint64_t step_ns, const char **root, uint64_t *real_ns,
		      uint64_t *mono_ns, char *why, size_t why_len);
/* What the store's reading found wrong since last asked (a torn or corrupt frame), or NULL. */
const char *store_window_said(struct store_window *w);
/* Removes what is laid out. */
void store_window_close(struct store_window *w);

#endif
