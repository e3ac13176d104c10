/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vtrace.h: what vtrace-hang and vtrace-latency say of an op of a libvtrace server: one finding's fields, either rule's. */
#ifndef IOLENS_DOCTOR_RULES_VTRACE_H
#define IOLENS_DOCTOR_RULES_VTRACE_H

#include "doctor/judge.h"
#include "doctor/rules.h"

/* An op's completions in the window, and its mean service time in the window and before (ms). */
struct vtrace_op_window {
	uint64_t done;
	double window_ms, before_ms;
};

struct vtrace_op_window vtrace_op_window(const struct snap_vtrace_op *op);
/* "(pid 4242) of user nobody (uid 65534)" and " in container web (3f2a9c1b0d4e)": whose the server is, into buf. */
const char *vtrace_whose(const struct doctor_snapshot *s, const struct snap_vtrace *server, char *buf, size_t size);
/* The fields both rules write, and "more". */
void vtrace_finding_data(const struct doctor_snapshot *s, struct doctor_finding *f, const struct snap_vtrace *server,
			 const struct snap_vtrace_op *op, const struct vtrace_op_window *w);

#endif
