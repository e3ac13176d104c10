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

enum top_screen_key {
	TOP_KEY_TIME,    /* the deadline came */
	TOP_KEY_QUIT,    /* q, or a signal */
	TOP_KEY_NEXT,    /* >: the next sort column */
	TOP_KEY_PREV,    /* <: the one before */
	TOP_KEY_REVERSE, /* r */
	TOP_KEY_RESIZE,  /* the terminal changed size: draw again */
};
/* Waits until deadline (CLOCK_MONOTONIC ns) for a key that means something. */
enum top_screen_key top_screen_key(uint64_t deadline);

#endif
