/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench.c: iolens bench: disk throughput, IOPS and latency, block-size and queue-depth sweeps with
 * the knee, the page cache's effect.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "workload/bench.h"
#include "model/disk.h"
#include "workload/engine.h"
#include "workload/profile.h"
#include "workload/target.h"
#include "common/path_walk.h"
#include "cmd/command.h"
#include "collect/capacity.h"
#include "collect/diskstats.h"
#include "collect/pagecache.h"
#include "common/util.h"
#include "render/out.h"
#include "render/record.h"

enum {
	COL_CASE,
	COL_MODE,
	COL_RW,
	COL_BS,
	COL_QD,
	COL_JOBS,
	COL_MBPS,
	COL_IOPS,
	COL_LAT_MEAN,
	COL_LAT_P50,
	COL_LAT_P90,
	COL_LAT_P99,
	COL_LAT_P999,
	COL_LAT_MAX,
	COL_CPU,
	COL_USR,
	COL_SYS,
	COL_DEV_MBPS,
	COL_UTIL,
	COL_AQU,
	COL_HIT,
	COL_KNEE,
	COL_SPREAD,
	COL_COUNT
};

static const struct out_column columns[COL_COUNT] = {
	[COL_CASE] = { "case", "CASE", NULL, OUT_TEXT, false,
		       "with --profile: the case, as CrystalDiskMark names it (seq1m_q8t1_read)" },
	[COL_MODE] = { "mode", "MODE", NULL, OUT_TEXT, false,
		       "direct, buffered, cold or warm (buffered, file evicted or cached first)" },
	[COL_RW] = { "rw", "RW", NULL, OUT_TEXT, false, "the workload: read, write, randread, randwrite, rw, randrw" },
	[COL_BS] = { "bs", "BS", NULL, OUT_TEXT, true, "block size" },
	[COL_QD] = { "qd", "QD", NULL, OUT_COUNT, true, "queue depth: requests in flight per job" },
	[COL_JOBS] = { "jobs", "JOBS", NULL, OUT_COUNT, false, "jobs running at once" },
	[COL_MBPS] = { "mb_per_s", "MB/s", NULL, OUT_FLOAT, true, "throughput, 10^6 bytes per second", NULL, 1 },
	[COL_IOPS] = { "iops", "IOPS", NULL, OUT_COUNT, true, "I/O per second" },
	[COL_LAT_MEAN] = { "lat_mean", "MEAN/us", NULL, OUT_USEC, true, "mean latency" },
	[COL_LAT_P50] = { "lat_p50", "P50/us", NULL, OUT_USEC, true, "median latency" },
	[COL_LAT_P90] = { "lat_p90", "P90/us", NULL, OUT_USEC, false, "90th percentile latency" },
	[COL_LAT_P99] = { "lat_p99", "P99/us", NULL, OUT_USEC, true, "99th percentile latency" },
	[COL_LAT_P999] = { "lat_p99_9", "P99.9/us", NULL, OUT_USEC, false, "99.9th percentile latency" },
	[COL_LAT_MAX] = { "lat_max", "MAX/us", NULL, OUT_USEC, true, "highest latency" },
	[COL_CPU] = { "cpu_per_io", "CPU/IO/us", NULL, OUT_USEC, true, "CPU time (user + system) per I/O" },
	[COL_USR] = { "usr_per_io", "USR/IO/us", NULL, OUT_USEC, false, "user CPU time per I/O" },
	[COL_SYS] = { "sys_per_io", "SYS/IO/us", NULL, OUT_USEC, false, "system CPU time per I/O" },
	[COL_DEV_MBPS] = { "dev_mb_per_s", "DEV-MB/s", NULL, OUT_FLOAT, false,
			   "what the device moved (/proc/diskstats), 10^6 bytes per second", NULL, 1 },
	[COL_UTIL] = { "util", "%UTIL", NULL, OUT_PERCENT, true,
		       "the device's %util during the run, as iostat's", NULL, 1 },
	[COL_AQU] = { "aqu_sz", "AQU-SZ", NULL, OUT_FLOAT, false,
		      "the device's average queue length, as iostat's", NULL, 2 },
	[COL_HIT] = { "hit", "HIT%", NULL, OUT_PERCENT, false, "page-cache hit ratio of buffered reads", NULL, 1 },
	[COL_KNEE] = { "knee", "KNEE", NULL, OUT_TEXT, true, "'knee': where throughput reaches 95 % of the peak" },
	[COL_SPREAD] = { "spread", "SPREAD%", NULL, OUT_PERCENT, false,
			 "with --repeat: (highest - lowest) / median MB/s of the runs", NULL, 1 },
};

static const char *const rw_names[] = { "read", "write", "randread", "randwrite", "rw", "randrw" };
enum rw_mode { RW_READ, RW_WRITE, RW_RANDREAD, RW_RANDWRITE, RW_MIX, RW_RANDMIX };

/* Everything the options say. */
struct bench_options {
	enum rw_mode rw;
	unsigned mix;           /* read percent of rw and randrw */
	uint64_t bs[BENCH_MAX_POINTS];
	unsigned nbs;           /* 0: sweep */
	unsigned qd, jobs;
	unsigned repeat;        /* runs per point; the median is the point's */
	bool qd_given, engine_given, bs_given, rw_given;
	enum bench_engine engine;
	uint64_t size;
	double runtime, ramp, interval;
	bool time_based, buffered, force, qd_sweep, compare_cache;
	uint64_t latency_target_ns;
	enum bench_pattern pattern;
	const char *svg;
	const char *target;
	bool profile, save_capacity, compare;
	const char *show_capacity; /* DEV */
	const char *capacity_dir;  /* NULL: $IOLENS_CAPACITY_DIR or the default */
	const char *compare_b;     /* with --compare, target is A */
	double margin;             /* --compare's noise margin, percent of A's median */
	bool margin_given;
	bool mix_given, repeat_given;
	struct out_options output;
};

static volatile sig_atomic_t stop_signal;

#define BENCH_MAX_REPEAT 99 /* --repeat */

struct bench;
static uint64_t bench_p99_of(unsigned index, void *context);
static void bench_svg_point(unsigned index, void *context, struct bench_svg_value *out);

static void on_signal(int signo)
{
	if (stop_signal) {
		/* A second signal: no more waiting for the I/O in flight. */
		bench_target_signal_remove();
		_exit(128 + signo);
	}
	stop_signal = signo;
}

/*
 * bench's options: one table, fio's pattern. getopt's long options and optstring, --help,
 * --help-all and the parsing are all made from it (bench_options below); tests/cli/bench_options.sh
 * holds it to the man page's OPTIONS. An entry stores its argument by kind into the field at
 * .field of struct bench_options, or hands it to .parse; .given marks a bool when it is given.
 */
enum bopt_kind {
	BOPT_SET,     /* no argument: the bool at .field becomes true */
	BOPT_CLEAR,   /* no argument: the bool at .field becomes false */
	BOPT_TEXT,    /* the argument as it is: a const char * at .field */
	BOPT_COUNT,   /* a whole number from .low to .high: an unsigned at .field */
	BOPT_SECONDS, /* a number of seconds: a double at .field */
	BOPT_CALL,    /* .parse(o, arg) */
	BOPT_OUTPUT,  /* the output layer's (OUT_LONG_OPTIONS, out_parse_option): here for --help's line */
};

/* Where --help-all lists an option: a heading, then the section's options in table order. */
enum bopt_section { SEC_WORKLOAD, SEC_SWEEPS, SEC_PROFILE, SEC_GENERAL, SEC_OUTPUT, SEC_COUNT };

static const char *const section_headings[SEC_COUNT] = {
	[SEC_WORKLOAD] = "Workload:",
	[SEC_SWEEPS] = "Sweeps and comparisons:",
	[SEC_PROFILE] = "Profile and capacity:",
	/* SEC_OUTPUT follows out_help_options' "Output:" list */
};

struct bench_opt {
	const char *name;         /* long option, without "--" */
	const char *alias;        /* a second long name (--iodepth), or NULL */
	char letter;              /* short option, or 0 */
	const char *arg;          /* the argument's name in help; NULL: takes none */
	enum bopt_kind kind;
	size_t field;             /* offsetof(struct bench_options, ...): where the kind stores */
	unsigned low, high;       /* BOPT_COUNT's range */
	void (*parse)(struct bench_options *o, const char *arg); /* BOPT_CALL */
	size_t given;             /* GIVEN(member): a bool made true when given; 0: none */
	enum bopt_section section;
	unsigned brief;           /* its place in --help, from 1; 0: --help-all only */
	const char *brief_help;   /* --help's text, when not .help */
	const char *help;         /* --help-all's text; each '\n' goes on under the text column */
};

#define FIELD(member) offsetof(struct bench_options, member)
#define GIVEN(member) (offsetof(struct bench_options, member) + 1)
#define HELP_COLUMN 25 /* where an option's text starts */

static _Noreturn void usage(bool all);

static double parse_seconds_arg(const char *name, const char *text)
{
	double value;

	if (parse_seconds(text, 1e6, true, &value) != 0)
		usage_error("%s: not a number of seconds: '%s'", name, text);
	return value;
}

static unsigned parse_count_arg(const char *name, const char *text, unsigned low, unsigned high)
{
	uint64_t value;

	if (parse_u64(text, &value) != 0 || value < low || value > high)
		usage_error("%s: not a whole number from %u to %u: '%s'", name, low, high, text);
	return (unsigned)value;
}

static void parse_rw(struct bench_options *o, const char *arg)
{
	unsigned i;

	for (i = 0; i < sizeof(rw_names) / sizeof(rw_names[0]); i++)
		if (!strcmp(arg, rw_names[i]))
			break;
	if (!strcmp(arg, "readwrite"))
		i = RW_MIX;
	if (i == sizeof(rw_names) / sizeof(rw_names[0]))
		usage_error("--rw: '%s' is not read, write, randread, randwrite, rw or randrw", arg);
	o->rw = (enum rw_mode)i;
}

static void parse_bs(struct bench_options *o, const char *arg)
{
	int rc = bench_parse_sizes(arg, o->bs, BENCH_MAX_POINTS);

	if (rc < 0)
		usage_error("--bs: '%s' is not a size, a list of sizes (4k,64k) or a range (4k-1m) "
			    "of at most %d sizes from 512 bytes to 64M", arg, BENCH_MAX_POINTS);
	o->nbs = (unsigned)rc;
}

static void parse_engine(struct bench_options *o, const char *arg)
{
	if (!strcmp(arg, "psync"))
		o->engine = ENGINE_PSYNC;
	else if (!strcmp(arg, "io_uring") || !strcmp(arg, "uring"))
		o->engine = ENGINE_IO_URING;
	else
		usage_error("--engine: '%s' is not psync or io_uring", arg);
}

static void parse_size_opt(struct bench_options *o, const char *arg)
{
	if (parse_size(arg, &o->size) != 0 || o->size == 0)
		usage_error("--size: not a size: '%s'", arg);
}

static void parse_runtime(struct bench_options *o, const char *arg)
{
	o->runtime = parse_seconds_arg("--runtime", arg);
	if (o->runtime <= 0)
		usage_error("--runtime: must be above 0");
}

static void parse_pattern(struct bench_options *o, const char *arg)
{
	if (!strcmp(arg, "random"))
		o->pattern = PATTERN_RANDOM;
	else if (!strcmp(arg, "zero"))
		o->pattern = PATTERN_ZERO;
	else if (!strcmp(arg, "compressible"))
		o->pattern = PATTERN_COMPRESSIBLE;
	else
		usage_error("--pattern: '%s' is not random, zero or compressible", arg);
}

static void parse_latency_target(struct bench_options *o, const char *arg)
{
	if (bench_parse_duration(arg, &o->latency_target_ns) != 0 || !o->latency_target_ns)
		usage_error("--latency-target: not a time such as 500us, 2ms or 0.1s: '%s'", arg);
	o->qd_sweep = true;
}

static void parse_interval(struct bench_options *o, const char *arg)
{
	o->interval = parse_seconds_arg("--interval", arg);
	if (o->interval < 0.01)
		usage_error("--interval: at least 0.01 seconds");
}

/* A number from 0 to 100, "5" or "5%" (parse_seconds reads that: not negative, at most max). */
static void parse_margin(struct bench_options *o, const char *arg)
{
	char number[32];
	size_t len = strlen(arg);

	if (len && arg[len - 1] == '%')
		len--;
	snprintf(number, sizeof(number), "%.*s", (int)len, arg);
	if (len >= sizeof(number) || parse_seconds(number, 100, true, &o->margin) != 0)
		usage_error("--margin: not a percentage from 0 to 100: '%s'", arg);
}

static void show_help(struct bench_options *o, const char *arg)
{
	(void)o, (void)arg;
	usage(false);
}

static void show_help_all(struct bench_options *o, const char *arg)
{
	(void)o, (void)arg;
	usage(true);
}

static void show_version(struct bench_options *o, const char *arg)
{
	(void)o, (void)arg;
	print_version();
}

static const struct bench_opt bench_options[] = {
	/* Workload */
	{ "rw", NULL, 0, "MODE", BOPT_CALL, 0, 0, 0, parse_rw, GIVEN(rw_given), SEC_WORKLOAD, 1,
	  "read (default), write, randread, randwrite, rw, randrw",
	  "read, write, randread, randwrite, rw (or readwrite), randrw\n(default read)" },
	{ "mix", NULL, 0, "PERCENT", BOPT_COUNT, FIELD(mix), 0, 100, NULL, GIVEN(mix_given), SEC_WORKLOAD, 0, NULL,
	  "reads in percent of I/O for rw and randrw (default 50)" },
	{ "bs", NULL, 0, "SIZES", BOPT_CALL, 0, 0, 0, parse_bs, GIVEN(bs_given), SEC_WORKLOAD, 2,
	  "one block size (4k), a list (4k,1m) or a range (4k-1m)",
	  "one block size (4k), a list (4k,64k,1m), or a range swept\ndoubling (4k-1m); default: the sweep 4k-4m" },
	{ "qd", "iodepth", 0, "N", BOPT_COUNT, FIELD(qd), 1, 4096, NULL, GIVEN(qd_given), SEC_WORKLOAD, 3,
	  "requests in flight (default 1)", "requests in flight per job (default 1)" },
	{ "engine", NULL, 0, "ENGINE", BOPT_CALL, 0, 0, 0, parse_engine, GIVEN(engine_given), SEC_WORKLOAD, 0, NULL,
	  "psync (one request at a time, as dd) or io_uring (uring)\n(default: psync at queue depth 1, io_uring "
	  "above)" },
	{ "jobs", NULL, 0, "N", BOPT_COUNT, FIELD(jobs), 1, 256, NULL, 0, SEC_WORKLOAD, 0, NULL,
	  "jobs (threads) at once, each with its own file descriptor\n"
	  "(sequential jobs each stream through their own part;\nnever more jobs than blocks to do)" },
	{ "size", NULL, 0, "SIZE", BOPT_CALL, 0, 0, 0, parse_size_opt, 0, SEC_WORKLOAD, 5,
	  "bytes per run (default 1G for a new file)",
	  "bytes used of the file and moved per run (default 1G for a\nnew file, the whole of an existing one)" },
	{ "runtime", NULL, 0, "SECONDS", BOPT_CALL, 0, 0, 0, parse_runtime, 0, SEC_WORKLOAD, 6, NULL,
	  "at most this long per run (default 5)" },
	{ "repeat", NULL, 0, "N", BOPT_COUNT, FIELD(repeat), 1, BENCH_MAX_REPEAT, NULL, GIVEN(repeat_given),
	  SEC_WORKLOAD, 7, "each point N times, the median run reported",
	  "run each point N times and report the run of median MB/s,\nwith the spread of the runs (default 1)" },
	{ "time-based", NULL, 0, NULL, BOPT_SET, FIELD(time_based), 0, 0, NULL, 0, SEC_WORKLOAD, 0, NULL,
	  "run for the whole runtime, going round the file again" },
	{ "ramp", NULL, 0, "SECONDS", BOPT_SECONDS, FIELD(ramp), 0, 0, NULL, 0, SEC_WORKLOAD, 0, NULL,
	  "run this long before measuring; not counted (default 0)" },
	{ "buffered", NULL, 0, NULL, BOPT_SET, FIELD(buffered), 0, 0, NULL, 0, SEC_WORKLOAD, 8, NULL,
	  "through the page cache (default: O_DIRECT)" },
	{ "direct", NULL, 0, NULL, BOPT_CLEAR, FIELD(buffered), 0, 0, NULL, 0, SEC_WORKLOAD, 0, NULL,
	  "O_DIRECT, bypassing the page cache (the default)" },
	{ "pattern", NULL, 0, "PATTERN", BOPT_CALL, 0, 0, 0, parse_pattern, 0, SEC_WORKLOAD, 0, NULL,
	  "what is written: random (default), zero (which compression\n"
	  "and deduplication absorb), compressible (half zeros); every\n"
	  "4 KiB written starts with its offset and a stamp, so no two\nblocks are alike (as fio's scramble_buffers)" },
	{ "force", NULL, 0, NULL, BOPT_SET, FIELD(force), 0, 0, NULL, 0, SEC_WORKLOAD, 0, NULL,
	  "write an existing file or an unused, blank block device" },
	/* Sweeps and comparisons */
	{ "qd-sweep", NULL, 0, NULL, BOPT_SET, FIELD(qd_sweep), 0, 0, NULL, 0, SEC_SWEEPS, 4,
	  "sweep the queue depth 1 to --qd (32), report the knee",
	  "sweep the queue depth 1, 2, 4 ... up to --qd (default 32) at\n"
	  "one block size (default 4k, randread), and report the knee" },
	{ "latency-target", NULL, 0, "TIME", BOPT_CALL, 0, 0, 0, parse_latency_target, 0, SEC_SWEEPS, 0, NULL,
	  "with the queue-depth sweep: the deepest queue whose p99\nlatency stays within TIME (500us, 2ms, 0.1s)" },
	{ "compare-cache", NULL, 0, NULL, BOPT_SET, FIELD(compare_cache), 0, 0, NULL, 0, SEC_SWEEPS, 9,
	  "direct, cold and warm page cache, side by side",
	  "the same read three ways: direct, buffered cold (the file\n"
	  "evicted first) and buffered warm, with the page-cache hit\nratio of each (default bs 1m)" },
	/* Profile and capacity */
	{ "profile", NULL, 0, NULL, BOPT_SET, FIELD(profile), 0, 0, NULL, 0, SEC_PROFILE, 10,
	  "CrystalDiskMark's set: seq 1M QD8/QD1, rand 4K QD32/QD1",
	  "the fixed set CrystalDiskMark and KDiskMark run, direct:\n"
	  "sequential 1M at queue depth 8 and 1, random 4K at 32 and\n"
	  "1, each read then written (a new file, or --force); each\n"
	  "case --repeat times (default 3), the median run reported" },
	{ "save-capacity", NULL, 0, NULL, BOPT_SET, FIELD(save_capacity), 0, 0, NULL, 0, SEC_PROFILE, 0, NULL,
	  "with --profile: keep the result as the disk's capacity, in\n"
	  "DIR/KEY.json, KEY the disk's WWN or serial (else model and\nsize)" },
	{ "show-capacity", NULL, 0, "DEV", BOPT_TEXT, FIELD(show_capacity), 0, 0, NULL, 0, SEC_PROFILE, 0, NULL,
	  "the capacity saved for the disk of DEV (a block device,\nor a file or directory on it)" },
	{ "capacity-dir", NULL, 0, "DIR", BOPT_TEXT, FIELD(capacity_dir), 0, 0, NULL, 0, SEC_PROFILE, 0, NULL,
	  "where capacities are kept (default $IOLENS_CAPACITY_DIR, else\n" CAPACITY_DEFAULT_DIR ")" },
	{ "compare", NULL, 0, NULL, BOPT_SET, FIELD(compare), 0, 0, NULL, 0, SEC_PROFILE, 0, NULL,
	  "A.json B.json: per case, whether B differs from A beyond\n"
	  "noise: the ranges of their runs do not overlap, and the\n"
	  "medians differ by more than each range is wide and than\n"
	  "--margin; exit 0 no difference, 3 B slower in a case, 4\nonly faster, 1 bad input" },
	{ "margin", NULL, 0, "PCT", BOPT_CALL, 0, 0, 0, parse_margin, GIVEN(margin_given), SEC_PROFILE, 0, NULL,
	  "with --compare: a change of at most PCT % of A's median\nis noise (default 5; 0: only the runs' spread "
	  "counts)" },
	/* Help and version */
	{ "help", NULL, 'h', NULL, BOPT_CALL, 0, 0, 0, show_help, 0, SEC_GENERAL, 13,
	  "this help; --help-all: every option and column", "a screen of help; --help-all: all of this" },
	{ "help-all", NULL, 0, NULL, BOPT_CALL, 0, 0, 0, show_help_all, 0, SEC_GENERAL, 0, NULL, NULL },
	{ "version", NULL, 'V', NULL, BOPT_CALL, 0, 0, 0, show_version, 0, SEC_GENERAL, 0, NULL,
	  "show the version" },
	/* Output, after out_help_options' list */
	{ "json", NULL, 0, NULL, BOPT_OUTPUT, 0, 0, 0, NULL, 0, SEC_OUTPUT, 11, "one JSON document", NULL },
	{ "interval", NULL, 0, "SECONDS", BOPT_CALL, 0, 0, 0, parse_interval, 0, SEC_OUTPUT, 0, NULL,
	  "JSON lines: a sample of every run each interval, then the\nresult as one line" },
	{ "svg", NULL, 0, "FILE", BOPT_TEXT, FIELD(svg), 0, 0, NULL, 0, SEC_OUTPUT, 12,
	  "a chart of MB/s and IOPS, the knee marked",
	  "a chart of MB/s and IOPS against block size (or queue depth)\n"
	  "with the knee marked; bars by mode with --compare-cache" },
};

#define BENCH_NOPTS (sizeof(bench_options) / sizeof(bench_options[0]))
#define BOPT_VAL_BASE 0x2000 /* getopt's value of an entry with no letter: this + its index */

/* One option's lines: "  -h, --help" or "      --qd, --iodepth N", then its text at HELP_COLUMN. */
static void print_option(const struct bench_opt *e, bool alias, const char *text)
{
	char head[64];
	int n;
	const char *line, *end;

	n = snprintf(head, sizeof(head), "%s%c%s--%s%s%s%s%s", e->letter ? "  -" : "     ", e->letter ? e->letter : ' ',
		     e->letter ? ", " : "", e->name, alias && e->alias ? ", --" : "", alias && e->alias ? e->alias : "",
		     e->arg ? " " : "", e->arg ? e->arg : "");
	printf("%s%*s", head, n < HELP_COLUMN ? HELP_COLUMN - n : 2, "");
	for (line = text;; line = end + 1) {
		end = strchrnul(line, '\n');
		printf("%s%.*s\n", line == text ? "" : "                         ", (int)(end - line), line);
		if (!*end)
			break;
	}
}

/* --help-all's options, by section; the output layer's own list goes before SEC_OUTPUT's. */
static void print_all_options(void)
{
	for (unsigned s = 0; s < SEC_COUNT; s++) {
		if (s > 0)
			putchar('\n');
		if (s == SEC_OUTPUT)
			out_help_options(stdout);
		if (section_headings[s])
			printf("%s\n", section_headings[s]);
		for (size_t i = 0; i < BENCH_NOPTS; i++)
			if (bench_options[i].section == s && bench_options[i].help)
				print_option(&bench_options[i], true, bench_options[i].help);
	}
}

/* --help's options, in their places there. */
static void print_brief_options(void)
{
	for (unsigned place = 1;; place++) {
		size_t i;

		for (i = 0; i < BENCH_NOPTS && bench_options[i].brief != place; i++)
			;
		if (i == BENCH_NOPTS)
			return;
		print_option(&bench_options[i], false,
			     bench_options[i].brief_help ? bench_options[i].brief_help : bench_options[i].help);
	}
}

/* --help: a screen; --help-all: every option and column. */
static _Noreturn void usage(bool all)
{
	if (!all) {
		fputs("Usage:\n"
		      " iolens bench [options] [TARGET]\n"
		      " iolens bench --profile [--save-capacity] [options] [TARGET]\n"
		      " iolens bench --compare A.json B.json\n"
		      "\n"
		      "What a disk can do: MB/s, IOPS, latency percentiles and CPU per I/O, with the\n"
		      "device's view (/proc/diskstats). Without --bs, block sizes 4k to 4m are swept\n"
		      "and the knee is reported: the smallest one within 95 % of the peak. TARGET is\n"
		      "a directory (default: here) where a test file is made and removed, or an\n"
		      "existing file or unused block device, written only with --force.\n"
		      "\n"
		      "Options:\n",
		      stdout);
		print_brief_options();
		help_brief("bench", "\n"
			   "Examples:\n"
			   "  iolens bench --rw write /mnt/data     a dd block-size sweep, done properly\n"
			   "  iolens bench --rw randread --bs 4k --qd 32 /srv   random 4k reads, QD32\n");
	}
	printf("Usage:\n"
	       " %s [options] [TARGET]\n"
	       " %s --profile [--save-capacity] [options] [TARGET]\n"
	       " %s --compare [--margin PCT] A.json B.json\n"
	       " %s --show-capacity DEV\n"
	       "\n"
	       "Measure what a disk can do: throughput, IOPS, latency percentiles and CPU per I/O,\n"
	       "with the device's own view (/proc/diskstats) alongside. Without --bs, block sizes\n"
	       "from 4k to 4m are swept, doubling, and the knee is reported: the smallest block size\n"
	       "that reaches 95 %% of the peak throughput.\n"
	       "\n"
	       "TARGET is a directory (default: the current one), where a new file is made, laid\n"
	       "out and removed at the end (on Ctrl-C, SIGTERM and a closed output too; one a\n"
	       "killed run left is removed by the next), or the path of such a new file; or an\n"
	       "existing file or block device, read as it is and written only with --force. A\n"
	       "block device that is mounted or in use, or holds a filesystem or partition table\n"
	       "signature, is never written.\n"
	       "\n"
	       "Each run ends when --size bytes have moved or --runtime has passed, whichever comes\n"
	       "first (--time-based: only the runtime). Buffered writes are synced (fdatasync)\n"
	       "before the clock stops, as dd conv=fdatasync, and the result says so.\n"
	       "\n",
	       program_name, program_name, program_name, program_name);
	print_all_options();
	putchar('\n');
	out_help_columns(stdout, columns, COL_COUNT);
	printf("\n"
	       "Latencies are in microseconds in tables, nanoseconds in JSON and CSV. The percentiles\n"
	       "come from a log-linear histogram (64 buckets per power of two, interpolated: within 1.6 %%). A "
	       "progress\n"
	       "line is shown on a terminal.\n"
	       "\n"
	       "Examples:\n"
	       "  %s                               sweep 4k-4m sequential direct reads here\n"
	       "  %s --rw write /mnt/data          a dd block-size sweep, done properly\n"
	       "  %s --rw randread --bs 4k --qd 32 /srv   random 4k reads, 32 in flight\n"
	       "  %s --qd-sweep --latency-target 1ms     how deep a queue for p99 under 1 ms\n"
	       "  %s --compare-cache --size 256m   what the page cache is worth here\n"
	       "  %s --bs 1m --json --svg sweep.svg      JSON, and a chart\n"
	       "  %s --rw read /dev/sdb            read a whole device (never written without --force)\n"
	       "  %s --profile --save-capacity --json /srv > before.json   the disk's capacity\n"
	       "  %s --compare before.json after.json   a regression, or only noise?\n",
	       program_name, program_name, program_name, program_name, program_name, program_name, program_name,
	       program_name, program_name);
	exit(EXIT_OK);
}

/* getopt's long options and optstring, made from the output layer's and the table. */
static const struct option *bench_long_options(char *optstring, size_t len)
{
	static const struct option out_options[] = { OUT_LONG_OPTIONS };
	static struct option all[sizeof(out_options) / sizeof(out_options[0]) + 2 * BENCH_NOPTS + 1];
	size_t n = 0, k = strlen(OUT_SHORT_OPTIONS);

	memcpy(all, out_options, sizeof(out_options));
	n = sizeof(out_options) / sizeof(out_options[0]);
	snprintf(optstring, len, "%s", OUT_SHORT_OPTIONS);
	for (size_t i = 0; i < BENCH_NOPTS; i++) {
		const struct bench_opt *e = &bench_options[i];
		int val = e->letter ? e->letter : (int)(BOPT_VAL_BASE + i);
		int has_arg = e->arg ? required_argument : no_argument;

		if (e->kind == BOPT_OUTPUT)
			continue;
		all[n++] = (struct option){ e->name, has_arg, NULL, val };
		if (e->alias)
			all[n++] = (struct option){ e->alias, has_arg, NULL, val };
		if (e->letter && k + 3 < len) {
			optstring[k++] = e->letter;
			if (e->arg)
				optstring[k++] = ':';
			optstring[k] = '\0';
		}
	}
	all[n] = (struct option){ 0 };
	return all;
}

/* The hidden --option-table (alone): every option getopt takes, one a line, for tests/cli/bench_options.sh. */
static _Noreturn void print_option_table(void)
{
	char optstring[64];
	const struct option *all = bench_long_options(optstring, sizeof(optstring));

	for (const char *c = optstring; *c; c++)
		if (*c != ':')
			printf("-%c\n", *c);
	for (; all->name; all++)
		printf("--%s\n", all->name);
	exit(EXIT_OK);
}

/* One getopt result that is the table's: stored by its kind, or handed to its parse callback. */
static void apply_option(struct bench_options *o, int opt, const char *arg)
{
	const struct bench_opt *e = NULL;
	char name[32];
	char *base = (char *)o;

	if (opt >= BOPT_VAL_BASE && opt < (int)(BOPT_VAL_BASE + BENCH_NOPTS))
		e = &bench_options[opt - BOPT_VAL_BASE];
	for (size_t i = 0; !e && i < BENCH_NOPTS; i++)
		if (opt > 0 && bench_options[i].letter == opt)
			e = &bench_options[i];
	if (!e)
		usage_hint();
	snprintf(name, sizeof(name), "--%s", e->name);
	switch (e->kind) {
	case BOPT_SET:
	case BOPT_CLEAR:
		*(bool *)(base + e->field) = e->kind == BOPT_SET;
		break;
	case BOPT_TEXT:
		*(const char **)(base + e->field) = arg;
		break;
	case BOPT_COUNT:
		*(unsigned *)(base + e->field) = parse_count_arg(name, arg, e->low, e->high);
		break;
	case BOPT_SECONDS:
		*(double *)(base + e->field) = parse_seconds_arg(name, arg);
		break;
	case BOPT_CALL:
		e->parse(o, arg);
		break;
	case BOPT_OUTPUT:
		break;
	}
	if (e->given)
		*(bool *)(base + e->given - 1) = true;
}

/* What the options mean together: conflicts said, defaults that depend on others filled in. */
static void check_options(int argc, char **argv, struct bench_options *o)
{
	if (o->compare) {
		if (argc - optind != 2)
			usage_error("--compare takes two files, A.json and B.json");
		if (o->profile || o->show_capacity || o->save_capacity)
			usage_error("--compare reads two results: it runs nothing");
		o->target = argv[optind];
		o->compare_b = argv[optind + 1];
		return;
	}
	if (o->margin_given)
		usage_error("--margin goes with --compare");
	if (o->show_capacity) {
		if (optind < argc || o->profile || o->save_capacity)
			usage_error("--show-capacity DEV reads what is saved: it runs nothing");
		return;
	}
	if (optind < argc)
		o->target = argv[optind++];
	if (optind < argc)
		usage_error("one TARGET only: '%s' is one too many", argv[optind]);
	if (o->save_capacity && !o->profile)
		usage_error("--save-capacity saves what --profile measures: give --profile");
	if (o->profile) {
		if (o->bs_given || o->rw_given || o->qd_given || o->mix_given || o->qd_sweep || o->compare_cache ||
		    o->latency_target_ns || o->svg || o->buffered || o->jobs != 1)
			usage_error("--profile runs a fixed set: not with --bs, --rw, --mix, --qd, --jobs, --qd-sweep, "
				    "--compare-cache, --latency-target, --svg or --buffered");
		if (o->engine_given && o->engine == ENGINE_PSYNC)
			usage_error("--profile runs queue depths 8 and 32: not with --engine psync");
		if (!o->repeat_given)
			o->repeat = 3;
		/* The sizes, for the alignment check; each case runs its own. */
		o->bs[0] = 4096;
		o->bs[1] = 1u << 20;
		o->nbs = 2;
		o->bs_given = true; /* a case that does not fit in --size is said, not left out */
	}
	if (o->qd_sweep && o->compare_cache)
		usage_error("--qd-sweep and --compare-cache: one at a time");
	if ((o->qd_sweep || o->compare_cache) && o->nbs > 1)
		usage_error("%s takes one --bs", o->qd_sweep ? "--qd-sweep" : "--compare-cache");
	if (o->compare_cache && o->rw != RW_READ && o->rw != RW_RANDREAD)
		usage_error("--compare-cache compares reads: --rw read or randread");
	if (o->compare_cache && o->buffered)
		usage_error("--compare-cache runs direct and buffered itself: leave --buffered out");
	if (o->engine_given && o->engine == ENGINE_PSYNC && (o->qd > 1 || o->qd_sweep))
		usage_error("the psync engine has one request in flight: --qd above 1 needs io_uring");
	if (!o->engine_given)
		o->engine = o->qd > 1 || o->qd_sweep ? ENGINE_IO_URING : ENGINE_PSYNC;
	if (o->qd_sweep && !o->qd_given)
		o->qd = 32;
	if (o->qd_sweep && !o->rw_given)
		o->rw = RW_RANDREAD;
	if (o->qd_sweep && !o->bs_given) {
		o->bs[0] = 4096;
		o->nbs = 1;
	}
	if (o->compare_cache && !o->bs_given) {
		o->bs[0] = 1u << 20;
		o->nbs = 1;
	}
	if (!o->nbs)
		o->nbs = (unsigned)bench_parse_sizes("4k-4m", o->bs, BENCH_MAX_POINTS);
	if (o->time_based && o->runtime <= 0)
		usage_error("--time-based needs a --runtime");
	if (o->output.format == OUT_CSV && o->interval > 0)
		usage_error("--interval writes JSON lines: not with --csv");
}

static void parse_options(int argc, char **argv, struct bench_options *o)
{
	char optstring[64];
	const struct option *long_options = bench_long_options(optstring, sizeof(optstring));
	int opt;

	if (argc == 2 && !strcmp(argv[1], "--option-table"))
		print_option_table();
	memset(o, 0, sizeof(*o));
	o->mix = 50;
	o->qd = 1;
	o->jobs = 1;
	o->repeat = 1;
	o->runtime = 5;
	o->margin = BENCH_COMPARE_MARGIN_PERCENT;
	while ((opt = next_option(argc, argv, optstring, long_options, NULL)) != -1)
		if (!out_parse_option(&o->output, opt, optarg))
			apply_option(o, opt, optarg);
	check_options(argc, argv, o);
}

/* ---- One point of the results ---------------------------------------------------------- */

struct point {
	const char *mode; /* "direct", "buffered", "cold", "warm" */
	const char *case_name; /* --profile's case ("seq1m_q8t1_read"); NULL otherwise */
	enum rw_mode rw;
	uint64_t bs;
	unsigned qd;
	unsigned jobs;    /* --jobs, or fewer: never more than the blocks the run has to do */
	struct bench_result result;
	struct bench_dir_stats all; /* reads and writes together */
	bool device_known;
	char device[64];
	struct disk_ext device_ext;
	uint64_t device_read, device_written; /* bytes */
	bool hit_known;
	double hit;        /* percent */
	char warning[256]; /* what differs between the application's view and the device's */
	enum { VIEW_SAME, VIEW_ADDED, VIEW_CACHE, VIEW_ABSORBED } view; /* the warning's cause, said once a run */
	bool knee;
	bool knee_unconfirmed; /* the knee, not confirmed (see bench_find_knee) */
	unsigned runs;     /* --repeat: how many runs the point was measured by (this one is their median) */
	double runs_mbps[BENCH_MAX_REPEAT]; /* each run's MB/s, in the order run */
	double spread;     /* (highest - lowest) / median MB/s of the runs, in percent */
};

struct bench {
	struct bench_options opt;
	struct bench_target target;
	struct point points[BENCH_MAX_POINTS];
	unsigned npoints;
	bool progress; /* a progress line on stderr */
	bool progress_shown;
	struct point *running;
	const char *next_case; /* --profile: the case run_point is to run */
	struct disk_stats device_before; /* sampled as the measured phase starts */
	int64_t cached_before;           /* likewise: the file's cached pages, -1 when not wanted or unknown */
	bool want_cached;
	bool aborted; /* a point found the run must not go on (the device it writes changed) */
	unsigned fewer_jobs, fewer_jobs_least;  /* points run with fewer jobs than --jobs, and the fewest */
	uint64_t fewer_jobs_bs[2];              /* the smallest and largest block size of those */
	unsigned left_out;                      /* block sizes left out, larger than the size used */
	uint64_t left_out_bs[2];
	struct disk_stats device_base;   /* a device written: its counts before the first run */
	bool device_base_known, told_uncounted;
	uint64_t written, written_bound; /* what bench wrote to it since, and the most the device may count for it */
	uint64_t last_bytes, last_dir_bytes[2], last_ios[2], last_lat[2], last_ns; /* for --interval deltas */
};

static bool is_random(enum rw_mode rw)
{
	return rw == RW_RANDREAD || rw == RW_RANDWRITE || rw == RW_RANDMIX;
}

static unsigned rw_read_percent(enum rw_mode rw, unsigned mix)
{
	switch (rw) {
	case RW_READ:
	case RW_RANDREAD:
		return 100;
	case RW_WRITE:
	case RW_RANDWRITE:
		return 0;
	default:
		return mix;
	}
}

static unsigned read_percent(const struct bench_options *o)
{
	return rw_read_percent(o->rw, o->mix);
}

static void clear_progress(struct bench *b)
{
	if (b->progress_shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		b->progress_shown = false;
	}
}

static void on_tick(const struct bench_progress *progress, void *context)
{
	struct bench *b = context;
	const struct point *p = b->running;
	char bs[24];
	uint64_t bytes = progress->bytes[0] + progress->bytes[1], ios = progress->ios[0] + progress->ios[1];
	double seconds = (double)progress->elapsed_ns / 1e9;

	if (b->opt.interval > 0 && !progress->ramping && progress->elapsed_ns > b->last_ns) {
		struct out_record *line = out_record_new();
		uint64_t dt = progress->elapsed_ns - b->last_ns;
		int written;

		out_rec_text(line, "type", "interval");
		out_rec_text(line, "mode", p->mode);
		out_rec_count(line, "bs", p->bs);
		out_rec_count(line, "qd", p->qd);
		out_rec_real(line, "time_s", seconds);
		for (int d = 0; d < 2; d++) {
			struct out_record *dir = out_rec_object(line, d ? "write" : "read");
			uint64_t dios = progress->ios[d] - b->last_ios[d];
			uint64_t dbytes = progress->bytes[d] - b->last_dir_bytes[d];

			out_rec_count(dir, "ios", dios);
			out_rec_real(dir, "bytes_per_s", dt ? (double)dbytes * 1e9 / (double)dt : 0);
			out_rec_real(dir, "iops", dt ? (double)dios * 1e9 / (double)dt : 0);
			out_rec_ns_if(dir, "lat_mean_ns", dios ? (progress->lat_sum[d] - b->last_lat[d]) / dios : 0,
				      dios > 0);
		}
		{
			uint64_t dbytes = bytes - b->last_bytes;

			out_rec_bytes(line, "bytes", dbytes);
			out_rec_real(line, "bytes_per_s", dt ? (double)dbytes * 1e9 / (double)dt : 0);
		}
		written = out_record_write(line, stdout, OUT_RECORD_LINE);
		out_record_free(line);
		/* A reader that went away (| head): the runs stop, and the test file goes, as on Ctrl-C. */
		if ((written == -EPIPE || (fflush(stdout) == EOF && errno == EPIPE)) && !stop_signal)
			stop_signal = SIGPIPE;
		b->last_bytes = bytes;
		b->last_ns = progress->elapsed_ns;
		for (int d = 0; d < 2; d++) {
			b->last_ios[d] = progress->ios[d];
			b->last_lat[d] = progress->lat_sum[d];
			b->last_dir_bytes[d] = progress->bytes[d];
		}
	}
	if (b->progress) {
		if (p->case_name)
			fprintf(stderr, "\r\033[K%s: %.1f/%g s  %.1f MB/s  %.0f IOPS", p->case_name, seconds,
				b->opt.runtime, seconds > 0 ? (double)bytes / seconds / 1e6 : 0,
				seconds > 0 ? (double)ios / seconds : 0);
		else if (progress->ramping)
			fprintf(stderr, "\r\033[K%s %s qd %u: ramping up", p->mode,
				bench_size_label(p->bs, bs, sizeof(bs)), p->qd);
		else
			fprintf(stderr, "\r\033[K%s %s qd %u: %.1f/%g s  %.1f MB/s  %.0f IOPS", p->mode,
				bench_size_label(p->bs, bs, sizeof(bs)), p->qd, seconds, b->opt.runtime,
				seconds > 0 ? (double)bytes / seconds / 1e6 : 0,
				seconds > 0 ? (double)ios / seconds : 0);
		fflush(stderr);
		b->progress_shown = true;
	}
}

static bool read_device(const struct bench *b, struct disk_stats *out)
{
	struct diskstats all = {0};
	bool found = false;

	if (!b->target.disk || diskstats_read(&all) != 0)
		return false;
	for (unsigned i = 0; i < all.count; i++) {
		if (all.disk[i].major == major(b->target.disk) && all.disk[i].minor == minor(b->target.disk)) {
			*out = all.disk[i];
			found = true;
			break;
		}
	}
	diskstats_free(&all);
	return found;
}

/* The page cache's answer for the whole file: cached pages, or -1 when it will not tell. */
static int64_t cached_pages(const struct bench *b)
{
	struct pagecache_stat st;

	return pagecache_query(b->target.fd, 0, b->target.size, &st) ? -1 : (int64_t)st.cached;
}

static void compare_views(struct point *p)
{
	char app_text[16], dev_text[16], device[sizeof(p->device)];
	uint64_t app = p->all.bytes, dev = p->device_read + p->device_written;
	uint64_t diff = app > dev ? app - dev : dev - app;

	if (!p->device_known || !app)
		return;
	/* Within 10 % (and 1 MiB) is what other processes and metadata add on a quiet machine. */
	if (diff * 10 <= app || diff <= (1u << 20))
		return;
	memcpy(device, p->device, sizeof(device));
	p->view = dev > app ? VIEW_ADDED : strcmp(p->mode, "direct") ? VIEW_CACHE : VIEW_ABSORBED;
	snprintf(p->warning, sizeof(p->warning),
		 "the application moved %s, the device %s (%s): %s", human_size(app, app_text, 16),
		 human_size(dev, dev_text, 16), device,
		 dev < app ? (strcmp(p->mode, "direct") ? (dev * 10 < app ? "the page cache served it" :
								   "the page cache served part of it") :
			      "compression, deduplication or another layer absorbed part of it")
			   : "read-ahead, write amplification or other processes added to it");
}

/* As the measured phase starts (after any ramp): the counters the run is compared with. */
static void on_measure(void *context)
{
	struct bench *b = context;

	b->running->device_known = read_device(b, &b->device_before);
	b->cached_before = b->want_cached ? cached_pages(b) : -1;
}

static double mb_per_s(const struct point *p);

static bool going(const struct bench *b)
{
	return !stop_signal && !b->aborted;
}

/*
 * After a run on a block device bench writes: stops the sweep (b->aborted, said) when a
 * signature appeared on it, or when the device wrote more than the run did: another process
 * wrote to it meanwhile, and a sequential run may have overwritten what it wrote (a
 * filesystem made and overwritten within the run leaves no signature to find). The device
 * counts at completion, so the counts around the whole run (ramp and sync included) hold all
 * of bench's writes; buffered ones are counted a page per page they touched.
 */
static void check_device_after(struct bench *b, const struct bench_spec *spec, const struct bench_result *result)
{
	uint64_t page = page_size(), device;
	struct disk_stats now;
	char theirs_text[16], device_text[16], ours_text[16];

	if (b->target.hold_fd < 0 || b->aborted)
		return;
	if (bench_target_recheck(&b->target) != 0) {
		b->aborted = true;
		return;
	}
	b->written += result->written;
	b->written_bound +=
	    spec->direct ? result->written : result->write_requests * ((spec->bs + page - 1) / page * page);
	if (!b->device_base_known || !read_device(b, &now) ||
	    (b->written && now.wr_sectors == b->device_base.wr_sectors)) {
		if (!b->told_uncounted && b->written)
			warn_msg("%s: the device keeps no I/O statistics (queue/iostats 0): writes of other processes "
				 "during the run cannot be seen", printable_name(b->target.path));
		b->told_uncounted = b->told_uncounted || b->written;
		return;
	}
	device = (now.wr_sectors - b->device_base.wr_sectors + now.dc_sectors - b->device_base.dc_sectors) * 512;
	if (device <= b->written_bound)
		return;
	warn_msg("%s: another process wrote %s to it during the run (the device wrote %s since it started, bench %s): "
		 "stopped, not written again", printable_name(b->target.path),
		 human_size(device - b->written_bound, theirs_text, 16), human_size(device, device_text, 16),
		 human_size(b->written, ours_text, 16));
	b->aborted = true;
}

/* One run of a point into p, whose mode, bs, qd and jobs are set: 0, or the engine's error. */
static int measure_run(struct bench *b, struct point *p, struct bench_spec *spec, bool direct)
{
	struct bench_options *o = &b->opt;
	struct disk_stats after = {0};
	int64_t cached_after;
	int rc;

	b->running = p;
	b->last_bytes = b->last_ns = 0;
	memset(b->last_ios, 0, sizeof(b->last_ios));
	memset(b->last_lat, 0, sizeof(b->last_lat));
	memset(b->last_dir_bytes, 0, sizeof(b->last_dir_bytes));
	/* The hit ratio of reads only: pages that writes add to the cache are no misses. */
	b->want_cached = !direct && spec->read_percent == 100;
	b->cached_before = -1;
	/* The device's counts from before bench's first write on: every write since is bench's or another's. */
	if (b->target.hold_fd >= 0 && !b->device_base_known)
		b->device_base_known = read_device(b, &b->device_base);
	rc = bench_run(spec, &p->result);
	p->device_known = p->device_known && read_device(b, &after);
	check_device_after(b, spec, &p->result);
	clear_progress(b);
	for (int d = 0; d < 2; d++) {
		struct bench_dir_stats *s = &p->result.dir[d];

		if (!s->ios)
			continue;
		if (!p->all.ios || s->lat_min < p->all.lat_min)
			p->all.lat_min = s->lat_min;
		if (s->lat_max > p->all.lat_max)
			p->all.lat_max = s->lat_max;
		p->all.ios += s->ios;
		p->all.bytes += s->bytes;
		p->all.lat_sum += s->lat_sum;
		for (unsigned k = 0; k < VTRACE_HISTOGRAM_BUCKETS; k++)
			p->all.hist[k] += s->hist[k];
	}
	if (p->device_known) {
		snprintf(p->device, sizeof(p->device), "%s", after.name);
		const struct disk_stats *before = &b->device_before;

		disk_ext_compute(before, &after, (double)p->result.elapsed_ns / 1e9, &p->device_ext);
		p->device_read =
		    after.rd_sectors >= before->rd_sectors ? (after.rd_sectors - before->rd_sectors) * 512 : 0;
		p->device_written =
		    after.wr_sectors >= before->wr_sectors ? (after.wr_sectors - before->wr_sectors) * 512 : 0;
	}
	if (b->cached_before >= 0 && (cached_after = cached_pages(b)) >= 0 && p->result.dir[BENCH_READ].bytes) {
		/* Pages the file gained in the cache during the run were misses (bcc's cachestat counts so). */
		uint64_t pages_read = pages_for(p->result.dir[BENCH_READ].bytes, page_size());
		uint64_t misses = cached_after > b->cached_before ? (uint64_t)(cached_after - b->cached_before) : 0;

		p->hit_known = true;
		p->hit = misses >= pages_read ? 0 : 100.0 * (double)(pages_read - misses) / (double)pages_read;
	}
	if (!o->compare_cache) /* there the difference is the point, not a warning */
		compare_views(p);
	return rc;
}

static int compare_mbps(const void *a, const void *b)
{
	double x = **(const double *const *)a, y = **(const double *const *)b;

	return (x > y) - (x < y);
}

static int run_point(struct bench *b, const char *mode, bool direct, uint64_t bs, unsigned qd,
		     void (*before)(struct bench *b, unsigned run))
{
	struct bench_options *o = &b->opt;
	struct point *p = &b->points[b->npoints];
	struct bench_spec spec = {0};
	uint64_t span = b->target.size / bs * bs;
	int rc;

	memset(p, 0, sizeof(*p));
	p->mode = mode;
	p->case_name = b->next_case;
	p->rw = o->rw;
	p->bs = bs;
	p->qd = qd;
	if (!span && !o->bs_given && !o->qd_sweep && !o->compare_cache)
		return 0; /* the default sweep goes as far as the file allows */
	if (!span) { /* said once, after the runs (say_once) */
		if (!b->left_out++)
			b->left_out_bs[0] = bs;
		b->left_out_bs[1] = bs;
		return 1;
	}
	/* Checked again before every point: nothing written after a filesystem appeared. */
	if (bench_target_recheck(&b->target) != 0) {
		b->aborted = true;
		return 1;
	}
	spec.fd = b->target.fd;
	spec.direct = direct;
	spec.random = is_random(o->rw);
	spec.read_percent = read_percent(o);
	spec.bs = bs;
	spec.span = span;
	spec.buffer_align = b->target.dio_mem_align;
	spec.qd = qd;
	spec.engine = qd > 1 ? ENGINE_IO_URING : o->engine;
	spec.bytes_limit = o->time_based ? 0 : (o->size ? o->size : b->target.size) / bs * bs;
	if (!spec.bytes_limit && !o->time_based)
		spec.bytes_limit = bs;
	{
		/* More jobs than blocks would read the same blocks again (each its own slice of none). */
		uint64_t blocks = (spec.bytes_limit ? spec.bytes_limit : span) / bs;

		p->jobs = blocks < o->jobs ? (unsigned)blocks : o->jobs;
		/* More jobs than blocks: said once, after the runs (say_once). */
		if (p->jobs < o->jobs && !b->fewer_jobs++) {
			b->fewer_jobs_bs[0] = bs;
			b->fewer_jobs_least = p->jobs;
		}
		if (p->jobs < o->jobs) {
			b->fewer_jobs_bs[1] = bs;
			if (p->jobs < b->fewer_jobs_least)
				b->fewer_jobs_least = p->jobs;
		}
		spec.jobs = p->jobs;
	}
	spec.runtime_ns = (uint64_t)(o->runtime * 1e9);
	spec.ramp_ns = (uint64_t)(o->ramp * 1e9);
	spec.pattern = o->pattern;
	spec.sync_writes = !direct && spec.read_percent < 100;
	spec.stop = &stop_signal;
	spec.on_measure = on_measure;
	spec.context = b;
	if (b->progress || o->interval > 0) {
		spec.tick_ns = o->interval > 0 ? (uint64_t)(o->interval * 1e9) : 500000000;
		spec.on_tick = on_tick;
		spec.context = b;
	}
	if (o->repeat == 1) {
		if (before)
			before(b, 0);
		rc = measure_run(b, p, &spec, direct);
	} else {
		/* Each run of the point measured whole; the one of median MB/s stands for it. */
		struct point *runs = xcalloc(o->repeat, sizeof(*runs));
		const double *order[BENCH_MAX_REPEAT];
		unsigned n = 0;

		rc = 0;
		for (unsigned r = 0; r < o->repeat && going(b); r++) {
			if (r && bench_target_recheck(&b->target) != 0) {
				b->aborted = true;
				free(runs);
				return 1;
			}
			runs[r] = *p;
			if (before)
				before(b, r);
			rc = measure_run(b, &runs[r], &spec, direct);
			if (rc) {
				*p = runs[r];
				break;
			}
			p->runs_mbps[r] = mb_per_s(&runs[r]);
			order[n++] = &p->runs_mbps[r];
		}
		if (!rc && n) {
			double mbps[BENCH_MAX_REPEAT], median;
			const struct point *chosen;

			qsort(order, n, sizeof(order[0]), compare_mbps);
			chosen = &runs[order[(n - 1) / 2] - p->runs_mbps]; /* the lower middle one when n is even */
			median = *order[(n - 1) / 2];
			memcpy(mbps, p->runs_mbps, sizeof(mbps));
			*p = *chosen;
			memcpy(p->runs_mbps, mbps, sizeof(mbps));
			p->runs = n;
			p->spread = median > 0 ? (*order[n - 1] - *order[0]) / median * 100 : 0;
		}
		free(runs);
	}
	if (rc) {
		char bs_text[24];

		if (p->result.error == EINVAL && direct)
			warn_msg("%s: %s: %s; O_DIRECT needs block sizes and offsets that are multiples of %u bytes "
				 "and buffers aligned to %u here (statx), or the filesystem does not support it "
				 "(use --buffered)",
				 printable_name(b->target.path), p->result.error_what, strerror(p->result.error),
				 b->target.dio_offset_align ? b->target.dio_offset_align : 512,
				 b->target.dio_mem_align ? b->target.dio_mem_align : 512);
		else if (p->result.error == ENOSPC)
			warn_msg("%s: %s: no space left on the device", printable_name(b->target.path),
				 p->result.error_what);
		else
			warn_msg("%s: bs %s: %s: %s", printable_name(b->target.path),
				 bench_size_label(bs, bs_text, sizeof(bs_text)), p->result.error_what,
				 strerror(p->result.error));
		return 1;
	}
	b->npoints++;
	if (b->aborted) /* the point's figures stand (what bench did), but no more is written */
		return 1;
	if (!p->all.ios && !stop_signal) {
		char bs_text[24];

		/* Shown (its latencies unknown, not 0), and the run fails: it measured nothing. */
		warn_msg("%s: bs %s: no I/O completed in the %.3g s run: nothing was measured",
			 printable_name(b->target.path), bench_size_label(bs, bs_text, sizeof(bs_text)),
			 (double)p->result.elapsed_ns / 1e9);
		return 1;
	}
	return 0;
}

/* ---- Output ------------------------------------------------------------------------------ */

static double mb_per_s(const struct point *p)
{
	return p->result.elapsed_ns ? (double)p->all.bytes * 1e3 / (double)p->result.elapsed_ns : 0;
}

static double iops_of(const struct point *p)
{
	return p->result.elapsed_ns ? (double)p->all.ios * 1e9 / (double)p->result.elapsed_ns : 0;
}

static const char *rw_name(const struct bench_options *o)
{
	return rw_names[o->rw];
}

/* The latencies of the I/Os done under key: null when none was (no latency, not one of 0). */
static void latency_record(struct out_record *r, const char *key, const struct bench_dir_stats *s)
{
	struct out_record *lat;
	static const struct { const char *key; double q; } quantiles[] = {
		{ "p50", 0.5 }, { "p90", 0.9 }, { "p99", 0.99 }, { "p99_9", 0.999 },
	};

	if (!s->ios) {
		out_rec_null(r, key);
		return;
	}
	/* In ns, as the key says: the fields inside are named by what they are (min, p99 ...). */
	lat = out_rec_object(r, key);
	out_rec_count(lat, "min", s->lat_min);
	out_rec_count(lat, "mean", s->lat_sum / s->ios);
	for (size_t i = 0; i < sizeof(quantiles) / sizeof(quantiles[0]); i++)
		out_rec_count(lat, quantiles[i].key, bench_quantile(s, quantiles[i].q));
	out_rec_count(lat, "max", s->lat_max);
}

static void direction_record(struct out_record *r, const char *key, const struct point *p,
			     const struct bench_dir_stats *s)
{
	struct out_record *dir = out_rec_object(r, key);
	double seconds = (double)p->result.elapsed_ns / 1e9;

	out_rec_count(dir, "ios", s->ios);
	out_rec_bytes(dir, "bytes", s->bytes);
	out_rec_real(dir, "bytes_per_s", seconds > 0 ? (double)s->bytes / seconds : 0);
	out_rec_real(dir, "iops", seconds > 0 ? (double)s->ios / seconds : 0);
	latency_record(dir, "lat_ns", s);
}

static void point_record(struct out_record *o, const struct bench *b, const struct point *p)
{
	struct out_record *cpu;
	uint64_t ios = p->all.ios;

	if (p->case_name) {
		out_rec_text(o, "case", p->case_name);
		out_rec_text(o, "rw", rw_names[p->rw]);
	}
	out_rec_text(o, "mode", p->mode);
	out_rec_count(o, "bs", p->bs);
	out_rec_count(o, "qd", p->qd);
	out_rec_count(o, "jobs", p->jobs);
	out_rec_text(o, "engine", p->qd > 1 || b->opt.engine == ENGINE_IO_URING ? "io_uring" : "psync");
	out_rec_ns(o, "elapsed_ns", p->result.elapsed_ns);
	out_rec_real(o, "bytes_per_s", mb_per_s(p) * 1e6);
	out_rec_real(o, "iops", iops_of(p));
	latency_record(o, "lat_ns", &p->all);
	if (p->result.dir[BENCH_READ].ios || rw_read_percent(p->rw, b->opt.mix) > 0)
		direction_record(o, "read", p, &p->result.dir[BENCH_READ]);
	if (p->result.dir[BENCH_WRITE].ios || rw_read_percent(p->rw, b->opt.mix) < 100)
		direction_record(o, "write", p, &p->result.dir[BENCH_WRITE]);
	cpu = out_rec_object(o, "cpu");
	out_rec_real(cpu, "user_s", p->result.cpu_user_s);
	out_rec_real(cpu, "sys_s", p->result.cpu_sys_s);
	/* Per I/O, none done: unknown (NaN is null), not 0. */
	out_rec_real(cpu, "user_ns_per_io", ios ? p->result.cpu_user_s * 1e9 / (double)ios : NAN);
	out_rec_real(cpu, "sys_ns_per_io", ios ? p->result.cpu_sys_s * 1e9 / (double)ios : NAN);
	out_rec_bool(o, "synced", p->result.synced);
	if (p->result.synced)
		out_rec_ns(o, "sync_ns", p->result.sync_ns);
	if (p->device_known) {
		struct out_record *dev = out_rec_object(o, "device");

		out_rec_text(dev, "name", p->device);
		out_rec_bytes(dev, "read_bytes", p->device_read);
		out_rec_bytes(dev, "write_bytes", p->device_written);
		out_rec_real(dev, "util", p->device_ext.util);
		out_rec_real(dev, "aqu_sz", p->device_ext.aqu_sz);
	} else {
		out_rec_null(o, "device");
	}
	out_rec_real(o, "hit_ratio", p->hit_known ? p->hit / 100 : NAN);
	out_rec_bool(o, "knee", p->knee);
	if (p->runs > 1) {
		struct out_record *runs = out_rec_object(o, "runs");
		struct out_list *each;

		out_rec_count(runs, "count", p->runs);
		each = out_rec_list(runs, "bytes_per_s");
		for (unsigned i = 0; i < p->runs; i++)
			out_list_real(each, p->runs_mbps[i] * 1e6);
		out_rec_real(runs, "spread", p->spread / 100);
	} else {
		out_rec_null(o, "runs");
	}
	out_rec_text(o, "warning", p->warning[0] ? p->warning : NULL);
}

/*
 * What the run measured, in one line, as the table's title and the JSON's "title": the workload,
 * direct or buffered, the engine and queue depth, the block sizes and the target, e.g.
 * "Sequential read, O_DIRECT, psync QD1, bs 4K-4M, 1G test file on vda (ext4)".
 */
static void run_title(const struct bench *b, char *out, size_t len)
{
	static const char *const what[] = { "Sequential read", "Sequential write", "Random read", "Random write",
					    "Sequential read/write", "Random read/write" };
	const struct bench_options *o = &b->opt;
	char first[24], last[24], size[16], mix[32] = "", jobs[24] = "", qd[32], where[96];
	uint64_t bs_low = b->npoints ? b->points[0].bs : o->bs[0];
	uint64_t bs_high = b->npoints ? b->points[b->npoints - 1].bs : o->bs[o->nbs ? o->nbs - 1 : 0];
	const char *device = NULL;

	for (unsigned i = 0; i < b->npoints && !device; i++)
		if (b->points[i].device_known)
			device = b->points[i].device;
	human_size(b->target.size, size, sizeof(size));
	if (b->target.block_device)
		snprintf(where, sizeof(where), "%s of %s", size, device ? device : "the device");
	else if (device)
		snprintf(where, sizeof(where), "%s %s on %s (%s)", size, b->target.created ? "test file" : "file",
			 device, b->target.fs_type);
	else
		snprintf(where, sizeof(where), "%s %s on %s", size, b->target.created ? "test file" : "file",
			 b->target.fs_type);
	if (o->profile) {
		snprintf(out, len, "CrystalDiskMark set (seq 1M, random 4K; read, write), O_DIRECT, QD1-32, %s", where);
		return;
	}
	if (o->rw == RW_MIX || o->rw == RW_RANDMIX)
		snprintf(mix, sizeof(mix), " (%u %% reads)", o->mix);
	if (o->jobs > 1)
		snprintf(jobs, sizeof(jobs), ", %u jobs", o->jobs);
	if (o->qd_sweep)
		snprintf(qd, sizeof(qd), "io_uring QD1-%u", o->qd);
	else
		snprintf(qd, sizeof(qd), "%s QD%u", o->qd > 1 || o->engine == ENGINE_IO_URING ? "io_uring" : "psync",
			 o->qd);
	bench_size_label(bs_low, first, sizeof(first));
	bench_size_label(bs_high, last, sizeof(last));
	snprintf(out, len, "%s%s, %s, %s%s, bs %s%s%s, %s", what[o->rw], mix,
		 o->compare_cache ? "O_DIRECT, then buffered cold and warm" :
		 !o->buffered ? "O_DIRECT" : read_percent(o) < 100 ? "buffered (synced)" : "buffered",
		 qd, jobs, first, bs_high != bs_low ? "-" : "", bs_high != bs_low ? last : "", where);
}

/* The whole run as one record: bench(1)'s JSON document (and the "result" line with --interval). */
static struct out_record *document_record(const struct bench *b, const struct bench_knee *knee)
{
	struct out_record *doc = out_record_new();
	struct out_list *points;
	const struct bench_options *o = &b->opt;
	char title[256];

	run_title(b, title, sizeof(title));
	out_rec_text(doc, "title", title);
	out_rec_text(doc, "target", b->target.path);
	out_rec_bool(doc, "created", b->target.created);
	out_rec_count(doc, "size", b->target.size);
	out_rec_text(doc, "fs_type", b->target.block_device ? "block device" : b->target.fs_type);
	out_rec_text(doc, "rw", o->profile ? NULL : rw_name(o)); /* --profile: each point's */
	if (o->rw == RW_MIX || o->rw == RW_RANDMIX)
		out_rec_count(doc, "mix_read_percent", o->mix);
	/* --compare-cache runs both ways: each point's mode says which. */
	if (o->compare_cache)
		out_rec_null(doc, "direct");
	else
		out_rec_bool(doc, "direct", !o->buffered);
	out_rec_text(doc, "sweep",
		     o->profile             ? "profile"
			 : o->compare_cache ? "cache"
			 : o->qd_sweep      ? "qd"
			 : o->nbs > 1       ? "bs"
					    : "none");
	out_rec_real(doc, "runtime_s", o->runtime);
	out_rec_bool(doc, "time_based", o->time_based);
	out_rec_real(doc, "ramp_s", o->ramp);
	points = out_rec_list(doc, "points");
	for (unsigned i = 0; i < b->npoints; i++)
		point_record(out_list_object(points), b, &b->points[i]);
	if (knee && knee->index >= 0 && b->npoints > 1) {
		struct out_record *k = out_rec_object(doc, "knee");
		const struct point *kp = &b->points[knee->index], *pp = &b->points[knee->peak];

		out_rec_count(k, o->qd_sweep ? "qd" : "bs", o->qd_sweep ? kp->qd : kp->bs);
		out_rec_real(k, "bytes_per_s", mb_per_s(kp) * 1e6);
		out_rec_real(k, "peak_bytes_per_s", mb_per_s(pp) * 1e6);
		out_rec_count(k, o->qd_sweep ? "peak_qd" : "peak_bs", o->qd_sweep ? pp->qd : pp->bs);
		out_rec_bool(k, "confirmed", !knee->unconfirmed);
		out_rec_text(k, "unconfirmed_reason", knee->why == KNEE_LAST ? "last_point" :
				 knee->why == KNEE_NOISE ? "noise" : NULL);
	} else {
		out_rec_null(doc, "knee");
	}
	if (o->latency_target_ns) {
		struct out_record *t = out_rec_object(doc, "latency_target");
		int best = bench_latency_target(b->npoints, bench_p99_of, (void *)b, o->latency_target_ns);

		out_rec_ns(t, "p99_limit_ns", o->latency_target_ns);
		out_rec_count_if(t, "qd", best >= 0 ? b->points[best].qd : 0, best >= 0);
	}
	return doc;
}

static uint64_t bench_p99_of(unsigned index, void *context)
{
	const struct bench *b = context;

	return bench_quantile(&b->points[index].all, 0.99);
}

static double mbps_of(unsigned index, void *context)
{
	const struct bench *b = context;

	return mb_per_s(&b->points[index]);
}

/* The spread of a point's runs, as a fraction; NAN for a single run. */
static double spread_of(unsigned index, void *context)
{
	const struct bench *b = context;

	return b->points[index].runs > 1 ? b->points[index].spread / 100 : NAN;
}

static void fill_row(struct out_table *table, const struct point *p)
{
	struct out_row *row = out_row_add(table);
	char bs[24];
	uint64_t ios = p->all.ios;

	out_set_text(row, COL_CASE, p->case_name);
	out_set_text(row, COL_MODE, p->mode);
	out_set_text(row, COL_RW, rw_names[p->rw]);
	out_set_text(row, COL_BS, bench_size_label(p->bs, bs, sizeof(bs)));
	out_set_count(row, COL_QD, p->qd);
	out_set_count(row, COL_JOBS, p->jobs);
	out_set_real(row, COL_MBPS, mb_per_s(p));
	out_set_count(row, COL_IOPS, (uint64_t)llround(iops_of(p)));
	if (ios) {
		out_set_count(row, COL_LAT_MEAN, p->all.lat_sum / ios);
		out_set_count(row, COL_LAT_P50, bench_quantile(&p->all, 0.5));
		out_set_count(row, COL_LAT_P90, bench_quantile(&p->all, 0.9));
		out_set_count(row, COL_LAT_P99, bench_quantile(&p->all, 0.99));
		out_set_count(row, COL_LAT_P999, bench_quantile(&p->all, 0.999));
		out_set_count(row, COL_LAT_MAX, p->all.lat_max);
		out_set_count(row, COL_CPU,
			      (uint64_t)((p->result.cpu_user_s + p->result.cpu_sys_s) * 1e9 / (double)ios));
		out_set_count(row, COL_USR, (uint64_t)(p->result.cpu_user_s * 1e9 / (double)ios));
		out_set_count(row, COL_SYS, (uint64_t)(p->result.cpu_sys_s * 1e9 / (double)ios));
	}
	if (p->device_known) {
		out_set_real(row, COL_DEV_MBPS, p->result.elapsed_ns ?
			     (double)(p->device_read + p->device_written) * 1e3 / (double)p->result.elapsed_ns : 0);
		out_set_real(row, COL_UTIL, p->device_ext.util);
		out_set_real(row, COL_AQU, p->device_ext.aqu_sz);
	}
	if (p->hit_known)
		out_set_real(row, COL_HIT, p->hit);
	out_set_text(row, COL_KNEE, p->knee ? (p->knee_unconfirmed ? "knee?" : "knee") : "");
	if (p->runs > 1)
		out_set_real(row, COL_SPREAD, p->spread);
}

/*
 * What happened at some points of the run, one line per cause however many points (each point's
 * own words are its "warning" in --json): jobs fewer than --jobs, sizes left out, and a device that
 * moved more or less than the runs did.
 */
static void say_once(const struct bench *b)
{
	static const char *const why[] = {
		[VIEW_ADDED] = "more than bench: read-ahead or other I/O",
		[VIEW_CACHE] = "less than bench: the page cache served it",
		[VIEW_ABSORBED] = "less than bench: a layer absorbed part",
	};
	const struct bench_options *o = &b->opt;
	char low[24], high[24], size[16];

	if (b->fewer_jobs == 1)
		warn_msg("--jobs %u with %u block%s of %s to do: %u job%s at this block size", o->jobs,
			 b->fewer_jobs_least, b->fewer_jobs_least == 1 ? "" : "s",
			 bench_size_label(b->fewer_jobs_bs[0], low, sizeof(low)), b->fewer_jobs_least,
			 b->fewer_jobs_least == 1 ? "" : "s");
	else if (b->fewer_jobs)
		warn_msg("--jobs %u with fewer blocks to do at %s-%s: as few as %u job%s there (the JOBS column)",
			 o->jobs, bench_size_label(b->fewer_jobs_bs[0], low, sizeof(low)),
			 bench_size_label(b->fewer_jobs_bs[1], high, sizeof(high)), b->fewer_jobs_least,
			 b->fewer_jobs_least == 1 ? "" : "s");
	human_size(b->target.size, size, sizeof(size));
	if (b->left_out == 1)
		warn_msg("block size %s is more than the %s used: left out",
			 bench_size_label(b->left_out_bs[0], low, sizeof(low)), size);
	else if (b->left_out)
		warn_msg("block sizes %s-%s are more than the %s used: left out",
			 bench_size_label(b->left_out_bs[0], low, sizeof(low)),
			 bench_size_label(b->left_out_bs[1], high, sizeof(high)), size);
	for (int cause = VIEW_ADDED; cause <= VIEW_ABSORBED; cause++) {
		unsigned count = 0;
		const char *device = NULL;
		char points[48] = "";

		for (unsigned i = 0; i < b->npoints; i++)
			if ((int)b->points[i].view == cause) {
				count++;
				device = b->points[i].device;
			}
		if (!count)
			continue;
		if (b->npoints > 1)
			snprintf(points, sizeof(points), " at %u of %u points", count, b->npoints);
		warn_msg("%s moved %s%s (see --json)", device, why[cause], points);
	}
}

static int print_results(struct bench *b, const struct bench_knee *knee)
{
	struct bench_options *o = &b->opt;
	int rc = 0;

	if (o->output.format == OUT_JSON || o->interval > 0) {
		struct out_record *doc = document_record(b, knee);

		if (o->interval > 0)
			out_rec_text(doc, "type", "result");
		rc = out_record_write(doc, stdout, o->interval > 0 ? OUT_RECORD_LINE : OUT_RECORD_PRETTY);
		out_record_free(doc);
		/* All of it out, or a failure: as out_table_print does for the table. */
		if (!rc && fflush(stdout) == EOF)
			rc = -errno;
	} else {
		struct out_options output = o->output;
		char chosen[512];
		bool any_hit = false;
		struct out_table *table;

		for (unsigned i = 0; i < b->npoints; i++)
			any_hit |= b->points[i].hit_known;
		/* The defaults fit the run: the mode when modes differ, the knee when there is a sweep. */
		if (o->profile)
			snprintf(chosen, sizeof(chosen), "case,mb_per_s,iops,lat_p50,lat_p99%s%s%s",
				 o->repeat > 1 ? ",spread" : "", output.columns && output.columns[0] == '+' ? "," : "",
				 output.columns && output.columns[0] == '+' ? output.columns + 1 : "");
		else
			snprintf(chosen, sizeof(chosen), "%sbs,qd,%smb_per_s,%siops,lat_mean,lat_p50,lat_p99,lat_max,"
							 "cpu_per_io,util%s%s%s%s",
			 o->compare_cache ? "mode," : "", o->jobs > 1 ? "jobs," : "", o->repeat > 1 ? "spread," : "",
			 any_hit ? ",hit" : "",
			 b->npoints > 1 && !o->compare_cache ? ",knee" : "",
			 output.columns && output.columns[0] == '+' ? "," : "",
			 output.columns && output.columns[0] == '+' ? output.columns + 1 : "");
		if (!output.columns || output.columns[0] == '+')
			output.columns = chosen;
		table = out_table_new(columns, COL_COUNT, &output, "points");
		if (!table)
			return EXIT_USAGE;
		if (o->output.format == OUT_TABLE && !o->output.no_header) {
			char title[256];

			run_title(b, title, sizeof(title));
			printf("%s\n", title);
		}
		for (unsigned i = 0; i < b->npoints; i++)
			fill_row(table, &b->points[i]);
		rc = out_table_print(table, stdout);
		out_table_free(table);
		if (o->output.format == OUT_TABLE) {
			char bs[40], peak_bs[24];

			if (knee && knee->index >= 0 && b->npoints > 1) {
				const struct point *kp = &b->points[knee->index], *pp = &b->points[knee->peak];

				if (o->qd_sweep)
					snprintf(bs, sizeof(bs), "queue depth %u", kp->qd);
				else
					bench_size_label(kp->bs, bs, sizeof(bs));
				if (knee->why == KNEE_LAST)
					printf("knee: %s, %.1f MB/s (not confirmed: the peak is the last point; sweep "
					       "%s)\n", bs,
					       mb_per_s(kp), o->qd_sweep ? "deeper" : "larger sizes");
				else if (knee->why == KNEE_NOISE && kp->runs > 1)
					printf("knee: %s, %.1f MB/s (not confirmed: the peak's runs spread %.1f %%, "
					       "over 5 %%)\n",
					       bs, mb_per_s(kp), kp->spread);
				else if (knee->why == KNEE_NOISE)
					printf("knee: %s, %.1f MB/s (not confirmed: the peak may be noise, no larger "
					       "point is near "
					       "it; use --repeat 3)\n", bs, mb_per_s(kp));
				else if (o->qd_sweep)
					printf("knee: %s, %.1f MB/s: the smallest to reach 95 %% of the peak "
					       "(%.1f MB/s at queue depth %u)\n",
					       bs, mb_per_s(kp), mb_per_s(pp), pp->qd);
				else
					printf(
					    "knee: %s, %.1f MB/s: the smallest block size to reach 95 %% of the peak "
					    "(%.1f MB/s at %s)\n",
					    bs, mb_per_s(kp), mb_per_s(pp),
					    bench_size_label(pp->bs, peak_bs, sizeof(peak_bs)));
			}
			if (o->latency_target_ns) {
				int best = bench_latency_target(b->npoints, bench_p99_of, b, o->latency_target_ns);

				if (best >= 0)
					printf("latency target: queue depth %u keeps p99 within %.0f us (p99 %.1f us, "
					       "%.0f IOPS)\n",
					       b->points[best].qd, (double)o->latency_target_ns / 1e3,
					       (double)bench_quantile(&b->points[best].all, 0.99) / 1e3,
					       iops_of(&b->points[best]));
				else
					printf("latency target: no queue depth keeps p99 within %.0f us\n",
					       (double)o->latency_target_ns / 1e3);
			}
			for (unsigned i = 0; i < b->npoints; i++)
				if (b->points[i].result.synced) {
					printf("buffered writes synced (fdatasync) before the clock stopped\n");
					break;
				}
		}
	}
	say_once(b);
	return rc ? EXIT_FAIL : 0;
}

/* ---- The runs ---------------------------------------------------------------------------- */

static void evict_file(struct bench *b)
{
	fdatasync(b->target.fd);
	posix_fadvise(b->target.fd, 0, 0, POSIX_FADV_DONTNEED);
}

static void warm_file(struct bench *b)
{
	const size_t chunk = 1u << 20;
	char *buffer = xcalloc(1, chunk);
	uint64_t offset = 0;

	while (offset < b->target.size && !stop_signal) {
		ssize_t done = pread(b->target.fd, buffer, chunk, (off_t)offset);

		if (done <= 0)
			break;
		offset += (uint64_t)done;
	}
	free(buffer);
}

static void on_layout(uint64_t done, uint64_t total, void *context)
{
	struct bench *b = context;
	char done_text[16], total_text[16];

	if (!b->progress)
		return;
	fprintf(stderr, "\r\033[Klaying out the test file: %s of %s", human_size(done, done_text, 16),
		human_size(total, total_text, 16));
	fflush(stderr);
	b->progress_shown = true;
}

/* Before each cold run of --compare-cache: the file out of the page cache (said once when it will not go). */
static void before_cold(struct bench *b, unsigned run)
{
	int64_t cached;

	evict_file(b);
	cached = cached_pages(b);
	if (cached > 0 && !run)
		warn_msg("%s: %lld pages stayed in the page cache after eviction (mapped or locked by a process)",
			 printable_name(b->target.path), (long long)cached);
}

/* Before each warm run: the whole file in the page cache (said once when it will not fit). */
static void before_warm(struct bench *b, unsigned run)
{
	int64_t cached;

	warm_file(b);
	cached = cached_pages(b);
	if (cached >= 0 && (uint64_t)cached < pages_for(b->target.size, page_size()) && !run)
		warn_msg("%s: only %lld of %llu pages could be cached before the warm run",
			 printable_name(b->target.path), (long long)cached,
			 (unsigned long long)pages_for(b->target.size, page_size()));
}

static int run_all(struct bench *b)
{
	struct bench_options *o = &b->opt;
	int failed = 0;

	if (o->profile) {
		/* CrystalDiskMark's default set, in its order: each case read, then written. */
		static const struct { const char *name; bool random; uint64_t bs; unsigned qd; bool write; } cases[] = {
			{ "seq1m_q8t1_read", false, 1u << 20, 8, false },
			{ "seq1m_q8t1_write", false, 1u << 20, 8, true },
			{ "seq1m_q1t1_read", false, 1u << 20, 1, false },
			{ "seq1m_q1t1_write", false, 1u << 20, 1, true },
			{ "rnd4k_q32t1_read", true, 4096, 32, false },
			{ "rnd4k_q32t1_write", true, 4096, 32, true },
			{ "rnd4k_q1t1_read", true, 4096, 1, false },       { "rnd4k_q1t1_write", true, 4096, 1, true },
		};

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]) && going(b); i++) {
			o->rw = cases[i].random ? (cases[i].write ? RW_RANDWRITE : RW_RANDREAD)
						: (cases[i].write ? RW_WRITE : RW_READ);
			b->next_case = cases[i].name;
			failed |= run_point(b, "direct", true, cases[i].bs, cases[i].qd, NULL);
		}
		b->next_case = NULL;
		return failed;
	}
	if (o->compare_cache) {
		failed |= run_point(b, "direct", true, o->bs[0], o->qd, NULL);
		if (going(b))
			failed |= run_point(b, "cold", false, o->bs[0], o->qd, before_cold);
		if (going(b))
			failed |= run_point(b, "warm", false, o->bs[0], o->qd, before_warm);
		return failed;
	}
	if (o->qd_sweep) {
		for (unsigned qd = 1; qd <= o->qd && going(b); qd *= 2) {
			failed |= run_point(b, o->buffered ? "buffered" : "direct", !o->buffered, o->bs[0], qd, NULL);
			if (qd * 2 > o->qd && qd != o->qd && going(b))
				failed |= run_point(b, o->buffered ? "buffered" : "direct", !o->buffered, o->bs[0],
						    o->qd, NULL);
		}
		return failed;
	}
	for (unsigned i = 0; i < o->nbs && going(b); i++)
		failed |= run_point(b, o->buffered ? "buffered" : "direct", !o->buffered, o->bs[i], o->qd, NULL);
	return failed;
}

/* O_DIRECT's alignment, checked before anything runs, so the message says what to do. */
static int check_alignment(const struct bench *b, uint32_t align)
{

	if (b->opt.buffered && !b->opt.compare_cache)
		return 0;
	if (!align)
		align = 512;
	for (unsigned i = 0; i < b->opt.nbs; i++) {
		if (b->opt.bs[i] % align) {
			char bs[24];

			warn_msg("block size %s is not a multiple of %u bytes, which O_DIRECT needs %s: use a multiple "
				 "of %u, or --buffered", bench_size_label(b->opt.bs[i], bs, sizeof(bs)), align,
				 b->target.dio_offset_align ? "here (statx dio_offset_align)" : "on any device", align);
			return EXIT_FAIL;
		}
	}
	return 0;
}

/* ---- Capacity and comparison ----------------------------------------------------------------- */

/* --save-capacity: the run's document, with whose capacity it is, as the disk's capacity file. */
static int save_capacity(const struct bench *b, const struct bench_knee *knee)
{
	struct capacity_identity id;
	struct out_record *doc, *cap;
	const char *dir = capacity_dir(b->opt.capacity_dir);
	char why[512], path[4096], *text = NULL;
	size_t len = 0;
	FILE *memory;
	int rc;

	if (!b->target.disk) {
		warn_msg("--save-capacity: %s is on no disk that sysfs names: nothing to save",
			 printable_name(b->target.path));
		return EXIT_FAIL;
	}
	if (capacity_identity(b->target.disk, &id, why, sizeof(why)) != 0) {
		warn_msg("--save-capacity: %s", why);
		return EXIT_FAIL;
	}
	doc = document_record(b, knee);
	cap = out_rec_object(doc, "capacity");
	out_rec_text(cap, "key", id.key);
	out_rec_text(cap, "disk", id.disk);
	out_rec_text(cap, "source", id.source);
	out_rec_real(cap, "saved_s", (double)(realtime_ns() / 1000000000ull));
	memory = open_memstream(&text, &len);
	rc = memory ? out_record_write(doc, memory, OUT_RECORD_PRETTY) : -ENOMEM;
	if (memory && fclose(memory) != 0 && !rc)
		rc = -ENOMEM;
	out_record_free(doc);
	if (rc) {
		warn_errno("--save-capacity", -rc);
		free(text);
		return EXIT_FAIL;
	}
	rc = capacity_save(dir, &id, text, len, why, sizeof(why));
	free(text);
	if (rc) {
		warn_msg("--save-capacity: %s", why);
		return EXIT_FAIL;
	}
	capacity_path(dir, &id, path, sizeof(path));
	fprintf(stderr, "capacity of %s (%s) saved in %s\n", printable_name(id.disk), printable_name(id.key),
		printable_name(path));
	return 0;
}

/* The disk under what DEV names: a block device's own, a file's or directory's filesystem's. */
static int disk_of(const char *name, dev_t *devno)
{
	struct stat st;

	if (stat(name, &st) != 0) {
		warn_errno(printable_name(name), errno);
		return EXIT_FAIL;
	}
	*devno = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
	if (!major(*devno)) {
		warn_msg("%s: on no block device (a memory or network filesystem): it has no capacity",
			 printable_name(name));
		return EXIT_FAIL;
	}
	return 0;
}

static void case_row(struct out_table *table, const struct bench_case *c)
{
	struct out_row *row = out_row_add(table);
	char bs[24];

	out_set_text(row, COL_CASE, c->name);
	out_set_text(row, COL_BS, bench_size_label(c->bs, bs, sizeof(bs)));
	out_set_count(row, COL_QD, c->qd);
	out_set_real(row, COL_MBPS, c->bytes_per_s / 1e6);
	out_set_count(row, COL_IOPS, (uint64_t)llround(c->iops));
	out_set_count_if(row, COL_LAT_P50, isnan(c->lat_p50_ns) ? 0 : (uint64_t)c->lat_p50_ns, !isnan(c->lat_p50_ns));
	out_set_count_if(row, COL_LAT_P99, isnan(c->lat_p99_ns) ? 0 : (uint64_t)c->lat_p99_ns, !isnan(c->lat_p99_ns));
	if (c->runs > 1 && c->bytes_per_s > 0)
		out_set_real(row, COL_SPREAD, (c->runs_max - c->runs_min) / c->bytes_per_s * 100);
}

/* --show-capacity DEV: what is saved for DEV's disk; the file itself with --json. */
static int show_capacity(const struct bench_options *o)
{
	struct bench_result_doc *doc = xcalloc(1, sizeof(*doc));
	const char *dir = capacity_dir(o->capacity_dir);
	char path[4096], why[1024];
	dev_t devno;
	int rc = disk_of(o->show_capacity, &devno);

	if (rc)
		goto cleanup;
	rc = capacity_load(dir, devno, doc, path, sizeof(path), why, sizeof(why));
	if (rc) {
		warn_msg("%s", why);
		rc = EXIT_FAIL;
		goto cleanup;
	}
	if (o->output.format == OUT_JSON) {
		FILE *f = fopen(path, "re");
		char buffer[8192];
		size_t got;

		if (!f) {
			warn_errno(printable_name(path), errno);
			rc = EXIT_FAIL;
			goto cleanup;
		}
		while ((got = fread(buffer, 1, sizeof(buffer), f)) > 0)
			fwrite(buffer, 1, got, stdout);
		fclose(f);
	} else {
		struct out_options output = o->output;
		struct out_table *table;

		if (!output.columns || output.columns[0] == '+')
			output.columns = "case,bs,qd,mb_per_s,iops,lat_p50,lat_p99,spread";
		if (o->output.format == OUT_TABLE) {
			char when[64] = "at an unknown time";
			time_t saved = isnan(doc->capacity_saved_s) ? 0 : (time_t)doc->capacity_saved_s;
			struct tm tm;

			if (saved && gmtime_r(&saved, &tm))
				strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", &tm);
			printf("capacity of %s (%s), measured %s, from %s\n",
			       doc->capacity_disk[0] ? printable_name(doc->capacity_disk) : "?",
			       printable_name(doc->capacity_key), when, printable_name(path));
		}
		table = out_table_new(columns, COL_COUNT, &output, "cases");
		if (!table) {
			rc = EXIT_USAGE;
			goto cleanup;
		}
		for (unsigned i = 0; i < doc->ncases; i++)
			case_row(table, &doc->cases[i]);
		rc = out_table_print(table, stdout) ? EXIT_FAIL : 0;
		out_table_free(table);
	}
	if (fflush(stdout) == EOF)
		rc = EXIT_FAIL;
cleanup:
	free(doc);
	return rc;
}

#define EXIT_SLOWER 3 /* --compare: B is slower than A beyond the spread in a case */
#define EXIT_FASTER 4 /* --compare: B differs from A only by being faster */

/* --compare A B: case by case, whether B's runs lie outside A's, further than noise. */
static int compare_results(const struct bench_options *o)
{
	struct bench_result_doc *a = xcalloc(1, sizeof(*a)), *b = xcalloc(1, sizeof(*b));
	unsigned slower = 0, faster = 0, single = 0;
	struct out_record *doc = NULL;
	struct out_list *list = NULL;
	char why[1024];
	int rc = EXIT_FAIL;

	if (bench_result_load(o->target, a, why, sizeof(why)) != 0 ||
	    bench_result_load(o->compare_b, b, why, sizeof(why)) != 0) {
		warn_msg("--compare: %s", why);
		goto cleanup;
	}
	for (unsigned i = 0; i < a->ncases; i++)
		if (!bench_result_find(b, a->cases[i].name)) {
			warn_msg("--compare: %s has case %s, %s has not: not the same cases", printable_name(o->target),
				 printable_name(a->cases[i].name), printable_name(o->compare_b));
			goto cleanup;
		}
	for (unsigned i = 0; i < b->ncases; i++)
		if (!bench_result_find(a, b->cases[i].name)) {
			warn_msg("--compare: %s has case %s, %s has not: not the same cases",
				 printable_name(o->compare_b), printable_name(b->cases[i].name),
				 printable_name(o->target));
			goto cleanup;
		}
	if (o->output.format == OUT_JSON) {
		doc = out_record_new();
		out_rec_text(doc, "a", o->target);
		out_rec_text(doc, "b", o->compare_b);
		out_rec_text(doc, "rule",
			     "differs when the ranges of the runs' bytes_per_s do not overlap and the medians "
			     "differ by more than each range is wide and than margin_percent of a's median");
		out_rec_real(doc, "margin_percent", o->margin);
		list = out_rec_list(doc, "cases");
	} else {
		printf("%-20s %10s %10s %8s %7s  %s\n", "CASE", "A-MB/s", "B-MB/s", "CHANGE%", "RUNS", "VERDICT");
	}
	for (unsigned i = 0; i < a->ncases; i++) {
		const struct bench_case *ca = &a->cases[i], *cb = bench_result_find(b, ca->name);
		double change;
		int verdict = bench_case_compare(ca, cb, o->margin, &change);
		const char *said = verdict < 0 ? "slower" : verdict > 0 ? "faster" : "no difference";
		char runs[24];

		slower += verdict < 0;
		faster += verdict > 0;
		single += ca->runs < 2 || cb->runs < 2;
		if (doc) {
			struct out_record *r = out_list_object(list);

			out_rec_text(r, "case", ca->name);
			out_rec_real(r, "a_bytes_per_s", ca->bytes_per_s);
			out_rec_real(r, "b_bytes_per_s", cb->bytes_per_s);
			out_rec_real(r, "a_runs_min_bytes_per_s", ca->runs_min);
			out_rec_real(r, "a_runs_max_bytes_per_s", ca->runs_max);
			out_rec_real(r, "b_runs_min_bytes_per_s", cb->runs_min);
			out_rec_real(r, "b_runs_max_bytes_per_s", cb->runs_max);
			out_rec_real(r, "change_percent", change);
			out_rec_text(r, "verdict", said);
		} else {
			/* A case's name comes from a file: escaped, and padded to 20 columns of a terminal. */
			const char *name = printable_name(ca->name);
			size_t width = text_width(name);

			snprintf(runs, sizeof(runs), "%u/%u", ca->runs, cb->runs);
			if (verdict)
				printf("%s%*s %10.1f %10.1f %+7.1f%% %7s  %s\n", name, width < 20 ? 20 - (int)width : 0,
				       "", ca->bytes_per_s / 1e6, cb->bytes_per_s / 1e6, change, runs, said);
			else
				printf("%s%*s %10.1f %10.1f %8s %7s  %s\n", name, width < 20 ? 20 - (int)width : 0, "",
				       ca->bytes_per_s / 1e6, cb->bytes_per_s / 1e6, "-", runs, said);
		}
	}
	rc = slower ? EXIT_SLOWER : faster ? EXIT_FASTER : EXIT_OK;
	if (doc) {
		out_rec_text(doc, "verdict", slower ? "slower" : faster ? "faster" : "no difference");
		if (out_record_write(doc, stdout, OUT_RECORD_PRETTY) != 0)
			rc = EXIT_FAIL;
	} else if (slower || faster) {
		printf("B differs from A beyond the spread of their runs and the %g %% margin in %u of %u cases (%u "
		       "slower, "
		       "%u faster)\n", o->margin, slower + faster, a->ncases, slower, faster);
	} else {
		printf("no difference: every case of B is within the spread of the runs or the %g %% margin\n",
		       o->margin);
	}
	if (single)
		warn_msg("--compare: %u case%s measured by a single run: no spread, every change beyond the %g %% "
			 "margin counts (use --repeat)", single, single == 1 ? "" : "s", o->margin);
	if (fflush(stdout) == EOF)
		rc = EXIT_FAIL;
cleanup:
	out_record_free(doc);
	free(a);
	free(b);
	return rc;
}

/* The chart of the points into the file opened for it (emptied first): 0, or -1 said. */
static int write_svg(struct bench *b, struct path_output *svg_out, int knee)
{
	enum bench_svg_kind kind = b->opt.qd_sweep ? BENCH_SVG_QD : BENCH_SVG_BS;
	struct stat st;
	/* (a regular file is emptied first; a pipe or a device is written as it is) */
	bool usable = !(fstat(svg_out->fd, &st) == 0 && S_ISREG(st.st_mode) && ftruncate(svg_out->fd, 0) != 0);
	int fd = usable ? dup(svg_out->fd) : -1;
	FILE *svg = fd >= 0 ? fdopen(fd, "w") : NULL;
	int rc = 0;

	if (b->opt.compare_cache)
		kind = BENCH_SVG_MODES;
	if (fd >= 0 && !svg)
		close(fd);
	if (!svg || bench_svg(svg, b->npoints, kind, bench_svg_point, b, knee) != 0) {
		warn_errno(printable_name(b->opt.svg), errno ? errno : EIO);
		rc = -1;
	}
	if (svg && fclose(svg) != 0 && !rc) {
		warn_errno(printable_name(b->opt.svg), errno);
		rc = -1;
	}
	return rc;
}

int cmd_bench(int argc, char **argv)
{
	struct bench *b = xcalloc(1, sizeof(*b));
	struct target_request request = {0};
	struct sigaction action = {0};
	struct bench_knee knee = { .index = -1, .peak = -1 };
	struct path_output svg_out = { .fd = -1, .dir_fd = -1 };
	int rc, failed;

	parse_options(argc, argv, &b->opt);
	if (b->opt.compare || b->opt.show_capacity) {
		rc = b->opt.compare ? compare_results(&b->opt) : show_capacity(&b->opt);
		free(b);
		return rc;
	}
	{ /* liburing: opened now, not at every start-up (libblkid: when a device is to be written) */
		char why[512];

		if (!b->opt.compare && !b->opt.show_capacity &&
		    bench_engine_dl(b->opt.profile ? ENGINE_IO_URING : b->opt.engine, why, sizeof(why)) != 0) {
			fprintf(stderr, "%s needs %s\n", program_name, why); /* "iolens bench needs ..." */
			free(b);
			return EXIT_FAIL;
		}
	}
	if (b->opt.output.columns && b->opt.output.columns[0] != '+') {
		/* An unknown column is said now, not after the runs. */
		struct out_table *check = out_table_new(columns, COL_COUNT, &b->opt.output, "points");

		if (!check) {
			free(b);
			return EXIT_USAGE;
		}
		out_table_free(check);
	} else if (b->opt.output.columns) {
		struct out_options check_options = b->opt.output;
		struct out_table *check;

		check_options.columns = b->opt.output.columns + 1;
		check = out_table_new(columns, COL_COUNT, &check_options, "points");
		if (!check) {
			free(b);
			return EXIT_USAGE;
		}
		out_table_free(check);
	}
	b->progress = isatty(STDERR_FILENO) && b->opt.interval <= 0;
	action.sa_handler = on_signal;
	sigemptyset(&action.sa_mask);
	sigaction(SIGINT, &action, NULL);
	sigaction(SIGTERM, &action, NULL);
	sigaction(SIGHUP, &action, NULL);
	/* A closed output is an EPIPE to stop at (see on_tick), not a death that leaves the file. */
	signal(SIGPIPE, SIG_IGN);

	request.arg = b->opt.target;
	request.writes = b->opt.profile || read_percent(&b->opt) < 100;
	request.force = b->opt.force;
	request.direct = !b->opt.buffered || b->opt.compare_cache;
	request.size = b->opt.size;
	request.pattern = b->opt.pattern;
	request.stop = &stop_signal;
	request.on_layout = on_layout;
	request.context = b;
	if (b->opt.svg) {
		/*
		 * Opened now, once (what is there kept until the chart is written): said now, not
		 * after minutes of runs.
		 */
		char why[512];

		if (path_output_open(b->opt.svg, 0, 0666, &svg_out, why, sizeof(why)) != 0) {
			warn_msg("%s: %s", printable_name(b->opt.svg), why);
			free(b);
			return EXIT_FAIL;
		}
	}
	/* 512 bytes is the least any device needs: say so before a test file is laid out. */
	if (check_alignment(b, 512)) {
		path_output_close(&svg_out, true);
		free(b);
		return EXIT_FAIL;
	}
	rc = bench_target_prepare(&request, &b->target);
	clear_progress(b);
	if (rc) {
		path_output_close(&svg_out, true);
		free(b);
		return stop_signal ? 128 + stop_signal : rc;
	}
	if (b->target.dio_offset_align > 512 && check_alignment(b, b->target.dio_offset_align)) {
		bench_target_remove(&b->target);
		path_output_close(&svg_out, true);
		free(b);
		return EXIT_FAIL;
	}
	failed = run_all(b);
	if (!b->npoints && !failed && !stop_signal) {
		char size_text[16];

		warn_msg("no block size of the sweep fits in the %s used: give --bs or a larger --size",
			 human_size(b->target.size, size_text, sizeof(size_text)));
		failed = 1;
	}
	if (!b->opt.compare_cache && !b->opt.profile && b->npoints)
		knee = bench_find_knee(b->npoints, mbps_of, spread_of, b, 0.95);
	if (knee.index >= 0 && b->npoints > 1) {
		b->points[knee.index].knee = true;
		b->points[knee.index].knee_unconfirmed = knee.unconfirmed;
	}
	if (stop_signal == SIGPIPE) {
		clear_progress(b);
		warn_msg("the output was closed: stopped%s", b->target.created ? "; the test file is removed" : "");
	} else if (stop_signal) {
		clear_progress(b);
		warn_msg("interrupted by signal %d%s", (int)stop_signal,
			 b->target.created ? "; the test file is removed" : "");
	}
	rc = print_results(b, &knee);
	if (b->opt.save_capacity && !rc && !failed && !stop_signal && b->npoints)
		rc = save_capacity(b, &knee);
	else if (b->opt.save_capacity)
		warn_msg("--save-capacity: not every case completed: no capacity saved");
	if (b->opt.svg && b->npoints && write_svg(b, &svg_out, knee.index) != 0)
		rc = EXIT_FAIL;
	/* made empty to check it could be: removed when there is nothing to draw */
	path_output_close(&svg_out, !b->npoints);
	bench_target_remove(&b->target);
	if (stop_signal)
		rc = 128 + stop_signal;
	else if (!rc && (failed || !b->npoints))
		rc = EXIT_FAIL;
	free(b);
	return rc;
}

static void bench_svg_point(unsigned index, void *context, struct bench_svg_value *out)
{
	const struct bench *b = context;
	const struct point *p = &b->points[index];

	out->x = b->opt.qd_sweep ? p->qd : p->bs;
	out->label = p->mode;
	out->mb_per_s = mb_per_s(p);
	out->iops = iops_of(p);
}
