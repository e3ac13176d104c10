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
/*
 * A rule over iolens export's metrics, for a fleet's Prometheus (doctor --prometheus-rules): its
 * PromQL condition, "%g" in it the threshold's value (doctor.conf's, or the default).
 */
/* Over export's metrics: df's Use% of a filesystem (its size, free and available counts); not read-only ones. */
#define FS_USE_PERCENT(size, free, avail)                                                                        \
	"100 * (iolens_filesystem_" #size "{fstype!~\"squashfs|overlay|ramfs\"} - iolens_filesystem_" #free      \
	") / (iolens_filesystem_" #size " - iolens_filesystem_" #free " + iolens_filesystem_" #avail ")"
#define INODE_USE_PERCENT                                                                                  \
	"100 * (iolens_filesystem_files{fstype!~\"squashfs|overlay|ramfs\"} - iolens_filesystem_files_free) / "      \
	"iolens_filesystem_files"
#define FS_WRITABLE " unless on(device, mountpoint) iolens_filesystem_readonly == 1"
/* A disk's %util over the last minute; swapping in bytes a second (pages of 4 KiB). */
#define DISK_UTIL "100 * rate(iolens_disk_io_time_seconds_total[1m])"
#define SWAP_BYTES "4096 * (rate(iolens_vmstat_pswpin_total[1m]) + rate(iolens_vmstat_pswpout_total[1m]))"

struct doctor_alert {
	const char *severity; /* "warning" or "critical" */
	int threshold;        /* enum doctor_threshold of its "%g", or -1 */
	const char *expr;
	const char *for_;     /* how long it holds before it fires ("1m"), or NULL */
	const char *summary;  /* with {{ $labels.x }} and {{ $value }} */
};

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
	/* The same over scraped metrics, where they can say it (ended by a NULL severity). */
	const struct doctor_alert alerts[3];
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
