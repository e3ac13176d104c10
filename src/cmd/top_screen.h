/* top_screen.h: the full screen cachetop and biotop share (ncurses through curses_dl): the lines plain output prints, placed, and the keys that sort them. */
#ifndef IOLENS_CMD_TOP_SCREEN_H
#define IOLENS_CMD_TOP_SCREEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "render/out.h"

/* Opens the full screen on the terminal: true; false with a warning (then plain lines, as piped). */
bool top_screen_open(void);
void top_screen_close(void);

/* Writes an interval into table, at most max rows, for people (as write_interval does piped). */
typedef void top_screen_write(const void *context, struct out_table *table, size_t max);
/* Draws the lines write gives: the header line at the top, the note under it, the column titles reversed, the rows. */
void top_screen_draw(top_screen_write *write, const void *context, const struct out_column *columns, size_t ncolumns,
		     const char *note);

/*
 * Waits until deadline (CLOCK_MONOTONIC ns), acting on keys meanwhile: < and > move *sort
 * among sorts keys, r flips *reverse, and then (or when the terminal changes size) redraw is
 * called. False when q or a signal says to quit.
 */
bool top_screen_wait(uint64_t deadline, int *sort, int sorts, bool *reverse, void (*redraw)(void *context), void *context);

#endif
