/* SPDX-License-Identifier: GPL-2.0-or-later */
/* full.c: rule full: a filesystem nearly full, as df counts. */
#include "doctor/judge.h"
#include "doctor/rules.h"

static void judge(const struct doctor_snapshot *s, const struct doctor_config *config, struct doctor_findings *out)
{
	judge_mount_use(s, config, false, out);
}

#define SPACE_USE FS_USE_PERCENT(size_bytes, free_bytes, avail_bytes)
#define SPACE_SUMMARY "{{ $labels.mountpoint }} is {{ $value | printf \"%.0f\" }} % used (df's Use%)"

const struct doctor_rule rule_full = {
	.name = "full",
	.list_rank = 110, /* its place in --help-all and RULES */
	.judge_rank = 120, /* its findings' place among those of one severity */
	.help = "a filesystem 90 % used or more (critical from 98 %), as df counts",
	.man = /* iolens-doctor(1), RULES: the paragraph after its name (roff) */
		"A filesystem 90\\~% used or more\n"
		".RB ( warning ),\n"
		"98\\~% or more\n"
		".RB ( critical ),\n"
		"counted as\n"
		".BR df (1)\n"
		"counts Use%: used / (used + available to users), from\n"
		".BR statvfs (3).\n"
		"Read-only mounts, pseudo filesystems (proc, sysfs, cgroup, devtmpfs and\n"
		"others), squashfs, overlay and ramfs are left out; a filesystem mounted\n"
		"twice is looked at once.\n",
	.thresholds = { TH_FULL_WARNING, TH_FULL_CRITICAL, -1 },
	.judge = judge,
	.alerts = {
		{ "warning", TH_FULL_WARNING, SPACE_USE " >= %g" FS_WRITABLE, "5m", SPACE_SUMMARY },
		{ "critical", TH_FULL_CRITICAL, SPACE_USE " >= %g" FS_WRITABLE, "5m", SPACE_SUMMARY },
	},
};
