/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * table.c: stores typed rows, then prints them as a libsmartcols table, a json-c document or CSV;
 * or writes them as they come, as the lines of a monitor.
 */
#include "render/out.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <libsmartcols/libsmartcols.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"

enum cell_state { CELL_UNKNOWN = 0, CELL_SET };

/*
 * A table written as its rows come (out_table_stream) holds its first TABLE_HELD rows and
 * prints them together, sized by libsmartcols as a whole table is; then the columns keep
 * those widths (libsmartcols' absolute width hints), and each later row is printed on its
 * own line as it comes. A later value wider than its column widens only its own line: nothing
 * is cut, and every row stays one line. A table of up to TABLE_HELD rows prints as it
 * always did, whole.
 */
#define TABLE_HELD 256

static bool is_real(enum out_kind kind)
{
	return kind == OUT_PERCENT || kind == OUT_FLOAT || kind == OUT_BYTE_RATE || kind == OUT_RATIO;
}

static unsigned decimals_of(const struct out_column *col)
{
	return col->decimals ? col->decimals : col->kind == OUT_PERCENT ? 3 : 2;
}

/* Printed in a table, or in JSON and CSV. */
static bool in_table(const struct out_column *col)
{
	return col->where == OUT_EVERYWHERE || col->where == OUT_TABLE_ONLY;
}

static bool in_data(const struct out_column *col)
{
	return col->where != OUT_TABLE_ONLY;
}

struct out_cell {
	enum cell_state state;
	union {
		char *text;
		uint64_t count; /* the integer kinds: counts, bytes, nanoseconds */
		double real;    /* percentages, rates */
	};
};

struct out_row {
	const struct out_table *table;
	size_t order;           /* when it was added: ties in a sort keep this order */
	struct out_cell *cells; /* one per column of the command */
};

/* A line of a table being put together, to be written whole; kept from line to line. */
struct line_buffer {
	char *text;
	size_t len, capacity;
};

struct json_extra {
	char *key;
	struct json_object *value;
};

struct out_table {
	const struct out_column *columns;
	size_t ncolumns;
	struct out_options opts;
	const char *rows_key;
	size_t *shown; /* indexes of the printed columns, in order */
	size_t nshown;
	struct out_row **rows;
	size_t nrows, rows_capacity;
	struct out_row *total;
	struct out_row *pending; /* the last row added, complete when the next comes */
	/* The TOTAL row: wanted or not, the sums of every column, and their unknowns. */
	bool want_total, summary_only;
	size_t total_label_column;
	const char *total_label;
	uint64_t *sums;
	bool *sum_unknown;
	struct json_extra *extras;
	size_t nextras;
	FILE *stream;   /* set when rows are written as they come (CSV, JSON; every format in lines) */
	bool started;   /* the header or the opening is out */
	size_t emitted; /* rows written so far */
	size_t *data;   /* the indexes of the columns JSON and CSV print, in their order */
	size_t ndata;   /* how many, when data_known */
	bool data_known;
	struct out_row *spare; /* a row written and emptied, for the next (streaming) */
	struct line_buffer *line; /* lines: a table's line being put together */
	bool lines;     /* out_table_lines */
	struct out_row *group; /* the group under way (out_table_group), its cells */
	bool group_open;       /* its JSON line is begun (its cells and the rows' opening are out) */
	size_t group_rows;     /* its rows written so far */
	/* A table streamed: libsmartcols' table, once the first rows fixed its widths, and its one line. */
	struct libscols_table *scols;
	struct libscols_line *scols_line;
	int error; /* the first error writing a streamed table: -errno */
};

bool out_parse_option(struct out_options *opts, int opt, const char *arg)
{
	switch (opt) {
	case OUT_OPT_JSON:
		opts->format = OUT_JSON;
		return true;
	case OUT_OPT_CSV:
		opts->format = OUT_CSV;
		return true;
	case 'o':
		opts->columns = arg;
		return true;
	case 'H':
		opts->human = true;
		return true;
	case OUT_OPT_NO_HEADER:
		opts->no_header = true;
		return true;
	}
	return false;
}

void out_help_options(FILE *stream)
{
	fputs("Output:\n"
	      "  -o, --output LIST      columns to show, comma-separated; +LIST adds to the defaults\n"
	      "  -H, --human            sizes in human units (K, M, G: powers of 1024) in tables\n"
	      "      --json             one JSON document: bytes and counts as numbers, unknown as null\n"
	      "      --csv              comma-separated values with a header line of column names\n"
	      "      --no-header        leave out the header line\n",
	      stream);
}

void out_help_fields(FILE *stream, const struct out_column *columns, size_t count)
{
	fputs("Fields (the table's header, the JSON and CSV key):\n", stream);
	for (size_t i = 0; i < count; i++) {
		bool in_table = columns[i].where == OUT_EVERYWHERE || columns[i].where == OUT_TABLE_ONLY;
		bool in_data = columns[i].where != OUT_TABLE_ONLY;

		fprintf(stream, "  %-11s %-14s %s\n", in_table ? columns[i].header : "-", in_data ? columns[i].id : "-",
			columns[i].help);
	}
}

void out_help_columns(FILE *stream, const struct out_column *columns, size_t count)
{
	fputs("Columns (* shown by default):\n", stream);
	for (size_t i = 0; i < count; i++)
		fprintf(stream, " %c%-18s %s\n", columns[i].is_default ? '*' : ' ', columns[i].id,
			columns[i].help);
}

int out_column_index(const struct out_table *table, const char *id)
{
	for (size_t i = 0; i < table->ncolumns; i++)
		if (!strcasecmp(table->columns[i].id, id))
			return (int)i;
	return -1;
}

/* Appends the columns named in a comma-separated list; false on an unknown name. */
static bool add_listed_columns(struct out_table *table, const char *list)
{
	char *copy = xstrdup(list), *save = NULL;
	bool ok = true;

	for (char *name = strtok_r(copy, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		int index = out_column_index(table, name);
		if (index < 0) {
			warn_msg("unknown column '%s' (--help-all lists them)", name);
			ok = false;
			break;
		}
		table->shown[table->nshown++] = (size_t)index;
	}
	free(copy);
	return ok;
}

static size_t list_length(const char *list)
{
	size_t n = 1;

	for (; *list; list++)
		n += *list == ',';
	return n;
}

struct out_table *out_table_new(const struct out_column *columns, size_t count,
				const struct out_options *opts, const char *rows_key)
{
	struct out_table *table = xcalloc(1, sizeof(*table));
	const char *list = opts->columns;
	bool add_to_defaults = list && *list == '+';

	table->columns = columns;
	table->ncolumns = count;
	table->opts = *opts;
	table->rows_key = rows_key;
	/* Room for the defaults, the list, and every column once more for out_show_column. */
	table->sums = xcalloc(count, sizeof(*table->sums));
	table->sum_unknown = xcalloc(count, sizeof(*table->sum_unknown));
	table->shown = xcalloc(2 * count + (list ? list_length(list) : 0), sizeof(*table->shown));
	table->data = xcalloc(2 * count + (list ? list_length(list) : 0), sizeof(*table->data));

	if (!list || add_to_defaults)
		for (size_t i = 0; i < count; i++)
			if (columns[i].is_default)
				table->shown[table->nshown++] = i;
	if (list && !add_listed_columns(table, list + add_to_defaults)) {
		out_table_free(table);
		return NULL;
	}
	if (!table->nshown) {
		warn_msg("no columns to show");
		out_table_free(table);
		return NULL;
	}
	return table;
}

static void row_free(const struct out_table *table, struct out_row *row)
{
	if (!row)
		return;
	for (size_t i = 0; i < table->ncolumns; i++)
		if (table->columns[i].kind == OUT_TEXT && row->cells[i].state == CELL_SET)
			free(row->cells[i].text);
	free(row->cells);
	free(row);
}

void out_table_free(struct out_table *table)
{
	if (!table)
		return;
	for (size_t i = 0; i < table->nrows; i++)
		row_free(table, table->rows[i]);
	row_free(table, table->total);
	row_free(table, table->group);
	row_free(table, table->spare);
	scols_unref_table(table->scols);
	if (table->line)
		free(table->line->text);
	free(table->line);
	for (size_t i = 0; i < table->nextras; i++) {
		free(table->extras[i].key);
		json_object_put(table->extras[i].value);
	}
	free(table->extras);
	free(table->rows);
	free(table->shown);
	free(table->data);
	free(table->sums);
	free(table->sum_unknown);
	free(table);
}

static struct out_row *row_new(struct out_table *table)
{
	struct out_row *row = table->spare;

	if (row) { /* streaming: the last row written, emptied */
		table->spare = NULL;
		row->order = table->nrows;
		return row;
	}
	row = xcalloc(1, sizeof(*row));

	row->table = table;
	row->order = table->nrows;
	row->cells = xcalloc(table->ncolumns, sizeof(*row->cells));
	return row;
}

static void emit_row(struct out_table *table, const struct out_row *row, FILE *stream);
static int table_stream_begin(struct out_table *table);

/* A table whose rows are held until TABLE_HELD have come (see table_stream_begin). */
static bool table_holds_rows(const struct out_table *table)
{
	return table->stream && table->opts.format == OUT_TABLE && !table->lines && !table->summary_only &&
	       !table->scols && !table->error;
}

/* Adds a complete row to the sums of the TOTAL row. */
static void sum_row(struct out_table *table, const struct out_row *row)
{
	for (size_t c = 0; c < table->ncolumns; c++) {
		if (table->columns[c].kind != OUT_COUNT && table->columns[c].kind != OUT_BYTES)
			continue;
		if (row->cells[c].state == CELL_SET)
			table->sums[c] += row->cells[c].count;
		else
			table->sum_unknown[c] = true;
	}
}

/*
 * The last row added is complete: it is added up, and written out at once when
 * streaming, or dropped when only the total is wanted.
 */
static void complete_pending(struct out_table *table)
{
	if (!table->pending)
		return;
	sum_row(table, table->pending);
	if (table_holds_rows(table)) {
		if (table->nrows <= TABLE_HELD) {
			table->pending = NULL;
			return;
		}
		table->nrows--; /* the rows before this one, printed together; then this one */
		table->error = table_stream_begin(table);
		table->rows[table->nrows++] = table->pending;
	}
	if (table->summary_only || table->stream) {
		if (!table->summary_only)
			emit_row(table, table->pending, table->stream);
		/* Kept, emptied, for the next row: a million rows make no million allocations. */
		for (size_t c = 0; c < table->ncolumns; c++)
			if (table->columns[c].kind == OUT_TEXT && table->pending->cells[c].state == CELL_SET)
				free(table->pending->cells[c].text);
		memset(table->pending->cells, 0, table->ncolumns * sizeof(*table->pending->cells));
		row_free(table, table->spare);
		table->spare = table->pending;
		table->nrows--;
	}
	table->pending = NULL;
}

struct out_row *out_row_add(struct out_table *table)
{
	complete_pending(table);
	if (table->nrows == table->rows_capacity) {
		table->rows_capacity = table->rows_capacity ? table->rows_capacity * 2 : 64;
		table->rows = xrealloc(table->rows, table->rows_capacity * sizeof(*table->rows));
	}
	return table->pending = table->rows[table->nrows++] = row_new(table);
}

void out_table_flush(struct out_table *table)
{
	if (!table->stream)
		return;
	if (table->lines && !table->pending && !table->started && !table->group)
		emit_row(table, NULL, table->stream); /* the header, now */
	complete_pending(table);
}

void out_table_total(struct out_table *table, size_t label_column, const char *label)
{
	table->want_total = true;
	table->total_label_column = label_column;
	table->total_label = label;
}

struct out_row *out_row_total(struct out_table *table)
{
	table->want_total = false;
	if (!table->total)
		table->total = row_new(table);
	return table->total;
}

void out_table_summary_only(struct out_table *table, size_t label_column, const char *label)
{
	out_table_total(table, label_column, label);
	table->summary_only = true;
}

/* The value of a sum, by column id; false when unknown or not a sum. */
static bool sum_of(const struct out_table *table, const char *id, size_t len, uint64_t *value)
{
	for (size_t c = 0; c < table->ncolumns; c++)
		if (strlen(table->columns[c].id) == len && !strncmp(table->columns[c].id, id, len)) {
			*value = table->sums[c];
			return !table->sum_unknown[c] &&
			       (table->columns[c].kind == OUT_COUNT || table->columns[c].kind == OUT_BYTES);
		}
	return false;
}

static void build_total(struct out_table *table)
{
	struct out_row *row = row_new(table);

	for (size_t c = 0; c < table->ncolumns; c++) {
		const struct out_column *col = &table->columns[c];
		const char *slash = col->total_ratio ? strchr(col->total_ratio, '/') : NULL;
		uint64_t numerator, denominator;

		if ((col->kind == OUT_COUNT || col->kind == OUT_BYTES) && !table->sum_unknown[c])
			out_set_count(row, c, table->sums[c]);
		else if (col->kind == OUT_PERCENT && slash &&
			 sum_of(table, col->total_ratio, (size_t)(slash - col->total_ratio), &numerator) &&
			 sum_of(table, slash + 1, strlen(slash + 1), &denominator))
			out_set_percent(row, c, denominator ? 100.0 * (double)numerator / (double)denominator : 0.0);
	}
	out_set_text(row, table->total_label_column, table->total_label);
	table->total = row;
}

size_t out_table_rows(const struct out_table *table)
{
	return table->nrows;
}

/* The cell, emptied of any earlier text. Callers pass their own column enum, so it is in range. */
static struct out_cell *cell_reset(struct out_row *row, size_t column)
{
	struct out_cell *cell = &row->cells[column];

	if (row->table->columns[column].kind == OUT_TEXT && cell->state == CELL_SET)
		free(cell->text);
	cell->state = CELL_UNKNOWN;
	return cell;
}

void out_set_text(struct out_row *row, size_t column, const char *text)
{
	struct out_cell *cell = cell_reset(row, column);

	if (text) {
		cell->text = xstrdup(text); /* as it is: each format escapes what it must */
		cell->state = CELL_SET;
	}
}

void out_set_count(struct out_row *row, size_t column, uint64_t value)
{
	struct out_cell *cell = cell_reset(row, column);

	cell->count = value;
	cell->state = CELL_SET;
}

void out_set_count_if(struct out_row *row, size_t column, uint64_t value, bool known)
{
	if (known)
		out_set_count(row, column, value);
	else
		out_set_unknown(row, column);
}

void out_set_real(struct out_row *row, size_t column, double value)
{
	struct out_cell *cell = cell_reset(row, column);

	cell->real = value;
	cell->state = CELL_SET;
}

void out_set_percent(struct out_row *row, size_t column, double value)
{
	out_set_real(row, column, value);
}

void out_set_unknown(struct out_row *row, size_t column)
{
	cell_reset(row, column);
}

void out_set_ratio(struct out_row *row, size_t column, uint64_t part, uint64_t whole)
{
	if (whole)
		out_set_real(row, column, (double)part / (double)whole);
	else
		out_set_unknown(row, column);
}

bool out_column_shown(const struct out_table *table, size_t column)
{
	for (size_t i = 0; i < table->nshown; i++)
		if (table->shown[i] == column)
			return true;
	return false;
}

void out_show_column(struct out_table *table, size_t column)
{
	if (!out_column_shown(table, column))
		table->shown[table->nshown++] = column;
	table->data_known = false;
}

void out_json_add(struct out_table *table, const char *key, struct json_object *value)
{
	table->extras = xrealloc(table->extras, (table->nextras + 1) * sizeof(*table->extras));
	table->extras[table->nextras].key = xstrdup(key);
	table->extras[table->nextras].value = value;
	table->nextras++;
}

/* Sorting state for qsort, which takes no context argument. */
static const struct out_table *sort_table;
static size_t sort_column;
static int sort_direction;

static int compare_values(const struct out_cell *x, const struct out_cell *y, enum out_kind kind)
{
	if (kind == OUT_TEXT)
		return strcmp(x->text, y->text);
	if (is_real(kind))
		return (x->real < y->real) - (x->real > y->real);
	return (x->count < y->count) - (x->count > y->count);
}

static int compare_rows(const void *a, const void *b)
{
	const struct out_row *row_a = *(struct out_row *const *)a;
	const struct out_row *row_b = *(struct out_row *const *)b;
	const struct out_cell *x = &row_a->cells[sort_column];
	const struct out_cell *y = &row_b->cells[sort_column];
	int order;

	if (x->state != CELL_SET || y->state != CELL_SET)
		order = (x->state != CELL_SET) - (y->state != CELL_SET); /* unknown last, always */
	else
		order = compare_values(x, y, sort_table->columns[sort_column].kind) * sort_direction;
	/* qsort is not stable: ties keep the order the rows were added in. */
	return order ? order : (row_a->order > row_b->order) - (row_a->order < row_b->order);
}

int out_table_sort(struct out_table *table, const char *id, bool reverse)
{
	int index = out_column_index(table, id);

	if (index < 0)
		return -1;
	sort_table = table;
	sort_column = (size_t)index;
	sort_direction = reverse ? -1 : 1;
	if (table->nrows)
		qsort(table->rows, table->nrows, sizeof(*table->rows), compare_rows);
	return 0;
}

/* A whole number in decimal, without printf's cost: a monitor writes a million of them. */
static const char *count_text(uint64_t value, char *buf, size_t len)
{
	char digits[24], *p = digits + sizeof(digits);
	size_t n;

	*--p = '\0';
	do
		*--p = (char)('0' + value % 10);
	while (value /= 10);
	n = (size_t)(digits + sizeof(digits) - p);
	if (n > len)
		n = len; /* never: buffers hold 64 */
	memcpy(buf, p, n);
	buf[n - 1] = '\0';
	return buf;
}

/* A real as JSON has it (out_json_real): whole numbers as integers, else three decimals, six digits below 1. */
static const char *real_text(double value, char *buf, size_t len)
{
	if (value == rint(value) && fabs(value) < 9e15)
		snprintf(buf, len, "%" PRId64, (int64_t)value);
	else
		snprintf(buf, len, fabs(value) >= 1 ? "%.3f" : "%.6g", value);
	return buf;
}

/* A cell as text for a table or CSV: NULL when unknown. Tables get human units, CSV raw ones. */
static const char *format_cell(const struct out_table *table, size_t column,
			       const struct out_cell *cell, char *buf, size_t len)
{
	const struct out_column *col = &table->columns[column];
	bool in_table = table->opts.format == OUT_TABLE;

	if (cell->state != CELL_SET)
		return NULL;
	switch (col->kind) {
	case OUT_TEXT:
		return cell->text;
	case OUT_BYTES:
		if (table->opts.human && in_table)
			return human_size(cell->count, buf, len);
		break;
	case OUT_USEC:
		if (in_table) {
			snprintf(buf, len, "%.2f", (double)cell->count / 1e3);
			return buf;
		}
		break;
	case OUT_SEC:
		if (in_table) {
			snprintf(buf, len, "%.2f", (double)cell->count / 1e9);
			return buf;
		}
		break;
	case OUT_BYTE_RATE:
		if (table->opts.human && in_table)
			return human_size(cell->real > 0 ? (uint64_t)(cell->real + 0.5) : 0, buf, len);
		snprintf(buf, len, "%.*f", in_table ? 0 : 2, cell->real);
		return buf;
	case OUT_PERCENT:
	case OUT_FLOAT:
		snprintf(buf, len, "%.*f", (int)decimals_of(col), cell->real);
		return buf;
	case OUT_RATIO:
		if (in_table)
			snprintf(buf, len, "%.*f%%", (int)decimals_of(col), 100 * cell->real);
		else
			real_text(cell->real, buf, len);
		return buf;
	case OUT_MIB:
		if (in_table) {
			snprintf(buf, len, "%.0f", (double)cell->count / (1 << 20));
			return buf;
		}
		break;
	case OUT_CLOCK:
		if (in_table) {
			time_t seconds = (time_t)(cell->count / 1000000000u);
			struct tm tm;

			if (!localtime_r(&seconds, &tm) || !strftime(buf, len, "%H:%M:%S", &tm))
				return NULL;
			return buf;
		}
		break;
	case OUT_COUNT:
		break;
	}
	return count_text(cell->count, buf, len);
}

static const char *header_of(const struct out_table *table, const struct out_column *col)
{
	return table->opts.human && col->header_human ? col->header_human : col->header;
}

/* Whether a column is among the first n of the data columns. */
static bool in_data_columns(const struct out_table *table, size_t n, size_t column)
{
	for (size_t i = 0; i < n; i++)
		if (table->data[i] == column)
			return true;
	return false;
}

/*
 * The columns JSON and CSV print, in their order: the OUT_GROUP ones first (a group's JSON
 * line has them before its rows), then the others as shown. A column listed twice is
 * printed twice in CSV, once in JSON (an object has a key once). Returns how many.
 */
static size_t data_columns(struct out_table *table)
{
	size_t n = 0;

	if (table->data_known)
		return table->ndata;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < table->nshown; i++) {
			const struct out_column *col = &table->columns[table->shown[i]];

			if (in_data(col) && (col->where == OUT_GROUP) == !pass &&
			    !(table->opts.format == OUT_JSON && in_data_columns(table, n, table->shown[i])))
				table->data[n++] = table->shown[i];
		}
	table->data_known = true;
	return table->ndata = n;
}

/* A row's cell; the group's for an OUT_GROUP column of a group's row. */
static const struct out_cell *cell_of(const struct out_table *table, const struct out_row *row, size_t column)
{
	if (table->group && row != table->group && table->columns[column].where == OUT_GROUP)
		return &table->group->cells[column];
	return &row->cells[column];
}

/* The libsmartcols table of the shown columns, without lines. */
static struct libscols_table *scols_of(const struct out_table *table)
{
	struct libscols_table *tb = scols_new_table();

	if (!tb)
		return NULL;
	scols_table_enable_noheadings(tb, table->opts.no_header);
	/*
	 * Text comes escaped as every name is (escape_text, ESCAPE_TERMINAL), the same as in lines
	 * and messages: libsmartcols' own encoding would let bidirectional controls through and
	 * write a backslash before an x as \x5c, which would escape the escapes.
	 */
	scols_table_enable_noencoding(tb, 1);
	for (size_t i = 0; i < table->nshown; i++) {
		const struct out_column *col = &table->columns[table->shown[i]];

		if (in_table(col) && !scols_table_new_column(tb, header_of(table, col), 0,
							    col->kind == OUT_TEXT ? 0 : SCOLS_FL_RIGHT)) {
			scols_unref_table(tb);
			return NULL;
		}
	}
	return tb;
}

/* Sets the cells of a libsmartcols line (libsmartcols copies them) from a row. */
static int scols_fill(const struct out_table *table, struct libscols_line *line, const struct out_row *row)
{
	char buf[64];

	for (size_t i = 0, n = 0; i < table->nshown; i++) {
		size_t c = table->shown[i];
		const char *text;
		char *escaped = NULL;
		int rc;

		if (!in_table(&table->columns[c]))
			continue;
		text = format_cell(table, c, &row->cells[c], buf, sizeof(buf));
		if (text && table->columns[c].kind == OUT_TEXT)
			text = escaped = escape_text(text, ESCAPE_TERMINAL);
		rc = scols_line_set_data(line, n++, text ? text : "-");
		free(escaped);
		if (rc)
			return -ENOMEM;
	}
	return 0;
}

/*
 * The rows held and the TOTAL row (when with_total), as one libsmartcols table that sizes
 * its columns to fit them all. Each row is freed as libsmartcols takes its copy, so a long
 * table is not held twice. *printed, when not NULL, keeps the table (its column widths).
 */
static int print_scols(struct out_table *table, FILE *stream, bool with_total, struct libscols_table **printed)
{
	struct libscols_table *tb = scols_of(table);
	int rc = -ENOMEM;

	if (!tb)
		return -ENOMEM;
	for (size_t r = 0; r <= table->nrows; r++) {
		struct out_row *row = r < table->nrows ? table->rows[r] : with_total ? table->total : NULL;
		struct libscols_line *line;

		if (!row)
			break;
		line = scols_table_new_line(tb, NULL);
		if (!line || scols_fill(table, line, row))
			goto cleanup;
		if (r < table->nrows) {
			row_free(table, row);
			table->rows[r] = NULL;
		}
	}
	scols_table_set_stream(tb, stream);
	rc = scols_print_table(tb);
	if (!rc && printed) {
		*printed = tb;
		return 0;
	}
cleanup:
	scols_unref_table(tb);
	return rc;
}

/*
 * Prints the rows held and keeps the column widths they gave, for the rows to come (see
 * TABLE_HELD). The rows held are gone after, printed or not.
 */
static int table_stream_begin(struct out_table *table)
{
	struct libscols_table *tb = NULL;
	struct libscols_column *column;
	struct libscols_iter *iter;
	int rc = print_scols(table, table->stream, false, &tb);

	for (size_t r = 0; r < table->nrows; r++) /* those print_scols did not take, when it failed */
		row_free(table, table->rows[r]);
	table->nrows = 0;
	if (rc)
		return rc;
	iter = scols_new_iter(SCOLS_ITER_FORWARD);
	if (!iter) {
		scols_unref_table(tb);
		return -ENOMEM;
	}
	while (scols_table_next_column(tb, iter, &column) == 0)
		scols_column_set_whint(column, (double)scols_column_get_width(column));
	scols_free_iter(iter);
	scols_table_remove_lines(tb);
	scols_table_enable_noheadings(tb, 1); /* the header is out */
	/* Whether the output is a terminal, as libsmartcols found it: not asked again each row. */
	scols_table_set_termforce(tb, isatty(STDOUT_FILENO) ? SCOLS_TERMFORCE_ALWAYS : SCOLS_TERMFORCE_NEVER);
	scols_table_set_default_symbols(tb); /* kept, rather than made and dropped at each row */
	table->scols_line = scols_table_new_line(tb, NULL);
	if (!table->scols_line) {
		scols_unref_table(tb);
		return -ENOMEM;
	}
	table->scols = tb;
	return 0;
}

/* One row on its own line, in the widths of the rows held first. */
static int table_stream_row(struct out_table *table, const struct out_row *row)
{
	int rc = scols_fill(table, table->scols_line, row);

	return rc ? rc : scols_print_table(table->scols);
}

/*
 * RFC 4180: quoted when it holds a separator, a quote, a line break or edge spaces. CSV is
 * read on terminals as often as by programs: control characters but line feeds and tabs
 * (a carriage return, an escape sequence, a bell), DEL, bytes that are not UTF-8 and the
 * backslash are written as \xNN first. A name with spaces and line breaks stays exact.
 */
void out_csv_field(FILE *stream, const char *raw)
{
	char *text = escape_text(raw, ESCAPE_CONTROL | ESCAPE_KEEP_BREAKS | ESCAPE_BACKSLASH);
	size_t len = strlen(text);

	if (!strpbrk(text, ",\"\n") && (!len || (text[0] != ' ' && text[len - 1] != ' '))) {
		fputs(text, stream);
	} else {
		fputc('"', stream);
		for (const char *p = text; *p; p++) {
			if (*p == '"')
				fputc('"', stream);
			fputc(*p, stream);
		}
		fputc('"', stream);
	}
	free(text);
}

static void csv_row(struct out_table *table, const struct out_row *row, FILE *stream)
{
	size_t n = data_columns(table);
	char buf[64];

	for (size_t i = 0; i < n; i++) {
		size_t c = table->data[i];
		const char *text = format_cell(table, c, cell_of(table, row, c), buf, sizeof(buf));
		if (i)
			fputc(',', stream);
		if (text && table->columns[c].kind == OUT_TEXT)
			out_csv_field(stream, text);
		else if (text) /* a number: nothing to escape or quote */
			fputs(text, stream);
	}
	fputc('\n', stream);
}

static void csv_header(struct out_table *table, FILE *stream)
{
	size_t n = data_columns(table);

	if (table->opts.no_header)
		return;
	for (size_t i = 0; i < n; i++)
		fprintf(stream, "%s%s", i ? "," : "", table->columns[table->data[i]].id);
	fputc('\n', stream);
}

/* What a text is escaped of before JSON's own escapes: the backslash (JSON escapes control characters itself). */
#define JSON_TEXT_ESCAPE ESCAPE_BACKSLASH

struct json_object *out_json_string(const char *raw)
{
	struct json_object *value;
	char *text;

	if (!raw)
		return NULL;
	text = escape_text(raw, JSON_TEXT_ESCAPE);
	value = json_object_new_string(text);
	free(text);
	return value;
}

/* A number cell in JSON: counts in decimal, OUT_RATIO as out_json_real has it, other reals in their decimals. */
static const char *json_number(const struct out_column *col, const struct out_cell *cell, char *buf, size_t len)
{
	if (col->kind == OUT_RATIO)
		return real_text(cell->real, buf, len);
	if (is_real(col->kind)) {
		snprintf(buf, len, "%.*f", (int)decimals_of(col), cell->real);
		return buf;
	}
	return count_text(cell->count, buf, len);
}

static struct json_object *json_value(const struct out_column *col, const struct out_cell *cell)
{
	char buf[64];

	if (cell->state != CELL_SET)
		return NULL;
	if (col->kind == OUT_TEXT)
		return out_json_string(cell->text);
	if (col->kind == OUT_RATIO)
		return out_json_real(cell->real);
	if (is_real(col->kind))
		return json_object_new_double_s(cell->real, json_number(col, cell, buf, sizeof(buf)));
	return json_object_new_uint64(cell->count);
}

/*
 * Whether a row's JSON object has a column's key. In a group, a row has no OUT_GROUP keys
 * (its group's line has them), and the group's own row has only those.
 */
static bool in_object(const struct out_table *table, const struct out_row *row, size_t column)
{
	return !table->group || (table->columns[column].where == OUT_GROUP) == (row == table->group);
}

/* A row as a JSON object (JSON lines write theirs as text: line_json_members). */
static struct json_object *json_row(struct out_table *table, const struct out_row *row)
{
	struct json_object *object = json_object_new_object();
	size_t n = data_columns(table);

	for (size_t i = 0; i < n; i++) {
		size_t c = table->data[i];

		if (in_object(table, row, c))
			json_object_object_add(object, table->columns[c].id,
					       json_value(&table->columns[c], &row->cells[c]));
	}
	return object;
}

void out_json_write(FILE *stream, const char *json, size_t len)
{
	bool utf8 = locale_is_utf8();
	size_t done = 0, i = 0;

	while (i < len) {
		uint32_t c;
		size_t n = 1;

		while (i < len && (unsigned char)json[i] < 0x7f) /* ASCII, most of it: json-c escaped its controls */
			i++;
		if (i == len)
			break;
		c = (unsigned char)json[i];
		if (c >= 0x80 && (!(n = utf8_decode(json + i, &c)) || i + n > len)) /* never, from out_json_string */
			n = 1, c = 0xfffd;
		else if (!char_hidden(c) && utf8 && n > 1) {
			i += n;
			continue;
		}
		fwrite(json + done, 1, i - done, stream);
		if (c > 0xffff) /* a surrogate pair, as JSON writes what UTF-16 cannot hold in one unit */
			fprintf(stream, "\\u%04x\\u%04x", 0xd800 + ((c - 0x10000) >> 10),
				0xdc00 + ((c - 0x10000) & 0x3ff));
		else
			fprintf(stream, "\\u%04x", c);
		i += n;
		done = i;
	}
	fwrite(json + done, 1, len - done, stream);
}

#define JSON_FLAGS (JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE)

/* Prints a json-c value (out_json_write) and drops it. */
static void json_emit(struct json_object *value, FILE *stream)
{
	const char *text = json_object_to_json_string_ext(value, JSON_FLAGS);

	out_json_write(stream, text, strlen(text));
	json_object_put(value);
}

/*
 * The JSON document has one row per line, so it can be written while rows arrive:
 * {"files": [
 * {"name": "a", ...},
 * {"name": "b", ...}
 * ],
 * "total": {...},
 * "page_size": 4096}
 */
static void json_begin(struct out_table *table, FILE *stream)
{
	struct json_object *key = json_object_new_string(table->rows_key);

	fputc('{', stream);
	json_emit(key, stream);
	fputs(": [", stream);
}

static void json_end(struct out_table *table, FILE *stream)
{
	fputs("\n]", stream);
	if (table->total) {
		fputs(",\n\"total\": ", stream);
		json_emit(json_row(table, table->total), stream);
	}
	for (size_t i = 0; i < table->nextras; i++) {
		struct json_object *key = json_object_new_string(table->extras[i].key);
		fputs(",\n", stream);
		json_emit(key, stream);
		fputs(": ", stream);
		json_emit(table->extras[i].value, stream);
		table->extras[i].value = NULL;
	}
	fputs("}\n", stream);
}

/* ---- Lines ---------------------------------------------------------------------------------- */

static char *line_room(struct line_buffer *line, size_t len)
{
	if (line->len + len > line->capacity) {
		line->capacity = 2 * (line->len + len) + 256;
		line->text = xrealloc(line->text, line->capacity);
	}
	line->len += len;
	return line->text + line->len - len;
}

static void line_add(struct line_buffer *line, const char *text, size_t len)
{
	memcpy(line_room(line, len), text, len);
}

/* The table's line buffer, emptied. */
static struct line_buffer *line_start(struct out_table *table)
{
	if (!table->line)
		table->line = xcalloc(1, sizeof(*table->line));
	table->line->len = 0;
	return table->line;
}

static void line_spaces(struct line_buffer *line, size_t count)
{
	memset(line_room(line, count), ' ', count);
}

/*
 * Text in a width (negative: left-aligned), in columns of a terminal; cut to it when cut, its
 * last column then a '+' that says so (as top marks a field it cut).
 */
static void line_cell(struct line_buffer *line, const char *text, int width, bool cut)
{
	size_t limit = width < 0 ? (size_t)(-(long)width) : (size_t)width, columns;
	size_t end = text_fit(text, SIZE_MAX, &columns);
	bool marked = false;

	if (cut && limit && columns > limit) {
		end = text_fit(text, limit - 1, &columns);
		marked = true;
	}
	if (width > 0 && columns + marked < limit)
		line_spaces(line, limit - columns - marked);
	line_add(line, text, end);
	if (marked) {
		line_add(line, "+", 1);
		columns++;
	}
	if (width < 0 && columns < limit)
		line_spaces(line, limit - columns);
}

/*
 * A number wider than its column: with fewer decimals, as iostat does, rather than a line
 * pushed past the terminal's edge (289666.83 in 8 columns is 289667). Text of other kinds as it is.
 */
static const char *fit_number(const char *text, int width, char *buf, size_t len)
{
	const char *dot = strchr(text, '.');
	int decimals;
	char *end;
	double value;

	if (width <= 0 || (int)strlen(text) <= width || !dot)
		return text;
	value = strtod(text, &end);
	if (*end || !isfinite(value))
		return text;
	for (decimals = (int)strlen(dot + 1) - 1; decimals >= 0; decimals--)
		if (snprintf(buf, len, "%.*f", decimals, value) <= width)
			break;
	return buf;
}

/*
 * One line of a table in fixed widths: the row's, or the header when row is NULL. Columns
 * of width 0 come last, after two spaces. Text is escaped for a terminal; on a full screen
 * (fit_numbers) a number wider than its column loses decimals.
 */
static void table_line(struct out_table *table, const struct out_row *row, FILE *stream)
{
	struct line_buffer *line;
	bool first = true;
	char buf[64], fitted[64];

	line = line_start(table);
	for (int last = 0; last < 2; last++)
		for (size_t i = 0; i < table->nshown; i++) {
			size_t c = table->shown[i];
			const struct out_column *col = &table->columns[c];
			char *escaped = NULL;
			const char *text;

			if (!in_table(col) || (col->width == 0) != last)
				continue;
			if (!first)
				line_spaces(line, last ? 2 : 1);
			first = false;
			if (!row) {
				text = header_of(table, col);
			} else {
				text = format_cell(table, c, &row->cells[c], buf, sizeof(buf));
				if (!text)
					text = "-";
				else if (col->kind == OUT_TEXT)
					text = escaped = escape_text(text, ESCAPE_TERMINAL);
				else if (text == buf && table->opts.fit_numbers)
					text = fit_number(text, col->width, fitted, sizeof(fitted));
			}
			line_cell(line, text, col->width, row && col->kind == OUT_TEXT);
			free(escaped);
		}
	line_add(line, "\n", 1);
	fwrite(line->text, 1, line->len, stream);
}

/*
 * JSON lines are written as text, without json-c: its object per cell and hash table per row
 * cost four times the instructions of the row's CSV. The bytes are those json-c writes with
 * JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE (tests/unit/test_json_lines.c holds
 * them to it); then out_json_write, as every JSON.
 */

/* A string as json-c writes it: " \ \b \f \n \r \t escaped by a letter, other controls as \u00xx. */
static void line_json_string(struct line_buffer *line, const char *text)
{
	static const char letter[0x20] = { ['\b'] = 'b', ['\f'] = 'f', ['\n'] = 'n', ['\r'] = 'r', ['\t'] = 't' };
	static const char hex[] = "0123456789abcdef";

	line_add(line, "\"", 1);
	for (const char *p = text;; p++) {
		unsigned char c = (unsigned char)*p;
		char *o;

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		line_add(line, text, (size_t)(p - text));
		if (!c)
			break;
		text = p + 1;
		if (c >= 0x20 || letter[c]) {
			o = line_room(line, 2);
			o[0] = '\\';
			o[1] = c >= 0x20 ? (char)c : letter[c];
		} else {
			o = line_room(line, 6);
			memcpy(o, "\\u00", 4);
			o[4] = hex[c >> 4];
			o[5] = hex[c & 0xf];
		}
	}
	line_add(line, "\"", 1);
}

/* A cell's value, as json_value's object is written. */
static void line_json_value(struct line_buffer *line, const struct out_column *col, const struct out_cell *cell)
{
	const char *text = "null";
	char buf[64];

	if (cell->state == CELL_SET && col->kind == OUT_TEXT) {
		char *escaped = escape_text(cell->text, JSON_TEXT_ESCAPE);

		line_json_string(line, escaped);
		free(escaped);
		return;
	}
	if (cell->state == CELL_SET)
		text = json_number(col, cell, buf, sizeof(buf));
	line_add(line, text, strlen(text));
}

/* A row's JSON object as json_row has it, without its braces: "a":1,"b":null */
static void line_json_members(struct out_table *table, const struct out_row *row, struct line_buffer *line)
{
	size_t n = data_columns(table), start = line->len;

	for (size_t i = 0; i < n; i++) {
		size_t c = table->data[i];

		if (!in_object(table, row, c))
			continue;
		if (line->len > start)
			line_add(line, ",", 1);
		line_json_string(line, table->columns[c].id);
		line_add(line, ":", 1);
		line_json_value(line, &table->columns[c], &row->cells[c]);
	}
}

/* A group's JSON line up to its rows: {"time_ns":1,...,"processes":[ */
static void json_group_open(struct out_table *table, FILE *stream)
{
	struct line_buffer *line;

	if (table->group_open)
		return;
	table->group_open = true;
	line = line_start(table);
	line_add(line, "{", 1);
	line_json_members(table, table->group, line);
	if (line->len > 1)
		line_add(line, ",", 1);
	line_json_string(line, table->rows_key ? table->rows_key : "rows");
	line_add(line, ":[", 2);
	out_json_write(stream, line->text, line->len);
}

/* Writes one row as a line (or, given NULL, the header if it is not out yet). */
static void emit_line(struct out_table *table, const struct out_row *row, FILE *stream)
{
	enum out_format format = table->opts.format;

	if (!table->started) {
		table->started = true;
		/* A table in groups has its header at each group. */
		if (!table->opts.no_header && format == OUT_CSV)
			csv_header(table, stream);
		else if (!table->opts.no_header && format == OUT_TABLE && !table->group)
			table_line(table, NULL, stream);
	}
	if (!row)
		return;
	if (format == OUT_TABLE) {
		table_line(table, row, stream);
	} else if (format == OUT_CSV) {
		csv_row(table, row, stream);
	} else {
		struct line_buffer *line;

		if (table->group)
			json_group_open(table, stream);
		line = line_start(table);
		if (table->group_rows)
			line_add(line, ",", 1);
		line_add(line, "{", 1);
		line_json_members(table, row, line);
		line_add(line, table->group ? "}" : "}\n", table->group ? 1 : 2);
		out_json_write(stream, line->text, line->len);
	}
	table->emitted++;
	if (table->group)
		table->group_rows++;
}

void out_table_lines(struct out_table *table, FILE *stream)
{
	table->lines = true;
	table->stream = stream;
}

struct out_row *out_table_group(struct out_table *table, const char *title)
{
	FILE *stream = table->stream;

	if (table->group)
		out_table_group_end(table);
	complete_pending(table); /* a row added before the group is not of it */
	table->group = row_new(table);
	table->group_open = false;
	table->group_rows = 0;
	if (table->opts.format == OUT_TABLE && !table->opts.no_header) {
		if (title) {
			char *escaped = escape_text(title, ESCAPE_TERMINAL);

			fputs(escaped, stream);
			fputc('\n', stream);
			free(escaped);
		}
		table_line(table, NULL, stream);
	}
	emit_line(table, NULL, stream); /* CSV's header, once */
	return table->group;
}

int out_table_group_end(struct out_table *table)
{
	FILE *stream = table->stream;

	if (!table->group)
		return 0;
	complete_pending(table);
	if (table->opts.format == OUT_JSON) {
		json_group_open(table, stream);
		fputs("]}\n", stream);
	} else if (table->opts.format == OUT_TABLE) {
		fputc('\n', stream);
	}
	row_free(table, table->group);
	table->group = NULL;
	return ferror(stream) ? -EIO : 0;
}

/* ---- Documents, streamed --------------------------------------------------------------------- */

/* Writes one row in a streamed format, the header or opening first (a table's comes with its first rows). */
static void emit_row(struct out_table *table, const struct out_row *row, FILE *stream)
{
	if (table->lines) {
		emit_line(table, row, stream);
		return;
	}
	if (table->opts.format == OUT_TABLE) {
		if (row && table->scols && !table->error)
			table->error = table_stream_row(table, row);
		return;
	}
	if (!table->started) {
		table->started = true;
		if (table->opts.format == OUT_CSV)
			csv_header(table, stream);
		else
			json_begin(table, stream);
	}
	if (!row)
		return;
	if (table->opts.format == OUT_CSV) {
		csv_row(table, row, stream);
	} else {
		fputs(table->emitted ? ",\n" : "\n", stream);
		json_emit(json_row(table, row), stream);
	}
	table->emitted++;
}

void out_table_stream(struct out_table *table, FILE *stream)
{
	table->stream = stream;
}

static int print_streamed(struct out_table *table, FILE *stream)
{
	for (size_t r = 0; r < table->nrows; r++)
		emit_row(table, table->rows[r], stream);
	emit_row(table, NULL, stream); /* the header or opening, even with no rows */
	if (table->opts.format == OUT_CSV) {
		if (table->total)
			csv_row(table, table->total, stream);
	} else {
		json_end(table, stream);
	}
	return ferror(stream) ? -EIO : 0;
}

struct json_object *out_table_take_json(struct out_table *table, struct json_object **total)
{
	struct json_object *rows;

	complete_pending(table);
	if (table->want_total && !table->total)
		build_total(table);
	rows = json_object_new_array_ext((int)table->nrows);
	for (size_t r = 0; r < table->nrows; r++) {
		json_object_array_add(rows, json_row(table, table->rows[r]));
		row_free(table, table->rows[r]);
	}
	table->nrows = 0;
	*total = table->total ? json_row(table, table->total) : NULL;
	row_free(table, table->total);
	table->total = NULL;
	return rows;
}

int out_table_print(struct out_table *table, FILE *stream)
{
	int rc;

	if (table->lines) { /* what is left: a row pending, a group open */
		out_table_flush(table);
		rc = out_table_group_end(table);
		if (!rc && (fflush(table->stream) || ferror(table->stream)))
			rc = errno ? -errno : -EIO;
		return rc;
	}
	complete_pending(table);
	if (table->want_total && !table->total)
		build_total(table);
	if (table->stream)
		stream = table->stream;
	if (table->opts.format != OUT_TABLE)
		rc = print_streamed(table, stream);
	else if (!table->scols && !table->error)
		rc = print_scols(table, stream, true, NULL); /* the rows held: all of them */
	else if (!table->error && table->total)
		rc = table_stream_row(table, table->total);
	else
		rc = table->error;
	if (!rc && fflush(stream))
		rc = -errno;
	else if (!rc && ferror(stream))
		rc = -EIO;
	return rc;
}

/* Extras are printed in a JSON document only (json_end): other formats make no JSON at all, and
 * so never load json-c (json_dl.c). */
void out_table_add_count(struct out_table *table, const char *key, uint64_t value)
{
	if (table->opts.format == OUT_JSON)
		out_json_add(table, key, json_object_new_uint64(value));
}

void out_table_add_text(struct out_table *table, const char *key, const char *text)
{
	if (table->opts.format == OUT_JSON)
		out_json_add(table, key, out_json_string(text));
}

struct json_object *out_json_real(double value)
{
	char buf[64];

	if (value == rint(value) && fabs(value) < 9e15)
		return json_object_new_int64((int64_t)value);
	return json_object_new_double_s(value, real_text(value, buf, sizeof(buf)));
}

int out_scols_print(FILE *stream, struct libscols_table *table, bool json)
{
	char *text = NULL;
	size_t len = 0;
	FILE *memory;
	int rc;

	if (!json) {
		scols_table_set_stream(table, stream);
		return scols_print_table(table);
	}
	memory = open_memstream(&text, &len);
	if (!memory)
		return -errno;
	scols_table_set_stream(table, memory);
	rc = scols_print_table(table);
	if (fclose(memory) != 0 && !rc)
		rc = -errno;
	if (!rc)
		out_json_write(stream, text, len);
	free(text);
	return rc;
}
