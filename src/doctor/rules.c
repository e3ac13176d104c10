/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rules.c: the table of doctor's rules, and the judging of a snapshot by those the configuration leaves on. */
#include "doctor/rules.h"

const struct doctor_rule *const doctor_rules[] = {
	&rule_odirect, &rule_disk, &rule_saturated, &rule_swap, &rule_writeback, &rule_stuck, &rule_vtrace_hang, &rule_vtrace_latency,
	&rule_refaults, &rule_cache_miss, &rule_full, &rule_inodes, &rule_unresponsive, NULL,
};

/*
 * The order rules are judged in: findings of one severity are reported in it (the order
 * doctor has always written them in), whatever the order of the list.
 */
static const struct doctor_rule *const judge_order[] = {
	&rule_odirect, &rule_cache_miss, &rule_refaults, &rule_disk, &rule_saturated, &rule_swap, &rule_writeback, &rule_vtrace_hang,
	&rule_vtrace_latency, &rule_stuck, &rule_unresponsive, &rule_full, &rule_inodes, NULL,
};

void doctor_judge(const struct doctor_snapshot *snapshot, const struct doctor_config *config,
		  struct doctor_findings *out)
{
	for (const struct doctor_rule *const *rule = judge_order; *rule; rule++)
		if (!doctor_config_disabled(config, (*rule)->name))
			(*rule)->judge(snapshot, config, out);
}
