/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * doctor.c: iolens doctor: the I/O diagnosis a person would make: a snapshot of the machine over a
 * window of seconds, judged by rules (src/doctor/rules), the findings written as text or JSON.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd/command.h"
#include "cmd/recorded.h"
#include "doctor/config.h"
#include "common/signals.h"
#include "common/path_walk.h"
#include "common/util.h"
#include "doctor/capture.h"
#include "doctor/finding.h"
#include "doctor/rules.h"
#include "render/prom_rules.h"
#include "store/store.h"

/* Exit statuses beyond the house's 0, 1 and 2: what the worst finding was. */
enum { EXIT_WARNING = 3, EXIT_CRITICAL = 4 };

struct doctor {
	struct doctor_findings findings;
	struct doctor_config config; /* what is normal here: rules off, thresholds, what is accepted */
	double seconds;
	const char *from, *to, *record_dir; /* --from, --to: iolens record --doctor's windows judged */
};

/* ---- The command ------------------------------------------------------------------------- */

/* --set's list of thresholds and their defaults, from the table that parses them, wrapped under the option's text. */
static void help_thresholds(void)
{
	char text[256];
	size_t column = 37; /* after "      --set NAME=VALUE   a threshold:" */

	doctor_config_thresholds_text(text, sizeof(text));
	for (const char *p = text; *p;) {
		size_t n = strcspn(p, " ");

		if (column + 1 + n > 86) {
			printf("\n%25s", "");
			column = 25;
		} else {
			putchar(' ');
			column++;
		}
		printf("%.*s", (int)n, p);
		column += n;
		p += n + (p[n] == ' ');
	}
	putchar('\n');
}

/* --help: a screen; --help-all: the whole list below. */
static const char brief_help[] =
	"Usage:\n"
	" iolens doctor [options] [seconds]\n"
	" iolens doctor [options] --replay FILE\n"
	"\n"
	"Watch the machine for SECONDS (default 5) and say what is wrong with its I/O,\n"
	"worst first: what, the numbers that show it, why it matters, and the command\n"
	"that shows more. It looks for O_DIRECT readers, reads that miss the cache, a\n"
	"working set larger than memory, busy and saturated disks, throttled writers,\n"
	"swapping, threads stuck in D, hung libvtrace servers, full filesystems and\n"
	"mounts that do not answer.\n"
	"\n"
	"Options:\n"
	"      --json             one JSON document\n"
	"      --disable RULE     no finding of RULE (--help-all lists them)\n"
	"      --accept 'RULE comm=NAME'  what is normal here: RULE about processes\n"
	"                         named NAME (or path=GLOB: files and mounts) is not said\n"
	"      --record FILE      also keep what the window saw in FILE\n"
	"      --replay FILE      judge FILE again, anywhere, as any user\n"
	"      --from TIME [--to TIME]  judge the windows iolens record --doctor kept\n"
	"  -h, --help             this help; --help-all: every rule and option\n"
	"\n"
	"Defaults for --disable, --accept and --set: /etc/iolens/doctor.conf.\n"
	"Exit status: 0 nothing at warning level, 3 a warning, 4 something critical,\n"
	"1 the diagnosis failed, 2 bad usage.\n"
	"\n"
	"Examples:\n"
	"  iolens doctor                 five seconds, then the findings\n"
	"  iolens doctor --json 10       ten seconds, for a script\n";

static _Noreturn void usage(bool all)
{
	if (!all)
		help_brief("doctor", brief_help);
	printf("Usage:\n"
	       " %s [options] [seconds]\n"
	       " %s [options] --replay FILE\n"
	       "\n"
	       "Look at the machine for SECONDS (default 5; decimals allowed, 0 to 3600) and say\n"
	       "what is wrong with its I/O, the worst first: what, the numbers that show it, why it\n"
	       "matters, and the iolens command that shows more. A healthy machine gets one line\n"
	       "after the first, which says how each thing was counted (eBPF's mechanism or procfs).\n"
	       "\n"
	       "Rules (the thresholds are the defaults; see --set):\n",
	       program_name, program_name);
	for (const struct doctor_rule *const *rule = doctor_rules_listed(); *rule; rule++) {
		const struct doctor_rule *r = *rule;
		const char *line = r->help;

		printf("  %-15s", r->name);
		while (*line) {
			size_t n = strcspn(line, "\n");

			printf("%s%.*s\n", line == r->help ? "" : "                 ", (int)n, line);
			line += n + (line[n] == '\n');
		}
	}
	printf("\n"
	       "What is normal here, from " DOCTOR_CONFIG_PATH " (when there), then the flags:\n"
	       "      --config FILE      that file instead (it must exist)\n"
	       "      --no-config        no file\n"
	       "      --disable RULE     no finding of RULE\n"
	       "      --accept 'RULE comm=NAME'  no finding of RULE (or * for any) about processes\n"
	       "                         named NAME (or libvtrace services); 'RULE path=GLOB': about\n"
	       "                         files or mounts matching GLOB (a database that uses O_DIRECT)\n"
	       "      --set NAME=VALUE   a threshold:");
	help_thresholds();
	printf("\n"
	       "Options:\n"
	       "      --json             one JSON document\n"
	       "      --record FILE      also write what the window saw (the snapshot the rules\n"
	       "                         judge) to FILE, to judge again later or elsewhere\n"
	       "      --replay FILE      judge the snapshot in FILE instead of the machine (no\n"
	       "                         window, no privilege needed); takes no seconds\n"
	       "      --from TIME        judge the windows iolens record --doctor kept from TIME\n"
	       "                         (03:00, yesterday 03:00, 2026-12-04T03:00Z, -2h): each\n"
	       "                         finding once, with the windows it was in\n"
	       "      --to TIME          ... until TIME (default now)\n"
	       "      --record-dir DIR   the store (default: iolens record's)\n"
	       "      --prometheus-rules the rules that scraped metrics can say, as Prometheus\n"
	       "                         alerting rules over iolens export's (with this configuration)\n"
	       "      --capacity-dir DIR where disks' capacities are kept (bench --profile\n"
	       "                         --save-capacity; default $IOLENS_CAPACITY_DIR, else\n"
	       "                         /var/lib/iolens/capacity): rule saturated's low-load latency\n"
	       "  -v, --verbose          what each warning means, and its fix\n"
	       "  -h, --help             a screen of help; --help-all: all of this\n"
	       "  -V, --version          show the version\n"
	       "\n"
	       "Exit status: 0 nothing at warning level or worse, 3 a warning, 4 something critical;\n"
	       "1 when the diagnosis itself failed, 2 on bad usage.\n"
	       "\n"
	       "Examples:\n"
	       "  %s             five seconds, then the findings\n"
	       "  %s --json 10   ten seconds, for a script\n"
	       "  %s --record db1.snap 10; %s --replay db1.snap\n"
	       "                         ten seconds kept, judged again later, as any user\n",
	       program_name, program_name, program_name, program_name);
	exit(EXIT_OK);
}

enum {
	OPT_CONFIG = 0x2000, OPT_NO_CONFIG, OPT_DISABLE, OPT_ACCEPT, OPT_SET, OPT_RECORD, OPT_REPLAY, OPT_CAPACITY_DIR,
	OPT_FROM, OPT_TO, OPT_RECORD_DIR, OPT_PROMETHEUS_RULES,
};

/*
 * Takes out the findings of disabled rules, and those the configuration accepts: by the
 * process's command (data "comm", or a libvtrace "service"), or a path (data "files",
 * "file", "mount", "segment") matching a glob. The accepted ones go to *out.
 */
static size_t filter_findings(struct doctor *d, struct doctor_accepted **out)
{
	struct doctor_findings *all = &d->findings;
	size_t kept = 0, n = 0;

	*out = NULL;
	for (size_t i = 0; i < all->count; i++) {
		struct doctor_finding *f = &all->list[i];
		const char *paths[8], *comm = doctor_field_text(&f->data, "comm");
		const struct doctor_field *files = doctor_field_get(&f->data, "files");
		const struct doctor_accept *a;
		size_t npaths = 0;

		if (doctor_config_disabled(&d->config, f->rule)) {
			doctor_fields_free(&f->data);
			continue;
		}
		if (files && files->kind == FIELD_LIST)
			for (size_t k = 0; k < files->children.count && npaths < 4; k++)
				paths[npaths++] = files->children.items[k].text;
		paths[npaths++] = doctor_field_text(&f->data, "file");
		paths[npaths++] = doctor_field_text(&f->data, "mount");
		paths[npaths++] = doctor_field_text(&f->data, "segment");
		a = doctor_config_accepted(&d->config, f->rule, comm, paths, npaths);
		if (!a && doctor_field_text(&f->data, "service"))
			a = doctor_config_accepted(&d->config, f->rule, doctor_field_text(&f->data, "service"), NULL,
						   0);
		if (a) {
			*out = xrealloc(*out, (n + 1) * sizeof(**out));
			(*out)[n].rule = f->rule;
			snprintf((*out)[n].what, sizeof((*out)[n].what), "%s", f->what);
			snprintf((*out)[n].by, sizeof((*out)[n].by), "accept %s %s=%s (%s)", a->rule,
				 a->path ? "path" : "comm", a->value, a->source);
			n++;
			doctor_fields_free(&f->data);
			continue;
		}
		all->list[kept++] = *f;
	}
	all->count = kept;
	return n;
}

static int compare_findings(const void *a_, const void *b_)
{
	const struct doctor_finding *a = a_, *b = b_;

	return (int)b->severity - (int)a->severity;
}

/*
 * The snapshot into path (doctor --record), a regular file: never through a symbolic link
 * (root writing in /tmp), nor where another user could lead it but not write themselves
 * (path_output_open), never into a FIFO or a device. 0, or -1 said on stderr.
 */
static int record_snapshot(const struct doctor_snapshot *snapshot, const char *path)
{
	struct path_output out;
	struct stat st;
	char why[512];
	FILE *file;
	int rc;

	if (path_output_open(path, PATH_WALK_NOFOLLOW | PATH_OUTPUT_REGULAR, 0644, &out, why, sizeof(why)) != 0) {
		warn_msg("%s: %s", printable_name(path), why);
		return -1;
	}
	if (fstat(out.fd, &st) != 0 || !S_ISREG(st.st_mode) || ftruncate(out.fd, 0) != 0 ||
	    !(file = fdopen(out.fd, "w"))) {
		warn_msg("%s: not a regular file that can be written", printable_name(path));
		path_output_close(&out, true);
		return -1;
	}
	out.fd = -1; /* the stream's now */
	path_output_close(&out, false);
	rc = doctor_snapshot_write(snapshot, file);
	if (fclose(file) != 0 && rc == 0)
		rc = -errno;
	if (rc != 0) {
		warn_errno(printable_name(path), -rc);
		return -1;
	}
	return 0;
}

/* ---- --from, --to: the windows iolens record --doctor kept ------------------------------------ */

/* A finding's subject across windows: its rule and its what, figures left out ("busy # % of the time"). */
static bool same_subject(const struct doctor_finding *a, const struct doctor_finding *b)
{
	const char *p = a->what, *q = b->what;

	if (strcmp(a->rule, b->rule))
		return false;
	while (*p && *q) {
		bool dp = isdigit((unsigned char)*p), dq = isdigit((unsigned char)*q);
		if (dp != dq)
			return false;
		if (dp) {
			while (isdigit((unsigned char)*p) || *p == '.')
				p++;
			while (isdigit((unsigned char)*q) || *q == '.')
				q++;
			continue;
		}
		if (*p++ != *q++)
			return false;
	}
	return !*p && !*q;
}

struct seen {
	unsigned windows;
	uint64_t first_ns, last_ns; /* the first window's start, the last one's end */
};

/* A window's finding into the merged list: counted with its subject's, the worst (first) of them kept. */
static void merge_finding(struct doctor_findings *merged, struct seen **seen, struct doctor_finding *f, uint64_t end_ns,
			  double seconds)
{
	uint64_t start = end_ns - (uint64_t)(seconds * 1e9);
	size_t i;

	for (i = 0; i < merged->count && !same_subject(&merged->list[i], f); i++)
		;
	if (i == merged->count) {
		merged->list = xrealloc(merged->list, (i + 1) * sizeof(*merged->list));
		*seen = xrealloc(*seen, (i + 1) * sizeof(**seen));
		merged->list[i] = *f;
		(*seen)[i] = (struct seen){ 0, start, end_ns };
		merged->count++;
	} else if (f->severity > merged->list[i].severity) {
		doctor_fields_free(&merged->list[i].data);
		merged->list[i] = *f;
	} else {
		doctor_fields_free(&f->data);
	}
	(*seen)[i].windows++;
	(*seen)[i].last_ns = end_ns;
}

/*
 * The snapshots of the window, each judged as doctor --replay judges one; a finding seen in
 * several is said once, its worst, with how many windows it was in and from when to when.
 * *last is the last snapshot (what the report says of the mechanisms). 0, or EXIT_FAIL said.
 */
static int judge_recorded(struct doctor *d, struct doctor_snapshot *last, struct doctor_accepted **accepted,
			  size_t *naccepted)
{
	uint64_t from, to;
	struct doctor_findings merged = {0};
	struct seen *seen = NULL;
	struct store_reader *reader;
	struct store_frame frame;
	struct recorded_gap gap = {0};
	unsigned windows = 0;
	char why[512], a[32], b[32], boot[40];
	const char *said;

	recorded_range(d->from, d->to, &d->record_dir, &from, &to);
	if (store_reader_open(&reader, d->record_dir, from, to, why, sizeof(why)) != 0) {
		warn_msg("%s", why);
		return EXIT_FAIL;
	}
	memset(last, 0, sizeof(*last));
	d->seconds = 0; /* the windows' own, summed */
	while (store_reader_next(reader, &frame) == 1) {
		struct doctor_snapshot snap;
		struct doctor_accepted *acc = NULL;
		size_t nacc;

		if ((said = store_reader_said(reader)))
			warn_msg("%s: %s", printable_name(d->record_dir), said);
		if (frame.kind == STORE_KIND_SYSTEM) /* its boot id: a restart or a clock step said */
			recorded_gap(&gap, frame.real_ns, frame.mono_ns,
				     recorded_boot(frame.data, frame.len, boot, sizeof(boot)));
		if (frame.kind != STORE_KIND_DOCTOR)
			continue;
		if (doctor_snapshot_parse((const char *)frame.data, frame.len, &snap, why, sizeof(why)) != 0) {
			warn_msg("%s: the snapshot of %s: %s", printable_name(d->record_dir),
				 recorded_moment(frame.real_ns, a, sizeof(a)), why);
			continue;
		}
		windows++;
		d->findings = (struct doctor_findings){0};
		doctor_judge(&snap, &d->config, &d->findings);
		nacc = filter_findings(d, &acc);
		if (nacc) { /* the last window's accepted findings stand for the others' */
			free(*accepted);
			*accepted = acc;
			*naccepted = nacc;
		}
		for (size_t i = 0; i < d->findings.count; i++)
			merge_finding(&merged, &seen, &d->findings.list[i], frame.real_ns, snap.seconds);
		free(d->findings.list);
		d->seconds += snap.seconds;
		doctor_snapshot_free(last);
		*last = snap;
	}
	if ((said = store_reader_said(reader)))
		warn_msg("%s: %s", printable_name(d->record_dir), said);
	store_reader_close(reader);
	if (!windows) {
		warn_msg("%s: no window of doctor's recorded from %s to %s (iolens record --doctor keeps them)",
			 printable_name(d->record_dir), d->from, d->to ? d->to : "now");
		free(seen);
		return EXIT_FAIL;
	}
	for (size_t i = 0; i < merged.count; i++) {
		struct doctor_finding *f = &merged.list[i];
		size_t n = strlen(f->numbers);

		if (n && f->numbers[n - 1] == '.')
			f->numbers[--n] = '\0';
		snprintf(f->numbers + n, sizeof(f->numbers) - n, "%sin %u of the %u windows recorded, from %s to %s",
			 n ? "; " : "", seen[i].windows, windows, recorded_moment(seen[i].first_ns, a, sizeof(a)),
			 recorded_moment(seen[i].last_ns, b, sizeof(b)));
		field_count(&f->data, "windows", seen[i].windows);
		field_count(&f->data, "first_ns", seen[i].first_ns);
		field_count(&f->data, "last_ns", seen[i].last_ns);
	}
	free(seen);
	d->findings = merged;
	return 0;
}

/* The findings, worst first, and how each thing was counted: 0 or -errno. */
static int write_report(const struct doctor *d, const struct doctor_snapshot *snapshot,
			const struct doctor_accepted *accepted, size_t naccepted, bool json)
{
	const struct doctor_report report = {
		.seconds = d->seconds,
		.cache_mode = snapshot->cache_ebpf ? "ebpf" : "procfs",
		.cache_mechanism =
		    snapshot->cache_ebpf && snapshot->cache_mechanism[0] ? snapshot->cache_mechanism : NULL,
		.odirect_mode = doctor_config_disabled(&d->config, "odirect") ? "off"
		    : snapshot->odirect_ebpf                                  ? "ebpf"
									      : "fdinfo",
		.bio_mode = snapshot->bio_known ? "ebpf" : "procfs",
		.exits_mode = snapshot->exits_ebpf ? "ebpf" : "procfs",
		.bio_mechanism = snapshot->bio_known && snapshot->bio_mechanism[0] ? snapshot->bio_mechanism : NULL,
		.findings = &d->findings,
		.accepted = accepted,
		.naccepted = naccepted,
	};

	return json ? doctor_write_json(&report, stdout) : doctor_write_text(&report, stdout);
}

/*
 * --prometheus-rules: the rules that can be said over iolens export's metrics, as Prometheus
 * alerting rules (docs/iolens-doctor-rules.yml is this with --no-config), their thresholds the
 * configuration's.
 */
static int write_alerts(const struct doctor_config *config)
{
	struct prom_alert alerts[64];
	char names[64][64], exprs[64][1024], descriptions[64][512];
	size_t n = 0;
	int rc;

	for (const struct doctor_rule *const *rule = doctor_rules_listed(); *rule; rule++) {
		const struct doctor_alert *end = (*rule)->alerts + 3;

		for (const struct doctor_alert *a = (*rule)->alerts; a < end && a->severity && n < 64; a++) {
			size_t k = 0;
			bool upper = true;

			k = (size_t)snprintf(names[n], sizeof(names[n]), "IolensDoctor");
			for (const char *c = (*rule)->name; *c && k + 1 < sizeof(names[n]); c++) {
				if (*c == '-' || *c == '_') {
					upper = true;
					continue;
				}
				names[n][k++] = upper ? (char)toupper((unsigned char)*c) : *c;
				upper = false;
			}
			names[n][k] = '\0';
			const char *at = strstr(a->expr, "%g");

			if (at) /* the threshold's value in its place */
				snprintf(exprs[n], sizeof(exprs[n]), "%.*s%g%s", (int)(at - a->expr), a->expr,
					 a->threshold >= 0 ? config->threshold[a->threshold] : 0, at + 2);
			else
				snprintf(exprs[n], sizeof(exprs[n]), "%s", a->expr);
			snprintf(descriptions[n], sizeof(descriptions[n]), "iolens doctor's rule %s: %s", (*rule)->name,
				 (*rule)->help);
			alerts[n] = (struct prom_alert){ names[n], exprs[n], a->for_, a->severity,
							 (*rule)->name, a->summary, descriptions[n] };
			n++;
		}
	}
	rc = prom_rules_write(stdout,
			      "iolens doctor's rules that can be said over iolens export's metrics, as Prometheus\n"
			      "alerting rules (rule_files: in prometheus.yml). Made by\n"
			      "iolens doctor --no-config --prometheus-rules; with --set, a site's thresholds.",
			      "iolens-doctor", alerts, n);
	return rc || fflush(stdout) ? output_failed() : EXIT_OK;
}

/* A configuration statement given by a flag (--disable, --accept, --set), and the flag's name. */
struct statement {
	char *text;
	const char *flag;
};

static struct statement statement_of(int opt, const char *arg)
{
	const char *verb = opt == OPT_DISABLE ? "disable " : opt == OPT_ACCEPT ? "accept " : "";
	const char *flag = opt == OPT_DISABLE ? "--disable" : opt == OPT_ACCEPT ? "--accept" : "--set";
	size_t n = strlen(arg) + 16;
	struct statement st = { xcalloc(1, n), flag };

	snprintf(st.text, n, "%s%s", verb, arg);
	return st;
}

static const struct option long_options[] = {
	COMMON_LONG_OPTIONS,
	{ "verbose", no_argument, NULL, 'v' },
	{ "json", no_argument, NULL, OUT_OPT_JSON },
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "no-config", no_argument, NULL, OPT_NO_CONFIG },
	{ "disable", required_argument, NULL, OPT_DISABLE },
	{ "accept", required_argument, NULL, OPT_ACCEPT },
	{ "set", required_argument, NULL, OPT_SET },
	{ "record", required_argument, NULL, OPT_RECORD },
	{ "replay", required_argument, NULL, OPT_REPLAY },
	{ "capacity-dir", required_argument, NULL, OPT_CAPACITY_DIR },
	{ "from", required_argument, NULL, OPT_FROM },
	{ "to", required_argument, NULL, OPT_TO },
	{ "record-dir", required_argument, NULL, OPT_RECORD_DIR },
	{ "prometheus-rules", no_argument, NULL, OPT_PROMETHEUS_RULES },
	{ 0 }
};

int cmd_doctor(int argc, char **argv)
{
	struct doctor d = { .seconds = 5 };
	struct statement *statements = NULL;
	size_t nstatements = 0;
	const char *config_path = DOCTOR_CONFIG_PATH;
	bool config_given = false;
	char why[512];
	struct doctor_accepted *accepted = NULL;
	size_t naccepted = 0;
	struct doctor_snapshot snapshot;
	enum doctor_severity worst;
	int rc;
	bool json = false;
	const char *record_path = NULL, *replay_path = NULL, *capacity_path = NULL;
	bool seconds_given, record_failed = false, prometheus_rules = false;
	int opt;

	while ((opt = next_option(argc, argv, "hvV", long_options, NULL)) != -1) {
		switch (opt) {
		case OUT_OPT_JSON:
			json = true;
			break;
		case OPT_CONFIG:
			config_path = optarg;
			config_given = true;
			break;
		case OPT_RECORD:
			record_path = optarg;
			break;
		case OPT_REPLAY:
			replay_path = optarg;
			break;
		case OPT_FROM:
			d.from = optarg;
			break;
		case OPT_TO:
			d.to = optarg;
			break;
		case OPT_RECORD_DIR:
			d.record_dir = optarg;
			break;
		case OPT_PROMETHEUS_RULES:
			prometheus_rules = true;
			break;
		case OPT_CAPACITY_DIR:
			if (!*optarg)
				usage_error("--capacity-dir: an empty name");
			capacity_path = optarg;
			break;
		case OPT_NO_CONFIG:
			config_path = NULL;
			break;
		case OPT_DISABLE:
		case OPT_ACCEPT:
		case OPT_SET:
			/* Said after the file, so flags win: kept as statements and run once it is read. */
			statements = xrealloc(statements, (nstatements + 1) * sizeof(*statements));
			statements[nstatements++] = statement_of(opt, optarg);
			break;
		case 'v':
			warn_verbose = true;
			break;
		default:
			command_option_rest(opt, usage);
		}
	}
	seconds_given = optind < argc;
	if (optind < argc && parse_seconds(argv[optind++], 3600, true, &d.seconds) != 0)
		usage_error("seconds: '%s' is not a number of seconds from 0 to 3600", argv[optind - 1]);
	if (optind < argc)
		usage_error("too many arguments: '%s'", argv[optind]);
	if (replay_path && record_path)
		usage_error("--record and --replay: one or the other");
	if (replay_path && capacity_path)
		usage_error("--replay and --capacity-dir: the snapshot holds the capacities it saw");
	if (d.to && !d.from)
		usage_error("--to needs --from: the window's start");
	if (d.from && (replay_path || record_path || seconds_given))
		usage_error("--from judges what iolens record kept: no --replay, --record or seconds");
	if (replay_path && seconds_given)
		usage_error("--replay takes no seconds: the snapshot's window is the one judged");
	doctor_config_init(&d.config);
	if (config_path && doctor_config_load(&d.config, config_path, config_given, why, sizeof(why)) < 0)
		usage_error("%s", why);
	for (size_t i = 0; i < nstatements; i++) {
		if (doctor_config_statement(&d.config, statements[i].text, strlen(statements[i].text),
					    statements[i].flag, why, sizeof(why)) != 0)
			usage_error("%s", why);
		free(statements[i].text);
	}
	free(statements);
	if (doctor_config_check(&d.config, "thresholds", why, sizeof(why)) != 0)
		usage_error("%s", why);
	if (prometheus_rules)
		return write_alerts(&d.config);
	stop_on_signals();

	if (d.from) {
		if (judge_recorded(&d, &snapshot, &accepted, &naccepted) != 0)
			return EXIT_FAIL;
	} else if (replay_path) {
		if (doctor_snapshot_load(replay_path, &snapshot, why, sizeof(why)) != 0) {
			warn_msg("--replay %s", why);
			exit(EXIT_USAGE);
		}
	} else {
		doctor_capture(&snapshot, d.seconds, doctor_config_disabled(&d.config, "odirect"), capacity_path);
		if (record_path && record_snapshot(&snapshot, record_path) != 0)
			record_failed = true;
	}
	if (!d.from) {
		d.seconds = snapshot.seconds;
		doctor_judge(&snapshot, &d.config, &d.findings);
		naccepted = filter_findings(&d, &accepted);
	}

	if (d.findings.count > 1)
		qsort(d.findings.list, d.findings.count, sizeof(*d.findings.list), compare_findings);
	worst = doctor_worst(&d.findings);
	rc = write_report(&d, &snapshot, accepted, naccepted, json);
	free(accepted);
	doctor_config_free(&d.config);
	doctor_findings_free(&d.findings);
	doctor_snapshot_free(&snapshot);
	if (rc != 0 || fflush(stdout) != 0)
		return output_failed();
	if (record_failed)
		return EXIT_FAIL;
	return worst == DOCTOR_CRITICAL ? EXIT_CRITICAL : worst == DOCTOR_WARNING ? EXIT_WARNING : EXIT_OK;
}
