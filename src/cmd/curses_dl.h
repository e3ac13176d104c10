/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * curses_dl.h: ncurses for cachetop's full screen, opened with dlopen when it draws one (see
 * common/dl.h), not linked: piped cachetop and every other subcommand start without loading it.
 *
 * Included after <curses.h> (its types, constants and macros stay in use): each function cachetop
 * calls, and stdscr, are redirected to the pointers that curses_dl resolves. Until curses_dl has
 * returned 0 they are NULL: call nothing of ncurses before.
 */
#ifndef IOLENS_CMD_CURSES_DL_H
#define IOLENS_CMD_CURSES_DL_H

#include <curses.h>
#include <stddef.h>

#include "common/dl.h"

#ifdef stdscr
#error "stdscr is a macro (ncurses built reentrant): curses_dl.h does not know that ncurses"
#endif

/* Opens ncurses (CURSES_SONAME, which brings tinfo): 0, or -1 with "SONAME: why". */
int curses_dl(char *why, size_t why_len);

#define CURSES_DL_SYMBOLS(X)                                                                          \
	X(cbreak) X(clearok) X(curs_set) X(endwin) X(keypad) X(newterm) X(noecho) X(stdscr) X(waddnstr) \
	X(wattr_off) X(wattr_on) X(werase) X(wgetch) X(wmove) X(wrefresh) X(wtimeout)

#define CURSES_DL_EXTERN(symbol) extern DLSYM_POINTER(symbol);
CURSES_DL_SYMBOLS(CURSES_DL_EXTERN)

#ifndef CURSES_DL_NO_REDIRECT
#define cbreak (*sym_cbreak)
#define clearok (*sym_clearok)
#define curs_set (*sym_curs_set)
#define endwin (*sym_endwin)
#define keypad (*sym_keypad)
#define newterm (*sym_newterm)
#define noecho (*sym_noecho)
#define stdscr (*sym_stdscr)
#define waddnstr (*sym_waddnstr)
#define wattr_off (*sym_wattr_off)
#define wattr_on (*sym_wattr_on)
#define werase (*sym_werase)
#define wgetch (*sym_wgetch)
#define wmove (*sym_wmove)
#define wrefresh (*sym_wrefresh)
#define wtimeout (*sym_wtimeout)
#endif

#endif
