/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stuck.c: rule stuck: a thread in uninterruptible sleep (D) all window long without a context
 * switch, but for iolens's own probes.
 */
#include "doctor/judge.h"
#include "doctor/rules.h"

static bool listed(const pid_t *pids, size_t count, pid_t pid)
{
	for (size_t i = 0; i < count; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

/*
 * Whether a libvtrace server has a request in flight past the hang threshold (what vtrace-hang
 * judges, from the snapshot).
 */
static bool vtrace_hung(const struct doctor_snapshot *s, const struct doctor_config *config)
{
	for (size_t i = 0; i < s->nvtrace; i++)
		for (unsigned op = 0; op < s->vtrace[i].nops; op++)
			if (!s->vtrace[i].ops[op].impossible &&
			    s->vtrace[i].ops[op].oldest_age_ns >= (uint64_t)(config->threshold[TH_HANG_SECONDS] * 1e9))
				return true;
	return false;
}

/*
 * Threads stuck in D, but for iolens's own probes (those that held a mark at the start of the
 * window or held one at its end): a probe waits on a filesystem that does not answer, and
 * unresponsive says that of the filesystem. A name proves nothing: only a mark.
 */
static void judge(const struct doctor_snapshot *s, const struct doctor_config *config, struct doctor_findings *out)
{
	bool server_hung = vtrace_hung(s, config);
	uint64_t stuck_limit = (uint64_t)(config->threshold[TH_STUCK_SECONDS] * 1e9);

	for (size_t i = 0; i < s->ntasks; i++) {
		const struct snap_task *t = &s->tasks[i];
		struct doctor_finding *f;
		char in[600];

		/* In D at every sample to the last, with no context switch between: one sleep, never woken. */
		if (t->last + 1 != s->samples || t->samples != t->last - t->first + 1 || !t->switches_known ||
		    t->switches_first != t->switches_last || t->stuck_ns < stuck_limit / 3)
			continue;
		if (listed(s->probes, s->nprobes, t->pid))
			continue;
		f = doctor_finding_add(
		    out, t->stuck_ns >= stuck_limit ? DOCTOR_WARNING : DOCTOR_INFO, "stuck",
		    "a thread in uninterruptible sleep does nothing else, and only SIGKILL, if anything, "
		    "ends it, until what it waits for comes: a disk or a server that does not answer, a "
		    "page or a lock that another stuck thread holds");
		snap_in_container(s, t->pid, t->comm, in, sizeof(in));
		if (t->tid == t->pid)
			doctor_text(f->what, sizeof(f->what),
				    "process %d (%s)%s is stuck in uninterruptible sleep (D)%s%s", (int)t->pid, t->comm,
				    in, t->wchan[0] ? " in " : "", t->wchan);
		else
			doctor_text(f->what, sizeof(f->what),
				    "thread %d of process %d (%s)%s is stuck in uninterruptible sleep (D)%s%s",
				    (int)t->tid, (int)t->pid, t->comm, in, t->wchan[0] ? " in " : "", t->wchan);
		doctor_text(f->numbers, sizeof(f->numbers),
			    "state D in all %u samples over %.1f s with no context switch (/proc/%d/task/%d/stat, "
			    "status)%s%s%s",
			    t->samples, (double)t->stuck_ns / 1e9, (int)t->pid, (int)t->tid,
			    t->wchan[0] ? "; waits in " : "", t->wchan, t->wchan[0] ? " (wchan)" : "");
		doctor_text(f->more, sizeof(f->more), "cat /proc/%d/task/%d/stack%s", (int)t->pid, (int)t->tid,
			    server_hung ? "; iolens vstat" : "; iolens stat -x " DOCTOR_MORE_SAMPLES "");
		field_int(&f->data, "pid", t->pid);
		field_int(&f->data, "tid", t->tid);
		field_text(&f->data, "comm", t->comm);
		field_container(&f->data, s, t->pid, t->comm);
		field_text(&f->data, "wchan", t->wchan);
		field_real(&f->data, "seconds", (double)t->stuck_ns / 1e9);
	}
}

const struct doctor_rule rule_stuck = {
	.name = "stuck",
	.list_rank = 60, /* its place in --help-all and RULES */
	.judge_rank = 100, /* its findings' place among those of one severity */
	.help = "a thread in D state without a context switch for 3 s or more, and\n"
		"what it waits in (wchan); info from 1 s",
	.man = /* iolens-doctor(1), RULES: the paragraph after its name (roff) */
		"A thread in uninterruptible sleep (state D) in every sample up to the last,\n"
		"with no context switch between the first and the last\n"
		".RI ( voluntary_ctxt_switches \" and \" nonvoluntary_ctxt_switches\n"
		"of\n"
		".IR /proc/PID/task/TID/status ):\n"
		"one sleep that nothing ended, with the kernel function it waits in\n"
		".RI ( wchan ).\n"
		".B warning\n"
		"from 3\\~s;\n"
		".B info\n"
		"from 1\\~s (a window shorter than 3\\~s cannot tell more).\n"
		"iolens's own probes of filesystems are left out (see\n"
		".BR unresponsive ,\n"
		"which names the filesystem they wait on).\n"
		"A writer throttled by writeback sleeps again and again, with context\n"
		"switches: that is the writeback rule's.\n",
	.thresholds = { TH_STUCK_SECONDS, TH_HANG_SECONDS, -1 },
	.judge = judge,
};
