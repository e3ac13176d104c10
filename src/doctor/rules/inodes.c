/* SPDX-License-Identifier: GPL-2.0-or-later */
/* inodes.c: rule inodes: a filesystem nearly out of inodes. */
#include "doctor/judge.h"
#include "doctor/rules.h"

static void judge(const struct doctor_snapshot *s, const struct doctor_config *config, struct doctor_findings *out)
{
	judge_mount_use(s, config, true, out);
}

const struct doctor_rule rule_inodes = {
	.name = "inodes",
	.list_rank = 120, /* its place in --help-all and RULES */
	.judge_rank = 130, /* its findings' place among those of one severity */
	.help = "the same of its inodes",
	.man = /* iolens-doctor(1), RULES: the paragraph after its name (roff) */
		"The same for inodes: 90\\~% of them used or more\n"
		".RB ( warning ),\n"
		"98\\~% or more\n"
		".RB ( critical ).\n",
	.thresholds = { TH_FULL_WARNING, TH_FULL_CRITICAL, -1 },
	.judge = judge,
	.alerts = {
		{ "warning", TH_FULL_WARNING, INODE_USE_PERCENT " >= %g" FS_WRITABLE, "5m",
		  "{{ $labels.mountpoint }} has used {{ $value | printf \"%.0f\" }} % of its inodes" },
		{ "critical", TH_FULL_CRITICAL, INODE_USE_PERCENT " >= %g" FS_WRITABLE, "5m",
		  "{{ $labels.mountpoint }} has used {{ $value | printf \"%.0f\" }} % of its inodes" },
	},
};
