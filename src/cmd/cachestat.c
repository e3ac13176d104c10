/* cachestat.c: iolens cachestat: page-cache hits, misses, dirties and evictions system-wide, each interval, as bcc's cachestat. */
#include <errno.h>
#include <json-c/json.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cachestat_common.h"
#include "cmd/common.h"
#include "collect/cachestat.h"
#include "collect/procfs.h"
#include "common/signals.h"
#include "common/util.h"
#include "render/out.h"

static _Noreturn void usage(void)
{
	printf("Usage:\n"
	       " %s [options] [interval [count]]\n"
	       "\n"
	       "Page-cache hits, misses, dirtied pages and evictions of the whole system, each\n"
	       "interval (seconds, default 1), as bcc's cachestat prints them, from stable kernel\n"
	       "tracepoints (eBPF, root). Without eBPF, what /proc/vmstat tells, marked as such.\n"
	       "\n"
	       "Columns: HITS MISSES DIRTIES HITRATIO BUFFERS_MB CACHED_MB EVICTIONS REFAULTS, in pages:\n"
	       "  misses     pages added to the cache (filemap:mm_filemap_add_to_page_cache)\n"
	       "  hits       pages read or mapped (mm_filemap_get_pages, _map_pages, _fault) less misses\n"
	       "  dirties    pages dirtied (writeback:writeback_dirty_folio)\n"
	       "  evictions  pages removed (mm_filemap_delete_from_page_cache)\n"
	       "  refaults   pages added back after reclaim evicted them (as the kernel's\n"
	       "             workingset_refault_file: a working set larger than its memory)\n"
	       "\n"
	       "Options:\n"
	       "  -T, --timestamp        a TIME column first (HH:MM:SS)\n"
	       "      --json             JSON lines, one object per interval\n"
	       "      --csv              comma-separated values with a header line\n"
	       "      --no-header        leave out the header line\n"
	       "  -h, --help             show this help\n"
	       "  -V, --version          show the version\n"
	       "\n"
	       "Examples:\n"
	       "  %s                 every second, until Ctrl-C\n"
	       "  %s -T 5 12         every 5 seconds for a minute, with the time\n"
	       "  %s --json 1 10     ten JSON lines\n",
	       program_name, program_name, program_name, program_name);
	exit(EXIT_OK);
}

struct totals_sample {
	struct cache_counters counters;
	struct vmstat vmstat; /* without eBPF */
	struct meminfo meminfo;
};

static int take_sample(struct cache_mode *mode, struct totals_sample *out)
{
	int rc;

	if (meminfo_read(&out->meminfo) != 0)
		memset(&out->meminfo, 0, sizeof(out->meminfo));
	if (mode->bpf)
		return cachestat_totals(&out->counters);
	rc = vmstat_read(&out->vmstat);
	if (rc == 0)
		cache_counters_from_vmstat(&out->vmstat, &out->counters);
	mode->evictions_unknown = rc != 0 || out->vmstat.pgsteal_file == PROCFS_UNKNOWN;
	mode->refaults_unknown = rc != 0 || out->vmstat.workingset_refault_file == PROCFS_UNKNOWN;
	return rc;
}

static void print_row(const struct cache_options *o, const struct cache_mode *mode, const struct cache_counters *d,
		      const struct meminfo *mem, uint64_t interval_ns)
{
	uint64_t hits = cachestat_hits(d);
	bool hits_known = mode->bpf;
	double ratio = hits + d->misses ? 100.0 * (double)hits / (double)(hits + d->misses) : -1;
	double buffers_mb = (double)mem->buffers / (1 << 20), cached_mb = (double)mem->cached / (1 << 20);
	char clock[16];
	time_t now = time(NULL);

	strftime(clock, sizeof(clock), "%H:%M:%S", localtime(&now));
	if (o->format == OUT_JSON) {
		struct json_object *line = json_object_new_object();

		json_object_object_add(line, "time_ns", json_object_new_uint64(realtime_ns()));
		json_object_object_add(line, "interval_ns", json_object_new_uint64(interval_ns));
		json_object_object_add(line, "mode", out_json_string(mode->bpf ? "ebpf" : "procfs"));
		json_object_object_add(line, "hits", hits_known ? json_object_new_uint64(hits) : NULL);
		json_object_object_add(line, "misses", json_object_new_uint64(d->misses));
		json_object_object_add(line, "dirties", json_object_new_uint64(d->dirties));
		json_object_object_add(line, "hit_ratio", hits_known && ratio >= 0 ? out_json_real(ratio / 100) : NULL);
		json_object_object_add(line, "buffers_bytes", json_object_new_uint64(mem->buffers));
		json_object_object_add(line, "cached_bytes", json_object_new_uint64(mem->cached));
		json_object_object_add(line, "evictions", mode->evictions_unknown ? NULL : json_object_new_uint64(d->evictions));
		json_object_object_add(line, "accesses", hits_known ? json_object_new_uint64(d->reads + d->maps) : NULL);
		json_object_object_add(line, "reads", hits_known ? json_object_new_uint64(d->reads) : NULL);
		json_object_object_add(line, "maps", hits_known ? json_object_new_uint64(d->maps) : NULL);
		json_object_object_add(line, "refaults", mode->refaults_unknown ? NULL : json_object_new_uint64(d->refaults));
		puts(json_object_to_json_string_ext(line, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(line);
	} else if (o->format == OUT_CSV) {
		if (o->timestamp)
			printf("%s,", clock);
		if (hits_known)
			printf("%llu,", (unsigned long long)hits);
		else
			printf(",");
		printf("%llu,%llu,", (unsigned long long)d->misses, (unsigned long long)d->dirties);
		if (hits_known && ratio >= 0)
			printf("%.2f,", ratio);
		else
			printf(",");
		printf("%.0f,%.0f,", buffers_mb, cached_mb);
		if (!mode->evictions_unknown)
			printf("%llu", (unsigned long long)d->evictions);
		putchar(',');
		if (!mode->refaults_unknown)
			printf("%llu", (unsigned long long)d->refaults);
		putchar('\n');
	} else {
		char hits_text[24], ratio_text[16], evictions_text[24], refaults_text[24];

		snprintf(hits_text, sizeof(hits_text), hits_known ? "%llu" : "-", (unsigned long long)hits);
		if (hits_known && ratio >= 0)
			snprintf(ratio_text, sizeof(ratio_text), "%.2f%%", ratio);
		else
			snprintf(ratio_text, sizeof(ratio_text), "-");
		snprintf(evictions_text, sizeof(evictions_text), mode->evictions_unknown ? "-" : "%llu",
			 (unsigned long long)d->evictions);
		snprintf(refaults_text, sizeof(refaults_text), mode->refaults_unknown ? "-" : "%llu",
			 (unsigned long long)d->refaults);
		if (o->timestamp)
			printf("%-8s ", clock);
		/* bcc's widths: "%8d %8d %8d %7.2f%% %12.0f %10.0f" */
		printf("%8s %8llu %8llu %8s %12.0f %10.0f %10s %9s\n", hits_text, (unsigned long long)d->misses,
		       (unsigned long long)d->dirties, ratio_text, buffers_mb, cached_mb, evictions_text, refaults_text);
	}
}

static void print_header(const struct cache_options *o)
{
	if (o->no_header || o->format == OUT_JSON)
		return;
	if (o->format == OUT_CSV) {
		printf("%shits,misses,dirties,hit_ratio_percent,buffers_mb,cached_mb,evictions,refaults\n", o->timestamp ? "time," : "");
		return;
	}
	if (o->timestamp)
		printf("%-8s ", "TIME");
	printf("%8s %8s %8s %8s %12s %10s %10s %9s\n", "HITS", "MISSES", "DIRTIES", "HITRATIO", "BUFFERS_MB", "CACHED_MB",
	       "EVICTIONS", "REFAULTS");
}

int cmd_cachestat(int argc, char **argv)
{
	static const struct option long_options[] = {
		COMMON_LONG_OPTIONS,
		{ "timestamp", no_argument, NULL, 'T' },
		{ "json", no_argument, NULL, OUT_OPT_JSON },
		{ "csv", no_argument, NULL, OUT_OPT_CSV },
		{ "no-header", no_argument, NULL, OUT_OPT_NO_HEADER },
		{ 0 }
	};
	struct cache_options o = { .interval = 1 };
	struct cachestat_options bpf_options = {0};
	struct cache_mode mode = {0};
	struct totals_sample previous, current;
	uint64_t deadline, previous_ns;
	unsigned long long printed = 0;
	int opt, rc = EXIT_OK;

	while ((opt = getopt_long(argc, argv, "ThV", long_options, NULL)) != -1) {
		switch (opt) {
		case 'T':
			o.timestamp = true;
			break;
		case OUT_OPT_JSON:
			o.format = OUT_JSON;
			break;
		case OUT_OPT_CSV:
			o.format = OUT_CSV;
			break;
		case OUT_OPT_NO_HEADER:
			o.no_header = true;
			break;
		case 'h':
			usage();
		case 'V':
			print_version();
		default:
			usage_hint();
		}
	}
	cache_parse_interval_count(argc, argv, optind, &o, true);
	stop_on_signals();
	cache_mode_start(&bpf_options, &mode,
			 "/proc/vmstat, where hits cannot be told apart, misses count every page read from a disk "
			 "and evictions only what reclaim took");
	if (take_sample(&mode, &previous) != 0) {
		warn_msg("cannot read the page-cache counters");
		cachestat_stop();
		return EXIT_FAIL;
	}
	previous_ns = monotonic_ns();
	deadline = previous_ns;
	print_header(&o);
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
		cachestat_delta(&previous.counters, &current.counters, &delta);
		print_row(&o, &mode, &delta, &current.meminfo, now - previous_ns);
		if (fflush(stdout) != 0 || ferror(stdout)) {
			rc = output_failed();
			break;
		}
		cachestat_advance(&previous.counters, &current.counters);
		previous.vmstat = current.vmstat;
		previous.meminfo = current.meminfo;
		previous_ns = now;
		printed++;
		if (deadline + 1000000 < now) /* a missed tick is skipped, not caught up */
			deadline = now;
	}
	cachestat_stop();
	return rc;
}
