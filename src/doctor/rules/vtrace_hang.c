/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vtrace_hang.c: rule vtrace-hang: a libvtrace server with a request in flight past a threshold. */
#include <stdio.h>

#include "doctor/judge.h"
#include "doctor/rules.h"

static void judge(const struct doctor_snapshot *s, const struct doctor_config *config, struct doctor_findings *out)
{
	for (size_t i = 0; i < s->nvtrace; i++) {
		const struct snap_vtrace *server = &s->vtrace[i];

		for (unsigned k = 0; k < server->nops; k++) {
			const struct snap_vtrace_op *op = &server->ops[k];
			struct vtrace_op_window w = vtrace_op_window(op);
			uint64_t age = op->oldest_age_ns;
			struct doctor_finding *f;
			char whose[768];

			/* counters no server writes: nothing to say from them */
			if (op->impossible || age < (uint64_t)(config->threshold[TH_HANG_SECONDS] * 1e9))
				continue;
			f = doctor_finding_add(
			    out, age >= 60 * 1000000000ull ? DOCTOR_CRITICAL : DOCTOR_WARNING, "vtrace-hang",
			    "a request that never ends holds its client, and often a thread and a lock "
			    "of the server: other requests pile up behind it (a FUSE client waiting for "
			    "a page the request should fill sleeps in D)");
			doctor_text(f->what, sizeof(f->what), "service %s %s is hung on %s", server->service,
				    vtrace_whose(s, server, whose, sizeof(whose)), op->name);
			doctor_text(f->numbers, sizeof(f->numbers),
				    "%llu %s request%s in flight, the oldest for %.1f s; %llu completed in the %.1f s "
				    "watched (%s)",
				    (unsigned long long)(op->begins - op->completions), op->name,
				    op->begins - op->completions == 1 ? "" : "s", (double)age / 1e9,
				    (unsigned long long)w.done, s->seconds, server->segment);
			vtrace_finding_data(s, f, server, op, &w);
		}
	}
}

const struct doctor_rule rule_vtrace_hang = {
	.name = "vtrace-hang",
	.list_rank = 70, /* its place in --help-all and RULES */
	.judge_rank = 80, /* its findings' place among those of one severity */
	.help = "a libvtrace service with a request in flight for 1 s or more\n"
		"(critical from 60 s)",
	.man = /* iolens-doctor(1), RULES: the paragraph after its name (roff) */
		"A service instrumented with libvtrace with a request in flight for 1\\~s or\n"
		"more (what\n"
		".B iolens vstat\n"
		"flags HANG), per operation: how many are in flight, the age of the oldest,\n"
		"how many completed in the window.\n"
		".B critical\n"
		"from 60\\~s,\n"
		".B warning\n"
		"before.\n"
		"Only live servers whose segments are proven theirs count (see\n"
		".B TRUST\n"
		"in\n"
		".BR \\%iolens\\-vstat (1)):\n"
		"another user's file that names a server cannot make it look hung, and a\n"
		"dead server (a zombie too) is not hung.\n"
		"Any user may give a server any name: the finding says whose it is, the\n"
		"user it runs as (its segment's owner), in its text\n"
		".RB ( \"service rootsvc (pid 4242) of user nobody (uid 65534) is hung on OPEN\" )\n"
		"and its\n"
		".B uid\n"
		"and\n"
		".B user\n"
		"fields.\n",
	.thresholds = { TH_HANG_SECONDS, -1 },
	.judge = judge,
	.alerts = {
		{ "warning", TH_HANG_SECONDS, "iolens_vtrace_oldest_in_flight_seconds >= %g", NULL,
		  "service {{ $labels.service }} (pid {{ $labels.pid }}): a {{ $labels.op }} in flight for "
		  "{{ $value | printf \"%.0f\" }} s" },
		{ "critical", -1, "iolens_vtrace_oldest_in_flight_seconds >= 60", NULL,
		  "service {{ $labels.service }} (pid {{ $labels.pid }}): a {{ $labels.op }} in flight for "
		  "{{ $value | printf \"%.0f\" }} s" },
	},
};
