/* unresponsive.c: rule unresponsive: a mount whose stat and statfs did not return, or that an earlier probe still waits on. */
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
			used = (size_t)snprintf(f->numbers, sizeof(f->numbers), "%s: no answer for %.1f s", m->probe_asks,
						m->probe_seconds);
		else
			used = (size_t)snprintf(f->numbers, sizeof(f->numbers), "an earlier probe of it has had no answer");
		if (m->held && used < sizeof(f->numbers))
			snprintf(f->numbers + used, sizeof(f->numbers) - used,
				 " (iolens probe pid %d%s); no other probe of this filesystem while it waits",
				 (int)m->probe_pid, since);
		doctor_text(f->more, sizeof(f->more),
			    "iolens vstat (a libvtrace server); cat /proc/PID/stack of a process waiting on it");
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
	.help = "a mount whose stat and statfs do not return within a second; its\n"
		"probe, left waiting, is the only one until it ends, in later runs too\n"
		"(/run/iolens/probes), and is never counted as stuck",
	.thresholds = { -1 },
	.judge = judge,
};
