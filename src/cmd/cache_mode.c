/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cache_mode.c: what cachestat, cachetop, biotop and export share: options, the counting mode
 * (eBPF or /proc), a process's container.
 */
#include "cmd/cache_mode.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "common/util.h"

void cache_parse_interval_count(int argc, char **argv, int first, struct cache_options *o, bool with_count)
{
	uint64_t count;

	if (first < argc && (parse_seconds(argv[first++], 86400, false, &o->interval) != 0 || o->interval < 0.01))
		usage_error("interval: '%s' is not a number of seconds from 0.01 to 86400", argv[first - 1]);
	if (first < argc && with_count) {
		if (parse_u64(argv[first++], &count) != 0 || count == 0)
			usage_error("count: '%s' is not a whole number above 0", argv[first - 1]);
		o->count = count;
	}
	if (first < argc)
		usage_error("too many arguments: '%s'", argv[first]);
}

pid_t top_option_pid(const char *text)
{
	uint64_t value;

	if (parse_u64(text, &value) != 0 || value == 0 || value > 0x7fffffff)
		usage_error("--pid: '%s' is not a process id", text);
	return (pid_t)value;
}

unsigned long long top_option_rows(const char *text)
{
	uint64_t value;

	if (parse_u64(text, &value) != 0 || value == 0)
		usage_error("--rows: '%s' is not a whole number above 0", text);
	return value;
}

void cache_mode_start(const struct cachestat_options *bpf_options, struct cache_mode *mode, const char *source,
		      const char *detail)
{
	int rc = cachestat_start(bpf_options, &mode->why);

	mode->bpf = rc == 0;
	mode->mechanism = cachestat_mechanism();
	if (!mode->bpf && source) {
		warn_msg("no eBPF (%s): estimating from %s", mode->why, source);
		warn_detail("%s", detail);
	} else if (mode->bpf && cachestat_caveat())
		warn_msg("counting with %s: %s", mode->mechanism, cachestat_caveat());
}

void cache_mode_fallback(struct cache_mode *mode, const char *why, const char *source, const char *detail)
{
	mode->bpf = false;
	mode->why = why;
	warn_msg("no eBPF (%s): estimating from %s", mode->why, source);
	warn_detail("%s", detail);
}

void container_columns_show(struct out_column *columns, size_t first, bool shown)
{
	for (size_t i = 0; i < CONTAINER_COLUMNS; i++)
		columns[first + i].is_default = shown;
}

void container_columns_set(struct out_row *row, size_t first, const struct container *c)
{
	if (!c)
		return;
	out_set_text(row, first, c->label);
	if (c->id[0])
		out_set_text(row, first + 1, c->id);
	if (c->name[0])
		out_set_text(row, first + 2, c->name);
	if (c->pod[0])
		out_set_text(row, first + 3, c->pod);
	if (c->namespace_[0])
		out_set_text(row, first + 4, c->namespace_);
	out_set_count(row, first + 5, c->owner);
}
