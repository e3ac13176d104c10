/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pcstat.c: iolens pcstat: how much of each file is in the page cache, and where. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/command.h"
#include "collect/files.h"
#include "collect/pagecache.h"
#include "common/util.h"
#include "render/out.h"

enum {
	COL_NAME,
	COL_SIZE,
	COL_PAGES,
	COL_CACHED,
	COL_PERCENT,
	COL_CACHED_BYTES,
	COL_DIRTY,
	COL_WRITEBACK,
	COL_EVICTED,
	COL_RECENTLY_EVICTED,
	COL_MAP,
	COL_METHOD,
	COL_COUNT
};

static const struct out_column columns[COL_COUNT] = {
	[COL_NAME] = { "name", "Name", NULL, OUT_TEXT, true, "file name" },
	[COL_SIZE] = { "size", "Size (bytes)", "Size", OUT_BYTES, true, "file size" },
	[COL_PAGES] = { "pages", "Pages", NULL, OUT_COUNT, true, "pages the file (or --range) covers" },
	[COL_CACHED] = { "cached", "Cached", NULL, OUT_COUNT, true, "of those, pages in the page cache" },
	[COL_PERCENT] = { "percent", "Percent", NULL, OUT_PERCENT, true, "cached pages in percent of pages",
			  .total_ratio = "cached/pages" },
	[COL_CACHED_BYTES] = { "cached_bytes", "Cached (bytes)", "Cached size", OUT_BYTES, false,
			       "cached pages times the page size" },
	[COL_DIRTY] = { "dirty", "Dirty", NULL, OUT_COUNT, false, "cached pages modified, not yet written back" },
	[COL_WRITEBACK] = { "writeback", "Writeback", NULL, OUT_COUNT, false, "pages being written back now" },
	[COL_EVICTED] = { "evicted", "Evicted", NULL, OUT_COUNT, false,
			  "pages reclaim evicted (the kernel remembers them until they come back)" },
	[COL_RECENTLY_EVICTED] = { "recently_evicted", "Recently evicted", NULL, OUT_COUNT, false,
				   "evicted pages that a cache the size of the working set would still hold" },
	[COL_MAP] = { "map", "Map", NULL, OUT_TEXT, false, "where the cached pages are (--map)" },
	[COL_METHOD] = { "method", "Method", NULL, OUT_TEXT, false, "how it was measured: cachestat or mincore" },
};

struct pcstat {
	struct out_table *table;
	bool summary_only;
	bool quiet; /* -q: no rows */
	uint64_t range_offset, range_length;
	unsigned map_width;
	char *map;
	bool failed;
	struct refusals refused;
};

/* --help: a screen; --help-all: the whole list below. */
static const char brief_help[] =
	"Usage:\n"
	" iolens pcstat [options] PATH...\n"
	" iolens pcstat [options] --pid PID\n"
	"\n"
	"How much of each file is in the page cache: cached, dirty, under writeback\n"
	"and evicted pages. A count the kernel does not tell is '-', never guessed.\n"
	"\n"
	"Options:\n"
	"  -R, --recursive        every file in the directories, and below\n"
	"  -p, --pid PID          the files process PID has open or mapped\n"
	"      --map[=WIDTH]      a bar per file: where its cached pages are\n"
	"      --range OFF[:LEN]  only the bytes from OFF, LEN of them (64k, 1.5M, 2G)\n"
	"      --total            add a TOTAL row\n"
	"  -s, --summary          only the TOTAL row\n"
	"      --sort COLUMN      sort by a column (names A to Z, numbers largest first)\n"
	"  -o, --output LIST      columns to show; +LIST adds to the defaults\n"
	"  -H, --human            sizes in K, M, G\n"
	"      --json, --csv      JSON or CSV instead of the table\n"
	"  -h, --help             this help; --help-all: every option and column\n"
	"\n"
	"Examples:\n"
	"  iolens pcstat /bin/ls                  is ls in the page cache?\n"
	"  iolens pcstat -R --summary /usr        how much of /usr is cached, one line\n";

static _Noreturn void usage(bool all)
{
	if (!all)
		help_brief("pcstat", brief_help);
	printf("Usage:\n"
	       " %s [options] PATH...\n"
	       " %s [options] --pid PID\n"
	       "\n"
	       "Show how much of each file is in the page cache: pages cached, dirty, under\n"
	       "writeback and evicted, from cachestat(2) (Linux 6.5 and later) or mincore(2).\n"
	       "\n"
	       "Options:\n",
	       program_name, program_name);
	files_help_options(stdout);
	fputs("  -p, --pid PID          the files process PID has open or mapped\n"
	      "      --range OFF[:LEN]  only the bytes from OFF, LEN of them (4096, 64k, 1.5M, 2G, 1T:\n"
	      "                         suffixes are powers of 1024)\n"
	      "      --map[=WIDTH]      a bar per file showing where the cached pages are (default 60)\n"
	      "                         O all cached  o partly  . none  e none, evicted earlier\n"
	      "                         D dirty pages  W under writeback  ? the kernel would not tell\n"
	      "      --total            add a TOTAL row\n"
	      "  -s, --summary          print only the TOTAL row\n"
	      "      --sort COLUMN      sort by a column: names A to Z, numbers largest first (holds\n"
	      "                         every row until the last file: memory grows with the files)\n"
	      "      --reverse          reverse the order of --sort\n"
	      "  -h, --help             a screen of help; --help-all: all of this\n"
	      "  -V, --version          show the version\n"
	      "\n",
	      stdout);
	out_help_options(stdout);
	putchar('\n');
	out_help_columns(stdout, columns, COL_COUNT);
	printf("\n"
	       "A count the kernel does not tell is shown as '-' (null in JSON), never guessed.\n"
	       "Rows come out as the files are looked at, in the same memory however many: a\n"
	       "table sizes its columns to its first 256 rows, and a wider value after them\n"
	       "widens only its own line.\n"
	       "Beware: fincore's PAGES is the resident pages, 'cached' here; 'pages' here is\n"
	       "every page of the file. A link named fincore takes fincore's column names.\n"
	       "\n"
	       "Examples:\n"
	       "  %s /bin/ls                      is ls in the page cache?\n"
	       "  %s -R --summary /usr            how much of /usr is cached, in one line\n"
	       "  %s -R --sort cached -H /var/lib/postgresql\n"
	       "                                         the most cached files first\n"
	       "  %s --pid $(pidof postgres) --total   what a process has open, and how much is cached\n"
	       "  %s --map -o name,percent,map big.db   where in the file the cached pages are\n"
	       "  %s --range 1G:256M --json big.db      one part of a file, as JSON\n",
	       program_name, program_name, program_name, program_name, program_name, program_name);
	exit(EXIT_OK);
}

static void fill_counts(struct out_row *row, uint64_t cached, uint64_t pages)
{
	out_set_count(row, COL_CACHED, cached);
	out_set_count(row, COL_CACHED_BYTES, cached * page_size());
	out_set_percent(row, COL_PERCENT, pages ? 100.0 * (double)cached / (double)pages : 0.0);
}

static void fill_detail(struct out_row *row, const struct pagecache_stat *stat)
{
	out_set_count(row, COL_DIRTY, stat->dirty);
	out_set_count(row, COL_WRITEBACK, stat->writeback);
	out_set_count(row, COL_EVICTED, stat->evicted);
	out_set_count(row, COL_RECENTLY_EVICTED, stat->recently_evicted);
}

static int visit(const struct files_entry *entry, void *context)
{
	struct pcstat *pc = context;
	struct pagecache_stat stat;
	uint64_t offset, length;
	struct out_row *row;
	int rc;

	if (entry->fd < 0) {
		if (report_walk_error(entry))
			pc->failed = true;
		return 0;
	}
	files_range(entry->size, pc->range_offset, pc->range_length, &offset, &length);

	rc = pagecache_query(entry->fd, offset, length, &stat);
	if (rc && rc != -EPERM) {
		warn_errno(printable_name(entry->path), -rc);
		pc->failed = true;
		return 0;
	}
	if (rc == -EPERM) /* the counts unknown ('-'), said once at the end: not a failure */
		refusal_note(&pc->refused, entry->path);
	if (pc->quiet)
		return 0;
	row = out_row_add(pc->table);
	out_set_text(row, COL_NAME, entry->path);
	out_set_count(row, COL_SIZE, entry->size);
	out_set_count(row, COL_PAGES, stat.pages);
	if (rc == 0) {
		fill_counts(row, stat.cached, stat.pages);
		if (stat.detail_known)
			fill_detail(row, &stat);
		out_set_text(row, COL_METHOD, pagecache_method_name(stat.method));
	}
	if (pc->map_width && !pc->summary_only) {
		rc = pagecache_map(entry->fd, offset, length, pc->map_width, pc->map);
		if (rc && rc != -EPERM) {
			warn_errno(printable_name(entry->path), -rc);
			pc->failed = true;
		} else {
			out_set_text(row, COL_MAP, pc->map);
		}
	}
	return 0;
}

static bool shows_detail(const struct out_table *table)
{
	for (size_t column = COL_DIRTY; column <= COL_RECENTLY_EVICTED; column++)
		if (out_column_shown(table, column))
			return true;
	return false;
}

static unsigned parse_map_width(const char *arg)
{
	uint64_t width;

	if (!arg)
		return 60;
	if (parse_u64(arg, &width) || width < 1 || width > 4096)
		usage_error("--map: width must be a number from 1 to 4096, not '%s'", arg);
	return (unsigned)width;
}

int cmd_pcstat(int argc, char **argv)
{
	enum { OPT_RANGE = 0x2000, OPT_MAP, OPT_TOTAL, OPT_SORT, OPT_REVERSE };
	static const struct option long_options[] = {
		FILES_LONG_OPTIONS,
		OUT_LONG_OPTIONS,
		COMMON_LONG_OPTIONS,
		{ "pid", required_argument, NULL, 'p' },
		{ "range", required_argument, NULL, OPT_RANGE },
		{ "map", optional_argument, NULL, OPT_MAP },
		{ "total", no_argument, NULL, OPT_TOTAL },
		{ "summary", no_argument, NULL, 's' },
		{ "sort", required_argument, NULL, OPT_SORT },
		{ "reverse", no_argument, NULL, OPT_REVERSE },
		{ 0 }
	};
	struct files_args files = {0};
	struct out_options output = {0};
	struct pcstat pc = {0};
	const char *sort = NULL;
	bool want_total = false, reverse = false, have_pid = false;
	uint64_t pid = 0;
	int opt;

	while ((opt = next_option(argc, argv, FILES_SHORT_OPTIONS OUT_SHORT_OPTIONS "p:shV",
				  long_options, NULL)) != -1) {
		if (files_parse_option(&files, opt, optarg) || out_parse_option(&output, opt, optarg))
			continue;
		switch (opt) {
		case 'p':
			if (parse_u64(optarg, &pid) || pid == 0 || pid > 4194304)
				usage_error("--pid: '%s' is not a process id", optarg);
			have_pid = true;
			break;
		case OPT_RANGE:
			files_parse_range(optarg, &pc.range_offset, &pc.range_length);
			break;
		case OPT_MAP:
			pc.map_width = parse_map_width(optarg);
			break;
		case OPT_TOTAL:
			want_total = true;
			break;
		case 's':
			pc.summary_only = true;
			break;
		case OPT_SORT:
			sort = optarg;
			break;
		case OPT_REVERSE:
			reverse = true;
			break;
		default:
			command_option_rest(opt, usage);
		}
	}
	files_args_paths(&files, argc, argv, optind);
	pc.quiet = files.quiet;
	if (!files.npaths && !have_pid)
		usage_error("no file given");
	if (files.npaths && have_pid)
		usage_error("--pid and paths do not go together");

	pc.table = out_table_new(columns, COL_COUNT, &output, "files");
	if (!pc.table) {
		files_args_free(&files);
		return EXIT_USAGE;
	}
	if (sort && out_column_index(pc.table, sort) < 0) {
		out_table_free(pc.table);
		usage_error("--sort: unknown column '%s'", sort);
	}
	if (pc.map_width)
		out_show_column(pc.table, COL_MAP); /* --map adds its column, whatever -o chose */
	else if (out_column_shown(pc.table, COL_MAP))
		pc.map_width = 60;
	if (pc.map_width)
		pc.map = xcalloc(pc.map_width + 1, 1);
	if (!sort)
		out_table_stream(pc.table, stdout);
	if (pc.summary_only)
		out_table_summary_only(pc.table, COL_NAME, "TOTAL");
	else if (want_total)
		out_table_total(pc.table, COL_NAME, "TOTAL");

	if (have_pid)
		files_of_process((pid_t)pid, visit, &pc);
	else
		files_walk(files.paths, (int)files.npaths, &files.walk, visit, &pc);

	if (sort)
		out_table_sort(pc.table, sort, reverse);
	out_table_add_text(pc.table, "method", pagecache_method_name(pagecache_method()));
	if (!files.quiet && !print_file_table(pc.table))
		pc.failed = true;
	refusal_report(&pc.refused, "");
	if (pagecache_method() == PAGECACHE_MINCORE && shows_detail(pc.table))
		warn_msg("mincore tells only which pages are cached: dirty, writeback, evicted unknown ('-')");
	out_table_free(pc.table);
	files_args_free(&files);
	free(pc.map);
	return pc.failed ? EXIT_FAIL : EXIT_OK;
}
