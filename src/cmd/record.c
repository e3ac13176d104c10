/* SPDX-License-Identifier: GPL-2.0-or-later */
/* record.c: iolens record: the flight recorder, what the machine's /proc said every interval, kept to look back at. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd/command.h"
#include "cmd/recorded.h"
#include "collect/diskstats.h"
#include "collect/sysroot.h"
#include "collect/sysroot_tree.h"
#include "collect/system.h"
#include "common/signals.h"
#include "doctor/capture.h"
#include "doctor/snapshot.h"
#include "common/util.h"
#include "common/when.h"
#include "render/record.h"
#include "store/store.h"

#define DEFAULT_DIR STORE_DEFAULT_DIR
#define BOOT_ID "/proc/sys/kernel/random/boot_id"
#define DEFAULT_MAX_BYTES (1ull << 30)
#define DEFAULT_MAX_AGE_NS (7ull * 86400 * 1000000000ull)

/* What a frame of the system's kind holds: the sources of stat's groups that read /proc system-wide. */
#define RECORD_SOURCES                                                                                   \
	(SYS_UPTIME | SYS_PROCSTAT | SYS_MEMINFO | SYS_VMSTAT | SYS_LOADAVG | SYS_NETDEV | SYS_DISKSTATS | \
	 SYS_SWAPS | SYS_INTERRUPTS | SYS_PSI | SYS_SOCKETS | SYS_FSSTAT)

static const char brief_help[] =
	"Usage:\n"
	" iolens record [options] [INTERVAL]\n"
	" iolens record --list [--json] [--dir DIR]\n"
	"\n"
	"Keep what the machine's disks, memory, CPUs, network and pressure did every\n"
	"INTERVAL seconds (default 10), to look back at: iolens stat --from TIME.\n"
	"\n"
	"Options:\n"
	"  -d, --dir DIR        the store (root's: " DEFAULT_DIR ";\n"
	"                       another user's: ~/.local/state/iolens/record)\n"
	"  -c, --count N        stop after N records\n"
	"      --doctor         also doctor's window of each interval (doctor --from)\n"
	"      --max-size SIZE  keep at most SIZE (default 1G; 0: no limit)\n"
	"      --max-age AGE    keep at most AGE: 30m, 12h, 7d, 2w (default 7d)\n"
	"      --list           what the store holds, from when to when\n"
	"      --json           --list as one JSON document\n"
	"  -h, --help           show this help\n"
	"\n"
	"Exit status: 0, or 1 when the store cannot be opened or was left unwritten.\n"
	"\n"
	"Examples:\n"
	"  iolens record                     every 10 s, kept a week\n"
	"  iolens record --list              what is kept, from when to when\n"
	"  iolens stat -x --from 03:00 --to 03:30   the disks at three in the night\n";

struct record_options {
	const char *dir;
	double interval;
	uint64_t count, max_bytes, max_age_ns;
	bool list, json, doctor;
};

enum { OPT_MAX_SIZE = 0x100, OPT_MAX_AGE, OPT_LIST, OPT_JSON, OPT_DOCTOR };

static void parse_options(struct record_options *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "count", required_argument, NULL, 'c' },
		{ "max-size", required_argument, NULL, OPT_MAX_SIZE },
		{ "max-age", required_argument, NULL, OPT_MAX_AGE },
		{ "list", no_argument, NULL, OPT_LIST },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "doctor", no_argument, NULL, OPT_DOCTOR },
		COMMON_LONG_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	bool interval_given;
	int c;

	while ((c = next_option(argc, argv, "d:c:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			o->dir = optarg;
			break;
		case 'c': {
			uint64_t n;
			if (parse_u64(optarg, &n) != 0 || !n)
				usage_error("--count: '%s' is not a count of records (1 or more)", optarg);
			o->count = n;
			break;
		}
		case OPT_MAX_SIZE:
			if (parse_size(optarg, &o->max_bytes) != 0)
				usage_error("--max-size: '%s' is not a size (100M, 1G; 0 for no limit)", optarg);
			break;
		case OPT_MAX_AGE:
			if (when_span(optarg, &o->max_age_ns) != 0)
				usage_error("--max-age: '%s' is not a duration (30m, 12h, 7d, 2w; 0: no limit)",
					    optarg);
			break;
		case OPT_LIST:
			o->list = true;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_DOCTOR:
			o->doctor = true;
			break;
		case 'h':
			help_brief("record", brief_help);
		case COMMON_OPT_HELP_ALL:
			fputs(brief_help, stdout);
			exit(fflush(stdout) == 0 ? EXIT_OK : output_failed());
		case 'V':
			print_version();
		default:
			usage_hint();
		}
	}
	interval_given = optind < argc;
	if (optind < argc) {
		if (parse_seconds(argv[optind], 86400, false, &o->interval) != 0 || o->interval < 0.1)
			usage_error("'%s' is not an interval: seconds, 0.1 or more", argv[optind]);
		optind++;
	}
	if (optind < argc)
		usage_error("one interval at most ('%s' is one too many)", argv[optind]);
	if (o->list && (o->count || interval_given))
		usage_error("--list reads the store: it takes no interval or --count");
	if (o->list && o->doctor)
		usage_error("--list reads the store: --doctor is for recording");
	if (o->json && !o->list)
		usage_error("--json is for --list");
}

static int list_store(const struct record_options *o)
{
	struct store_segment *segs;
	char why[512], from[32], to[32], size[16];
	int n = store_list(o->dir, &segs, why, sizeof(why));
	uint64_t bytes = 0, frames = 0, first = 0, last = 0;

	if (n < 0) {
		warn_msg("%s", why);
		return EXIT_FAIL;
	}
	for (int i = 0; i < n; i++) {
		bytes += segs[i].bytes;
		frames += segs[i].frames;
		if (segs[i].frames && !first)
			first = segs[i].first_real_ns;
		if (segs[i].frames)
			last = segs[i].last_real_ns;
	}
	if (o->json) {
		struct out_record *doc = out_record_new();
		struct out_list *list;
		int rc;

		out_rec_text(doc, "dir", o->dir);
		out_rec_count(doc, "segments", (uint64_t)n);
		out_rec_count(doc, "frames", frames);
		out_rec_bytes(doc, "size_bytes", bytes);
		out_rec_ns_if(doc, "from_ns", first, frames > 0);
		out_rec_ns_if(doc, "to_ns", last, frames > 0);
		list = out_rec_list(doc, "segment_list");
		for (int i = 0; i < n; i++) {
			struct out_record *s = out_list_object(list);
			out_rec_text(s, "name", segs[i].name);
			out_rec_count(s, "frames", segs[i].frames);
			out_rec_bytes(s, "size_bytes", segs[i].bytes);
			out_rec_ns_if(s, "from_ns", segs[i].first_real_ns, segs[i].frames > 0);
			out_rec_ns_if(s, "to_ns", segs[i].last_real_ns, segs[i].frames > 0);
			out_rec_count(s, "skipped", segs[i].skipped);
			out_rec_bool(s, "torn", segs[i].torn);
		}
		rc = out_record_write(doc, stdout, OUT_RECORD_PRETTY);
		out_record_free(doc);
		free(segs);
		return rc || fflush(stdout) ? output_failed() : EXIT_OK;
	}
	if (n)
		printf("%-28s %7s %9s  %-19s  %-19s  %s\n", "SEGMENT", "FRAMES", "SIZE", "FROM", "TO", "DAMAGE");
	for (int i = 0; i < n; i++) {
		char damage[64] = "";
		if (segs[i].skipped)
			snprintf(damage, sizeof(damage), "%u frame%s skipped", segs[i].skipped,
				 segs[i].skipped == 1 ? "" : "s");
		if (segs[i].torn)
			snprintf(damage + strlen(damage), sizeof(damage) - strlen(damage), "%storn at the end",
				 damage[0] ? ", " : "");
		printf("%-28s %7u %9s  %-19s  %-19s  %s\n", segs[i].name, segs[i].frames,
		       human_size(segs[i].bytes, size, sizeof(size)),
		       segs[i].frames ? recorded_clock(segs[i].first_real_ns, from, sizeof(from)) : "-",
		       segs[i].frames ? recorded_clock(segs[i].last_real_ns, to, sizeof(to)) : "-",
		       damage[0] ? damage : "-");
	}
	if (!frames)
		printf("%s: nothing recorded yet\n", printable_name(o->dir));
	else
		printf("%d segment%s, %llu frames, %s, from %s to %s\n", n, n == 1 ? "" : "s",
		       (unsigned long long)frames, human_size(bytes, size, sizeof(size)),
		       recorded_clock(first, from, sizeof(from)), recorded_clock(last, to, sizeof(to)));
	free(segs);
	return fflush(stdout) ? output_failed() : EXIT_OK;
}

/* The facts of the disks (what sysfs and /proc/devices say of them), learnt once and kept in each frame. */
#define FACTS_EVERY 360 /* frames: learnt again at least this often (an hour at 10 s) */

struct recorder {
	struct sysroot_capture cap;   /* the frame being made */
	struct sysroot_capture facts; /* the disks' facts, as last learnt */
	unsigned since_facts;         /* frames since */
	struct system_sample sample;  /* the frame's sources, parsed */
	bool sampled;                 /* ... read already, as doctor's window ended (end_of_window) */
};

static bool is_fact(const struct tree_entry *e)
{
	return !strncmp(e->path, "/sys/", 5) || !strcmp(e->path, "/proc/devices");
}

/* The sources read into the frame being made, with the boot id (a replay tells a restart by it). */
static void capture_sample(struct recorder *r, struct system_sample *sample)
{
	char boot_id[64];

	r->cap.len = 0;
	sysroot_capture_set(&r->cap);
	system_sample_read(sample, RECORD_SOURCES);
	sysroot_read_small(BOOT_ID, boot_id, sizeof(boot_id));
	sysroot_capture_set(NULL);
}

/*
 * One interval's frame: the system sources read with their reads kept, appended. Each frame
 * holds the disks' facts, so a replay may begin at any: learnt anew when a disk came (the
 * collector asked sysfs of it) and every FACTS_EVERY frames, else the last ones copied in (50
 * block devices' probes are some 600 system calls). 0, or -errno (why said).
 */
static int record_once(struct recorder *r, struct store *store, char *why, size_t why_len)
{
	int rc;

	if (!r->sampled)
		capture_sample(r, &r->sample);
	r->sampled = false;
	if (!r->facts.len || tree_select(r->cap.data, r->cap.len, is_fact, NULL) != 0 ||
	    ++r->since_facts >= FACTS_EVERY) {
		system_sample_free(&r->sample);
		diskstats_forget();
		capture_sample(r, &r->sample);
		r->facts.len = 0;
		tree_select(r->cap.data, r->cap.len, is_fact, &r->facts);
		r->since_facts = 0;
	} else {
		sysroot_capture_bytes(&r->cap, r->facts.data, r->facts.len);
	}
	rc = store_append(store, STORE_KIND_SYSTEM, r->sample.real_ns, r->sample.mono_ns, r->cap.data, r->cap.len, why,
			  why_len);
	system_sample_free(&r->sample);
	return rc;
}

/*
 * doctor's window ends with the next frame's sources, read once for both (the disks, memory,
 * vmstat and pressure it ends with are the frame's): the frame is appended after the window's.
 */
static const struct system_sample *end_of_window(void *context)
{
	struct recorder *r = context;

	if (!r->sampled)
		capture_sample(r, &r->sample);
	r->sampled = true;
	return &r->sample;
}

/*
 * doctor's window of the next interval, watched (eBPF where it can: the processes, files and
 * requests doctor's rules judge) and appended as its snapshot's text, stamped with the moment it
 * ended: when the next frame's sources were read (end_of_window), the frames in the order of
 * their stamps (a reader stops at the first past its end). 0, or -errno (why said).
 */
static int record_doctor(struct recorder *r, struct store *store, double seconds, char *why, size_t why_len)
{
	struct doctor_snapshot snap;
	uint64_t real_ns, mono_ns;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	doctor_capture(&snap, seconds, false, NULL);
	real_ns = r->sampled ? r->sample.real_ns : realtime_ns();
	mono_ns = r->sampled ? r->sample.mono_ns : monotonic_ns();
	f = open_memstream(&text, &len);
	rc = f ? doctor_snapshot_pack(&snap, f) : -ENOMEM;
	if (f && fclose(f) != 0 && !rc)
		rc = -errno;
	doctor_snapshot_free(&snap);
	if (!rc)
		/* (synced with the system frame that follows at once: one flush for both) */
		rc = store_append_unsynced(store, STORE_KIND_DOCTOR, real_ns, mono_ns, text, len, why, why_len);
	else
		snprintf(why, why_len, "doctor's snapshot: %s", strerror(-rc));
	free(text);
	return rc;
}

/* What the last append's failure means for the run: said once, and again when it writes. */
static void note_append(int rc, const char *why, uint64_t *lost)
{
	if (rc == 0) {
		if (*lost)
			warn_msg("recording again (%llu interval%s lost)", (unsigned long long)*lost,
				 *lost == 1 ? "" : "s");
		*lost = 0;
	} else if (!(*lost)++) {
		/* A full disk: said once, tried again each interval until there is room. */
		warn_msg("%s: recording stopped until it can write again", why);
	}
}

static int run_recorder(const struct record_options *o)
{
	struct store_options so = { .dir = o->dir,
				    .max_bytes = o->max_bytes,
				    .max_age_ns = o->max_age_ns,
				    .segment_bytes = o->max_bytes ? o->max_bytes / 16 : 64ull << 20,
				    .segment_age_ns = 3600ull * 1000000000ull,
				    .compress = true };
	struct recorder recorder = {0};
	struct store *store;
	char why[512];
	uint64_t next, done = 0, lost = 0;
	int rc = store_open(&store, &so, why, sizeof(why));

	if (rc) {
		warn_msg("%s", why);
		return EXIT_FAIL;
	}
	if (why[0])
		warn_msg("%s", why); /* a segment mended: what the last recorder was writing when it stopped */
	stop_on_signals();
	doctor_capture_keep(o->doctor); /* its programs loaded once, not every window */
	if (o->doctor)
		doctor_capture_end_with(end_of_window, &recorder);
	next = monotonic_ns();
	while (!stop_signal && (!o->count || done < o->count)) {
		rc = record_once(&recorder, store, why, sizeof(why));
		note_append(rc, why, &lost);
		done += rc == 0;
		if (o->count && done >= o->count)
			break;
		if (o->doctor) { /* the interval is doctor's window */
			rc = record_doctor(&recorder, store, o->interval, why, sizeof(why));
			note_append(rc, why, &lost);
		} else {
			next += (uint64_t)(o->interval * 1e9);
			sleep_until_ns(next, &stop_signal);
		}
	}
	doctor_capture_end_with(NULL, NULL);
	doctor_capture_keep(false);
	if (recorder.sampled) /* (a window ended by a signal: its frame not made) */
		system_sample_free(&recorder.sample);
	store_close(store);
	sysroot_capture_free(&recorder.cap);
	sysroot_capture_free(&recorder.facts);
	return lost ? EXIT_FAIL : EXIT_OK;
}

int cmd_record(int argc, char **argv)
{
	struct record_options o = { .interval = 10, .max_bytes = DEFAULT_MAX_BYTES, .max_age_ns = DEFAULT_MAX_AGE_NS };

	parse_options(&o, argc, argv);
	if (!o.dir)
		o.dir = store_default_dir(!o.list);
	return o.list ? list_store(&o) : run_recorder(&o);
}
