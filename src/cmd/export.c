/* SPDX-License-Identifier: GPL-2.0-or-later */
/* export.c: iolens export: what iolens measures, as Prometheus metrics over HTTP (libmicrohttpd). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cachestat_common.h"
#include "cmd/common.h"
#include "cmd/export.h"
#include "collect/bio.h"
#include "collect/cachestat.h"
#include "collect/container.h"
#include "collect/diskstats.h"
#include "collect/procfs.h"
#include "collect/segments.h"
#include "common/signals.h"
#include "common/util.h"
#include "http/http.h"
#include "http/http_auth.h"
#include "render/prom.h"
#include "http/web_config.h"

#define DEFAULT_LISTEN "127.0.0.1:9717"

/*
 * The collectors, each a switch: --collector.NAME, --no-collector.NAME. Named as node_exporter
 * names the same source (diskstats, filesystem, vmstat, pressure), else as iolens does.
 */
enum collector {
	COLLECTOR_DISKLATENCY, COLLECTOR_DISKSTATS, COLLECTOR_FILESYSTEM, COLLECTOR_PAGECACHE, COLLECTOR_PRESSURE,
	COLLECTOR_PROCESS, COLLECTOR_VMSTAT, COLLECTOR_VTRACE, NCOLLECTORS
};
#define COLLECTOR_LIST "disklatency, diskstats, filesystem, pagecache, pressure, process, vmstat, vtrace"

/*
 * node_exporter's defaults, in POSIX ERE ([0-9] for its \d): no RAM disks, loop devices or
 * floppies, and no partitions (sda1, vda1, nvme0n1p1), whose I/O their disk counts already.
 */
#define DEFAULT_DEVICE_EXCLUDE "^(z?ram|loop|fd|(h|s|v|xv)d[a-z]|nvme[0-9]+n[0-9]+p)[0-9]+$"
#define DEFAULT_MOUNT_POINTS_EXCLUDE "^/(dev|proc|run/credentials/.+|sys|var/lib/docker/.+|var/lib/containers/storage/.+)($|/)"

struct exporter {
	bool enabled[NCOLLECTORS];
	struct cache_mode cache;      /* eBPF, or /proc/vmstat estimates */
	bool disk_latency;            /* bio.bpf.c counts the disks' latencies */
	struct segment_set vtrace;    /* touched by the one thread that serves requests */
	unsigned long long scrapes;
	struct cache_estimate estimate; /* without eBPF: pgpgin's misses less O_DIRECT holders' reads */
	regex_t device_include, device_exclude, mount_points_exclude;
	bool has_device_include, has_device_exclude;
	struct fs_watch filesystems;  /* mounts whose probe has not returned */
	struct http_server *server;   /* serving (not with --once) */
};

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

static bool device_wanted(const struct exporter *e, const char *name)
{
	if (e->has_device_include && regexec(&e->device_include, name, 0, NULL, 0) != 0)
		return false;
	return !e->has_device_exclude || regexec(&e->device_exclude, name, 0, NULL, 0) != 0;
}

/* ---- The metrics ----------------------------------------------------------------------------- */

/* Each disk's counters, from /proc/diskstats as read for this scrape (once: disklatency names its disks from it too). */
static void disk_metrics(struct prom *p, const struct exporter *e, const struct diskstats *stats)
{
	static const struct {
		const char *name, *help;
		enum prom_type type;
		size_t offset;
		double scale;       /* to base units: sectors to bytes, ms to seconds */
		unsigned nfields;   /* the fields the kernel must print for it */
	} fields[] = {
#define F(n, h, t, f, s, k) { n, h, t, offsetof(struct disk_stats, f), s, k }
		F("iolens_disk_reads_completed", "Reads completed (as /proc/diskstats).", PROM_COUNTER, rd_ios, 1, 11),
		F("iolens_disk_reads_merged", "Reads merged with an adjacent one.", PROM_COUNTER, rd_merges, 1, 11),
		F("iolens_disk_read_bytes", "Bytes read.", PROM_COUNTER, rd_sectors, 512, 11),
		F("iolens_disk_read_time_seconds", "Time spent by reads, summed over them.", PROM_COUNTER, rd_ticks, 1e-3, 11),
		F("iolens_disk_writes_completed", "Writes completed.", PROM_COUNTER, wr_ios, 1, 11),
		F("iolens_disk_writes_merged", "Writes merged with an adjacent one.", PROM_COUNTER, wr_merges, 1, 11),
		F("iolens_disk_written_bytes", "Bytes written.", PROM_COUNTER, wr_sectors, 512, 11),
		F("iolens_disk_write_time_seconds", "Time spent by writes, summed over them.", PROM_COUNTER, wr_ticks, 1e-3, 11),
		F("iolens_disk_io_now", "Requests in flight.", PROM_GAUGE, in_flight, 1, 11),
		F("iolens_disk_io_time_seconds", "Time with requests in flight (%util is its rate).", PROM_COUNTER, io_ticks, 1e-3, 11),
		F("iolens_disk_io_time_weighted_seconds", "Time in flight summed over requests (aqu-sz is its rate).",
		  PROM_COUNTER, time_in_queue, 1e-3, 11),
		F("iolens_disk_discards_completed", "Discards completed.", PROM_COUNTER, dc_ios, 1, 15),
		F("iolens_disk_discards_merged", "Discards merged.", PROM_COUNTER, dc_merges, 1, 15),
		F("iolens_disk_discarded_bytes", "Bytes discarded.", PROM_COUNTER, dc_sectors, 512, 15),
		F("iolens_disk_discard_time_seconds", "Time spent by discards.", PROM_COUNTER, dc_ticks, 1e-3, 15),
		F("iolens_disk_flushes_completed", "Flushes completed.", PROM_COUNTER, fl_ios, 1, 17),
		F("iolens_disk_flush_time_seconds", "Time spent by flushes.", PROM_COUNTER, fl_ticks, 1e-3, 17),
#undef F
	};

	for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++) {
		char name[96];
		bool any = false;

		snprintf(name, sizeof(name), "%s%s", fields[f].name, fields[f].type == PROM_COUNTER ? "_total" : "");
		for (unsigned i = 0; i < stats->count; i++) {
			const struct disk_stats *d = &stats->disk[i];
			uint64_t raw = *(const uint64_t *)((const char *)d + fields[f].offset);

			if (d->nfields < fields[f].nfields || !device_wanted(e, d->name))
				continue;
			if (!any)
				prom_family(p, fields[f].name, fields[f].type, fields[f].help);
			any = true;
			if (fields[f].scale == 1)
				prom_u64(p, name, raw, "device", d->name, NULL);
			else if (fields[f].scale < 1) /* divided, not multiplied by 0.001: 440.304, not 440.30400000000003 */
				prom_real(p, name, (double)raw / round(1 / fields[f].scale), "device", d->name, NULL);
			else
				prom_real(p, name, (double)raw * fields[f].scale, "device", d->name, NULL);
		}
	}
}

static void cache_metrics(struct prom *p, struct exporter *e)
{
	const char *mode = e->cache.bpf ? "ebpf" : "procfs";
	struct cache_counters c = {0};
	struct meminfo mem;
	struct vmstat vm;
	bool known = false;

	if (meminfo_read(&mem) == 0) {
		prom_family(p, "iolens_page_cache_bytes", PROM_GAUGE, "Page cache (Cached in /proc/meminfo).");
		prom_u64(p, "iolens_page_cache_bytes", mem.cached, NULL);
		prom_family(p, "iolens_dirty_bytes", PROM_GAUGE, "Dirty pages waiting to be written back.");
		prom_u64(p, "iolens_dirty_bytes", mem.dirty, NULL);
		prom_family(p, "iolens_writeback_bytes", PROM_GAUGE, "Pages being written back.");
		prom_u64(p, "iolens_writeback_bytes", mem.writeback, NULL);
	}
	if (e->cache.bpf)
		known = cachestat_totals(&c) == 0;
	else if (vmstat_read(&vm) == 0) {
		cache_counters_from_vmstat(&vm, &e->estimate, &c);
		known = true;
	}
	if (!known)
		return;
	if (e->cache.bpf && e->cache.mechanism) {
		prom_family(p, "iolens_page_cache_mechanism_info", PROM_GAUGE,
			    "How eBPF sees reads and page faults: tracepoints, fentry or kprobes.");
		prom_u64(p, "iolens_page_cache_mechanism_info", 1, "mechanism", e->cache.mechanism, NULL);
	}
	/* Without eBPF hits are not known: no line rather than a made-up one. */
	if (e->cache.bpf) {
		prom_family(p, "iolens_page_cache_hits", PROM_COUNTER,
			    "Pages read or mapped that were cached (mode: ebpf counts them as cachestat does).");
		prom_u64(p, "iolens_page_cache_hits_total", c.hits, "mode", mode, NULL);
		prom_family(p, "iolens_page_cache_accesses", PROM_COUNTER, "Pages read or mapped.");
		prom_u64(p, "iolens_page_cache_accesses_total", c.reads + c.maps, "mode", mode, NULL);
	}
	prom_family(p, "iolens_page_cache_misses", PROM_COUNTER,
		    "Pages added to the cache by reads (mode procfs: estimated from pgpgin, less what processes "
		    "holding an O_DIRECT descriptor read).");
	prom_u64(p, "iolens_page_cache_misses_total", c.misses, "mode", mode, NULL);
	prom_family(p, "iolens_page_cache_dirtied", PROM_COUNTER, "Pages dirtied.");
	prom_u64(p, "iolens_page_cache_dirtied_total", c.dirties, "mode", mode, NULL);
	prom_family(p, "iolens_page_cache_evictions", PROM_COUNTER, "Pages removed from the cache.");
	prom_u64(p, "iolens_page_cache_evictions_total", c.evictions, "mode", mode, NULL);
	prom_family(p, "iolens_page_cache_refaults", PROM_COUNTER,
		    "Pages added back after reclaim evicted them (mode procfs: workingset_refault_file).");
	prom_u64(p, "iolens_page_cache_refaults_total", c.refaults, "mode", mode, NULL);
}

static void pressure_metrics(struct prom *p)
{
	static const char *const resources[] = { "cpu", "memory", "io" };
	struct psi psi[3];
	bool any = false;

	for (unsigned r = 0; r < 3; r++)
		any |= psi_read(resources[r], &psi[r]) == 0 && psi[r].available;
	if (!any)
		return;
	for (int full = 0; full < 2; full++) {
		const char *name = full ? "iolens_pressure_full_seconds" : "iolens_pressure_some_seconds";
		char sample[64];

		prom_family(p, name, PROM_COUNTER,
			    full ? "Time all non-idle tasks stalled on the resource together (PSI full)."
				 : "Time some task stalled on the resource (PSI some).");
		snprintf(sample, sizeof(sample), "%s_total", name);
		for (unsigned r = 0; r < 3; r++) {
			const struct psi_line *line = full ? &psi[r].full : &psi[r].some;

			if (psi[r].available && line->present)
				prom_real(p, sample, (double)line->total_us / 1e6, "resource", resources[r], NULL);
		}
	}
}

/*
 * The labels of a process's container, in the order export writes them: container_id,
 * container_name and container_uid (whose: a rootless one's user, 0 for root's runtimes) when
 * it is in one; and for a Kubernetes pod's, pod, namespace and container (its name in the pod),
 * as the kubelet's cAdvisor and kube-state-metrics name them, for joins on them. The label pairs
 * end at the first NULL key: a process in no container has none of them, one outside Kubernetes
 * no pod.
 */
struct container_labels {
	const char *id_key, *id, *name_key, *name, *uid_key, *uid, *pod_key, *pod, *namespace_key, *namespace_,
		*container_key, *container;
	char uid_text[16];
};

static void container_labels(const struct container *c, struct container_labels *out)
{
	memset(out, 0, sizeof(*out));
	if (!c)
		return;
	snprintf(out->uid_text, sizeof(out->uid_text), "%u", (unsigned)c->owner);
	out->id_key = "container_id";
	out->id = c->id;
	out->name_key = "container_name";
	out->name = c->name;
	out->uid_key = "container_uid";
	out->uid = out->uid_text;
	if (c->pod[0]) {
		out->pod_key = "pod";
		out->pod = c->pod;
		out->namespace_key = "namespace";
		out->namespace_ = c->namespace_;
		out->container_key = "container";
		out->container = c->name;
	}
}

static void vtrace_histogram(struct prom *p, const struct vtrace_stats *s, const char *service, const char *pid,
			     const char *uid, const char *user, const char *op, const struct container_labels *c)
{
	const char *const pairs[] = { "service", service, "pid", pid, "uid", uid, "user", user, "op", op,
				      c->id_key, c->id, c->name_key, c->name, c->uid_key, c->uid, c->pod_key, c->pod,
				      c->namespace_key, c->namespace_, c->container_key, c->container, NULL };

	prom_latency_histogram(p, "iolens_vtrace_request_duration_seconds", pairs, s->histogram, s->completions,
			       (double)s->service_ns / 1e9);
}

/*
 * iolens_disk_{request,device,queue}_duration_seconds: each whole disk's requests by op, from
 * bio.bpf.c's histograms since the exporter started (a disk appears with its first request).
 */
static void disk_latency_metrics(struct prom *p, const struct exporter *e, const struct diskstats *stats)
{
	static const struct {
		const char *name, *help;
	} kinds[BIO_LAT_KINDS] = {
		[BIO_LAT_TOTAL] = { "iolens_disk_request_duration_seconds",
				    "Requests from their start in the block layer to their completion (block_rq_complete, before diskstats accounts them), by eBPF." },
		[BIO_LAT_DEVICE] = { "iolens_disk_device_duration_seconds",
				     "Requests from their issue to the driver to their completion: the device's time." },
		[BIO_LAT_QUEUE] = { "iolens_disk_queue_duration_seconds",
				    "Requests from their start to their issue: time queued in the block layer and its scheduler." },
	};
	static const char *const ops[BIO_LAT_OPS] = { "read", "write", "discard", "flush" };
	struct bio_disks disks;

	if (!e->disk_latency || bio_read_disks(&disks) != 0)
		return;
	for (unsigned kind = 0; kind < BIO_LAT_KINDS; kind++) {
		bool any = false;

		for (unsigned i = 0; i < stats->count; i++) {
			const struct disk_stats *d = &stats->disk[i];
			const struct bio_disk *disk = bio_disks_find(&disks, d->major, d->minor);

			if (!disk || !device_wanted(e, d->name))
				continue;
			for (unsigned op = 0; op < BIO_LAT_OPS; op++) {
				const char *const pairs[] = { "device", d->name, "op", ops[op], NULL };
				uint64_t count = bio_histogram_count(disk->histogram[kind][op]);

				if (!count) /* an op the disk has not done: no series, as for vtrace's */
					continue;
				if (!any)
					prom_family(p, kinds[kind].name, PROM_HISTOGRAM, kinds[kind].help);
				any = true;
				prom_latency_histogram(p, kinds[kind].name, pairs, disk->histogram[kind][op], count,
						       (double)disk->sum_ns[kind][op] / 1e9);
			}
		}
	}
	bio_disks_free(&disks);
}

static void vtrace_metrics(struct prom *p, struct exporter *e)
{
	enum { REQUESTS, ERRORS, BYTES, BUSY, IN_FLIGHT, OLDEST, DURATION };
	static const struct {
		const char *name, *help;
		enum prom_type type;
	} families[] = {
		{ "iolens_vtrace_requests", "Requests completed, per service (and the user it runs as) and op (libvtrace).",
		  PROM_COUNTER },
		{ "iolens_vtrace_errors", "Requests completed with an error.", PROM_COUNTER },
		{ "iolens_vtrace_bytes", "Bytes the requests moved.", PROM_COUNTER },
		{ "iolens_vtrace_busy_seconds", "Time with a request of the op in flight (op \"\": of any op).", PROM_COUNTER },
		{ "iolens_vtrace_in_flight", "Requests begun and not ended.", PROM_GAUGE },
		{ "iolens_vtrace_oldest_in_flight_seconds", "Age of the oldest request in flight (0: none).", PROM_GAUGE },
		{ "iolens_vtrace_request_duration_seconds", "Service time of the requests.", PROM_HISTOGRAM },
	};

	e->vtrace.one_sample = true; /* counters: the latest sample is all that is published */
	segment_set_refresh(&e->vtrace);
	container_cache_trim();
	if (!e->vtrace.count)
		return;
	for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++) {
		char sample[96];

		prom_family(p, families[f].name, families[f].type, families[f].help);
		snprintf(sample, sizeof(sample), "%s%s", families[f].name, families[f].type == PROM_COUNTER ? "_total" : "");
		for (size_t i = 0; i < e->vtrace.count; i++) {
			const struct segment *s = e->vtrace.list[i];
			const struct vtrace_info *info = s->info;
			/* Whose it is: anyone may name a service anything, a user and a uid say who runs it. */
			char pid[16], uid[16], user[80];
			struct container_labels c;

			container_labels(container_of_pid(s->pid), &c);
			snprintf(pid, sizeof(pid), "%d", (int)s->pid); /* as this machine numbers it */
			snprintf(uid, sizeof(uid), "%u", info->uid);
			snprintf(user, sizeof(user), "%s", segment_user_name(info->uid));
			for (unsigned op = 0; op <= info->op_count; op++) {
				const struct vtrace_stats *st = &s->current[op];
				const char *name = op < info->op_count ? vtrace_reader_op_name(s->reader, op) : "";
				uint64_t in_flight = st->begins > st->completions ? st->begins - st->completions : 0;
				uint64_t age = st->oldest_ns && s->current_ns > st->oldest_ns ? s->current_ns - st->oldest_ns : 0;

				/* The server as a whole (op "") has a busy time of its own, the union of its ops'. */
				if ((op == info->op_count && f != BUSY) || segment_impossible(s, op))
					continue; /* and counters no server writes are not published */
#define LABELS "service", info->service, "pid", pid, "uid", uid, "user", user, "op", name, c.id_key, c.id, c.name_key, \
	c.name, c.uid_key, c.uid, c.pod_key, c.pod, c.namespace_key, c.namespace_, c.container_key, c.container, NULL
				switch (f) {
				case REQUESTS: prom_u64(p, sample, st->completions, LABELS); break;
				case ERRORS: prom_u64(p, sample, st->errors, LABELS); break;
				case BYTES: prom_u64(p, sample, st->bytes, LABELS); break;
				case BUSY: prom_real(p, sample, (double)st->busy_ns / 1e9, LABELS); break;
				case IN_FLIGHT: prom_u64(p, sample, in_flight, LABELS); break;
				case OLDEST: prom_real(p, sample, (double)age / 1e9, LABELS); break;
				case DURATION: /* an op that never ran has no latencies: no series (as client libraries do) */
					if (st->completions)
						vtrace_histogram(p, st, info->service, pid, uid, user, name, &c);
					break;
				}
#undef LABELS
			}
		}
	}
}

/* Basic auth's password checks, with a web config that has users. */
static void auth_metrics(struct prom *p, const struct exporter *e)
{
	struct auth_counts counts;

	if (!http_auth_counts(e->server, &counts))
		return;
	prom_family(p, "iolens_export_auth_bcrypt", PROM_COUNTER,
		    "Passwords checked with bcrypt: those not among the checks remembered (a scraper's is checked once).");
	prom_u64(p, "iolens_export_auth_bcrypt_total", counts.bcrypt, NULL);
	prom_family(p, "iolens_export_auth_refused", PROM_COUNTER,
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
	struct diskstats disks;
	char *text = NULL;
	struct prom p = { .openmetrics = format == PROM_FORMAT_OPENMETRICS, .protobuf = format == PROM_FORMAT_PROTOBUF };

	if (!(p.out = open_memstream(&text, len)))
		return NULL;
	prom_family(&p, "iolens_build_info", PROM_GAUGE, "The iolens version that serves these metrics.");
	prom_u64(&p, "iolens_build_info", 1, "version", IOLENS_VERSION, NULL);
	/* Read only for a collector that will use it: disklatency's needs eBPF started. */
	if ((e->enabled[COLLECTOR_DISKSTATS] || (e->enabled[COLLECTOR_DISKLATENCY] && e->disk_latency)) &&
	    diskstats_read(&disks) == 0) {
		if (e->enabled[COLLECTOR_DISKSTATS])
			disk_metrics(&p, e, &disks);
		if (e->enabled[COLLECTOR_DISKLATENCY])
			disk_latency_metrics(&p, e, &disks);
		diskstats_free(&disks);
	}
	if (e->enabled[COLLECTOR_FILESYSTEM])
		filesystem_metrics(&p, &e->filesystems, &e->mount_points_exclude);
	if (e->enabled[COLLECTOR_PAGECACHE])
		cache_metrics(&p, e);
	if (e->enabled[COLLECTOR_PRESSURE])
		pressure_metrics(&p);
	if (e->enabled[COLLECTOR_VMSTAT])
		vmstat_metrics(&p);
	if (e->enabled[COLLECTOR_VTRACE])
		vtrace_metrics(&p, e);
	if (e->enabled[COLLECTOR_PROCESS])
		process_metrics(&p);
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
	       "                         " COLLECTOR_LIST "\n"
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
	       program_name, program_name, program_name, program_name, program_name);
	exit(EXIT_OK);
}

enum {
	OPT_ONCE = 0x100, OPT_OPENMETRICS, OPT_MAX_CONNECTIONS, OPT_WEB_CONFIG, OPT_DISABLE_DEFAULTS, OPT_DEVICE_INCLUDE,
	OPT_DEVICE_EXCLUDE, OPT_MOUNT_POINTS_EXCLUDE, OPT_COLLECTOR = 0x200, OPT_NO_COLLECTOR = 0x300
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
			usage_error("%.*s: no such collector or option: the collectors are " COLLECTOR_LIST, (int)len + 2, arg);
	}
}

int cmd_export(int argc, char **argv)
{
	static const struct option long_options[] = {
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
#define SWITCHES(i, name) { "collector." name, no_argument, NULL, OPT_COLLECTOR + (i) }, \
			  { "no-collector." name, no_argument, NULL, OPT_NO_COLLECTOR + (i) }
		SWITCHES(COLLECTOR_DISKLATENCY, "disklatency"), SWITCHES(COLLECTOR_DISKSTATS, "diskstats"),
		SWITCHES(COLLECTOR_FILESYSTEM, "filesystem"),
		SWITCHES(COLLECTOR_PAGECACHE, "pagecache"), SWITCHES(COLLECTOR_PRESSURE, "pressure"),
		SWITCHES(COLLECTOR_PROCESS, "process"),     SWITCHES(COLLECTOR_VMSTAT, "vmstat"),
		SWITCHES(COLLECTOR_VTRACE, "vtrace"),
#undef SWITCHES
		{ 0 }
	};
	const char *device_include = NULL, *device_exclude = NULL, *mount_points_exclude = DEFAULT_MOUNT_POINTS_EXCLUDE;
	int chosen[NCOLLECTORS] = {0}; /* 1 on, -1 off by name, the last said; 0 the default */
	bool disable_defaults = false;
	const char *listen = DEFAULT_LISTEN, *why;
	struct http_options http = { .render = render };
	struct exporter e = {0};
	bool once = false, openmetrics = false;
	struct http_server *server;
	const char *web_config_path = NULL;
	struct web_config web = {0};
	char why_not[512], cache_why[512] = "";
	const char *bio_why = NULL;
	uint64_t number;
	int opt, rc = EXIT_OK;

	check_collector_names(argc, argv, long_options);
	while ((opt = next_option(argc, argv, "l:hvV", long_options, NULL)) != -1) {
		switch (opt) {
		case 'l': listen = optarg; break;
		case OPT_ONCE: once = true; break;
		case OPT_OPENMETRICS: openmetrics = true; break;
		case OPT_MAX_CONNECTIONS:
			if (parse_u64(optarg, &number) != 0 || number < 2 || number > 1000000)
				usage_error("--max-connections %s: a number from 2 to 1000000, please", optarg);
			http.max_connections = (unsigned)number;
			break;
		case OPT_WEB_CONFIG: web_config_path = optarg; break;
		case OPT_DISABLE_DEFAULTS: disable_defaults = true; break;
		case OPT_DEVICE_INCLUDE: device_include = optarg; break;
		case OPT_DEVICE_EXCLUDE: device_exclude = optarg; break;
		case OPT_MOUNT_POINTS_EXCLUDE: mount_points_exclude = optarg; break;
		case 'v': warn_verbose = true; break;
		case 'h': usage(false);
		case COMMON_OPT_HELP_ALL: usage(true);
		case 'V': print_version();
		default:
			if (opt >= OPT_COLLECTOR && opt < OPT_COLLECTOR + NCOLLECTORS)
				chosen[opt - OPT_COLLECTOR] = 1;
			else if (opt >= OPT_NO_COLLECTOR && opt < OPT_NO_COLLECTOR + NCOLLECTORS)
				chosen[opt - OPT_NO_COLLECTOR] = -1;
			else
				usage_hint();
		}
	}
	if (optind < argc)
		usage_error("unexpected argument: '%s'", argv[optind]);
	if (openmetrics && !once)
		usage_error("--openmetrics goes with --once: a scraper asks for it in its Accept header");
	if (http_parse_listen(listen, &http.addr, &why) != 0)
		usage_error("--listen %s: %s", listen, why);
	/* libmicrohttpd (and gnutls...), libyaml, libcrypt: opened here, not at every start-up. */
	if ((web_config_path && web_config_dl(why_not, sizeof(why_not)) != 0) ||
	    (!once && http_load(why_not, sizeof(why_not)) != 0)) {
		fprintf(stderr, "%s needs %s\n", program_name, why_not); /* "iolens export needs ..." */
		return EXIT_FAIL;
	}
	if (web_config_path) { /* checked with --once too, which does not serve */
		if (web_config_load(web_config_path, &web, why_not, sizeof(why_not)) != 0) {
			web_config_free(&web);
			usage_error("--web.config.file %s: %s", web_config_path, why_not);
		}
		http.web = &web;
		warn_exposed(web_config_path, web.file_mode, web.user_count || (web.key && !web.key_file),
			     web.user_count ? "password hashes" : "a private key");
		if (web.key_path)
			warn_exposed(web.key_path, web.key_mode, true, "a private key");
	}
	/* As node_exporter: one or the other; an include alone drops the default exclude. */
	if (device_include && device_exclude)
		usage_error("--collector.diskstats.device-include and --collector.diskstats.device-exclude: one or the other");
	if (device_include)
		compile_regex(&e.device_include, "collector.diskstats.device-include", device_include);
	else
		compile_regex(&e.device_exclude, "collector.diskstats.device-exclude",
			      device_exclude ? device_exclude : DEFAULT_DEVICE_EXCLUDE);
	e.has_device_include = device_include;
	e.has_device_exclude = !device_include;
	compile_regex(&e.mount_points_exclude, "collector.filesystem.mount-points-exclude", mount_points_exclude);
	for (unsigned c = 0; c < NCOLLECTORS; c++)
		e.enabled[c] = chosen[c] ? chosen[c] > 0 : !disable_defaults;
	/* Its probes marked where doctor's are (as root; unmarked where there is no such directory). */
	if (e.enabled[COLLECTOR_FILESYSTEM])
		filesystem_watch_start(&e.filesystems);

	/* Without the page cache's collector, no eBPF is loaded and none is needed. */
	if (e.enabled[COLLECTOR_PAGECACHE]) {
		cache_mode_start(&(struct cachestat_options){0}, &e.cache, NULL, NULL);
		if (!e.cache.bpf) /* ebpf_why's text lives until its next call: bio_start's */
			snprintf(cache_why, sizeof(cache_why), "%s", e.cache.why);
	}
	/* Latencies are counted from here on: with --once, none have been yet. */
	if (e.enabled[COLLECTOR_DISKLATENCY] && !once) {
		if (bio_start(BIO_WANT_DISKS, &why) == 0) /* the histograms per disk only: no 8.2 MiB of processes */
			e.disk_latency = true;
		else
			bio_why = why;
	}
	/* One line for one reason (not root: both), what is missing with -v. */
	if (cache_why[0] && bio_why && !strcmp(cache_why, bio_why))
		warn_msg("no eBPF (%s): no cache hits or latency histograms", cache_why);
	else if (cache_why[0])
		warn_msg("no eBPF (%s): no cache hits, misses estimated", cache_why);
	if (bio_why && strcmp(cache_why, bio_why))
		warn_msg("no eBPF (%s): disk latency histograms left out", bio_why);
	if (cache_why[0])
		warn_detail("page-cache hits are not exported; misses are estimated from /proc/vmstat");
	if (bio_why)
		warn_detail("disk latency histograms are not exported (iolens_disk_*_time_seconds give averages)");
	if (once) {
		size_t len;
		char *text = render(&e, openmetrics ? PROM_FORMAT_OPENMETRICS : PROM_FORMAT_TEXT, &len);

		if (!text || fwrite(text, 1, len, stdout) != len || fflush(stdout) != 0)
			rc = output_failed();
		free(text);
		web_config_free(&web);
		exporter_free(&e);
		return rc;
	}

	stop_on_signals();
	http.context = &e;
	if (!(server = http_start(&http, why_not, sizeof(why_not)))) {
		warn_msg("cannot listen on %s%s: %s", listen, web.tls ? " with TLS" : "", why_not);
		if (web.tls)
			warn_detail("the port taken, or %s not a PEM certificate with %s its key?",
				    web.cert_file ? web.cert_file : "cert", web.key_file ? web.key_file : "key");
		web_config_free(&web);
		exporter_free(&e);
		return EXIT_FAIL;
	}
	if (!http_loopback(&http.addr) && (!web.tls || !web.user_count))
		warn_msg("warning: listening beyond loopback without %s (--web.config.file)",
			 !web.tls && !web.user_count ? "TLS and basic auth" : !web.tls ? "TLS" : "basic auth");
	if (!http_loopback(&http.addr) && (!web.tls || !web.user_count))
		warn_detail("anyone who reaches the port %s",
			    !web.user_count ? "reads the metrics" : "sees passwords in clear");
	fprintf(stderr, "%s: serving %s://%s/metrics%s\n", program_name, web.tls ? "https" : "http", listen,
		http_every_address(&http.addr) ? " (every address)" : "");
	e.server = server;
	http_serve(server, &stop_signal);
	http_stop(server);
	web_config_free(&web);
	exporter_free(&e);
	return EXIT_OK;
}
