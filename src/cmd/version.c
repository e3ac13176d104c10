/* SPDX-License-Identifier: GPL-2.0-or-later */
/* version.c: iolens version [--features]: the version, and how each eBPF feature counts on this kernel. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "cmd/command.h"
#include "collect/bio.h"
#include "collect/cachestat.h"
#include "collect/ebpf.h"
#include "collect/odirect.h"
#include "common/util.h"
#include "render/record.h"

static _Noreturn void usage(void)
{
	printf("Usage:\n"
	       " %s [options]\n"
	       "\n"
	       "The version of iolens and, with --features, how each of its eBPF features counts\n"
	       "on this kernel: the mechanism the commands use (tracepoints, fentry or kprobes),\n"
	       "each other mechanism and why it cannot, or why the commands estimate from /proc.\n"
	       "Chosen from the kernel's BTF and by loading each program, never from a version\n"
	       "number. As root; otherwise from the BTF alone, and eBPF is not used anyway.\n"
	       "\n"
	       "Options:\n"
	       "  -f, --features  each feature's mechanism on this kernel\n"
	       "      --no-probe  from the kernel's BTF only: load no program\n"
	       "  -j, --json      as JSON\n"
	       "  -h, --help      show this help (--help-all: the same)\n"
	       "\n"
	       "Environment: IOLENS_CACHE_MECHANISM and IOLENS_BIO_MECHANISM force a mechanism\n"
	       "as in the commands (see iolens-cachestat(1), iolens-biotop(1)).\n",
	       program_name);
	exit(EXIT_OK);
}

/* One way of counting a feature, and whether this kernel can. */
struct way {
	const char *name;
	bool can, maybe; /* maybe: the BTF has what it needs, not loaded to see */
	char why_not[300];
};

/* A feature: what the commands use here ("ebpf" and its mechanism, or "procfs" and why). */
struct feature {
	const char *key, *title, *commands;
	bool ebpf;
	const char *mechanism; /* the one used: a name of ways[] (static), or NULL */
	char why[400];         /* not eBPF: why; "" */
	char caveat[400];      /* what the mechanism counts less exactly; "" */
	struct way ways[CACHESTAT_MECHANISMS > 3 ? CACHESTAT_MECHANISMS : 3];
	size_t nways;
};

/* Copies a collector's text, which lives until its next call, into dst; "" for NULL. */
#define KEEP(dst, text) snprintf((dst), sizeof(dst), "%s", (text) ? (text) : "")

/* Not probed: the mechanism the commands would take, the first the BTF allows; NULL for none. */
static const char *first_maybe(const struct feature *f)
{
	for (size_t i = 0; i < f->nways; i++)
		if (f->ways[i].maybe)
			return f->ways[i].name;
	return NULL;
}

/* The page cache: cachestat's choice (started, as the commands do), then every mechanism's verdict. */
static void page_cache(struct feature *f, bool probe)
{
	struct cachestat_options options = { .per_process = true };
	struct cachestat_capability caps[CACHESTAT_MECHANISMS];
	const char *why = NULL;

	*f = (struct feature){ .key = "page_cache", .title = "page cache",
			       .commands = "cachestat, cachetop, doctor, export" };
	/* Each mechanism loaded and unloaded first (cachestat_capabilities probes none while counting). */
	if (cachestat_capabilities(caps, probe) == 0)
		for (size_t i = 0; i < CACHESTAT_MECHANISMS; i++) {
			struct way *w = &f->ways[f->nways++];

			w->name = caps[i].mechanism;
			w->can = caps[i].verdict == CACHESTAT_CAN;
			w->maybe = caps[i].verdict == CACHESTAT_MAY;
			if (caps[i].verdict == CACHESTAT_CANNOT)
				KEEP(w->why_not, caps[i].why_not);
		}
	if (probe && cachestat_start(&options, &why) == 0) {
		f->ebpf = true;
		f->mechanism = cachestat_mechanism();
		KEEP(f->caveat, cachestat_caveat());
	} else if (probe) {
		KEEP(f->why, why);
	}
	cachestat_stop();
	if (!probe)
		f->mechanism = first_maybe(f);
}

/* Block I/O: the submitter's mechanism bio_start chooses, each checked against the BTF. */
static void block_io(struct feature *f, bool probe)
{
	static const enum bio_mechanism ways[] = { BIO_BY_IO_START, BIO_BY_GETRQ };
	const char *why = NULL;

	*f = (struct feature){ .key = "block_io", .title = "block I/O",
			       .commands = "stat --latency, biotop, doctor, export" };
	for (size_t i = 0; i < sizeof(ways) / sizeof(ways[0]); i++) {
		struct way *w = &f->ways[f->nways++];

		w->name = bio_mechanism_name(ways[i]);
		if (bio_mechanism_check(ways[i], &why) == 0)
			w->maybe = true;
		else
			KEEP(w->why_not, why);
	}
	if (probe && bio_start(BIO_WANT_PROCESSES, &why) == 0) {
		f->ebpf = true;
		f->mechanism = bio_mechanism_name(bio_mechanism());
		KEEP(f->caveat, bio_mechanism_less_exact(bio_mechanism()));
		/* Tracepoints all: where one loads, those the BTF has load too. */
		for (size_t i = 0; i < f->nways; i++)
			if (f->ways[i].maybe)
				f->ways[i].can = true, f->ways[i].maybe = false;
	} else if (probe) {
		KEEP(f->why, why);
	}
	bio_stop();
	if (!probe)
		f->mechanism = first_maybe(f);
}

static void ignore_open(const struct odirect_open *open, void *context)
{
	(void)open, (void)context;
}

/* O_DIRECT opens: the raw syscall tracepoints, on every kernel with BTF. */
static void odirect(struct feature *f, bool probe)
{
	const char *why = NULL;

	*f = (struct feature){ .key = "odirect_opens", .title = "O_DIRECT opens", .commands = "doctor",
			       .nways = 1 };
	f->ways[0].name = "tracepoints";
	if (!probe) {
		f->ways[0].maybe = true;
		f->mechanism = "tracepoints";
		return;
	}
	if (odirect_start(ignore_open, NULL, &why) == 0) {
		f->ebpf = f->ways[0].can = true;
		f->mechanism = "tracepoints";
	} else {
		KEEP(f->why, why);
		KEEP(f->ways[0].why_not, why);
	}
	odirect_stop();
}

static const char *mode_of(const struct feature *f, bool probe)
{
	static char text[200];

	if (f->mechanism && (f->ebpf || !probe))
		snprintf(text, sizeof(text), "ebpf, %s", f->mechanism);
	else
		snprintf(text, sizeof(text), "procfs");
	return text;
}

static void print_text(const struct feature *features, size_t n, bool probe)
{
	for (size_t i = 0; i < n; i++) {
		const struct feature *f = &features[i];

		printf("%-15s %-22s %s\n", f->title, mode_of(f, probe), f->commands);
		if (*f->why)
			printf("  not eBPF: %s\n", f->why);
		for (size_t j = 0; j < f->nways; j++) {
			const struct way *w = &f->ways[j];
			bool used = f->mechanism && !strcmp(f->mechanism, w->name) && (f->ebpf || !probe);

			printf("  %-15s %s%s%s\n", w->name,
			       w->can         ? "can"
				   : w->maybe ? "may (the BTF has what it needs; not loaded)"
					      : "cannot: ",
			       w->can || w->maybe ? ""
				   : *w->why_not  ? w->why_not
						  : "?",
			       used ? (probe ? ", used" : ", would be used") : "");
		}
		if (*f->caveat && f->ebpf)
			printf("  note: %s\n", f->caveat);
	}
}

static void print_json(const struct utsname *host, const struct feature *features, size_t n, bool probe)
{
	struct out_record *root = out_record_new();
	struct out_list *list;

	out_rec_text(root, "version", IOLENS_VERSION);
	out_rec_text(root, "kernel", host->release);
	out_rec_bool(root, "probed", probe);
	list = out_rec_list(root, "features");
	for (size_t i = 0; i < n; i++) {
		const struct feature *f = &features[i];
		struct out_record *o = out_list_object(list);
		struct out_list *ways;

		out_rec_text(o, "feature", f->key);
		out_rec_text(o, "mode", (probe ? f->ebpf : f->mechanism && ebpf_may_trace()) ? "ebpf" : "procfs");
		out_rec_text(o, "mechanism", f->mechanism);
		out_rec_text(o, "why", *f->why ? f->why : NULL);
		out_rec_text(o, "caveat", *f->caveat ? f->caveat : NULL);
		ways = out_rec_list(o, "mechanisms");
		for (size_t j = 0; j < f->nways; j++) {
			const struct way *w = &f->ways[j];
			struct out_record *way = out_list_object(ways);

			out_rec_text(way, "mechanism", w->name);
			out_rec_text(way, "verdict", w->can ? "can" : w->maybe ? "may" : "cannot");
			out_rec_text(way, "why_not", *w->why_not ? w->why_not : NULL);
		}
	}
	int rc = out_record_write(root, stdout, OUT_RECORD_LINE);

	if (rc && rc != -EPIPE)
		warn_errno("standard output", -rc);
	out_record_free(root);
}

int cmd_version(int argc, char **argv)
{
	enum { OPT_NO_PROBE = 0x1300 };
	static const struct option long_options[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "help-all", no_argument, NULL, 'h' },
		{ "features", no_argument, NULL, 'f' },
		{ "json", no_argument, NULL, 'j' },
		{ "no-probe", no_argument, NULL, OPT_NO_PROBE },
		{ 0 }
	};
	struct feature features[3];
	struct utsname host;
	bool want_features = false, json = false, probe = true;
	int opt;

	while ((opt = next_option(argc, argv, "fjh", long_options, NULL)) != -1) {
		switch (opt) {
		case 'f':
			want_features = true;
			break;
		case 'j':
			json = true;
			break;
		case OPT_NO_PROBE:
			probe = false;
			break;
		case 'h':
			usage();
		default:
			usage_hint();
		}
	}
	if (optind < argc)
		usage_error("%s: no arguments", printable_name(argv[optind]));
	if (uname(&host) != 0)
		snprintf(host.release, sizeof(host.release), "?");
	if (!want_features) {
		if (json)
			printf("{\"version\":\"%s\"}\n", IOLENS_VERSION);
		else
			printf("iolens %s\n", IOLENS_VERSION);
		return EXIT_OK;
	}
	if (probe && !ebpf_may_trace())
		probe = false; /* not root: nothing would load; the BTF alone says what could */
	page_cache(&features[0], probe);
	block_io(&features[1], probe);
	odirect(&features[2], probe);
	if (json) {
		print_json(&host, features, 3, probe);
	} else {
		printf("iolens %s on Linux %s\n", IOLENS_VERSION, printable_name(host.release));
		if (!probe)
			printf("%s: what root would use, from the kernel's BTF (nothing loaded)\n",
			       ebpf_may_trace() ? "--no-probe" : "Not root, so the commands estimate from /proc");
		printf("\n%-15s %-22s %s\n", "FEATURE", "MODE", "USED BY");
		print_text(features, 3, probe);
	}
	return EXIT_OK;
}
