/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rules.h: doctor's rules as a table: each a name, the thresholds it reads, its help text and a pure function from a snapshot to findings. */
#ifndef IOLENS_DOCTOR_RULES_H
#define IOLENS_DOCTOR_RULES_H

#include "doctor/config.h"
#include "doctor/finding.h"
#include "doctor/snapshot.h"

/*
 * A rule judges the snapshot alone: it reads no /proc, and no other rule's findings
 * (what two rules both need, such as whether a disk is saturated, is a helper of judge.h
 * over the snapshot). Its findings carry its name.
 */
struct doctor_rule {
	const char *name;
	const char *help;                  /* lines of --help's list, each after the name's column */
	const char *man;                   /* iolens-doctor(1)'s paragraph of it under RULES (roff), after its name */
	const int thresholds[3];           /* enum doctor_threshold it reads, ended by -1 */
	void (*judge)(const struct doctor_snapshot *snapshot, const struct doctor_config *config,
		      struct doctor_findings *out);
};

extern const struct doctor_rule rule_odirect, rule_disk, rule_swap, rule_writeback, rule_stuck, rule_vtrace_hang,
	rule_vtrace_latency, rule_refaults, rule_cache_miss, rule_full, rule_inodes, rule_unresponsive, rule_saturated;

/* Every rule, in the order they are listed and judged; ended by NULL. */
extern const struct doctor_rule *const doctor_rules[];

/* Every rule not disabled in config, over the snapshot: the findings in rule order. */
void doctor_judge(const struct doctor_snapshot *snapshot, const struct doctor_config *config,
		  struct doctor_findings *out);

#endif
