/* SPDX-License-Identifier: GPL-2.0-or-later */
/* evict.c: iolens evict: write back, drop from the page cache, and report what really left and what stayed. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/command.h"
#include "collect/files.h"
#include "collect/pagecache.h"
#include "collect/procfs.h"
#include "collect/procmaps.h"
#include "common/util.h"
#include "render/out.h"

enum {
	COL_NAME,
	COL_SIZE,
	COL_PAGES,
	COL_BEFORE,
	COL_DROPPED,
	COL_AFTER,
	COL_DIRTY_BEFORE,
	COL_HELD_BY,
	COL_COUNT
};

static const struct out_column columns[COL_COUNT] = {
	[COL_NAME] = { "name", "Name", NULL, OUT_TEXT, true, "file name" },
	[COL_SIZE] = { "size", "Size (bytes)", "Size", OUT_BYTES, false, "file size" },
	[COL_PAGES] = { "pages", "Pages", NULL, OUT_COUNT, true, "pages the file (or --range) covers" },
	[COL_BEFORE] = { "cached_before", "Cached before", NULL, OUT_COUNT, true, "pages cached before" },
	[COL_DROPPED] = { "dropped", "Dropped", NULL, OUT_COUNT, true, "pages that left the cache" },
	[COL_AFTER] = { "cached_after", "Cached after", NULL, OUT_COUNT, true, "pages still cached after" },
	[COL_DIRTY_BEFORE] = { "dirty_before", "Dirty before", NULL, OUT_COUNT, false,
			       "dirty pages before, written back first" },
	[COL_HELD_BY] = { "held_by", "Held by", NULL, OUT_TEXT, true,
			  "when pages stayed: the processes that map the file (the kernel keeps their pages)" },
};

struct evict {
	struct out_table *table;
	struct mapped_files mapped; /* loaded the first time pages stay */
	bool mapped_loaded;
	struct refusals refused;
	uint64_t range_offset, range_length; /* --range */
	bool quiet;                          /* -q: no rows */
	struct refusals in_memory;           /* files on tmpfs whose pages stayed: said once at the end */
	const char *memory_fs;
	bool failed;
};

/* --help: a screen; --help-all: the whole list below. */
static const char brief_help[] =
	"Usage:\n"
	" iolens evict [options] PATH...\n"
	"\n"
	"Drop files from the page cache (dirty pages are written back first), then\n"
	"measure again: the table shows what really left, what stayed, and which\n"
	"processes hold the pages that stayed.\n"
	"\n"
	"Options:\n"
	"  -R, --recursive        every file in the directories, and below\n"
	"  -i, --ignore PATTERN   skip files and directories whose name matches\n"
	"      --range OFF[:LEN]  only the bytes from OFF, LEN of them (64k, 1.5M, 2G)\n"
	"      --total            add a TOTAL row\n"
	"  -q, --quiet            no table\n"
	"  -o, --output LIST      columns to show; +LIST adds to the defaults\n"
	"      --json, --csv      JSON or CSV instead of the table\n"
	"  -h, --help             this help; --help-all: every option and column\n"
	"\n"
	"Examples:\n"
	"  iolens evict big.db                    drop one file, see what stayed\n"
	"  iolens evict -R /var/lib/mysql         a whole tree\n";

static _Noreturn void usage(bool all)
{
	if (!all)
		help_brief("evict", brief_help);
	printf("Usage:\n"
	       " %s [options] PATH...\n"
	       "\n"
	       "Drop files from the page cache: dirty pages are written back first, then the\n"
	       "pages are dropped (POSIX_FADV_DONTNEED). The cache is measured again after, so\n"
	       "the table shows what really left and what stayed, and which processes hold\n"
	       "the pages that stayed (the kernel keeps mapped and locked pages).\n"
	       "\n"
	       "Options:\n",
	       program_name);
	files_help_options(stdout);
	fputs("      --range OFF[:LEN]  only the bytes from OFF, LEN of them (4096, 64k, 1.5M, 2G, 1T)\n"
	      "      --total            add a TOTAL row\n"
	      "  -h, --help             a screen of help; --help-all: all of this\n"
	      "  -V, --version          show the version\n"
	      "\n",
	      stdout);
	out_help_options(stdout);
	putchar('\n');
	out_help_columns(stdout, columns, COL_COUNT);
	printf("\n"
	       "Examples:\n"
	       "  %s big.db                   drop one file, see what stayed\n"
	       "  %s -R /var/lib/mysql        a whole tree\n"
	       "  %s --json data/*.parquet    as JSON\n",
	       program_name, program_name, program_name);
	exit(EXIT_OK);
}

/* "1234 (postgres, locked), 5678 (psql)", with "+N more" past three. */
static void describe_holders(struct evict *ev, const struct files_entry *entry, char *out, size_t len)
{
	pid_t pids[3];
	size_t count, used = 0;

	if (!ev->mapped_loaded) {
		mapped_files_load(&ev->mapped);
		ev->mapped_loaded = true;
	}
	out[0] = '\0';
	count = mapped_files_find(&ev->mapped, entry->st.st_dev, entry->st.st_ino, pids, 3);
	if (!count) {
		snprintf(out, len, ev->mapped.unreadable ? "no process readable here maps it" : "no process maps it");
		return;
	}
	for (size_t i = 0; i < count && i < 3 && used < len; i++) {
		char comm[64] = "?";

		proc_comm_read(pids[i], comm, sizeof(comm));
		used += (size_t)snprintf(out + used, len - used, "%s%d (%s%s)", i ? ", " : "", (int)pids[i], comm,
					 procmaps_maps_locked(pids[i], entry->st.st_dev, entry->st.st_ino)
						 ? ", locked" : "");
	}
	if (count > 3 && used < len)
		snprintf(out + used, len - used, " +%zu more", count - 3);
}

static int visit(const struct files_entry *entry, void *context)
{
	struct evict *ev = context;
	struct pagecache_stat before, after;
	int before_rc, after_rc, rc;
	struct out_row *row;
	char holders[512];
	uint64_t offset, length;

	if (entry->fd < 0) {
		if (report_walk_error(entry))
			ev->failed = true;
		return 0;
	}
	files_range(entry->size, ev->range_offset, ev->range_length, &offset, &length);
	before_rc = pagecache_query(entry->fd, offset, length, &before);
	if (before_rc && before_rc != -EPERM) {
		warn_errno(printable_name(entry->path), -before_rc);
		ev->failed = true;
		return 0;
	}
	/* Dirty pages cannot be dropped: write them back and wait. Unknown counts as dirty. */
	if (before_rc || !before.detail_known || before.dirty || before.writeback) {
		if (fdatasync(entry->fd) != 0 && errno != EINVAL) {
			warn_errno(printable_name(entry->path), errno);
			ev->failed = true;
		}
	}
	/* Length 0 means to the end of the file, and a file can grow while we work. */
	rc = posix_fadvise(entry->fd, (off_t)offset, ev->range_length ? (off_t)length : 0, POSIX_FADV_DONTNEED);
	if (rc) {
		warn_errno(printable_name(entry->path), rc);
		ev->failed = true;
		return 0;
	}
	after_rc = pagecache_query(entry->fd, offset, length, &after);
	if (after_rc && after_rc != -EPERM) {
		warn_errno(printable_name(entry->path), -after_rc);
		ev->failed = true;
	}

	/* The pages were dropped (any reader may); only their count is unknown ('-'): said, not a failure. */
	if (before_rc == -EPERM || after_rc == -EPERM)
		refusal_note(&ev->refused, entry->path);
	const char *fs = NULL;
	bool in_memory = after_rc == 0 && after.cached &&
			 pagecache_backing(entry->fd, &fs) == PAGECACHE_BACKING_MEMORY;
	if (in_memory) {
		refusal_note(&ev->in_memory, entry->path);
		ev->memory_fs = fs;
	}
	if (ev->quiet)
		return 0;
	row = out_row_add(ev->table);
	out_set_text(row, COL_NAME, entry->path);
	out_set_count_if(row, COL_SIZE, entry->size, true);
	out_set_count_if(row, COL_PAGES, before_rc == 0 ? before.pages : pages_for(length, page_size()), true);
	out_set_count_if(row, COL_BEFORE, before.cached, before_rc == 0);
	out_set_count_if(row, COL_DIRTY_BEFORE, before.dirty, before_rc == 0 && before.detail_known);
	out_set_count_if(row, COL_AFTER, after.cached, after_rc == 0);
	/* Pages can also arrive while we work; what left is never negative. */
	out_set_count_if(row, COL_DROPPED, before.cached > after.cached ? before.cached - after.cached : 0,
	    before_rc == 0 && after_rc == 0);
	if (in_memory) {
		snprintf(holders, sizeof(holders), "%s: the pages are the file", fs);
		out_set_text(row, COL_HELD_BY, holders);
	} else if (after_rc == 0 && after.cached && out_column_shown(ev->table, COL_HELD_BY)) {
		describe_holders(ev, entry, holders, sizeof(holders));
		out_set_text(row, COL_HELD_BY, holders);
	} else if (after_rc == 0) {
		out_set_text(row, COL_HELD_BY, ""); /* nothing stayed: nobody holds anything */
	}
	return 0;
}


int cmd_evict(int argc, char **argv)
{
	enum { OPT_TOTAL = 0x2000, OPT_RANGE };
	static const struct option long_options[] = {
		FILES_LONG_OPTIONS,
		OUT_LONG_OPTIONS,
		COMMON_LONG_OPTIONS,
		{ "total", no_argument, NULL, OPT_TOTAL },
		{ "range", required_argument, NULL, OPT_RANGE },
		{ 0 }
	};
	struct files_args files = {0};
	struct out_options output = {0};
	struct evict ev = {0};
	bool want_total = false;
	int opt;

	while ((opt = next_option(argc, argv, FILES_SHORT_OPTIONS OUT_SHORT_OPTIONS "hV", long_options, NULL)) != -1) {
		if (files_parse_option(&files, opt, optarg) || out_parse_option(&output, opt, optarg))
			continue;
		switch (opt) {
		case OPT_TOTAL:
			want_total = true;
			break;
		case OPT_RANGE:
			files_parse_range(optarg, &ev.range_offset, &ev.range_length);
			break;
		default:
			command_option_rest(opt, usage);
		}
	}
	files_args_paths(&files, argc, argv, optind);
	if (!files.npaths)
		usage_error("no file given");
	ev.quiet = files.quiet;
	ev.table = out_table_new(columns, COL_COUNT, &output, "files");
	if (!ev.table) {
		files_args_free(&files);
		return EXIT_USAGE;
	}
	out_table_stream(ev.table, stdout);
	if (want_total)
		out_table_total(ev.table, COL_NAME, "TOTAL");

	files_walk(files.paths, (int)files.npaths, &files.walk, visit, &ev);
	if (!ev.quiet && !print_file_table(ev.table))
		ev.failed = true;
	refusal_report(&ev.refused, "dropped; ");
	if (ev.in_memory.count) {
		warn_msg("%s%s: on %s the pages are the file itself: not dropped",
			 printable_name(ev.in_memory.first), ev.in_memory.count > 1 ? " and others" : "", ev.memory_fs);
		free(ev.in_memory.first);
	}
	out_table_free(ev.table);
	mapped_files_free(&ev.mapped);
	files_args_free(&files);
	return ev.failed ? EXIT_FAIL : EXIT_OK;
}
