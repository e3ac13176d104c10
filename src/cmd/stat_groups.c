/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stat_groups.c: the table of iolens stat's groups (one a file of src/cmd/stat/) and what they
 * share: setting a group up, its sources and views through its descriptor, dstat's top plugins'
 * ranking, this process's counters, freespace's mounts.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "cmd/stat_group.h"
#include "collect/mounts.h"
#include "common/util.h"
#include "model/disk.h"

/* The groups: one a file of src/cmd/stat/, listed by the Makefile (stat_groups.h). */
#define STAT_GROUP_EXTERN(name) extern const struct stat_group group_##name;
stat_groups(STAT_GROUP_EXTERN)
#undef STAT_GROUP_EXTERN
#define STAT_GROUP_ENTRY(name) [G_##name] = &group_##name,
static const struct stat_group *const kinds[G_KINDS] = { stat_groups(STAT_GROUP_ENTRY) };
#undef STAT_GROUP_ENTRY

const struct stat_group *group_kind_of(enum group_kind kind)
{
	return kinds[kind];
}

enum group_kind group_kind_find(const struct stat_group *group)
{
	for (unsigned k = 0; k < G_KINDS; k++)
		if (kinds[k] == group)
			return (enum group_kind)k;
	return G_KINDS;
}

static int by_rank(const void *a, const void *b)
{
	unsigned x = (*(const struct stat_group *const *)a)->rank, y = (*(const struct stat_group *const *)b)->rank;

	return (x > y) - (x < y);
}

const struct stat_group *const *groups_by_rank(void)
{
	static const struct stat_group *ranked[G_KINDS];

	if (!ranked[0]) {
		memcpy(ranked, kinds, sizeof(kinds));
		qsort(ranked, G_KINDS, sizeof(ranked[0]), by_rank);
	}
	return ranked;
}

bool group_is_top(enum group_kind kind)
{
	return kinds[kind]->top;
}

static bool show_bits, show_human;

void groups_show_units(bool bits, bool human)
{
	show_bits = bits;
	show_human = human;
}

bool groups_human(void)
{
	return show_human;
}

/* DSTAT_TIMEFMT: the time column's strftime format, as dstat's; the column as wide as the time it makes. */
const char *stat_time_format(void)
{
	const char *format = getenv("DSTAT_TIMEFMT");

	return format && *format ? format : "%d-%m %H:%M:%S";
}

unsigned group_needs(enum group_kind kind)
{
	return (kinds[kind]->needs_now ? kinds[kind]->needs_now() : kinds[kind]->needs) | SYS_UPTIME;
}

void stat_cpu_title(struct group *g)
{
	if (!strcmp(g->item, "total"))
		snprintf(g->shown.title, sizeof(g->shown.title), "total cpu usage");
	else
		stat_fill(g->shown.title, sizeof(g->shown.title), "cpu%s usage", g->item);
}

/* A disk's reads and writes a second from diskstats: requests, or bytes. */
static void disk_rates(struct group *g, const struct system_sample *then, const struct system_sample *now,
		       double seconds, bool bytes)
{
	struct disk_stats a, b;

	if (!sample_disk_counters(then, now, g->item, &a, &b)) {
		all_unknown(g);
		return;
	}
	if (bytes) {
		set_same(g, 0, rate(b.rd_sectors * 512, a.rd_sectors * 512, seconds));
		set_same(g, 1, rate(b.wr_sectors * 512, a.wr_sectors * 512, seconds));
	} else {
		set_same(g, 0, rate(b.rd_ios, a.rd_ios, seconds));
		set_same(g, 1, rate(b.wr_ios, a.wr_ios, seconds));
	}
}

void stat_compute_disk_requests(struct group *g, const struct system_sample *then, const struct system_sample *now,
				double seconds, bool since_boot)
{
	(void)since_boot;
	disk_rates(g, then, now, seconds, false);
}

void stat_compute_disk_bytes(struct group *g, const struct system_sample *then, const struct system_sample *now,
			     double seconds, bool since_boot)
{
	(void)since_boot;
	disk_rates(g, then, now, seconds, true);
}

void stat_fill(char *out, size_t size, const char *pattern, const char *item)
{
	size_t used = 0;

	for (const char *p = pattern; *p && used + 1 < size; p++) {
		if (p[0] == '%' && p[1] == 's') {
			used += (size_t)snprintf(out + used, size - used, "%s", item);
			if (used >= size)
				used = size - 1;
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			out[used++] = '%';
			p++;
		} else {
			out[used++] = *p;
		}
	}
	out[used] = '\0';
}

void group_init(struct group *g, enum group_kind kind, const char *item)
{
	memset(g, 0, sizeof(*g));
	g->kind = kind;
	snprintf(g->item, sizeof(g->item), "%s", item ? item : "");
	stat_fill(g->shown.title, sizeof(g->shown.title), kinds[kind]->title, g->item);
	stat_fill(g->shown.key, sizeof(g->shown.key), kinds[kind]->key, g->item);
	for (char *p = g->shown.key; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
			*p = '_';
	g->shown.columns = kinds[kind]->columns;
	g->shown.ncolumns = kinds[kind]->ncolumns;
	g->shown.subtitle = kinds[kind]->subtitle;
	g->shown.glued = kinds[kind]->glued;
	g->shown.after_column = kinds[kind]->percent;
	g->shown.after = kinds[kind]->percent ? "%" : NULL;
	if (show_bits && kinds[kind]->bits_columns)
		g->shown.columns = kinds[kind]->bits_columns;
	if (kinds[kind]->init)
		kinds[kind]->init(g);
}

void stat_dstat_zero_first(const struct group *g, struct mon_group *out, bool since_boot)
{
	(void)g;
	if (since_boot)
		for (unsigned c = 0; c < out->ncolumns; c++)
			out->values[c] = out->raw[c] = 0;
}

void group_dstat_view(const struct group *g, const struct group *before, struct mon_group *out, bool since_boot)
{
	/* One plugin's items (-C 0,1,total; -D total,vda; -N; -S; its disk and net plugins) are one dstat group. */
	out->joined = before && before->kind == g->kind && !kinds[g->kind]->alone && !group_is_top(g->kind);
	if (kinds[g->kind]->dstat_view)
		kinds[g->kind]->dstat_view(g, out, since_boot);
}

void group_table_view(const struct group *g, struct mon_group *out)
{
	if (kinds[g->kind]->table_view)
		kinds[g->kind]->table_view(g, out);
}

unsigned groups_freespace_mounts(char (*mounts)[256], unsigned max)
{
	/* dstat_freespace.py's filters: by type, then by source. */
	static const char *const types[] = { "binfmt_misc", "devpts", "iso9660",   "none",   "proc",
					     "sysfs",       "usbfs",  "cgroup",    "tmpfs",  "devtmpfs",
					     "debugfs",     "mqueue", "systemd-1", "rootfs", "autofs" };
	static const char *const sources[] = { "devpts", "none", "proc", "sunrpc", "usbfs", "securityfs", "hugetlbfs",
					       "configfs", "selinuxfs", "pstore", "nfsd" };
	struct mounts table;
	unsigned n = 0;

	if (mounts_read(&table) != 0)
		return 0;
	for (size_t m = 0; m < table.count && n < max; m++) {
		const struct mount *mount = &table.list[m];
		struct statvfs vfs;
		bool skip = false;

		for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
			skip |= !strcmp(mount->type, types[i]);
		for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++)
			skip |= !strcmp(mount->source, sources[i]);
		/* (A path longer than a group's item, as a container's overlay, is left out rather than cut.) */
		if (skip || strlen(mount->dir) >= sizeof(((struct group *)0)->item) || statvfs(mount->dir, &vfs) != 0 ||
		    !vfs.f_bsize)
			continue;
		snprintf(mounts[n++], 256, "%s", mount->dir);
	}
	mounts_free(&table);
	return n;
}

static const struct self_counters *self_at(const struct system_sample *s)
{
	static struct self_counters ring[4];
	static unsigned next;
	static const struct self_counters zero;
	struct self_counters *c;
	struct rusage ru;
	char text[256];
	unsigned long long run = 0, wait = 0;
	FILE *f;

	if (!s || !s->mono_ns)
		return &zero;
	for (unsigned i = 0; i < 4; i++)
		if (ring[i].mono_ns == s->mono_ns)
			return &ring[i];
	c = &ring[next++ % 4];
	memset(c, 0, sizeof(*c));
	c->mono_ns = s->mono_ns;
	f = fopen("/proc/self/schedstat", "re");
	if (f && fgets(text, sizeof(text), f) && sscanf(text, "%llu %llu", &run, &wait) == 2) {
		c->run_ns = (double)run;
		c->wait_ns = (double)wait;
	}
	if (f)
		fclose(f);
	if (getrusage(RUSAGE_SELF, &ru) == 0) {
		c->user_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
		c->system_s = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
		c->voluntary = (double)ru.ru_nvcsw;
		c->involuntary = (double)ru.ru_nivcsw;
	}
	return c;
}

void stat_self_between(const struct system_sample *then, const struct system_sample *now, bool since_boot,
		       struct self_counters *before, struct self_counters *after)
{
	*after = *self_at(now);
	*before = since_boot ? *self_at(NULL) : *self_at(then);
}

/*
 * The name dstat shows of a process: the second field of /proc/PID/stat split at white space,
 * less its first and last characters (a comm with a space loses what follows the space, and the
 * character before it), then what follows its last '/' (its getnamebypid falls back to this:
 * "kworker/u4:2" is "u4:2").
 */
static void dstat_name(const char *comm, char *out, size_t size)
{
	const char *space = strpbrk(comm, " \t\n\v\f\r"), *slash;
	size_t n = space ? (size_t)(space - comm) : strlen(comm);

	if (space && n)
		n--; /* "(tmux: server)" splits to "(tmux:": [1:-1] is "tmux" */
	for (slash = comm + n; slash > comm && slash[-1] != '/'; slash--)
		;
	n -= (size_t)(slash - comm);
	snprintf(out, size, "%.*s", (int)n, slash);
}

/*
 * A top plugin's process (or interrupt): its name as it is, for JSON and CSV; the table's as dstat
 * shows it (the monitor escapes it).
 */
void stat_top_name(struct group *g, int pid, const char *name, bool pid_in_name)
{
	g->pid = pid;
	snprintf(g->name, sizeof(g->name), "%s", name);
	if (!pid)
		snprintf(g->shown.text, sizeof(g->shown.text), "%s", name);
	else
		dstat_name(name, g->shown.text, sizeof(g->shown.text));
	if (pid && pid_in_name) {
		/*
		 * dstat's '%-*s%-5s': the name cut to 26 less the pid's digits (escaped as the monitor
		 * shows it), then the pid in at least 5.
		 */
		char *shown = escape_text(g->shown.text, ESCAPE_TERMINAL), digits[16];
		int room = 26 - (snprintf(digits, sizeof(digits), "%d", pid) > 5 ? (int)strlen(digits) : 5);
		size_t columns, end = text_fit(shown, (size_t)room, &columns);

		shown[end] = '\0';
		snprintf(g->shown.text, sizeof(g->shown.text), "%s%*s%-5s", shown, room - (int)columns, "", digits);
		free(shown);
	}
	g->shown.csv_text = g->name;
	g->shown.blank = false;
}

/* The counters of a process before: the same process in the earlier sample, or zero (it started since). */
static const struct proc_entry *proc_before(const struct system_sample *then, const struct proc_entry *p, unsigned part)
{
	static const struct proc_entry zero;
	const struct proc_entry *found = proc_table_find(&then->procs, p);

	return found && (found->have & part) ? found : &zero;
}

static long clock_ticks(void)
{
	static long ticks;

	if (!ticks)
		ticks = sysconf(_SC_CLK_TCK) > 0 ? sysconf(_SC_CLK_TCK) : 100;
	return ticks;
}

double stat_top_cpu_share(const struct top_process *t, uint64_t ticks_now, uint64_t ticks_then)
{
	return t->ncpu ? 100.0 * rate(ticks_now, ticks_then, t->seconds) / (double)clock_ticks() / t->ncpu : 0;
}

void stat_compute_top(struct group *g, const struct system_sample *then, const struct system_sample *now,
		      double seconds, const struct top_measure *m)
{
	unsigned needs =
	    group_needs(g->kind) & (SYS_PROC_STAT | SYS_PROC_IO | SYS_PROC_SCHED | SYS_PROC_OOM | SYS_PROCSTAT);
	struct top_process t = { .seconds = seconds };
	double best = 0, figures[TOP_FIGURES] = { 0 };
	const struct proc_entry *chosen = NULL;

	/* No process at all (a recorded tree without /proc/PID): unknown, not 0. */
	if ((now->have & needs) != needs || !now->procs.count) {
		stat_top_name(g, 0, "", false);
		all_unknown(g);
		return;
	}
	for (unsigned c = 0; m->per_cpu && c < now->procstat.ncpu; c++)
		t.ncpu += now->procstat.cpu_present[c];
	for (unsigned i = 0; i < now->procs.count; i++) {
		double value, its[TOP_FIGURES] = { 0 };

		t.now = &now->procs.proc[i];
		if ((t.now->have & m->part) != m->part)
			continue;
		t.then = proc_before(then, t.now, m->part);
		t.cpu = m->per_cpu ? stat_top_cpu_share(&t, t.now->cpu_ticks, t.then->cpu_ticks) : 0;
		value = m->measure(&t, its);
		if (value > best) {
			best = value;
			chosen = t.now;
			memcpy(figures, its, sizeof(figures));
		}
	}
	/* Nothing did anything: no name, zeros in JSON; the table blank, as dstat. */
	stat_top_name(g, chosen ? chosen->pid : 0, chosen ? chosen->name : "", m->pid_in_name);
	g->shown.blank = !chosen;
	set_same(g, 0, NAN);
	for (unsigned c = 1; c < g->shown.ncolumns && c <= TOP_FIGURES; c++)
		set_same(g, c, figures[c - 1]);
}

void group_compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		   double seconds, bool since_boot)
{
	if (kinds[g->kind]->compute)
		kinds[g->kind]->compute(g, then, now, seconds, since_boot);
}
