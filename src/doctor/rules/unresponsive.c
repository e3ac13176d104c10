/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * unresponsive.c: rule unresponsive: a mount whose stat and statfs did not return, or that an
 * earlier probe still waits on.
 */
#include <stdio.h>
#include <time.h>

#include "common/bounded.h"
#include "doctor/rules.h"

static void judge(const struct doctor_snapshot *s, const struct doctor_config *config, struct doctor_findings *out)
{
	(void)config;
	for (size_t i = 0; i < s->nmounts; i++) {
		const struct snap_mount *m = &s->mounts[i];
		bool probed = m->state == MOUNT_TIMEOUT;
		char since[64] = "";
		struct doctor_finding *f;
		size_t used;

		if (m->state != MOUNT_TIMEOUT && m->state != MOUNT_BUSY)
			continue;
		f = doctor_finding_add(out, DOCTOR_WARNING, "unresponsive",
				       "every process that touches it waits too, in D, until its server answers: a "
				       "shell's cd, ls or df, a backup, the service itself");
		if (m->probe_started >= 0) {
			time_t when = (time_t)m->probe_started;
			struct tm local;

			if (localtime_r(&when, &local))
				strftime(since, sizeof(since), ", waiting since %Y-%m-%d %H:%M:%S", &local);
		}
		doctor_text(f->what, sizeof(f->what), "%s (%s on %s) does not answer", m->dir, m->type, m->source);
		if (probed)
			used = (size_t)snprintf(f->numbers, sizeof(f->numbers),
						"stat and statfs of it did not return within %u ms", BOUNDED_FS_MS);
		else if (m->probe_seconds >= 0)
			used = (size_t)snprintf(f->numbers, sizeof(f->numbers), "%s: no answer for %.1f s",
						m->probe_asks, m->probe_seconds);
		else
			used = (size_t)snprintf(f->numbers, sizeof(f->numbers),
						"an earlier probe of it has had no answer");
		if (m->held && used < sizeof(f->numbers))
			snprintf(f->numbers + used, sizeof(f->numbers) - used,
				 " (iolens probe pid %d%s); no other probe of this filesystem while it waits",
				 (int)m->probe_pid, since);
		/* (the probe waits on it; a server of libvtrace says which request hangs) */
		if (m->held)
			doctor_text(f->more, sizeof(f->more), "cat /proc/%d/stack; iolens vstat", (int)m->probe_pid);
		else
			doctor_text(f->more, sizeof(f->more), "iolens vstat");
		field_text(&f->data, "mount", m->dir);
		field_text(&f->data, "type", m->type);
		field_text(&f->data, "source", m->source);
		field_int(&f->data, "timeout_ms", (int)BOUNDED_FS_MS);
		field_bool(&f->data, "probed", probed);
		field_int_if(&f->data, "probe_pid", m->probe_pid, m->held);
		field_real_if(&f->data, "probe_waiting_seconds", m->probe_seconds, m->probe_seconds >= 0);
		field_real_if(&f->data, "probe_started", m->probe_started, m->probe_started >= 0);
		field_text(&f->data, "probe_asks", m->held && m->probe_asks[0] ? m->probe_asks : NULL);
	}
}

const struct doctor_rule rule_unresponsive = {
	.name = "unresponsive",
	.list_rank = 130, /* its place in --help-all and RULES */
	.judge_rank = 110, /* its findings' place among those of one severity */
	.help = "a mount whose stat and statfs do not return within a second; its\n"
		"probe, left waiting, is the only one until it ends, in later runs too\n"
		"(/run/iolens/probes), and is never counted as stuck",
	.man = /* iolens-doctor(1), RULES: the paragraph after its name (roff) */
		"A mount (not a pseudo filesystem, not read-only) whose\n"
		".BR stat (2)\n"
		"and\n"
		".BR statfs (2)\n"
		"do not return within a second: a FUSE server or an NFS server that does\n"
		"not answer.\n"
		"Every mount is asked in a child process, a probe, so a hung one cannot hang\n"
		"the doctor: it says so and goes on.\n"
		"A filesystem in memory (tmpfs) or an ext2, ext3 or ext4 on a disk, whose\n"
		"statfs reads its counters in memory, is asked by the doctor itself when it\n"
		"is what a stat of its mount point reaches and no mount on the path to it is\n"
		"a network, FUSE, cluster, overlay or autofs mount, nor one mounted over it:\n"
		"nothing there can wait on a server or a disk (an ext4 mounted\n"
		".BR prjquota ,\n"
		"whose statfs of a root inheriting a project may read that project's quota\n"
		"from its disk, is asked by a probe).\n"
		"A probe that gets no answer is killed, but a request the server has read\n"
		"cannot be taken back: the probe stays, in state D, until the server answers.\n"
		"So that runs do not pile them up, each probe holds a lock on a mark named\n"
		"after the filesystem's device,\n"
		".IR /run/iolens/probes/dev\\-MAJOR:MINOR\n"
		"(for a user other than root,\n"
		".IR $XDG_RUNTIME_DIR/iolens/probes ),\n"
		"for as long as it lives.\n"
		"Before it probes a mount, the doctor looks at the mark: while an earlier\n"
		"probe of that filesystem (of this run, of an earlier run, or through a\n"
		"bind mount of it) still waits, no other is sent, and the mount is said not\n"
		"to answer, with how long that probe has waited, its pid and since when.\n"
		"The probe of a file's page cache for the\n"
		".B odirect\n"
		"rule is marked the same way.\n"
		"At most one probe of a filesystem waits on it at any time.\n"
		"Severity\n"
		".BR warning .\n"
		".IP\n"
		"A process that holds a mark is never reported as\n"
		".BR stuck :\n"
		"it waits on the filesystem this rule names.\n"
		"Only root can create, open or lock a mark in\n"
		".I /run/iolens/probes\n"
		"(the directory is root's, 0755, the marks 0600), so another user cannot\n"
		"hide a stuck process of theirs as a probe: a process called\n"
		".B iolens\\-probe\n"
		"(the name probes give themselves, for\n"
		".BR ps (1))\n"
		"without a mark is reported like any other.\n"
		"Where marks cannot be made (no\n"
		".IR /run ,\n"
		"or a directory there that is not root's alone; a user without\n"
		".BR XDG_RUNTIME_DIR ),\n"
		"probes are unmarked, as the doctor says on standard error when one does not\n"
		"answer.\n",
	.thresholds = { -1 },
	.judge = judge,
};
