/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * top_screen.c: the full screen of cachetop and biotop: their plain lines drawn by ncurses (opened
 * with dlopen), keys to sort and quit.
 */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/curses_dl.h"
#include "cmd/top_screen.h"
#include "common/signals.h"
#include "common/util.h"

bool top_screen_open(void)
{
	char why[512];

	if (curses_dl(why, sizeof(why)) != 0) {
		warn_msg("no full screen: %s", why); /* the lines, then, as piped */
		return false;
	}
	if (!newterm(NULL, stdout, stdin))
		return false;
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	return true;
}

void top_screen_close(void)
{
	endwin();
}

size_t top_line_width(const struct out_column *columns, size_t ncolumns)
{
	size_t width = 0, fixed = 0;

	for (int last = 0; last < 2; last++)
		for (size_t i = 0; i < ncolumns; i++) {
			const struct out_column *col = &columns[i];
			size_t title = text_width(col->header),
			       cell = (size_t)(col->width < 0 ? -(long)col->width : col->width);

			if (!col->is_default || (col->where != OUT_EVERYWHERE && col->where != OUT_TABLE_ONLY) ||
			    (col->width == 0) != last)
				continue;
			if (fixed++)
				width += last ? 2 : 1;
			width += title > cell ? title : cell;
		}
	return width;
}

/* A line in the width of the terminal: cut at its edge with '>' in its last column. */
static void draw_line(int y, const char *line, int cols)
{
	size_t width, bytes = text_fit(line, SIZE_MAX, &width);

	if (width <= (size_t)cols) {
		mvaddnstr(y, 0, line, (int)bytes);
		return;
	}
	mvaddnstr(y, 0, line, (int)text_fit(line, (size_t)cols - 1, NULL));
	mvaddnstr(y, cols - 1, ">", 1);
}

void top_screen_draw(top_screen_write *write, const void *context, const struct out_column *columns, size_t ncolumns,
		     const char *note, const struct top_narrow *narrow, size_t nnarrow)
{
	struct out_options opts = { .format = OUT_TABLE, .fit_numbers = true };
	struct out_column *fitted;
	struct out_table *table;
	char *text = NULL, *line, *next, hidden[256] = "";
	size_t len = 0, used = 0;
	FILE *stream;
	int rows, cols, y;

	getmaxyx(stdscr, rows, cols);
	erase();
	if (rows < 4 || cols < 40) {
		mvaddnstr(0, 0, "terminal too small", cols > 0 ? cols : 0);
		refresh();
		return;
	}
	/* The steps taken until the columns fit; those left out said on the second line, after the note. */
	fitted = xcalloc(ncolumns, sizeof(*fitted));
	memcpy(fitted, columns, ncolumns * sizeof(*fitted));
	for (size_t i = 0; i < nnarrow && top_line_width(fitted, ncolumns) > (size_t)cols; i++) {
		struct out_column *col = &fitted[narrow[i].column];

		if (!col->is_default)
			continue;
		if (narrow[i].width) {
			col->width = narrow[i].width;
			continue;
		}
		col->is_default = false;
		used += (size_t)snprintf(hidden + used, sizeof(hidden) - used, "%s%s",
					 used ? " " : "not shown (a wider terminal has room): ", col->header);
		if (used >= sizeof(hidden))
			used = sizeof(hidden) - 1;
	}
	stream = open_memstream(&text, &len);
	if (!stream) {
		free(fitted);
		return;
	}
	table = out_table_new(fitted, ncolumns, &opts, NULL);
	out_table_lines(table, stream);
	write(context, table, (size_t)(rows - 3));
	out_table_free(table);
	fclose(stream);
	free(fitted);
	/* The header line at 0, the note at 1, the columns at 2 (reversed), the rows from 3 on. */
	for (line = text, y = 0; line && *line && y < rows; line = next, y += y == 0 ? 2 : 1) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		if (y == 2)
			attron(A_REVERSE);
		draw_line(y, line, cols);
		if (y == 2)
			attroff(A_REVERSE);
	}
	if (note || hidden[0]) {
		char second[1024];

		snprintf(second, sizeof(second), "%s%s%s", note ? note : "", note && hidden[0] ? " / " : "", hidden);
		draw_line(1, second, cols);
	}
	free(text);
	refresh();
}

bool top_screen_wait(uint64_t deadline, int *sort, int sorts, bool *reverse, void (*redraw)(void *context),
		     void *context)
{
	for (;;) {
		uint64_t now = monotonic_ns();
		int key;

		if (stop_signal)
			return false;
		if (now >= deadline)
			return true;
		timeout((int)((deadline - now) / 1000000 + 1));
		key = getch();
		if (key == 'q' || key == 'Q')
			return false;
		if (key == '<' || key == '>')
			*sort = (*sort + (key == '>' ? 1 : -1) + sorts) % sorts;
		else if (key == 'r' || key == 'R')
			*reverse = !*reverse;
		else if (key != KEY_RESIZE)
			continue;
		clearok(stdscr, TRUE); /* the whole screen again: the header changed */
		redraw(context);
	}
}
