/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * config.h: what is normal here, for iolens doctor: rules turned off, thresholds, processes and
 * paths accepted (a file and flags of one syntax).
 */
#ifndef IOLENS_DOCTOR_CONFIG_H
#define IOLENS_DOCTOR_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "doctor_rules.h" /* made from the files of src/doctor/rules/ */

/* How many rules there are: one for each file of src/doctor/rules/. */
#define DOCTOR_RULE_ONE(n) +1
#define DOCTOR_RULE_COUNT (0 doctor_rules(DOCTOR_RULE_ONE))

/* Where doctor looks when no --config is given; a missing file is no configuration. */
#define DOCTOR_CONFIG_PATH "/etc/iolens/doctor.conf"

/* The thresholds a configuration may set, with their defaults. */
enum doctor_threshold {
	TH_FULL_WARNING,     /* full, inodes: percent used for a warning (90) */
	TH_FULL_CRITICAL,    /* ... for critical (98) */
	TH_STUCK_SECONDS,    /* stuck: seconds in D without a context switch for a warning (3) */
	TH_HANG_SECONDS,     /* vtrace-hang: seconds a request is in flight (1) */
	TH_ODIRECT_READ,     /* odirect: bytes per second read from storage for a warning (1 MiB) */
	TH_COUNT
};

struct doctor_accept {
	char rule[32];  /* a rule's name, or "*" */
	bool path;      /* value is a path glob (fnmatch); else a command name (comm, exact) */
	char value[256];
	char source[160]; /* where it was said: "FILE:LINE" or "--accept" */
};

struct doctor_config {
	bool disabled[DOCTOR_RULE_COUNT];  /* by index in doctor_rules_listed() */
	double threshold[TH_COUNT];
	struct doctor_accept *accepts;
	size_t naccepts;
};

/* The defaults: every rule on, the thresholds above, nothing accepted. */
void doctor_config_init(struct doctor_config *c);
/*
 * One statement, as a line of the file or a flag says it:
 *   disable RULE
 *   accept RULE|* comm=NAME | path=GLOB
 *   NAME = VALUE        (full.warning_percent, full.critical_percent, stuck.seconds,
 *                        vtrace-hang.seconds, odirect.read_bytes_per_s: a size such as 4MiB)
 * '#' starts a comment; blank lines say nothing. 0, or -1 with why (source names where it came from).
 */
int doctor_config_statement(struct doctor_config *c, const char *text, size_t len, const char *source, char *why,
			    size_t why_len);
/* Every line of text, as doctor_config_statement: 0, or -1 with why naming NAME:LINE. */
int doctor_config_parse(struct doctor_config *c, const char *text, size_t len, const char *name, char *why,
			size_t why_len);
/* The thresholds agree with each other (as the file and the flags left them): 0, or -1 with why naming source. */
int doctor_config_check(const struct doctor_config *c, const char *source, char *why, size_t why_len);
/*
 * The file at path: 0; 1 when it does not exist and need not; -1 with why when it cannot be
 * read, is not a regular file, or could be written by someone other than root and the user
 * running doctor (then it could silence doctor), or says something wrong.
 */
int doctor_config_load(struct doctor_config *c, const char *path, bool must_exist, char *why, size_t why_len);
/* The thresholds with their defaults, from the table that parses them: "full.warning_percent (90), ...". */
void doctor_config_thresholds_text(char *buf, size_t len);
/* Whether the rule is turned off. */
bool doctor_config_disabled(const struct doctor_config *c, const char *rule);
/* The first accept of rule that the process comm or one of the paths matches, or NULL. */
const struct doctor_accept *doctor_config_accepted(const struct doctor_config *c, const char *rule, const char *comm,
						   const char *const *paths, size_t npaths);
void doctor_config_free(struct doctor_config *c);

#endif
