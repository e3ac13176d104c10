/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cache_miss.c: rule cache-miss: processes and files whose reads mostly miss the page cache, a
 * warning when evicted pages are read back while memory is short.
 */
#include <stdlib.h>

#include "collect/memcg.h"
#include "common/util.h"
#include "doctor/judge.h"
#include "doctor/rules.h"

static const char *pids_text(const struct miss_row *r, char *buf, size_t len)
{
	size_t used = 0, shown = r->processes < 5 ? r->processes : 5;

	buf[0] = '\0';
	for (size_t i = 0; i < shown && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%d", i ? ", " : "", (int)r->pids[i]);
	if (r->processes > shown && used < len)
		snprintf(buf + used, len - used, ", ...");
	return buf;
}

/*
 * Findings for the rows (readers, or files when files is true) whose reads mostly missed,
 * at a rate that matters: at most 5. A warning when pages evicted are read back (refaults)
 * and there is a sign that memory is short for the reader: its memory cgroup at its limit,
 * memory stalls (PSI), little memory available. Else information: first reads of data not
 * cached yet miss too, and pages something else evicted (DAMON, proactive reclaim) are no
 * shortage of the cache. A file is judged as its readers are (which process read which file is
 * not counted): at a limit when a reader reported is in a memory cgroup at its limit.
 */
static void report(const struct doctor_snapshot *s, const struct miss_row *rows, size_t nrows, bool files,
		   const struct memory_signs *memory, bool system_refaulting, bool readers_at_limit,
		   struct doctor_findings *out)
{
	uint64_t page = s->page_size;
	size_t reported = 0;

	for (size_t i = 0; i < nrows && reported < 5; i++) {
		const struct miss_row *r = &rows[i];
		double rate = (double)(r->misses * page) / s->seconds, hit;
		char rate_text[16], pids[96], limit_text[16], use_text[16],
		    cgroup_text[700] = "", refaults_text[48] = "", dev[32], in[600] = "", signs_text[96] = "";
		bool refaulting = r->refaults == UINT64_MAX ? system_refaulting : r->refaults > 0;
		bool at_limit = files && readers_at_limit;
		const struct snap_memcg *cgroup = NULL;
		struct doctor_finding *f;

		if (!snap_miss_matters(s, r))
			continue;
		if (!files && (cgroup = snap_reader_memcg(s, r))) {
			at_limit = cgroup->at_limit;
			if (cgroup->max != MEMCG_UNLIMITED)
				doctor_text(
				    cgroup_text, sizeof(cgroup_text),
				    "; memory cgroup %s (v%d): %s used of its %s limit%s, %llu pages refaulted since "
				    "it was made (memory.stat)",
				    cgroup->path, cgroup->version,
				    human_size(cgroup->current, use_text, sizeof(use_text)),
				    human_size(cgroup->max, limit_text, sizeof(limit_text)),
				    at_limit ? ", at its limit" : "", (unsigned long long)cgroup->refaults);
		}
		hit = 100.0 * (double)(r->accesses - (r->misses < r->accesses ? r->misses : r->accesses)) /
		    (double)r->accesses;
		reported++;
		if (refaulting && at_limit)
			f = doctor_finding_add(
			    out, DOCTOR_WARNING, "cache-miss",
			    "each read that misses waits for the disk, and pages evicted are read back: the "
			    "memory cgroup's limit keeps the cache smaller than what is read");
		else if (refaulting && memory->short_now)
			f = doctor_finding_add(
			    out, DOCTOR_WARNING, "cache-miss",
			    "each read that misses waits for the disk, and pages evicted are read back while "
			    "memory is short: the cache is too small for what is read");
		else
			f = doctor_finding_add(
			    out, DOCTOR_INFO, "cache-miss",
			    refaulting ? "each read that misses waits for the disk; pages evicted are read "
					 "back, with no sign that memory is short (memory stalls under 10 % of "
					 "the window, a tenth of memory available or more, no reader's memory "
					 "cgroup at its limit): something else evicts them (DAMON, proactive "
					 "reclaim, drop_caches)"
				       : "each read that misses waits for the disk; no evicted page was read "
					 "back, so these may be first reads of data not cached yet");
		if (!files) /* the container of the one that missed most */
			snap_in_container(s, r->pid, r->comm, in, sizeof(in));
		if (files)
			doctor_text(f->what, sizeof(f->what), "file %s: its reads mostly miss the page cache%s",
				    r->name, at_limit ? " (a reader's memory cgroup is at its limit)" : "");
		else if (r->processes > 1)
			doctor_text(f->what, sizeof(f->what),
				    "%u processes named %s (%s)%s: their reads mostly miss the page cache%s",
				    r->processes, r->comm, pids_text(r, pids, sizeof(pids)), in,
				    at_limit ? " in a memory cgroup at its limit" : "");
		else
			doctor_text(f->what, sizeof(f->what),
				    "process %d (%s)%s: its reads mostly miss the page cache%s", (int)r->pid, r->comm,
				    in, at_limit ? " in a memory cgroup at its limit" : "");
		if (r->refaults != UINT64_MAX)
			doctor_text(refaults_text, sizeof(refaults_text), ", %llu of them refaults",
				    (unsigned long long)r->refaults);
		if (refaulting) { /* what the judgement of memory rests on, said beside it */
			char available[16], psi[32] = "unknown";

			if (memory->psi_some >= 0)
				doctor_text(psi, sizeof(psi), "%.1f %%", memory->psi_some);
			doctor_text(signs_text, sizeof(signs_text),
				    "; memory stalls (PSI some) %s of the window, %s available", psi,
				    s->mem_known ? human_size(s->mem_available, available, sizeof(available)) : "?");
		}
		doctor_text(f->numbers, sizeof(f->numbers),
			    "%.0f %% of %llu pages read or mapped were cached; %llu missed%s, %s/s (%s)%s%s", hit,
			    (unsigned long long)r->accesses, (unsigned long long)r->misses, refaults_text,
			    human_size((uint64_t)rate, rate_text, sizeof(rate_text)),
			    s->cache_ebpf ? "eBPF, as cachetop counts" : "estimated from /proc/PID/io: no eBPF",
			    cgroup_text, signs_text);
		if (files) {
			char word[600];

			/* pcstat of a path only: a file known by its device and inode has none to give */
			if (r->name[0] == '/')
				doctor_text(f->more, sizeof(f->more),
					    "iolens cachetop --files " DOCTOR_MORE_SAMPLES "; iolens pcstat %s",
					    doctor_shell_word(r->name, word, sizeof(word)));
			else
				doctor_text(f->more, sizeof(f->more), "iolens cachetop --files " DOCTOR_MORE_SAMPLES);
			field_text(&f->data, "file", r->name);
			doctor_text(dev, sizeof(dev), "%u:%u", r->major, r->minor);
			field_text(&f->data, "dev", dev);
			field_count(&f->data, "ino", r->ino);
			field_bool(&f->data, "readers_cgroup_at_limit", at_limit);
		} else {
			struct doctor_fields *list;

			/* by misses, not by its pid: it (a shell loop's process) may be gone when this runs */
			doctor_text(f->more, sizeof(f->more),
				    "iolens cachetop -s misses " DOCTOR_MORE_SAMPLES
				    "; iolens cachetop --files " DOCTOR_MORE_SAMPLES "%s",
				    at_limit ? "; iolens cachetop --cgroup " DOCTOR_MORE_SAMPLES : "");
			field_int(&f->data, "pid", r->pid);
			field_text(&f->data, "comm", r->comm);
			field_container(&f->data, s, r->pid, r->comm);
			field_int(&f->data, "processes", (int)r->processes);
			list = field_list(&f->data, "pids");
			for (unsigned k = 0; k < r->processes && k < 5; k++)
				field_int(list, NULL, r->pids[k]);
			if (cgroup_text[0]) {
				field_text(&f->data, "cgroup", cgroup->path);
				field_int(&f->data, "cgroup_version", cgroup->version);
				field_count(&f->data, "cgroup_memory_max", cgroup->max);
				field_count(&f->data, "cgroup_memory_current", cgroup->current);
				field_count(&f->data, "cgroup_refaults", cgroup->refaults);
				field_bool(&f->data, "cgroup_at_limit", at_limit);
			}
		}
		field_count(&f->data, "pages", r->accesses);
		field_count(&f->data, "misses", r->misses);
		field_count_if(&f->data, "refaults", r->refaults, r->refaults != UINT64_MAX);
		field_real(&f->data, "hit_percent", hit);
		field_real(&f->data, "miss_bytes_per_s", rate);
		field_text(&f->data, "counted", s->cache_ebpf ? "ebpf" : "proc");
		if (s->cache_ebpf && s->cache_mechanism[0])
			field_text(&f->data, "mechanism", s->cache_mechanism);
	}
}

static int compare_misses(const void *a_, const void *b_)
{
	const struct miss_row *a = a_, *b = b_;

	return (b->misses > a->misses) - (b->misses < a->misses);
}

static void judge(const struct doctor_snapshot *s, const struct doctor_config *config, struct doctor_findings *out)
{
	struct refault_window refaults = snap_refault_window(s);
	struct memory_signs memory = snap_memory_signs(s);
	struct miss_row *rows;
	size_t nrows;
	bool at_limit;

	(void)config;
	if (s->seconds <= 0)
		return;
	nrows = snap_miss_readers(s, &rows);
	report(s, rows, nrows, false, &memory, refaults.high, false, out);
	free(rows);
	at_limit = snap_readers_at_limit(s);

	/* The same by file, named from what processes have open or mapped. */
	if (s->cache_files_known) {
		rows = xcalloc(s->ncache_files ? s->ncache_files : 1, sizeof(*rows));
		for (size_t i = 0; i < s->ncache_files; i++) {
			const struct snap_cache_file *file = &s->cache_files[i];

			rows[i] = (struct miss_row){ .major = file->major,
						     .minor = file->minor,
						     .ino = file->ino,
						     .name = file->name,
						     .accesses = file->accesses,
						     .misses = file->misses,
						     .refaults = file->refaults };
		}
		if (s->ncache_files > 1)
			qsort(rows, s->ncache_files, sizeof(*rows), compare_misses);
		report(s, rows, s->ncache_files, true, &memory, at_limit || refaults.high, at_limit, out);
		free(rows);
	}
}

const struct doctor_rule rule_cache_miss = {
	.name = "cache-miss",
	.list_rank = 100, /* its place in --help-all and RULES */
	.judge_rank = 20, /* its findings' place among those of one severity */
	.help = "processes and files whose reads mostly miss the page cache (eBPF,\n"
		"as cachetop); a warning when evicted pages are read back, else info",
	.man = /* iolens-doctor(1), RULES: the paragraph after its name (roff) */
		"Processes, and files, whose reads and mapped pages mostly missed the page\n"
		"cache: half or more of their pages, and 1\\~MiB/s of misses or more (counted\n"
		"with eBPF as\n"
		".B iolens cachetop\n"
		"and\n"
		".B iolens cachetop \\-\\-files\n"
		"count; without eBPF, processes only, estimated from\n"
		".I /proc/PID/io\n"
		"as cachetop does, what was fetched from storage against what was read).\n"
		"A file is named as\n"
		".B cachetop \\-\\-files\n"
		"names them (see\n"
		".BR \\%iolens\\-cachetop (1),\n"
		".BR \"FILE NAMES\" ),\n"
		"waiting a second at most; one not found by then is named by its device and\n"
		"inode; a block device read through the cache (its pages are its inode's\n"
		"on the kernel's bdev filesystem, numbered by the device) by its node,\n"
		".IR /dev/loop7 .\n"
		"At most five of each.\n"
		"A process is named by its pid.\n"
		"Processes of one command that mostly missed are added together (a shell\n"
		"loop running one short process after another is one reader) and named by\n"
		"the pids that missed most; a process that did not mostly miss is in no\n"
		"finding (an idle process is never named for another's misses).\n"
		"O_DIRECT users are left to the odirect rule.\n"
		"The process's memory cgroup (cgroup v2, or v1's memory controller: the one\n"
		"eBPF saw its reads charged to, else that of its process found still there)\n"
		"is named when it has a limit: its path, the limit\n"
		".RB ( memory.max ,\n"
		"or\n"
		".BR memory.limit_in_bytes ),\n"
		"what it uses and its refaults\n"
		".RB ( memory.stat ),\n"
		"and whether it is at its limit (90\\~% used or more).\n"
		".B warning\n"
		"when the process's misses were refaults (pages reclaim had evicted, counted\n"
		"with eBPF; without eBPF, when the refaults rule found them system-wide) and\n"
		"there is a sign that memory is short for it: its memory cgroup at its\n"
		"limit, memory stalls, little memory available (as for refaults; a file's,\n"
		"whose readers are not counted apart, when a process reported is in a\n"
		"memory cgroup at its limit: one judgement for the file and its reader);\n"
		".B info\n"
		"otherwise: a first read of data not cached yet misses too, and pages\n"
		"something else evicts are no shortage of the cache.\n",
	.thresholds = { -1 },
	.judge = judge,
};
