/* SPDX-License-Identifier: GPL-2.0-or-later */
/* export.c: iolens export: what iolens measures, as Prometheus metrics over HTTP (libmicrohttpd). */
#include <errno.h>
#include <getopt.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cache_mode.h"
#include "cmd/command.h"
#include "cmd/export.h"
#include "collect/bio.h"
#include "collect/cachestat.h"
#include "collect/container.h"
#include "collect/diskstats.h"
#include "collect/segments.h"
#include "common/signals.h"
#include "common/util.h"
#include "http/http.h"
#include "http/http_auth.h"
#include "render/prom.h"
#include "http/web_config.h"
#include "export_collectors.h" /* made by the Makefile from the files of src/cmd/export/ */

#define DEFAULT_LISTEN "127.0.0.1:9717"

/*
 * The collectors: each a file of src/cmd/export/, NAME.c, defining collector_NAME, and a switch,
 * --collector.NAME and --no-collector.NAME. Named as node_exporter names the same source
 * (diskstats, filesystem, vmstat, pressure), else as iolens does.
 */
#define X(n) extern const struct export_collector collector_##n;
export_collectors(X)
#undef X
#define X(n) &collector_##n,
const struct export_collector *const export_collector_list[] = { export_collectors(X) NULL };
#undef X
#define NCOLLECTORS (sizeof(export_collector_list) / sizeof(export_collector_list[0]) - 1)


/*
 * node_exporter's defaults, in POSIX ERE ([0-9] for its \d): no RAM disks, loop devices or
 * floppies, and no partitions (sda1, vda1, nvme0n1p1), whose I/O their disk counts already.
 */
#define DEFAULT_DEVICE_EXCLUDE "^(z?ram|loop|fd|(h|s|v|xv)d[a-z]|nvme[0-9]+n[0-9]+p)[0-9]+$"
#define DEFAULT_MOUNT_POINTS_EXCLUDE \
	"^/(dev|proc|run/credentials/.+|sys|var/lib/docker/.+|var/lib/containers/storage/.+)($|/)"

/* The collectors' indexes in export_collector_list in the order of the exposition: by rank, then name. */
static unsigned ranked[NCOLLECTORS];

static int by_rank(const void *a, const void *b)
{
	const struct export_collector *x = export_collector_list[*(const unsigned *)a];
	const struct export_collector *y = export_collector_list[*(const unsigned *)b];

	return x->rank != y->rank ? (x->rank > y->rank) - (x->rank < y->rank) : strcmp(x->name, y->name);
}

static void rank_collectors(void)
{
	for (unsigned c = 0; c < NCOLLECTORS; c++)
		ranked[c] = c;
	qsort(ranked, NCOLLECTORS, sizeof(ranked[0]), by_rank);
}

/* The hidden --collector-table: a line a collector, in the exposition's order: name, rank, on or off, help. */
static _Noreturn void print_collector_table(void)
{
	for (unsigned c = 0; c < NCOLLECTORS; c++) {
		const struct export_collector *collector = export_collector_list[ranked[c]];

		printf("%s\t%d\t%s\t%s\n", collector->name, collector->rank, collector->off_by_default ? "off" : "on",
		       collector->help);
	}
	exit(fflush(stdout) == 0 ? EXIT_OK : output_failed());
}

/* "disklatency, diskstats, ...": the collectors' names, for --help-all and the error of a wrong one. */
static const char *collector_names(void)
{
	static char list[NCOLLECTORS * 40 + 1];
	size_t len = 0;

	if (!list[0])
		for (unsigned c = 0; c < NCOLLECTORS && len < sizeof(list); c++)
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", c ? ", " : "",
						export_collector_list[c]->name);
	return list;
}

static void exporter_free(struct exporter *e)
{
	segment_set_free(&e->vtrace);
	cachestat_stop();
	cache_estimate_free(&e->estimate);
	if (e->disk_latency)
		bio_stop();
	if (e->has_device_include)
		regfree(&e->device_include);
	if (e->has_device_exclude)
		regfree(&e->device_exclude);
	regfree(&e->mount_points_exclude);
	fs_watch_free(&e->filesystems);
	container_cache_free();
}

bool export_device_wanted(const struct exporter *e, const char *name)
{
	if (e->has_device_include && regexec(&e->device_include, name, 0, NULL, 0) != 0)
		return false;
	return !e->has_device_exclude || regexec(&e->device_exclude, name, 0, NULL, 0) != 0;
}

const struct diskstats *export_disks(struct exporter *e)
{
	if (!e->disks_read)
		e->disks_read = diskstats_read(&e->disks) == 0 ? 1 : -1;
	return e->disks_read > 0 ? &e->disks : NULL;
}

/* Basic auth's password checks, with a web config that has users. */
static void auth_metrics(struct prom *p, const struct exporter *e)
{
	struct auth_counts counts;

	if (!http_auth_counts(e->server, &counts))
		return;
	prom_family(
	    p, "iolens_export_auth_bcrypt", PROM_COUNTER,
	    "Passwords checked with bcrypt: those not among the checks remembered (a scraper's is checked once).");
	prom_u64(p, "iolens_export_auth_bcrypt_total", counts.bcrypt, NULL);
	prom_family(
	    p, "iolens_export_auth_refused", PROM_COUNTER,
	    "Requests refused by basic auth: a wrong user or password (401), or too many checks queued (429, 503).");
	prom_u64(p, "iolens_export_auth_refused_total", counts.refused, "reason", "password", NULL);
	prom_u64(p, "iolens_export_auth_refused_total", counts.busy, "reason", "busy", NULL);
	prom_family(p, "iolens_export_auth_pending", PROM_GAUGE, "Password checks queued for bcrypt or running.");
	prom_u64(p, "iolens_export_auth_pending", counts.pending, NULL);
}

/* Everything, in one exposition; *len its length. The text is the caller's to free. */
static char *render(void *context, enum prom_format format, size_t *len)
{
	struct exporter *e = context;
	char *text = NULL;
	struct prom p = { .openmetrics = format == PROM_FORMAT_OPENMETRICS,
			  .protobuf = format == PROM_FORMAT_PROTOBUF };

	if (!(p.out = open_memstream(&text, len)))
		return NULL;
	prom_family(&p, "iolens_build_info", PROM_GAUGE, "The iolens version that serves these metrics.");
	prom_u64(&p, "iolens_build_info", 1, "version", IOLENS_VERSION, NULL);
	e->disks_read = 0; /* /proc/diskstats is read at the first collector that asks for it */
	for (unsigned c = 0; c < NCOLLECTORS; c++)
		if (e->enabled[ranked[c]])
			export_collector_list[ranked[c]]->render(&p, e);
	if (e->disks_read > 0)
		diskstats_free(&e->disks);
	e->disks_read = 0;
	prom_family(&p, "iolens_export_scrapes", PROM_COUNTER, "Scrapes served since the exporter started.");
	prom_u64(&p, "iolens_export_scrapes_total", ++e->scrapes, NULL);
	auth_metrics(&p, e);
	prom_end(&p);
	if (fclose(p.out) != 0 || p.failed) {
		free(text);
		return NULL;
	}
	return text;
}


/* --help: a screen; --help-all: the whole list below. */
static const char brief_help[] =
	"Usage:\n"
	" iolens export [options]\n"
	"\n"
	"Serve what iolens measures as Prometheus metrics on GET /metrics: disks (all\n"
	"iostat -x needs, and latency histograms by eBPF), the page cache, pressure\n"
	"stall, libvtrace servers' ops, filesystems, paging and the exporter's own\n"
	"process_* metrics.\n"
	"\n"
	"Options:\n"
	"  -l, --listen ADDR:PORT   where to listen (default 127.0.0.1:9717; :PORT\n"
	"                           for every address, IPv4 and IPv6)\n"
	"      --web.config.file FILE  TLS and basic auth (Prometheus exporter-toolkit\n"
	"                           format)\n"
	"      --once               print the metrics once on standard output and exit\n"
	"      --no-collector.NAME  turn a collector off (--help-all lists them)\n"
	"      --collector.diskstats.device-include REGEX   only the disks it matches\n"
	"  -h, --help               this help; --help-all: every option\n"
	"\n"
	"Examples:\n"
	"  iolens export                          serve on 127.0.0.1:9717 until Ctrl-C\n"
	"  iolens export --once | grep '^iolens_disk'\n";

static _Noreturn void usage(bool all)
{
	if (!all)
		help_brief("export", brief_help);
	printf("Usage:\n"
	       " %s [options]\n"
	       "\n"
	       "Serve what iolens measures as Prometheus metrics: GET /metrics, in the text format\n"
	       "(0.0.4), or OpenMetrics when the scraper asks for it (Accept:\n"
	       "application/openmetrics-text). Disks (everything iostat -x is derived from, and\n"
	       "latency histograms by eBPF: request, device and queue time of each op), the\n"
	       "page cache (Cached, Dirty, Writeback; hits, misses, dirtied pages and evictions by\n"
	       "eBPF, or estimated from /proc/vmstat, said by the mode label), pressure stall times,\n"
	       "and for every libvtrace service and op: requests, errors, bytes, busy seconds, in\n"
	       "flight, the oldest request's age and the latency histogram. As node_exporter has\n"
	       "them: filesystem sizes, /proc/vmstat's paging and refault counters, and the\n"
	       "exporter's own process_* metrics.\n"
	       "\n"
	       "Options:\n"
	       "  -l, --listen ADDR:PORT  where to listen (default " DEFAULT_LISTEN "; [::1]:PORT for IPv6,\n"
	       "                         :PORT for every address, IPv4 and IPv6)\n"
	       "      --web.config.file FILE  TLS and basic auth, in the Prometheus exporter-toolkit\n"
	       "                         format (tls_server_config, basic_auth_users with bcrypt hashes)\n"
	       "      --max-connections N  room for N connections (default 4096); when full, the\n"
	       "                         oldest still waiting for its request is closed\n"
	       "      --once             print the metrics once on standard output and exit\n"
	       "      --openmetrics      with --once: in the OpenMetrics format\n"
	       "      --collector.NAME   turn a collector on (all are on by default); NAME is one of\n"
	       "                         %s\n"
	       "      --no-collector.NAME\n"
	       "                         turn it off\n"
	       "      --collector.disable-defaults\n"
	       "                         every collector off but those turned on by name\n"
	       "      --collector.diskstats.device-include REGEX\n"
	       "                         only the disks it matches (POSIX ERE, [0-9] not \\d)\n"
	       "      --collector.diskstats.device-exclude REGEX\n"
	       "                         not the disks it matches (default: loop, ram, zram, floppies\n"
	       "                         and partitions: " DEFAULT_DEVICE_EXCLUDE ")\n"
	       "      --collector.filesystem.mount-points-exclude REGEX\n"
	       "                         not the mount points it matches (default: /dev, /proc, /sys,\n"
	       "                         docker's and podman's: " DEFAULT_MOUNT_POINTS_EXCLUDE ")\n"
	       "  -v, --verbose          what each warning means, and its fix\n"
	       "  -h, --help             a screen of help; --help-all: all of this\n"
	       "  -V, --version          show the version\n"
	       "\n"
	       "A scrape is answered with gzip when it accepts it. A request must be in within 5 s of\n"
	       "the connection (idle and slowloris clients are closed then), its answer sent in 30 s.\n"
	       "Listening beyond loopback without TLS and basic auth is warned about.\n"
	       "\n"
	       "Examples:\n"
	       "  %s                          serve on 127.0.0.1:9717 until Ctrl-C\n"
	       "  %s --listen :9717           serve on every address\n"
	       "  %s --listen :9717 --web.config.file /etc/iolens/web.yml   with TLS and passwords\n"
	       "  %s --no-collector.vtrace --collector.diskstats.device-include '^(sd|nvme)'\n"
	       "  curl -s localhost:9717/metrics | grep iolens_disk_io_time\n",
	       program_name, collector_names(), program_name, program_name, program_name, program_name);
	exit(EXIT_OK);
}

enum {
	OPT_ONCE = 0x100,
	OPT_OPENMETRICS,
	OPT_MAX_CONNECTIONS,
	OPT_WEB_CONFIG,
	OPT_DISABLE_DEFAULTS,
	OPT_DEVICE_INCLUDE,
	OPT_DEVICE_EXCLUDE,
	OPT_MOUNT_POINTS_EXCLUDE,
	OPT_COLLECTOR_TABLE,
	OPT_COLLECTOR = 0x200,
	OPT_NO_COLLECTOR = 0x300
};

/* A regex option compiled, or exit 2 saying why. */
static void compile_regex(regex_t *re, const char *option, const char *pattern)
{
	char why[256];
	int rc;

	/* node_exporter's patterns are RE2: \d there is a digit, in POSIX ERE a 'd'. */
	if (strstr(pattern, "\\d") || strstr(pattern, "\\D"))
		usage_error("--%s '%s': POSIX ERE has no \\d: write [0-9]", option, pattern);
	if ((rc = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB)) != 0) {
		regerror(rc, re, why, sizeof(why));
		usage_error("--%s '%s': %s", option, pattern, why);
	}
}

/* One line when other users may read a file with secrets in it, or write it, as ssh says of keys. */
static void warn_exposed(const char *path, unsigned mode, bool secret, const char *what)
{
	unsigned bits = web_config_exposed(mode, secret);
	char fix[16];

	if (!bits)
		return;
	snprintf(fix, sizeof(fix), "%s%s%s%s%s", bits & S_IWGRP ? "g-w" : "",
		 bits & S_IWGRP && bits & (S_IROTH | S_IWOTH) ? "," : "", bits & (S_IROTH | S_IWOTH) ? "o-" : "",
		 bits & S_IROTH ? "r" : "", bits & S_IWOTH ? "w" : "");
	warn_msg("warning: %s: %s%s%s by other users: chmod %s", printable_name(path), secret ? what : "",
		 secret ? " " : "", bits & S_IROTH ? (bits & (S_IWOTH | S_IWGRP) ? "readable and writable" : "readable")
		 : "writable", fix);
	warn_detail("%s: mode %04o", printable_name(path), mode);
}

/* --collector.NAME and --no-collector.NAME of a collector iolens does not have: exit 2, naming those it has. */
static void check_collector_names(int argc, char **argv, const struct option *options)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		const char *arg = argv[i];
		size_t len;
		bool known = false;

		if (strncmp(arg, "--collector.", 12) && strncmp(arg, "--no-collector.", 15))
			continue;
		len = strcspn(arg + 2, "=");
		for (const struct option *o = options; o->name && !known; o++)
			known = strlen(o->name) == len && !strncmp(o->name, arg + 2, len);
		if (!known)
			usage_error("%.*s: no such collector or option: the collectors are %s", (int)len + 2, arg,
				    collector_names());
	}
}

/* What the command line asked for. */
struct export_args {
	const char *listen, *web_config_path, *device_include, *device_exclude, *mount_points_exclude;
	bool once, openmetrics, disable_defaults;
	int chosen[NCOLLECTORS]; /* 1 on, -1 off by name, the last said; 0 the default */
	struct http_options http;
};

/* getopt's table: the options of export, then each collector's two switches, in the files' order. */
static const struct option *export_options(void)
{
	static const struct option fixed[] = {
		COMMON_LONG_OPTIONS,
		{ "verbose", no_argument, NULL, 'v' },
		{ "listen", required_argument, NULL, 'l' },
		{ "once", no_argument, NULL, OPT_ONCE },
		{ "openmetrics", no_argument, NULL, OPT_OPENMETRICS },
		{ "max-connections", required_argument, NULL, OPT_MAX_CONNECTIONS },
		{ "web.config.file", required_argument, NULL, OPT_WEB_CONFIG },
		{ "collector.disable-defaults", no_argument, NULL, OPT_DISABLE_DEFAULTS },
		{ "collector.diskstats.device-include", required_argument, NULL, OPT_DEVICE_INCLUDE },
		{ "collector.diskstats.device-exclude", required_argument, NULL, OPT_DEVICE_EXCLUDE },
		{ "collector.filesystem.mount-points-exclude", required_argument, NULL, OPT_MOUNT_POINTS_EXCLUDE },
		/* hidden: for tests/cli/export_collectors.sh */
		{ "collector-table", no_argument, NULL, OPT_COLLECTOR_TABLE },
	};
	enum { NFIXED = sizeof(fixed) / sizeof(fixed[0]) };
	static struct option options[NFIXED + 2 * NCOLLECTORS + 1];
	static char names[NCOLLECTORS][2][64];

	memcpy(options, fixed, sizeof(fixed));
	for (unsigned c = 0; c < NCOLLECTORS; c++) {
		snprintf(names[c][0], sizeof(names[c][0]), "collector.%s", export_collector_list[c]->name);
		snprintf(names[c][1], sizeof(names[c][1]), "no-collector.%s", export_collector_list[c]->name);
		options[NFIXED + 2 * c] = (struct option){ names[c][0], no_argument, NULL, OPT_COLLECTOR + (int)c };
		options[NFIXED + 2 * c + 1] =
		    (struct option){ names[c][1], no_argument, NULL, OPT_NO_COLLECTOR + (int)c };
	}
	return options;
}

static void parse_args(int argc, char **argv, struct export_args *a)
{
	const struct option *long_options = export_options();
	uint64_t number;
	int opt;

	rank_collectors();
	check_collector_names(argc, argv, long_options);
	while ((opt = next_option(argc, argv, "l:hvV", long_options, NULL)) != -1) {
		switch (opt) {
		case 'l': a->listen = optarg; break;
		case OPT_ONCE: a->once = true; break;
		case OPT_OPENMETRICS: a->openmetrics = true; break;
		case OPT_MAX_CONNECTIONS:
			if (parse_u64(optarg, &number) != 0 || number < 2 || number > 1000000)
				usage_error("--max-connections %s: a number from 2 to 1000000, please", optarg);
			a->http.max_connections = (unsigned)number;
			break;
		case OPT_WEB_CONFIG: a->web_config_path = optarg; break;
		case OPT_DISABLE_DEFAULTS: a->disable_defaults = true; break;
		case OPT_DEVICE_INCLUDE: a->device_include = optarg; break;
		case OPT_DEVICE_EXCLUDE: a->device_exclude = optarg; break;
		case OPT_MOUNT_POINTS_EXCLUDE: a->mount_points_exclude = optarg; break;
		case 'v': warn_verbose = true; break;
		case 'h': usage(false);
		case COMMON_OPT_HELP_ALL: usage(true);
		case 'V': print_version();
		case OPT_COLLECTOR_TABLE: print_collector_table();
		default:
			if (opt >= OPT_COLLECTOR && opt < OPT_COLLECTOR + (int)NCOLLECTORS)
				a->chosen[opt - OPT_COLLECTOR] = 1;
			else if (opt >= OPT_NO_COLLECTOR && opt < OPT_NO_COLLECTOR + (int)NCOLLECTORS)
				a->chosen[opt - OPT_NO_COLLECTOR] = -1;
			else
				usage_hint();
		}
	}
	if (optind < argc)
		usage_error("unexpected argument: '%s'", argv[optind]);
	if (a->openmetrics && !a->once)
		usage_error("--openmetrics goes with --once: a scraper asks for it in its Accept header");
}

/* --collector.diskstats.device-include or -exclude, and --collector.filesystem.mount-points-exclude. */
static void compile_filters(struct exporter *e, const struct export_args *a)
{
	/* As node_exporter: one or the other; an include alone drops the default exclude. */
	if (a->device_include && a->device_exclude)
		usage_error(
		    "--collector.diskstats.device-include and --collector.diskstats.device-exclude: one or the other");
	if (a->device_include)
		compile_regex(&e->device_include, "collector.diskstats.device-include", a->device_include);
	else
		compile_regex(&e->device_exclude, "collector.diskstats.device-exclude",
			      a->device_exclude ? a->device_exclude : DEFAULT_DEVICE_EXCLUDE);
	e->has_device_include = a->device_include;
	e->has_device_exclude = !a->device_include;
	compile_regex(&e->mount_points_exclude, "collector.filesystem.mount-points-exclude", a->mount_points_exclude);
}

/* Each collector on or off, those on started (in the order of the exposition), what eBPF could not do said. */
static void start_collectors(struct exporter *e, bool *enabled, const struct export_args *a)
{
	e->enabled = enabled;
	e->once = a->once;
	for (unsigned c = 0; c < NCOLLECTORS; c++)
		enabled[c] =
		    a->chosen[c] ? a->chosen[c] > 0 : !a->disable_defaults && !export_collector_list[c]->off_by_default;
	for (unsigned c = 0; c < NCOLLECTORS; c++)
		if (enabled[ranked[c]] && export_collector_list[ranked[c]]->start)
			export_collector_list[ranked[c]]->start(e);

	/* One line for one reason (not root: both), what is missing with -v. */
	if (e->cache_why[0] && e->bio_why[0] && !strcmp(e->cache_why, e->bio_why))
		warn_msg("no eBPF (%s): no cache hits or latency histograms", e->cache_why);
	else if (e->cache_why[0])
		warn_msg("no eBPF (%s): no cache hits, misses estimated", e->cache_why);
	if (e->bio_why[0] && strcmp(e->cache_why, e->bio_why))
		warn_msg("no eBPF (%s): disk latency histograms left out", e->bio_why);
	if (e->cache_why[0])
		warn_detail("page-cache hits are not exported; misses are estimated from /proc/vmstat");
	if (e->bio_why[0])
		warn_detail("disk latency histograms are not exported (iolens_disk_*_time_seconds give averages)");
}

/* --web.config.file read and checked (with --once too, which does not serve). */
static void load_web_config(struct web_config *web, const char *path)
{
	char why[512];

	if (web_config_load(path, web, why, sizeof(why)) != 0) {
		web_config_free(web);
		usage_error("--web.config.file %s: %s", path, why);
	}
	warn_exposed(path, web->file_mode, web->user_count || (web->key && !web->key_file),
		     web->user_count ? "password hashes" : "a private key");
	if (web->key_path)
		warn_exposed(web->key_path, web->key_mode, true, "a private key");
}

/* Serve until SIGINT or SIGTERM. */
static int serve(struct exporter *e, struct http_options *http, const struct web_config *web, const char *listen)
{
	struct http_server *server;
	char why_not[512];

	stop_on_signals();
	http->context = e;
	if (!(server = http_start(http, why_not, sizeof(why_not)))) {
		warn_msg("cannot listen on %s%s: %s", listen, web->tls ? " with TLS" : "", why_not);
		if (web->tls)
			warn_detail("the port taken, or %s not a PEM certificate with %s its key?",
				    web->cert_file ? web->cert_file : "cert", web->key_file ? web->key_file : "key");
		return EXIT_FAIL;
	}
	if (!http_loopback(&http->addr) && (!web->tls || !web->user_count))
		warn_msg("warning: listening beyond loopback without %s (--web.config.file)",
			 !web->tls && !web->user_count ? "TLS and basic auth" : !web->tls ? "TLS" : "basic auth");
	if (!http_loopback(&http->addr) && (!web->tls || !web->user_count))
		warn_detail("anyone who reaches the port %s",
			    !web->user_count ? "reads the metrics" : "sees passwords in clear");
	fprintf(stderr, "%s: serving %s://%s/metrics%s\n", program_name, web->tls ? "https" : "http", listen,
		http_every_address(&http->addr) ? " (every address)" : "");
	e->server = server;
	http_serve(server, &stop_signal);
	http_stop(server);
	return EXIT_OK;
}

int cmd_export(int argc, char **argv)
{
	struct export_args a = {
		.listen = DEFAULT_LISTEN,
		.mount_points_exclude = DEFAULT_MOUNT_POINTS_EXCLUDE,
		.http = { .render = render },
	};
	bool enabled[NCOLLECTORS];
	struct exporter e = {0};
	struct web_config web = {0};
	char why_not[512];
	const char *why;
	int rc = EXIT_OK;

	parse_args(argc, argv, &a);
	if (http_parse_listen(a.listen, &a.http.addr, &why) != 0)
		usage_error("--listen %s: %s", a.listen, why);
	/* libmicrohttpd (and gnutls...), libyaml, libcrypt: opened here, not at every start-up. */
	if ((a.web_config_path && web_config_dl(why_not, sizeof(why_not)) != 0) ||
	    (!a.once && http_load(why_not, sizeof(why_not)) != 0)) {
		fprintf(stderr, "%s needs %s\n", program_name, why_not); /* "iolens export needs ..." */
		return EXIT_FAIL;
	}
	if (a.web_config_path) {
		load_web_config(&web, a.web_config_path);
		a.http.web = &web;
	}
	compile_filters(&e, &a);
	start_collectors(&e, enabled, &a);
	if (a.once) {
		size_t len;
		char *text = render(&e, a.openmetrics ? PROM_FORMAT_OPENMETRICS : PROM_FORMAT_TEXT, &len);

		if (!text || fwrite(text, 1, len, stdout) != len || fflush(stdout) != 0)
			rc = output_failed();
		free(text);
	} else
		rc = serve(&e, &a.http, &web, a.listen);
	web_config_free(&web);
	exporter_free(&e);
	return rc;
}
