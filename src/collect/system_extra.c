/* system_extra.c: reads what only iolens stat's dstat plugins need: vmstat's reclaim counters, zoneinfo, the number of processes. */
#include "collect/system_extra.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/procfs.h"
#include "collect/sysroot.h"

/* The next line of text: [*line, *end) without its newline; false at the end. */
static bool next_line(const char **cursor, const char *limit, const char **line, const char **end)
{
	const char *p = *cursor;

	if (p >= limit)
		return false;
	*line = p;
	while (p < limit && *p != '\n')
		p++;
	*end = p;
	*cursor = p < limit ? p + 1 : p;
	return true;
}

static bool starts(const char *line, const char *end, const char *prefix)
{
	size_t n = strlen(prefix);

	return (size_t)(end - line) >= n && !memcmp(line, prefix, n);
}

int vm_adv_parse(const char *text, size_t len, struct vm_adv *out)
{
	const char *cursor = text, *limit = text + len, *line, *end;
	unsigned found = 0;

	memset(out, 0, sizeof(*out));
	while (next_line(&cursor, limit, &line, &end)) {
		const char *space = memchr(line, ' ', (size_t)(end - line));
		uint64_t *sum = NULL;
		char *after;
		unsigned long long value;

		if (!space)
			continue;
		if (starts(line, space, "pgsteal_"))
			sum = &out->pgsteal;
		else if (starts(line, space, "pgscan_kswapd"))
			sum = &out->pgscan_kswapd;
		else if (starts(line, space, "pgscan_direct") && !starts(line, space, "pgscan_direct_throttle"))
			sum = &out->pgscan_direct;
		else if (space - line == 10 && starts(line, space, "pageoutrun"))
			sum = &out->pageoutrun;
		else if (starts(line, space, "allocstall"))
			sum = &out->allocstall;
		if (!sum)
			continue;
		errno = 0;
		value = strtoull(space + 1, &after, 10);
		if (errno || after == space + 1)
			return -EINVAL;
		*sum += value;
		found++;
	}
	return found ? 0 : -EINVAL;
}

int vm_adv_read(struct vm_adv *out)
{
	static struct sysroot_file file = SYSROOT_FILE("/proc/vmstat");
	const char *text;
	size_t len;
	int rc = sysroot_file_read(&file, &text, &len);

	return rc ? rc : vm_adv_parse(text, len, out);
}

/*
 * As dstat reads /proc/zoneinfo: after "Node N, zone NAME", the "pages free" line and the
 * first "high" line (later ones are the per-cpu pagesets' "high:").
 */
int zones_parse(const char *text, size_t len, struct zones *out)
{
	const char *cursor = text, *limit = text + len, *line, *end;
	uint64_t *free_pages = NULL, *high = NULL;
	bool high_seen = true;

	memset(out, 0, sizeof(*out));
	while (next_line(&cursor, limit, &line, &end)) {
		char word[32];
		unsigned long long value;
		const char *p = line;

		while (p < end && *p == ' ')
			p++;
		if (starts(p, end, "Node ")) {
			const char *zone = strstr(p, "zone");
			free_pages = high = NULL;
			high_seen = false;
			if (!zone || zone > end)
				continue;
			zone += 4;
			while (zone < end && *zone == ' ')
				zone++;
			if ((size_t)(end - zone) == 5 && !memcmp(zone, "DMA32", 5)) {
				free_pages = &out->dma32_free, high = &out->dma32_high;
				out->has_dma32++;
			} else if ((size_t)(end - zone) == 6 && !memcmp(zone, "Normal", 6)) {
				free_pages = &out->normal_free, high = &out->normal_high;
				out->has_normal++;
			}
			continue;
		}
		if (!free_pages)
			continue;
		if (starts(p, end, "pages free") && sscanf(p + 10, "%llu", &value) == 1)
			*free_pages += value;
		else if (!high_seen && starts(p, end, "high") && sscanf(p, "%31s %llu", word, &value) == 2 &&
			 !strcmp(word, "high")) {
			*high += value;
			high_seen = true;
		}
	}
	return out->has_dma32 || out->has_normal || len ? 0 : -EINVAL;
}

int zones_read(struct zones *out)
{
	static struct sysroot_file file = SYSROOT_FILE("/proc/zoneinfo");
	const char *text;
	size_t len;
	int rc = sysroot_file_read(&file, &text, &len);

	return rc ? rc : zones_parse(text, len, out);
}

int proc_count_read(uint64_t *count)
{
	struct proc_pids pids;
	int rc = proc_pids_open(&pids, 0);

	*count = 0;
	if (rc)
		return rc;
	while (proc_pids_next(&pids))
		(*count)++;
	proc_pids_close(&pids);
	return 0;
}

static void note_error(int *first, int rc)
{
	if (rc != 0 && rc != -ENOENT && *first == 0)
		*first = rc;
}

int sockets_read_some(struct sockets *out, unsigned which)
{
	static struct sysroot_file tables[] = {
		SYSROOT_FILE("/proc/net/tcp"), SYSROOT_FILE("/proc/net/tcp6"), SYSROOT_FILE("/proc/net/udp"),
		SYSROOT_FILE("/proc/net/udp6"), SYSROOT_FILE("/proc/net/raw"), SYSROOT_FILE("/proc/net/raw6"),
		SYSROOT_FILE("/proc/net/unix"),
	};
	static const unsigned table_kind[] = {
		SOCKETS_TCP, SOCKETS_TCP, SOCKETS_UDP, SOCKETS_UDP, SOCKETS_RAW, SOCKETS_RAW, SOCKETS_UNIX,
	};
	static int (*const parsers[])(const char *, size_t, struct sockets *) = {
		sockets_parse_tcp, sockets_parse_tcp, sockets_parse_udp, sockets_parse_udp,
		sockets_parse_raw, sockets_parse_raw, sockets_parse_unix,
	};
	static struct sysroot_file sockstat = SYSROOT_FILE("/proc/net/sockstat");
	static struct sysroot_file sockstat6 = SYSROOT_FILE("/proc/net/sockstat6");
	const char *text;
	size_t len;
	int first_error = 0, rc;

	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		if (!(which & table_kind[i]))
			continue;
		rc = sysroot_file_read(&tables[i], &text, &len);
		if (rc == 0)
			rc = parsers[i](text, len, out);
		note_error(&first_error, rc);
	}
	if (which & SOCKETS_STAT) {
		struct sockets totals = {0};

		/* The totals are the kernel's own counts: without the file they are unknown, not zero. */
		rc = sysroot_file_read(&sockstat, &text, &len);
		if (rc == 0)
			rc = sockets_parse_sockstat(text, len, &totals);
		if (rc == 0) {
			int rc6 = sysroot_file_read(&sockstat6, &text, &len);

			if (rc6 == 0)
				rc6 = sockets_parse_sockstat(text, len, &totals);
			note_error(&first_error, rc6);
		} else {
			totals.used = totals.tcp_inuse = totals.udp_inuse = PROCFS_UNKNOWN;
			totals.raw_inuse = totals.frag_inuse = PROCFS_UNKNOWN;
			note_error(&first_error, rc);
		}
		out->used = totals.used;
		out->tcp_inuse = totals.tcp_inuse;
		out->udp_inuse = totals.udp_inuse;
		out->raw_inuse = totals.raw_inuse;
		out->frag_inuse = totals.frag_inuse;
	}
	return first_error;
}
