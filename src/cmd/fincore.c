/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fincore.c: a link named fincore takes util-linux fincore's options and columns, with fincore's
 * meanings (PAGES is resident pages there).
 */
#include <errno.h>
#include <getopt.h>
#include <libsmartcols.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cmd/command.h"
#include "cmd/compat.h"
#include "collect/files.h"
#include "collect/pagecache.h"
#include "common/util.h"
#include "render/out.h"

/*
 * fincore's columns (util-linux 2.38), and those 2.41 added where cachestat(2) tells them.
 * A size is in fincore's human form unless -b; a count of pages always a number.
 */
enum {
	COL_PAGES,
	COL_RES,
	COL_SIZE,
	COL_FILE,
	COL_DIRTY_PAGES,
	COL_DIRTY,
	COL_WRITEBACK_PAGES,
	COL_WRITEBACK,
	COL_EVICTED_PAGES,
	COL_EVICTED,
	COL_RECENTLY_EVICTED_PAGES,
	COL_RECENTLY_EVICTED,
	COL_COUNT
};

enum fincore_kind { KIND_PAGES, KIND_BYTES, KIND_TEXT };

static const struct {
	const char *name;
	double width_hint;
	int flags;
	enum fincore_kind kind;
	const char *help;
} infos[COL_COUNT] = {
	[COL_PAGES] = { "PAGES", 1, SCOLS_FL_RIGHT, KIND_PAGES, "file data resident in memory in pages" },
	[COL_RES] = { "RES", 5, SCOLS_FL_RIGHT, KIND_BYTES, "file data resident in memory in bytes" },
	[COL_SIZE] = { "SIZE", 5, SCOLS_FL_RIGHT, KIND_BYTES, "size of the file" },
	[COL_FILE] = { "FILE", 4, 0, KIND_TEXT, "file name" },
	[COL_DIRTY_PAGES] = { "DIRTY_PAGES", 1, SCOLS_FL_RIGHT, KIND_PAGES, "number of dirty pages" },
	[COL_DIRTY] = { "DIRTY", 5, SCOLS_FL_RIGHT, KIND_BYTES, "number of dirty pages in bytes" },
	[COL_WRITEBACK_PAGES] = { "WRITEBACK_PAGES", 1, SCOLS_FL_RIGHT, KIND_PAGES,
				  "number of pages marked for writeback" },
	[COL_WRITEBACK] = { "WRITEBACK", 5, SCOLS_FL_RIGHT, KIND_BYTES,
			    "number of pages marked for writeback in bytes" },
	[COL_EVICTED_PAGES] = { "EVICTED_PAGES", 1, SCOLS_FL_RIGHT, KIND_PAGES, "number of evicted pages" },
	[COL_EVICTED] = { "EVICTED", 5, SCOLS_FL_RIGHT, KIND_BYTES, "number of evicted pages in bytes" },
	[COL_RECENTLY_EVICTED_PAGES] = { "RECENTLY_EVICTED_PAGES", 1, SCOLS_FL_RIGHT, KIND_PAGES,
					 "number of recently evicted pages" },
	[COL_RECENTLY_EVICTED] = { "RECENTLY_EVICTED", 5, SCOLS_FL_RIGHT, KIND_BYTES,
				   "number of recently evicted pages in bytes" },
};

static const int default_columns[] = { COL_RES, COL_PAGES, COL_SIZE, COL_FILE };

struct fincore {
	struct libscols_table *table;
	int columns[64];
	size_t ncolumns;
	bool bytes;
	bool failed;
	bool detail_missing; /* a column only cachestat fills, under mincore */
	/*
	 * How a name is escaped before libsmartcols has it: as fincore escapes it (controls, what
	 * the locale cannot print, bytes that are not UTF-8, a backslash before an x), and also
	 * the bidirectional and invisible characters it lets through (iolens(1), NAMES IN OUTPUT).
	 * 0 for raw output, which escapes every byte beyond ASCII itself.
	 */
	unsigned name_escapes;
	struct refusals refused;
};

static _Noreturn void out_of_memory(void)
{
	warn_errno("libsmartcols", ENOMEM);
	exit(EXIT_FAIL);
}

static _Noreturn void fincore_usage(void)
{
	printf("Usage:\n"
	       " %s [options] file...\n"
	       "\n"
	       "util-linux fincore's options and columns, run by iolens: PAGES is the pages\n"
	       "resident in memory, as in fincore (in iolens pcstat, pages is all the file's\n"
	       "pages and resident ones are 'cached').\n"
	       "\n"
	       "Options:\n"
	       " -J, --json            use JSON output format\n"
	       " -b, --bytes           print sizes in bytes rather than in human readable format\n"
	       " -n, --noheadings      don't print headings\n"
	       " -o, --output <list>   output columns (+list adds to the default ones)\n"
	       " -r, --raw             use raw output format\n"
	       "\n"
	       " -h, --help            display this help\n"
	       " -V, --version         display version\n"
	       "\n"
	       "Available output columns:\n",
	       program_name);
	for (size_t i = 0; i < COL_COUNT; i++)
		printf(" %22s  %s\n", infos[i].name, infos[i].help);
	exit(EXIT_OK);
}

/* util-linux's size_to_human_string with a one-letter suffix: 0B, 1023B, 148K, 147.8K, 1.5M. */
static void human(uint64_t bytes, char *out, size_t len)
{
	static const char letters[] = "BKMGTPE";
	int exponent = 0;
	uint64_t whole, fraction = 0;

	while (exponent < 60 && bytes >= (1ull << (exponent + 10)))
		exponent += 10;
	whole = exponent ? bytes >> exponent : bytes;
	if (exponent) {
		fraction = bytes & ((1ull << exponent) - 1);
		if (fraction >= UINT64_MAX / 1000)
			fraction = ((fraction / 1024) * 1000) / (1ull << (exponent - 10));
		else
			fraction = (fraction * 1000) / (1ull << exponent);
		fraction = ((fraction + 50) / 100) * 10; /* one digit after the point, rounded */
		if (fraction == 100) {
			whole++;
			fraction = 0;
		}
	}
	if (fraction)
		snprintf(out, len, "%llu.%llu%c", (unsigned long long)whole, (unsigned long long)(fraction / 10),
			 letters[exponent / 10]);
	else
		snprintf(out, len, "%llu%c", (unsigned long long)whole, letters[exponent / 10]);
}

static int column_by_name(const char *name, size_t len)
{
	for (int i = 0; i < COL_COUNT; i++)
		if (strlen(infos[i].name) == len && !strncasecmp(infos[i].name, name, len))
			return i;
	return -1;
}

static void parse_columns(struct fincore *f, const char *list)
{
	if (*list == '+') {
		for (size_t i = 0; i < sizeof(default_columns) / sizeof(default_columns[0]); i++)
			f->columns[f->ncolumns++] = default_columns[i];
		list++;
	}
	while (*list) {
		size_t len = strcspn(list, ",");
		int column = column_by_name(list, len);

		if (column < 0) {
			warn_msg("unknown column: %.*s", (int)len, list);
			exit(EXIT_FAIL);
		}
		if (f->ncolumns == sizeof(f->columns) / sizeof(f->columns[0]))
			usage_error("-o: too many columns");
		f->columns[f->ncolumns++] = column;
		list += len;
		if (*list == ',')
			list++;
	}
}

static void set_cell(struct fincore *f, struct libscols_line *line, size_t n, enum fincore_kind kind,
		     uint64_t value, bool known)
{
	char text[48];

	if (!known)
		return; /* an empty cell: fincore's way to leave a value out */
	if (kind == KIND_BYTES && !f->bytes)
		human(value, text, sizeof(text));
	else
		snprintf(text, sizeof(text), "%llu", (unsigned long long)value);
	if (scols_line_set_data(line, n, text))
		out_of_memory();
}

/* One row: the file's size and, when rc is 0, its counts (rc -EPERM: they are unknown). */
static void add_row(struct fincore *f, const struct files_entry *entry, const struct pagecache_stat *counts, int rc)
{
	const struct pagecache_stat stat = *counts;
	struct libscols_line *line;
	const uint64_t page = page_size();

	line = scols_table_new_line(f->table, NULL);
	if (!line)
		out_of_memory();
	for (size_t n = 0; n < f->ncolumns; n++) {
		int column = f->columns[n];
		bool known = rc == 0, detail = known && (stat.detail_known || !entry->size);

		switch (column) {
		case COL_FILE: {
			char *shown = f->name_escapes ? escape_text(entry->path, f->name_escapes) : NULL;

			if (scols_line_set_data(line, n, shown ? shown : entry->path))
				out_of_memory();
			free(shown);
			break;
		}
		case COL_SIZE:
			set_cell(f, line, n, KIND_BYTES, entry->size, true);
			break;
		case COL_PAGES:
		case COL_RES:
			set_cell(f, line, n, infos[column].kind, column == COL_RES ? stat.cached * page : stat.cached,
				 known);
			break;
		default: {
			uint64_t pages = column <= COL_DIRTY ? stat.dirty : column <= COL_WRITEBACK ? stat.writeback
				       : column <= COL_EVICTED ? stat.evicted : stat.recently_evicted;

			if (known && !detail)
				f->detail_missing = true;
			set_cell(f, line, n, infos[column].kind,
				 infos[column].kind == KIND_BYTES ? pages * page : pages, detail);
		}
		}
	}
}

static int visit(const struct files_entry *entry, void *context)
{
	struct fincore *f = context;
	struct pagecache_stat stat = {0};
	int rc = 0;

	if (entry->fd < 0) {
		/* What fincore's open(2) would fail on, in its words; iolens's own refusals (a FIFO) in iolens's. */
		if (entry->error && !entry->reason)
			warn_msg("failed to open: %s: %s", printable_name(entry->path), strerror(entry->error));
		else
			report_walk_error(entry);
		f->failed = true;
		return 0;
	}
	if (entry->size)
		rc = pagecache_query(entry->fd, 0, entry->size, &stat);
	if (rc == -EPERM) {
		refusal_note(&f->refused, entry->path);
		f->failed = true;
	} else if (rc) {
		warn_errno(printable_name(entry->path), -rc);
		f->failed = true;
		return 0;
	}
	add_row(f, entry, &stat, rc);
	return 0;
}

int cmd_fincore(int argc, char **argv)
{
	static const struct option long_options[] = {
		{ "bytes", no_argument, NULL, 'b' },
		{ "noheadings", no_argument, NULL, 'n' },
		{ "output", required_argument, NULL, 'o' },
		{ "json", no_argument, NULL, 'J' },
		{ "raw", no_argument, NULL, 'r' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct fincore f = {0};
	struct files_options walk = {0};
	bool json = false, raw = false, no_headings = false;
	const char *columns = NULL;
	int opt;

	while ((opt = next_option(argc, argv, "bno:JrVh", long_options, NULL)) != -1) {
		switch (opt) {
		case 'b': f.bytes = true; break;
		case 'n': no_headings = true; break;
		case 'o': columns = optarg; break;
		case 'J': json = true; break;
		case 'r': raw = true; break;
		case 'V': print_version();
		case 'h': fincore_usage();
		default: usage_hint();
		}
	}
	if (optind >= argc)
		usage_error("no file specified");
	if (columns)
		parse_columns(&f, columns);
	else
		for (size_t i = 0; i < sizeof(default_columns) / sizeof(default_columns[0]); i++)
			f.columns[f.ncolumns++] = default_columns[i];

	scols_init_debug(0);
	f.table = scols_new_table();
	if (!f.table)
		out_of_memory();
	scols_table_set_name(f.table, "fincore");
	scols_table_enable_raw(f.table, raw);
	scols_table_enable_json(f.table, json); /* after raw: JSON wins, as in fincore */
	/* JSON: the name exact but for bytes that are not UTF-8; out_json_write escapes the rest. */
	f.name_escapes = json ? ESCAPE_BACKSLASH_X : raw ? 0 : ESCAPE_CONTROL | ESCAPE_LOCALE | ESCAPE_BACKSLASH_X;
	scols_table_enable_noencoding(f.table, !json && !raw);
	scols_table_enable_noheadings(f.table, no_headings);
	for (size_t n = 0; n < f.ncolumns; n++) {
		int column = f.columns[n];
		struct libscols_column *cl =
		    scols_table_new_column(f.table, infos[column].name, infos[column].width_hint, infos[column].flags);
		if (!cl)
			out_of_memory();
		if (json)
			scols_column_set_json_type(cl, infos[column].kind == KIND_TEXT ? SCOLS_JSON_STRING
						   : infos[column].kind == KIND_BYTES && !f.bytes ? SCOLS_JSON_STRING
						   : SCOLS_JSON_NUMBER);
	}

	for (int i = optind; i < argc; i++) {
		struct stat st;

		/* fincore passes over a directory without a word. */
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
			continue;
		/*
		 * A character device has no page cache and a size of 0: fincore's row of zeros, without
		 * opening it (an open can start a watchdog or rewind a tape).
		 */
		if (stat(argv[i], &st) == 0 && S_ISCHR(st.st_mode)) {
			const struct files_entry entry = { .path = argv[i], .fd = -1, .st = st };

			add_row(&f, &entry, &(struct pagecache_stat){0}, 0);
			continue;
		}
		files_walk(&argv[i], 1, &walk, visit, &f);
	}
	refusal_report(&f.refused, "");
	if (f.detail_missing)
		warn_msg("mincore tells only which pages are cached: dirty, writeback, evicted left empty");
	if (out_scols_print(stdout, f.table, json) || fflush(stdout) || ferror(stdout)) {
		warn_errno("output", errno ? errno : EIO);
		f.failed = true;
	}
	scols_unref_table(f.table);
	return f.failed ? EXIT_FAIL : EXIT_OK;
}
