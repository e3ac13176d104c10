/* SPDX-License-Identifier: GPL-2.0-or-later */
/* rules.c: doctor's rules in the orders they declare, and the judging of a snapshot by those left on. */
#include "doctor/rules.h"

#include <stdlib.h>

/* Every rule, as the Makefile found their files (by name), and the two orders made from it at first use. */
#define DOCTOR_RULE_ADDRESS(n) &rule_##n,
static const struct doctor_rule *const registered[] = { doctor_rules(DOCTOR_RULE_ADDRESS) };
#undef DOCTOR_RULE_ADDRESS

static const struct doctor_rule *listed[DOCTOR_RULE_COUNT + 1], *judged[DOCTOR_RULE_COUNT + 1];

static int by_list_rank(const void *a, const void *b)
{
	const struct doctor_rule *x = *(const struct doctor_rule *const *)a, *y = *(const struct doctor_rule *const *)b;

	return (x->list_rank > y->list_rank) - (x->list_rank < y->list_rank);
}

static int by_judge_rank(const void *a, const void *b)
{
	const struct doctor_rule *x = *(const struct doctor_rule *const *)a, *y = *(const struct doctor_rule *const *)b;

	return (x->judge_rank > y->judge_rank) - (x->judge_rank < y->judge_rank);
}

static void sort_rules(void)
{
	if (listed[0])
		return;
	for (size_t i = 0; i < DOCTOR_RULE_COUNT; i++)
		listed[i] = judged[i] = registered[i];
	qsort(listed, DOCTOR_RULE_COUNT, sizeof(listed[0]), by_list_rank);
	qsort(judged, DOCTOR_RULE_COUNT, sizeof(judged[0]), by_judge_rank);
}

const struct doctor_rule *const *doctor_rules_listed(void)
{
	sort_rules();
	return listed;
}

const struct doctor_rule *const *doctor_rules_judged(void)
{
	sort_rules();
	return judged;
}

void doctor_judge(const struct doctor_snapshot *snapshot, const struct doctor_config *config,
		  struct doctor_findings *out)
{
	for (const struct doctor_rule *const *rule = doctor_rules_judged(); *rule; rule++)
		if (!doctor_config_disabled(config, (*rule)->name))
			(*rule)->judge(snapshot, config, out);
}
