/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dl.h: libraries only some subcommands need (libmicrohttpd for export, ncurses for cachetop's
 * screen...), opened with dlopen when they run rather than linked, so that every other start-up
 * does not pay for loading them and theirs (libmicrohttpd alone brings gnutls and nine more).
 *
 * As systemd does for its optional libraries: each function used is a pointer named sym_NAME,
 * of NAME's own type (from the library's header, still included for its types and constants),
 * resolved all at once:
 *
 *	static DLSYM_POINTER(MHD_start_daemon);
 *	...
 *	dl_open_many(&handle, MHD_SONAME, why, sizeof(why), DLSYM_ARG(MHD_start_daemon), ..., NULL);
 *
 * The sonames (MHD_SONAME...) come from the Makefile, which reads them from the libraries that
 * pkg-config names.
 */
#ifndef IOLENS_COMMON_DL_H
#define IOLENS_COMMON_DL_H

#include <stddef.h>

#define DLSYM_POINTER(symbol) __typeof__(symbol) *sym_##symbol
/* The pair dl_open_many takes: where the pointer goes, and the symbol's name. */
#define DLSYM_ARG(symbol) (void (**)(void))&sym_##symbol, #symbol

/*
 * Opens soname (once opened, later calls return 0 at once) and resolves the pairs that
 * follow, NULL-terminated. 0, or -1 with "SONAME: dlerror's words" in why; on failure the
 * pointers are left NULL and the library closed.
 */
int dl_open_many(void **handle, const char *soname, char *why, size_t why_len, ...);

#endif
