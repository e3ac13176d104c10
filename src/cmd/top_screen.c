/* top_screen.c: the full screen of cachetop and biotop: their plain lines drawn by ncurses (opened with dlopen), keys to sort and quit. */
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

void top_screen_draw(top_screen_write *write, const void *context, const struct out_column *columns, size_t ncolumns,
		     const char *note)
{
	struct out_options opts = { .format = OUT_TABLE };
	struct out_table *table;
	char *text = NULL, *line, *next;
	size_t len = 0;
	FILE *stream;
	int rows, cols, y;

	getmaxyx(stdscr, rows, cols);
	erase();
	if (rows < 4 || cols < 40) {
		mvaddnstr(0, 0, "terminal too small", cols > 0 ? cols : 0);
		refresh();
		return;
	}
	stream = open_memstream(&text, &len);
	if (!stream)
		return;
	table = out_table_new(columns, ncolumns, &opts, NULL);
	out_table_lines(table, stream);
	write(context, table, (size_t)(rows - 3));
	out_table_free(table);
	fclose(stream);
	/* The header line at 0, the note at 1, the columns at 2 (reversed), the rows from 3 on. */
	for (line = text, y = 0; line && *line && y < rows; line = next, y += y == 0 ? 2 : 1) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		if (y == 2)
			attron(A_REVERSE);
		mvaddnstr(y, 0, line, (int)text_fit(line, (size_t)cols, NULL)); /* the bytes of cols columns */
		if (y == 2)
			attroff(A_REVERSE);
	}
	if (note)
		mvaddnstr(1, 0, note, cols);
	free(text);
	refresh();
}

bool top_screen_wait(uint64_t deadline, int *sort, int sorts, bool *reverse, void (*redraw)(void *context), void *context)
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
