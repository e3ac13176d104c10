/* SPDX-License-Identifier: GPL-2.0-or-later */
/* writeback.c: rule writeback: dirty pages at the dirty limit, and writers throttled in balance_dirty_pages. */
#include <stdio.h>

#include "collect/procfs.h"
#include "common/util.h"
#include "doctor/rules.h"

static void judge(const struct doctor_snapshot *s, const struct doctor_config *config, struct doctor_findings *out)
{
	uint64_t page = s->page_size, freerun = (s->dirty_thresh + s->dirty_bg_thresh) / 2;
	char dirty_text[16], writeback_text[16], limit_text[16], bg_text[16], freerun_text[16];
	char throttled[512] = "";
	struct doctor_fields writers = {0};
	size_t used = 0;
	unsigned nthrottled = 0;
	struct doctor_finding *f;

	(void)config;
	for (size_t i = 0; i < s->ntasks; i++) {
		const struct snap_task *t = &s->tasks[i];
		struct doctor_fields *o;

		if (!t->throttled)
			continue;
		if (nthrottled++ < 4)
			used +=
			    (size_t)snprintf(throttled + used, used < sizeof(throttled) ? sizeof(throttled) - used : 0,
					     "%s%s (%d) in %u of %u samples", used ? ", " : "", t->comm, (int)t->tid,
					     t->throttled, s->samples);
		o = field_object(&writers, NULL);
		field_int(o, "pid", t->pid);
		field_int(o, "tid", t->tid);
		field_text(o, "comm", t->comm);
		field_int(o, "samples", (int)t->throttled);
	}
	if (s->dirty_thresh == PROCFS_UNKNOWN || s->dirty_bg_thresh == PROCFS_UNKNOWN || !s->dirty_thresh ||
	    (s->dirty_peak + s->writeback_peak < freerun && !nthrottled)) {
		doctor_fields_free(&writers);
		return;
	}
	f = doctor_finding_add(
	    out, DOCTOR_WARNING, "writeback",
	    "past the dirty limit a writer sleeps in balance_dirty_pages until writeback catches up: "
	    "writes that take microseconds take the disk's time, and fsync and reads of that disk "
	    "wait behind the flush");
	doctor_text(f->what, sizeof(f->what), "dirty pages reached the dirty limit%s",
		    nthrottled ? ": writers are throttled" : "");
	used = (size_t)snprintf(
	    f->numbers, sizeof(f->numbers),
	    "Dirty %s + Writeback %s at the peak, against the dirty limit %s and background limit %s: "
	    "writers are throttled from %s (nr_dirty_threshold, nr_dirty_background_threshold in "
	    "/proc/vmstat); writeback in %u of %u samples",
	    human_size(s->dirty_peak * page, dirty_text, sizeof(dirty_text)),
	    human_size(s->writeback_peak * page, writeback_text, sizeof(writeback_text)),
	    human_size(s->dirty_thresh * page, limit_text, sizeof(limit_text)),
	    human_size(s->dirty_bg_thresh * page, bg_text, sizeof(bg_text)),
	    human_size(freerun * page, freerun_text, sizeof(freerun_text)), s->writeback_samples, s->samples);
	if (nthrottled)
		snprintf(f->numbers + used, sizeof(f->numbers) - used, "; waiting in balance_dirty_pages (wchan): %s%s",
			 throttled, nthrottled > 4 ? " and more" : "");
	doctor_text(f->more, sizeof(f->more),
		    "iolens stat -m --vm -d " DOCTOR_MORE_SAMPLES "; iolens cachetop -s dirties " DOCTOR_MORE_SAMPLES
		    "; sysctl vm.dirty_ratio "
		    "vm.dirty_bytes");
	field_count(&f->data, "dirty_bytes", s->dirty_peak * page);
	field_count(&f->data, "writeback_bytes", s->writeback_peak * page);
	field_count(&f->data, "dirty_limit_bytes", s->dirty_thresh * page);
	field_count(&f->data, "background_limit_bytes", s->dirty_bg_thresh * page);
	field_int(&f->data, "writeback_samples", (int)s->writeback_samples);
	field_int(&f->data, "samples", (int)s->samples);
	field_list_move(&f->data, "throttled", &writers);
}

const struct doctor_rule rule_writeback = {
	.name = "writeback",
	.list_rank = 50, /* its place in --help-all and RULES */
	.judge_rank = 70, /* its findings' place among those of one severity */
	.help = "dirty pages where the kernel throttles writers, and writers seen\n"
		"throttled in balance_dirty_pages",
	.man = /* iolens-doctor(1), RULES: the paragraph after its name (roff) */
		"Dirty pages that reached the point where the kernel throttles writers:\n"
		".B Dirty\n"
		"+\n"
		".B Writeback\n"
		"at the peak of the samples at or above the middle of the background limit\n"
		"and the dirty limit\n"
		".RB ( nr_dirty_background_threshold ,\n"
		".B nr_dirty_threshold\n"
		"of\n"
		".IR /proc/vmstat ,\n"
		"what\n"
		".B vm.dirty_ratio\n"
		"or\n"
		".B vm.dirty_bytes\n"
		"make of the memory now), or writers seen waiting in\n"
		".B balance_dirty_pages\n"
		"(their\n"
		".IR wchan ),\n"
		"named with the number of samples they were seen throttled in, and in how\n"
		"many samples pages were under writeback.\n"
		"Severity\n"
		".BR warning .\n",
	.thresholds = { -1 },
	.judge = judge,
};
