/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vtrace_latency.c: rule vtrace-latency: an op of a libvtrace server much slower in the window than before it. */
#include "doctor/judge.h"
#include "doctor/rules.h"

static void judge(const struct doctor_snapshot *s, const struct doctor_config *config, struct doctor_findings *out)
{
	for (size_t i = 0; i < s->nvtrace; i++) {
		const struct snap_vtrace *server = &s->vtrace[i];

		for (unsigned k = 0; k < server->nops; k++) {
			const struct snap_vtrace_op *op = &server->ops[k];
			struct vtrace_op_window w = vtrace_op_window(op);
			struct doctor_finding *f;
			char whose[768];

			/* A hung op is vtrace-hang's, whatever its mean. */
			if (op->impossible || op->oldest_age_ns >= (uint64_t)(config->threshold[TH_HANG_SECONDS] * 1e9))
				continue;
			if (!(w.done >= 10 && op->completions_before >= 50 && w.window_ms >= 4 * w.before_ms &&
			      w.window_ms - w.before_ms >= 0.5))
				continue;
			f = doctor_finding_add(out, DOCTOR_WARNING, "vtrace-latency",
					       "the service's clients wait that much longer for each answer");
			doctor_text(f->what, sizeof(f->what), "service %s %s: %s takes %.0f times longer than before",
				    server->service, vtrace_whose(s, server, whose, sizeof(whose)), op->name,
				    w.window_ms / w.before_ms);
			doctor_text(
			    f->numbers, sizeof(f->numbers),
			    "mean %.3f ms over %llu requests in the %.1f s watched, against %.3f ms over the %llu "
			    "before (%s)",
			    w.window_ms, (unsigned long long)w.done, s->seconds, w.before_ms,
			    (unsigned long long)op->completions_before, server->segment);
			vtrace_finding_data(s, f, server, op, &w);
		}
	}
}

const struct doctor_rule rule_vtrace_latency = {
	.name = "vtrace-latency",
	.list_rank = 80, /* its place in --help-all and RULES */
	.judge_rank = 90, /* its findings' place among those of one severity */
	.help = "an op of such a service 4 times slower than before the window",
	.man = /* iolens-doctor(1), RULES: the paragraph after its name (roff) */
		"An operation of such a service whose mean service time in the window is 4\n"
		"times its mean before the window or more, and at least 0.5\\~ms longer,\n"
		"with 10 requests or more in the window and 50 or more before.\n"
		"Severity\n"
		".BR warning .\n",
	.thresholds = { TH_HANG_SECONDS, -1 },
	.judge = judge,
};
