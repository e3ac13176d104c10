/* SPDX-License-Identifier: GPL-2.0-or-later */
/* curses_dl.c: ncurses for cachetop's full screen, opened when it draws one (curses_dl.h). */
#define CURSES_DL_NO_REDIRECT
#include "cmd/curses_dl.h"

#define CURSES_DL_DEFINE(symbol) DLSYM_POINTER(symbol);
CURSES_DL_SYMBOLS(CURSES_DL_DEFINE)

#define CURSES_DL_ARG(symbol) DLSYM_ARG(symbol),

int curses_dl(char *why, size_t why_len)
{
	static void *libcurses;

	return dl_open_many(&libcurses, CURSES_SONAME, why, why_len, CURSES_DL_SYMBOLS(CURSES_DL_ARG) NULL);
}
