/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * config.c: what is normal here, for iolens doctor: a small line syntax, read from a file only root
 * (or the user) can write, and from flags.
 */
#include "doctor/config.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "doctor/rules.h"

static const struct {
	const char *name;
	double fallback, low, high;
	bool size; /* a size (4MiB), else a number */
} thresholds[TH_COUNT] = {
	[TH_FULL_WARNING] = { "full.warning_percent", 90, 1, 100, false },
	[TH_FULL_CRITICAL] = { "full.critical_percent", 98, 1, 100, false },
	[TH_STUCK_SECONDS] = { "stuck.seconds", 3, 0.1, 86400, false },
	[TH_HANG_SECONDS] = { "vtrace-hang.seconds", 1, 0.01, 86400, false },
	[TH_ODIRECT_READ] = { "odirect.read_bytes_per_s", 1024 * 1024, 0, 1e15, true },
};

void doctor_config_thresholds_text(char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < TH_COUNT && used < len; i++) {
		char value[32];
		int n;

		if (thresholds[i].size)
			human_size((uint64_t)thresholds[i].fallback, value, sizeof(value));
		else
			snprintf(value, sizeof(value), "%g", thresholds[i].fallback);
		n = snprintf(buf + used, len - used, "%s%s (%s)", i ? ", " : "", thresholds[i].name, value);
		if (n < 0)
			break;
		used += (size_t)n;
	}
}

void doctor_config_init(struct doctor_config *c)
{
	memset(c, 0, sizeof(*c));
	for (unsigned i = 0; i < TH_COUNT; i++)
		c->threshold[i] = thresholds[i].fallback;
}

static int rule_index(const char *name, size_t len)
{
	const struct doctor_rule *const *rules = doctor_rules_listed();

	for (int i = 0; rules[i]; i++)
		if (strlen(rules[i]->name) == len && !strncmp(rules[i]->name, name, len))
			return i;
	return -1;
}

/* The next word of [*p, end): its start and length, *p moved past it and the blanks after. */
static size_t word(const char **p, const char *end, const char **start)
{
	const char *s = *p;

	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	*start = s;
	while (s < end && *s != ' ' && *s != '\t')
		s++;
	*p = s;
	return (size_t)(s - *start);
}

static int set_threshold(struct doctor_config *c, const char *name, size_t name_len, const char *value,
			 size_t value_len, const char *source, char *why, size_t why_len)
{
	char text[64], known[256];
	double v;
	char *rest;

	for (unsigned i = 0; i < TH_COUNT; i++) {
		if (strlen(thresholds[i].name) != name_len || strncmp(thresholds[i].name, name, name_len))
			continue;
		if (!value_len || value_len >= sizeof(text))
			return say_why(why, why_len, "%s: %s: a value, please", source, thresholds[i].name);
		memcpy(text, value, value_len);
		text[value_len] = '\0';
		if (thresholds[i].size) {
			uint64_t bytes;

			if (parse_size(text, &bytes) != 0)
				return say_why(why, why_len, "%s: %s: '%s' is not a size such as 4MiB", source,
					    thresholds[i].name, text);
			v = (double)bytes;
		} else {
			errno = 0;
			v = strtod(text, &rest);
			if (errno || rest == text || *rest || !(v >= thresholds[i].low && v <= thresholds[i].high))
				return say_why(why, why_len, "%s: %s: '%s' is not a number from %g to %g", source,
					    thresholds[i].name, text, thresholds[i].low, thresholds[i].high);
		}
		c->threshold[i] = v;
		return 0;
	}
	doctor_config_thresholds_text(known, sizeof(known));
	return say_why(why, why_len, "%s: unknown setting '%.*s' (%s)", source, (int)(name_len > 64 ? 64 : name_len),
		       name, known);
}

int doctor_config_statement(struct doctor_config *c, const char *text, size_t len, const char *source, char *why,
			    size_t why_len)
{
	const char *end = text + len, *p = text, *verb, *arg, *hash = memchr(text, '#', len);
	size_t verb_len, arg_len;

	if (hash)
		end = hash;
	while (end > text && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	for (const char *q = text; q < end; q++)
		if ((unsigned char)*q < 0x20 && *q != '\t')
			return say_why(why, why_len, "%s: a control character", source);
	verb_len = word(&p, end, &verb);
	if (!verb_len)
		return 0; /* blank, or a comment */
	if (verb_len == 7 && !strncmp(verb, "disable", 7)) {
		int rule;

		arg_len = word(&p, end, &arg);
		if ((rule = rule_index(arg, arg_len)) < 0)
			return say_why(why, why_len, "%s: disable: unknown rule '%.*s'", source,
				       (int)(arg_len > 64 ? 64 : arg_len), arg);
		if (word(&p, end, &verb))
			return say_why(why, why_len, "%s: disable takes one rule", source);
		c->disabled[rule] = true;
		return 0;
	}
	if (verb_len == 6 && !strncmp(verb, "accept", 6)) {
		struct doctor_accept a = {0};
		const char *what;
		size_t what_len;

		arg_len = word(&p, end, &arg);
		if (!(arg_len == 1 && *arg == '*') && rule_index(arg, arg_len) < 0)
			return say_why(why, why_len, "%s: accept: unknown rule '%.*s' (or * for every rule)", source,
				    (int)(arg_len > 64 ? 64 : arg_len), arg);
		snprintf(a.rule, sizeof(a.rule), "%.*s", (int)arg_len, arg);
		what_len = word(&p, end, &what);
		if (what_len > 5 && !strncmp(what, "comm=", 5) && what_len - 5 < 16) {
			a.path = false;
		} else if (what_len > 5 && !strncmp(what, "path=", 5) && what_len - 5 < sizeof(a.value)) {
			a.path = true;
		} else {
			return say_why(why, why_len,
				       "%s: accept %.*s: comm=NAME (up to 15 characters) or path=GLOB, please", source,
				       (int)arg_len, arg);
		}
		snprintf(a.value, sizeof(a.value), "%.*s", (int)(what_len - 5), what + 5);
		if (word(&p, end, &verb))
			return say_why(why, why_len, "%s: accept takes a rule and one comm= or path=", source);
		snprintf(a.source, sizeof(a.source), "%s", source);
		c->accepts = xrealloc(c->accepts, (c->naccepts + 1) * sizeof(*c->accepts));
		c->accepts[c->naccepts++] = a;
		return 0;
	}
	/* NAME = VALUE, NAME=VALUE */
	{
		const char *eq = memchr(text, '=', (size_t)(end - text)), *name = verb, *value;
		size_t name_len;

		if (!eq)
			return say_why(why, why_len, "%s: '%.*s': disable RULE, accept RULE comm=NAME|path=GLOB, or "
				    "NAME = VALUE, please", source, (int)(verb_len > 64 ? 64 : verb_len), verb);
		name_len = (size_t)(eq - name);
		while (name_len && (name[name_len - 1] == ' ' || name[name_len - 1] == '\t'))
			name_len--;
		value = eq + 1;
		while (value < end && (*value == ' ' || *value == '\t'))
			value++;
		if (memchr(name, ' ', name_len) || memchr(name, '\t', name_len))
			return say_why(why, why_len, "%s: NAME = VALUE, one name", source);
		return set_threshold(c, name, name_len, value, (size_t)(end - value), source, why, why_len);
	}
}

int doctor_config_parse(struct doctor_config *c, const char *text, size_t len, const char *name, char *why,
			size_t why_len)
{
	const char *p = text, *end = text + len;
	unsigned line = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char source[160];

		snprintf(source, sizeof(source), "%.140s:%u", name, ++line);
		if (doctor_config_statement(c, p, n, source, why, why_len) != 0)
			return -1;
		p += n + (nl != NULL);
	}
	return doctor_config_check(c, name, why, why_len);
}

int doctor_config_check(const struct doctor_config *c, const char *source, char *why, size_t why_len)
{
	if (c->threshold[TH_FULL_CRITICAL] < c->threshold[TH_FULL_WARNING])
		return say_why(why, why_len, "%.140s: full.critical_percent (%g) below full.warning_percent (%g)",
			       source, c->threshold[TH_FULL_CRITICAL], c->threshold[TH_FULL_WARNING]);
	return 0;
}

int doctor_config_load(struct doctor_config *c, const char *path, bool must_exist, char *why, size_t why_len)
{
	enum { MAX_CONFIG = 1 << 20 };
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	char *text;
	ssize_t got;
	size_t len = 0;
	int rc;

	if (fd < 0) {
		if (errno == ENOENT && !must_exist)
			return 1;
		return say_why(why, why_len, "%s: %s", path, strerror(errno));
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return say_why(why, why_len, "%s: not a regular file", path);
	}
	/* It can silence findings: only root and the user running doctor may be able to write it. */
	if ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		close(fd);
		return say_why(why, why_len,
			       "%s: writable by %s (mode %04o, uid %u): not read, it could silence doctor", path,
			       st.st_mode & (S_IWGRP | S_IWOTH) ? "others" : "another user",
			       (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);
	}
	text = xcalloc(1, MAX_CONFIG + 1);
	while (len < MAX_CONFIG && (got = read(fd, text + len, MAX_CONFIG - len)) > 0)
		len += (size_t)got;
	close(fd);
	if (len >= MAX_CONFIG) {
		free(text);
		return say_why(why, why_len, "%s: larger than 1 MiB", path);
	}
	rc = doctor_config_parse(c, text, len, path, why, why_len);
	free(text);
	return rc;
}

bool doctor_config_disabled(const struct doctor_config *c, const char *rule)
{
	int i = rule_index(rule, strlen(rule));

	return i >= 0 && c->disabled[i];
}

const struct doctor_accept *doctor_config_accepted(const struct doctor_config *c, const char *rule, const char *comm,
						   const char *const *paths, size_t npaths)
{
	for (size_t i = 0; i < c->naccepts; i++) {
		const struct doctor_accept *a = &c->accepts[i];

		if (strcmp(a->rule, "*") && strcmp(a->rule, rule))
			continue;
		if (!a->path && comm && !strcmp(comm, a->value))
			return a;
		for (size_t k = 0; a->path && k < npaths; k++)
			if (paths[k] && fnmatch(a->value, paths[k], 0) == 0)
				return a;
	}
	return NULL;
}

void doctor_config_free(struct doctor_config *c)
{
	free(c->accepts);
	c->accepts = NULL;
	c->naccepts = 0;
}
