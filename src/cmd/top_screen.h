/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * top_screen.h: the full screen cachetop and biotop share (ncurses through curses_dl): the lines
 * plain output prints, placed, and the keys that sort them.
 */
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

/*
 * A step that fits the columns into a terminal narrower than their rows: the column's width
 * becomes width (a text longer than that ends in '+'), or with width 0 the column is left out,
 * and the second line says so ("not shown (a wider terminal has room): MAJ MIN").
 */
struct top_narrow {
	size_t column;
	int width;
};

/*
 * Draws the lines write gives: the header line at the top, the note under it, the column
 * titles reversed, the rows. Where the columns are wider than the terminal, the steps of
 * narrow are taken in turn until they fit; a line still wider ends in '>' at the edge.
 */
void top_screen_draw(top_screen_write *write, const void *context, const struct out_column *columns, size_t ncolumns,
		     const char *note, const struct top_narrow *narrow, size_t nnarrow);

/* The width of a table's lines of these columns: the shown ones' widths (or titles), spaces between. */
size_t top_line_width(const struct out_column *columns, size_t ncolumns);

/*
 * Waits until deadline (CLOCK_MONOTONIC ns), acting on keys meanwhile: < and > move *sort
 * among sorts keys, r flips *reverse, and then (or when the terminal changes size) redraw is
 * called. False when q or a signal says to quit.
 */
bool top_screen_wait(uint64_t deadline, int *sort, int sorts, bool *reverse, void (*redraw)(void *context),
		     void *context);

#endif
