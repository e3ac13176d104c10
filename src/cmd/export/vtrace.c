/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vtrace.c: export's vtrace collector: every libvtrace service's ops, iolens_vtrace_*, with its container's labels. */
#include <stdio.h>
#include <string.h>

#include "cmd/export.h"
#include "collect/container.h"

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

static void vtrace_metrics(struct prom *p, struct exporter *e)
{
	enum { REQUESTS, ERRORS, BYTES, BUSY, IN_FLIGHT, OLDEST, DURATION };
	static const struct {
		const char *name, *help;
		enum prom_type type;
	} families[] = {
		{ "iolens_vtrace_requests",
		  "Requests completed, per service (and the user it runs as) and op (libvtrace).", PROM_COUNTER },
		{ "iolens_vtrace_errors", "Requests completed with an error.", PROM_COUNTER },
		{ "iolens_vtrace_bytes", "Bytes the requests moved.", PROM_COUNTER },
		{ "iolens_vtrace_busy_seconds", "Time with a request of the op in flight (op \"\": of any op).",
		  PROM_COUNTER },
		{ "iolens_vtrace_in_flight", "Requests begun and not ended.", PROM_GAUGE },
		{ "iolens_vtrace_oldest_in_flight_seconds", "Age of the oldest request in flight (0: none).",
		  PROM_GAUGE },
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
		snprintf(sample, sizeof(sample), "%s%s", families[f].name,
			 families[f].type == PROM_COUNTER ? "_total" : "");
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
				uint64_t age =
				    st->oldest_ns && s->current_ns > st->oldest_ns ? s->current_ns - st->oldest_ns : 0;

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
				/* an op that never ran has no latencies: no series (as client libraries do) */
				case DURATION:
					if (st->completions)
						vtrace_histogram(p, st, info->service, pid, uid, user, name, &c);
					break;
				}
#undef LABELS
			}
		}
	}
}

const struct export_collector collector_vtrace = {
	.name = "vtrace",
	.help = "iolens_vtrace_*: every libvtrace service's requests, errors, bytes, busy time and latencies by op",
	.rank = 70,
	.render = vtrace_metrics,
};
