/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cachestat.c: iolens cachestat: page-cache hits, misses, dirties and evictions system-wide, each
 * interval, as bcc's cachestat.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cache_mode.h"
#include "cmd/command.h"
#include "collect/cachestat.h"
#include "collect/direct_reads.h"
#include "collect/procfs.h"
#include "common/signals.h"
#include "common/util.h"
#include "model/cache.h"
#include "render/out.h"

/* The columns: bcc's in the table, the JSON line's keys (and CSV's header, the same) in their order. */
enum column {
	C_TIME,
	C_TIME_NS,
	C_INTERVAL_NS,
	C_MODE,
	C_MECHANISM,
	C_HITS,
	C_MISSES,
	C_DIRTIES,
	C_HIT_RATIO,
	C_BUFFERS,
	C_CACHED,
	C_EVICTIONS,
	C_ACCESSES,
	C_READS,
	C_MAPS,
	C_REFAULTS,
	C_COUNT
};

/* bcc's widths: "%-8s %8d %8d %8d %7.2f%% %12.0f %10.0f" (TIME with -T). */
static const struct out_column columns[C_COUNT] = {
	[C_TIME] = { "time", "TIME", NULL, OUT_CLOCK, false, "the local time of day of the line (-T)",
		     .width = -8, .where = OUT_TABLE_ONLY },
	[C_TIME_NS] = { "time_ns", "TIME", NULL, OUT_CLOCK, true, "when the line was printed (Unix time)",
			.where = OUT_DATA_ONLY },
	[C_INTERVAL_NS] = { "interval_ns", "INTERVAL", NULL, OUT_SEC, true, "the time the line covers, measured",
			    .where = OUT_DATA_ONLY },
	[C_MODE] = { "mode", "MODE", NULL, OUT_TEXT, true, "ebpf, or procfs for estimates", .where = OUT_DATA_ONLY },
	[C_MECHANISM] = { "mechanism", "MECHANISM", NULL, OUT_TEXT, true, "ebpf's: tracepoints, fentry or kprobes",
			  .where = OUT_DATA_ONLY },
	[C_HITS] = { "hits", "HITS", NULL, OUT_COUNT, true, "pages read or mapped that were cached", .width = 8 },
	[C_MISSES] = { "misses", "MISSES", NULL, OUT_COUNT, true, "pages added to the cache", .width = 8 },
	[C_DIRTIES] = { "dirties", "DIRTIES", NULL, OUT_COUNT, true, "pages dirtied", .width = 8 },
	[C_HIT_RATIO] = { "hit_ratio", "HITRATIO", NULL, OUT_RATIO, true,
			  "hits / (hits + misses), 0-1 (a percentage in tables)", .decimals = 2,
			  .width = 8 },
	[C_BUFFERS] = { "buffers_bytes", "BUFFERS_MB", NULL, OUT_MIB, true, "Buffers of /proc/meminfo", .width = 12 },
	[C_CACHED] = { "cached_bytes", "CACHED_MB", NULL, OUT_MIB, true, "Cached of /proc/meminfo", .width = 10 },
	[C_EVICTIONS] = { "evictions", "EVICTIONS", NULL, OUT_COUNT, true,
			  "pages removed from the cache", .width = 10 },
	[C_ACCESSES] = { "accesses", "ACCESSES", NULL, OUT_COUNT, true, "pages read or mapped",
			 .where = OUT_DATA_ONLY },
	[C_READS] = { "reads", "READS", NULL, OUT_COUNT, true, "pages returned to reads", .where = OUT_DATA_ONLY },
	[C_MAPS] = { "maps", "MAPS", NULL, OUT_COUNT, true, "pages mapped by page faults", .where = OUT_DATA_ONLY },
	[C_REFAULTS] = { "refaults", "REFAULTS", NULL, OUT_COUNT, true, "pages added back after reclaim evicted them",
			 .width = 9 },
};

/* --help: a screen; --help-all: the whole list below. */
static const char brief_help[] =
	"Usage:\n"
	" iolens cachestat [options] [interval [count]]\n"
	"\n"
	"Page-cache hits, misses, dirtied pages, evictions and refaults of the whole\n"
	"system, in pages, each interval (seconds, default 1), as bcc's cachestat\n"
	"prints them: counted by eBPF on kernel tracepoints (root). Without eBPF, the\n"
	"estimates /proc/vmstat allows, said as such.\n"
	"\n"
	"  HITS       pages read or mapped that were cached\n"
	"  MISSES     pages added to the cache\n"
	"  DIRTIES    pages dirtied\n"
	"  HITRATIO   hits / (hits + misses)\n"
	"  EVICTIONS  pages removed from the cache\n"
	"  REFAULTS   pages read back after reclaim evicted them\n"
	"\n"
	"Options:\n"
	"  -T, --timestamp        a TIME column first\n"
	"      --json             JSON lines, one object per interval\n"
	"      --csv              CSV: the JSON's keys and values\n"
	"  -h, --help             this help; --help-all: every option and field\n"
	"\n"
	"Examples:\n"
	"  iolens cachestat                  every second, until Ctrl-C\n"
	"  iolens cachestat -T 5 12          every 5 seconds for a minute, with the time\n";

static _Noreturn void usage(bool all)
{
	if (!all)
		help_brief("cachestat", brief_help);
	printf("Usage:\n"
	       " %s [options] [interval [count]]\n"
	       "\n"
	       "Page-cache hits, misses, dirtied pages and evictions of the whole system, each\n"
	       "interval (seconds, default 1), as bcc's cachestat prints them, from stable kernel\n"
	       "tracepoints (eBPF, root). Without eBPF, what /proc/vmstat tells, marked as such.\n"
	       "\n"
	       "Counted in pages, from tracepoints:\n"
	       "  misses     pages added to the cache (filemap:mm_filemap_add_to_page_cache)\n"
	       "  hits       pages read or mapped (mm_filemap_get_pages, _map_pages, _fault) less misses\n"
	       "  dirties    pages dirtied (writeback:writeback_dirty_folio)\n"
	       "  evictions  pages removed (mm_filemap_delete_from_page_cache)\n"
	       "  refaults   pages added back after reclaim evicted them (as the kernel's\n"
	       "             workingset_refault_file: a working set larger than its memory)\n"
	       "\n",
	       program_name);
	out_help_fields(stdout, columns, C_COUNT);
	printf("\n"
	       "Options:\n"
	       "  -T, --timestamp        a TIME column first (HH:MM:SS); JSON and CSV have time_ns\n"
	       "      --json             JSON lines, one object per interval\n"
	       "      --csv              comma-separated values: JSON's keys, units and values\n"
	       "      --no-header        leave out the header line\n"
	       "  -v, --verbose          what each warning means, and its fix\n"
	       "  -h, --help             a screen of help; --help-all: all of this\n"
	       "  -V, --version          show the version\n"
	       "\n"
	       "Examples:\n"
	       "  %s                 every second, until Ctrl-C\n"
	       "  %s -T 5 12         every 5 seconds for a minute, with the time\n"
	       "  %s --json 1 10     ten JSON lines\n",
	       program_name, program_name, program_name);
	exit(EXIT_OK);
}

struct totals_sample {
	struct cache_counters counters;
	struct vmstat vmstat; /* without eBPF */
	struct meminfo meminfo;
};

/* Without eBPF: pgpgin's misses less O_DIRECT holders' reads. */
static struct cache_estimate estimate;

static int take_sample(struct cache_mode *mode, struct totals_sample *out)
{
	int rc;

	if (meminfo_read(&out->meminfo) != 0)
		memset(&out->meminfo, 0, sizeof(out->meminfo));
	if (mode->bpf)
		return cachestat_totals(&out->counters);
	rc = vmstat_read(&out->vmstat);
	if (rc == 0) {
		direct_reads_update(&estimate.direct);
		cache_counters_from_vmstat(&out->vmstat, &estimate, &out->counters);
	}
	mode->evictions_unknown = rc != 0 || out->vmstat.pgsteal_file == PROCFS_UNKNOWN;
	mode->refaults_unknown = rc != 0 || out->vmstat.workingset_refault_file == PROCFS_UNKNOWN;
	return rc;
}

/* One interval's line, written at once. */
static void add_line(struct out_table *table, const struct cache_mode *mode, const struct cache_counters *d,
		     const struct meminfo *mem, uint64_t interval_ns)
{
	struct out_row *row = out_row_add(table);
	uint64_t hits = cache_hits(d), now = realtime_ns();
	bool hits_known = mode->bpf;

	out_set_count(row, C_TIME, now);
	out_set_count(row, C_TIME_NS, now);
	out_set_count(row, C_INTERVAL_NS, interval_ns);
	out_set_text(row, C_MODE, mode->bpf ? "ebpf" : "procfs");
	if (mode->mechanism)
		out_set_text(row, C_MECHANISM, mode->mechanism);
	out_set_count_if(row, C_HITS, hits, hits_known);
	out_set_count(row, C_MISSES, d->misses);
	out_set_count(row, C_DIRTIES, d->dirties);
	if (hits_known)
		out_set_ratio(row, C_HIT_RATIO, hits, hits + d->misses);
	out_set_count(row, C_BUFFERS, mem->buffers);
	out_set_count(row, C_CACHED, mem->cached);
	out_set_count_if(row, C_EVICTIONS, d->evictions, !mode->evictions_unknown);
	out_set_count_if(row, C_ACCESSES, d->reads + d->maps, hits_known);
	out_set_count_if(row, C_READS, d->reads, hits_known);
	out_set_count_if(row, C_MAPS, d->maps, hits_known);
	out_set_count_if(row, C_REFAULTS, d->refaults, !mode->refaults_unknown);
	out_table_flush(table);
}

int cmd_cachestat(int argc, char **argv)
{
	static const struct option long_options[] = {
		COMMON_LONG_OPTIONS,
		{ "verbose", no_argument, NULL, 'v' },
		{ "timestamp", no_argument, NULL, 'T' },
		{ "json", no_argument, NULL, OUT_OPT_JSON },
		{ "csv", no_argument, NULL, OUT_OPT_CSV },
		{ "no-header", no_argument, NULL, OUT_OPT_NO_HEADER },
		{ 0 }
	};
	struct out_column shown[C_COUNT];
	struct out_table *table;
	struct cache_options o = { .interval = 1 };
	struct cachestat_options bpf_options = {0};
	struct cache_mode mode = {0};
	struct totals_sample previous, current;
	uint64_t deadline, previous_ns;
	unsigned long long printed = 0;
	int opt, rc = EXIT_OK;

	while ((opt = next_option(argc, argv, "ThvV", long_options, NULL)) != -1) {
		switch (opt) {
		case 'T':
			o.timestamp = true;
			break;
		case 'v':
			warn_verbose = true;
			break;
		default:
			if (!out_parse_option(&o.out, opt, optarg))
				command_option_rest(opt, usage);
		}
	}
	cache_parse_interval_count(argc, argv, optind, &o, true);
	stop_on_signals();
	cache_mode_start(&bpf_options, &mode, "/proc/vmstat",
			 "hits cannot be told apart, misses count every page read from a disk but by processes holding "
			 "an O_DIRECT descriptor, and evictions only what reclaim took");
	if (take_sample(&mode, &previous) != 0) {
		warn_msg("cannot read the page-cache counters");
		cachestat_stop();
		return EXIT_FAIL;
	}
	/* The table's TIME with -T; JSON and CSV always have time_ns. */
	memcpy(shown, columns, sizeof(shown));
	shown[C_TIME].is_default = o.timestamp;
	table = out_table_new(shown, C_COUNT, &o.out, NULL);
	out_table_lines(table, stdout);
	out_table_flush(table); /* the header, before the first interval */
	previous_ns = monotonic_ns();
	deadline = previous_ns;
	while (!stop_signal && (!o.count || printed < o.count)) {
		struct cache_counters delta;
		uint64_t now;

		deadline += (uint64_t)(o.interval * 1e9);
		sleep_until_ns(deadline, &stop_signal);
		if (stop_signal)
			break;
		if (take_sample(&mode, &current) != 0) {
			warn_msg("cannot read the page-cache counters");
			rc = EXIT_FAIL;
			break;
		}
		now = monotonic_ns();
		cache_delta(&previous.counters, &current.counters, &delta);
		add_line(table, &mode, &delta, &current.meminfo, now - previous_ns);
		if (fflush(stdout) != 0 || ferror(stdout)) {
			rc = output_failed();
			break;
		}
		previous.counters = current.counters;
		previous.vmstat = current.vmstat;
		previous.meminfo = current.meminfo;
		previous_ns = now;
		printed++;
		if (deadline + 1000000 < now) /* a missed tick is skipped, not caught up */
			deadline = now;
	}
	out_table_free(table);
	cachestat_stop();
	cache_estimate_free(&estimate);
	return rc;
}
