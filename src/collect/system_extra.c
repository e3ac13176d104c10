/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * system_extra.c: reads what only iolens stat's dstat plugins need: vmstat's reclaim counters,
 * zoneinfo, the number of processes.
 */
#include "collect/system_extra.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/procfs.h"
#include "collect/sysroot.h"
#include "common/util.h"

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

int proc_stat_parse(const char *text, struct proc_entry *out)
{
	const char *open = strchr(text, '('), *close = strrchr(text, ')');
	unsigned long long field[21];
	const char *p;
	size_t n;
	int i;

	if (!open || !close || close < open)
		return -EINVAL;
	n = (size_t)(close - open - 1);
	if (n >= sizeof(out->name))
		n = sizeof(out->name) - 1;
	memcpy(out->name, open + 1, n);
	out->name[n] = '\0';
	/* After the name: the state, then numbers; field 14 and 15 are utime and stime, 22 the start, 24 rss. */
	p = close + 1;
	while (*p == ' ')
		p++;
	if (!*p)
		return -EINVAL;
	p++; /* the state */
	for (i = 0; i < 21; i++) {
		char *end;
		long long value;

		while (*p == ' ')
			p++;
		value = strtoll(p, &end, 10);
		if (end == p)
			return -EINVAL;
		field[i] = (unsigned long long)value; /* fields 4 to 24: ppid ... rss (index 0 is field 4) */
		p = end;
	}
	out->cpu_ticks = field[14 - 4] + field[15 - 4];
	out->child_ticks = field[16 - 4] + field[17 - 4];
	out->start_ticks = field[22 - 4];
	out->rss_pages = (long long)field[24 - 4] > 0 ? field[24 - 4] : 0;
	return 0;
}

static int compare_pid(const void *a, const void *b)
{
	const struct proc_entry *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* One process: 0, or -errno when its stat cannot be read (it ended). */
static int proc_entry_read(int pid, unsigned what, struct proc_entry *e)
{
	char path[64], text[1024];

	memset(e, 0, sizeof(*e));
	e->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (sysroot_read_small(path, text, sizeof(text)) <= 0 || proc_stat_parse(text, e) != 0)
		return -ENOENT;
	e->have = PROCS_STAT;
	if (what & PROCS_IO) {
		snprintf(path, sizeof(path), "/proc/%d/io", pid);
		if (sysroot_read_small(path, text, sizeof(text)) > 0) {
			unsigned long long rchar, wchar, read_bytes, write_bytes;
			const char *r = strstr(text, "rchar:"), *w = strstr(text, "wchar:");
			const char *rb = strstr(text, "\nread_bytes:"), *wb = strstr(text, "\nwrite_bytes:");
			if (r && w && rb && wb && sscanf(r, "rchar: %llu", &rchar) == 1 &&
			    sscanf(w, "wchar: %llu", &wchar) == 1 &&
			    sscanf(rb, "\nread_bytes: %llu", &read_bytes) == 1 &&
			    sscanf(wb, "\nwrite_bytes: %llu", &write_bytes) == 1) {
				e->rchar = rchar, e->wchar = wchar, e->read_bytes = read_bytes,
				e->write_bytes = write_bytes;
				e->have |= PROCS_IO;
			}
		}
	}
	if (what & PROCS_SCHED) {
		unsigned long long run, wait, slices = 0;
		snprintf(path, sizeof(path), "/proc/%d/schedstat", pid);
		if (sysroot_read_small(path, text, sizeof(text)) > 0 &&
		    sscanf(text, "%llu %llu %llu", &run, &wait, &slices) >= 2) {
			e->wait_ns = wait;
			e->run_ns = run;
			e->slices = slices;
			e->have |= PROCS_SCHED;
		}
	}
	if (what & PROCS_OOM) {
		long long score;
		snprintf(path, sizeof(path), "/proc/%d/oom_score", pid);
		if (sysroot_read_small(path, text, sizeof(text)) > 0 && sscanf(text, "%lld", &score) == 1) {
			e->oom_score = score;
			e->have |= PROCS_OOM;
		}
	}
	return 0;
}

int proc_table_read(struct proc_table *out, unsigned what)
{
	struct proc_pids pids;
	unsigned capacity = 0;
	pid_t pid;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = proc_pids_open(&pids, 0);
	if (rc)
		return rc;
	while ((pid = proc_pids_next(&pids))) {
		if (out->count == capacity) {
			capacity = capacity ? capacity * 2 : 256;
			out->proc = xrealloc(out->proc, capacity * sizeof(*out->proc));
		}
		if (proc_entry_read((int)pid, what, &out->proc[out->count]) == 0)
			out->count++;
	}
	proc_pids_close(&pids);
	if (out->count)
		qsort(out->proc, out->count, sizeof(*out->proc), compare_pid);
	return 0;
}

void proc_table_free(struct proc_table *table)
{
	free(table->proc);
	memset(table, 0, sizeof(*table));
}

const struct proc_entry *proc_table_find(const struct proc_table *table, const struct proc_entry *like)
{
	const struct proc_entry *found;

	if (!table->count)
		return NULL;
	found = bsearch(like, table->proc, table->count, sizeof(*table->proc), compare_pid);
	return found && found->start_ticks == like->start_ticks ? found : NULL;
}
