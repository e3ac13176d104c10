/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rules.h: doctor's rules as a table: each a name, the thresholds it reads, its help text and a
 * pure function from a snapshot to findings.
 */
#ifndef IOLENS_DOCTOR_RULES_H
#define IOLENS_DOCTOR_RULES_H

#include "doctor/config.h"
#include "doctor/finding.h"
#include "doctor/snapshot.h"
#include "doctor_rules.h" /* made from the files of src/doctor/rules/ */

/*
 * A rule judges the snapshot alone: it reads no /proc, and no other rule's findings
 * (what two rules both need, such as whether a disk is saturated, is a helper of judge.h
 * over the snapshot). Its findings carry its name.
 */
struct doctor_rule {
	const char *name;
	/*
	 * Where it stands, lowest first, among the rules (each rank once; tests/unit/test_doctor_rules.c
	 * holds them apart): list_rank in --help-all and the man page's RULES, judge_rank in the order
	 * rules are judged, which is the order findings of one severity are reported in.
	 */
	int list_rank, judge_rank;
	const char *help;                  /* lines of --help's list, each after the name's column */
	const char *man;                   /* iolens-doctor(1)'s paragraph of it under RULES (roff), after its name */
	const int thresholds[3];           /* enum doctor_threshold it reads, ended by -1 */
	void (*judge)(const struct doctor_snapshot *snapshot, const struct doctor_config *config,
		      struct doctor_findings *out);
};

/*
 * A rule is a file of src/doctor/rules/, NAME.c, that defines `const struct doctor_rule rule_NAME`:
 * the Makefile lists the files (build/gen/doctor_rules.h), and nothing else names the rule.
 */
#define DOCTOR_RULE_EXTERN(n) extern const struct doctor_rule rule_##n;
doctor_rules(DOCTOR_RULE_EXTERN)
#undef DOCTOR_RULE_EXTERN

/* Every rule, by list_rank (doctor_rules_listed) or judge_rank (doctor_rules_judged); ended by NULL. */
const struct doctor_rule *const *doctor_rules_listed(void);
const struct doctor_rule *const *doctor_rules_judged(void);

/* Every rule not disabled in config, over the snapshot: the findings in rule order. */
void doctor_judge(const struct doctor_snapshot *snapshot, const struct doctor_config *config,
		  struct doctor_findings *out);

#endif
