/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * refaults.c: rule refaults: evicted pages read back soon after, system-wide: a working set larger
 * than the cache, when memory is short.
 */
#include "common/util.h"
#include "doctor/judge.h"
#include "doctor/rules.h"

/*
 * A warning only with a sign that memory is short (a reader's memory cgroup at its limit,
 * memory stalls, little memory available): refaults alone, on a machine with memory free,
 * are pages something else evicted, said as information.
 */
static void judge(const struct doctor_snapshot *s, const struct doctor_config *config, struct doctor_findings *out)
{
	struct refault_window r = snap_refault_window(s);
	struct memory_signs memory = snap_memory_signs(s);
	char rate_text[16], cache_text[16], total_text[16], available_text[16], psi_text[32];
	bool cgroup_at_limit, matters;
	struct doctor_finding *f;

	(void)config;
	if (s->seconds <= 0 || !r.high)
		return;
	cgroup_at_limit = snap_readers_at_limit(s);
	matters = cgroup_at_limit || memory.short_now;
	f = doctor_finding_add(
	    out, matters ? DOCTOR_WARNING : DOCTOR_INFO, "refaults",
	    matters ? "pages the cache evicted are read again soon after: the data in use is larger "
		      "than the cache it gets (memory, or a cgroup's limit), so reads that could hit go "
		      "to the disk"
		    : "pages the cache evicted are read again soon after, with no sign that memory is short "
		      "(memory stalls under 10 % of the window, a tenth of memory available or more, no "
		      "reader's memory cgroup at its limit): something evicts idle pages "
		      "(DAMON, proactive reclaim, drop_caches) that are then read back");
	doctor_text(f->what, sizeof(f->what),
		    matters ? "the working set is larger than the page cache: evicted pages are read back"
			    : "evicted pages are read back, with memory to spare");
	if (memory.psi_some >= 0)
		doctor_text(psi_text, sizeof(psi_text), "%.1f %%", memory.psi_some);
	else
		doctor_text(psi_text, sizeof(psi_text), "unknown");
	doctor_text(
	    f->numbers, sizeof(f->numbers),
	    "%s/s refaulted (%llu pages: workingset_refault_file in /proc/vmstat), %.0f %% of the pages read from "
	    "disks (pgpgin); page cache %s of %s memory, %s available; memory stalls (PSI some) %s of the time%s",
	    human_size((uint64_t)r.rate, rate_text, sizeof(rate_text)), (unsigned long long)r.refaults,
	    r.share > 100 ? 100 : r.share, s->mem_known ? human_size(s->cached, cache_text, sizeof(cache_text)) : "?",
	    s->mem_known ? human_size(s->mem_total, total_text, sizeof(total_text)) : "?",
	    s->mem_known ? human_size(s->mem_available, available_text, sizeof(available_text)) : "?", psi_text,
	    cgroup_at_limit ? "; a reader's memory cgroup at its limit (see cache-miss)" : "");
	doctor_text(f->more, sizeof(f->more),
		    "iolens cachestat " DOCTOR_MORE_SAMPLES "; iolens cachetop --cgroup " DOCTOR_MORE_SAMPLES "");
	field_count(&f->data, "refaults", r.refaults);
	field_real(&f->data, "refault_bytes_per_s", r.rate);
	field_count(&f->data, "read_pages", r.read_pages);
	field_real_if(&f->data, "memory_psi_some_percent", memory.psi_some, memory.psi_some >= 0);
	field_count_if(&f->data, "mem_available_bytes", s->mem_available, s->mem_known);
	field_bool(&f->data, "cgroup_at_limit", cgroup_at_limit);
}

const struct doctor_rule rule_refaults = {
	.name = "refaults",
	.list_rank = 90, /* its place in --help-all and RULES */
	.judge_rank = 30, /* its findings' place among those of one severity */
	.help = "evicted pages read back: a working set larger than the cache",
	.man = /* iolens-doctor(1), RULES: the paragraph after its name (roff) */
		"File pages read back soon after the cache evicted them\n"
		".RB ( workingset_refault_file\n"
		"of\n"
		".IR /proc/vmstat )\n"
		"at 1\\~MiB/s or more, and a quarter or more of all that was read from disks\n"
		".RB ( pgpgin ).\n"
		".B warning\n"
		"when there is a sign that memory is short: a reader's memory cgroup at its\n"
		"limit (see cache\\-miss), tasks stalled on memory 10\\~% of the window or more\n"
		"(PSI\n"
		".IR /proc/pressure/memory ,\n"
		"some), or MemAvailable under a tenth of MemTotal: the working set is larger\n"
		"than the cache it gets.\n"
		".B info\n"
		"otherwise: with memory to spare, the pages were evicted by something else\n"
		"(DAMON, a cgroup's proactive reclaim, drop_caches) and read back, no sign of\n"
		"a cache too small.\n",
	.thresholds = { -1 },
	.judge = judge,
};
