/* SPDX-License-Identifier: GPL-2.0-or-later */
/* full.c: rules full and inodes: a filesystem nearly full, or nearly out of inodes, as df counts. */
#include "common/util.h"
#include "doctor/rules.h"

/* df's Use%: used / (used + available to users). */
static double percent_used(uint64_t total, uint64_t free_all, uint64_t available)
{
	uint64_t used = total > free_all ? total - free_all : 0;

	return used + available ? 100.0 * (double)used / (double)(used + available) : 0;
}

static void judge_mounts(const struct doctor_snapshot *s, const struct doctor_config *config, bool inodes,
			 struct doctor_findings *out)
{
	for (size_t i = 0; i < s->nmounts; i++) {
		const struct snap_mount *m = &s->mounts[i];
		uint64_t total = inodes ? m->files : m->blocks;
		uint64_t free_all = inodes ? m->ffree : m->bfree;
		uint64_t available = inodes ? m->favail : m->bavail;
		double used = percent_used(total, free_all, available);
		char free_text[16], total_text[16], word[600];
		struct doctor_finding *f;

		if (m->state != MOUNT_OK || m->duplicate || !m->blocks || !total ||
		    used < config->threshold[TH_FULL_WARNING])
			continue;
		f = doctor_finding_add(out, used >= config->threshold[TH_FULL_CRITICAL] ? DOCTOR_CRITICAL : DOCTOR_WARNING,
				       inodes ? "inodes" : "full",
				       inodes ? "with no inode left, no file can be created, however much space is free"
					      : "writes fail with ENOSPC when it fills, and ext4 and others slow down "
						"well before, as free extents get scarce");
		doctor_text(f->what, sizeof(f->what), "%s (%s on %s) is %s", m->dir, m->type, m->source,
			    inodes ? "nearly out of inodes" : "nearly full");
		if (inodes)
			doctor_text(f->numbers, sizeof(f->numbers), "%.1f %% of inodes used: %llu free of %llu (statvfs)",
				    used, (unsigned long long)available, (unsigned long long)total);
		else
			doctor_text(f->numbers, sizeof(f->numbers), "%.1f %% used: %s free of %s (statvfs, as df counts)",
				    used, human_size(available * m->frsize, free_text, sizeof(free_text)),
				    human_size(total * m->frsize, total_text, sizeof(total_text)));
		doctor_text(f->more, sizeof(f->more), "df %s%s", inodes ? "-i " : "-h ",
			    doctor_shell_word(m->dir, word, sizeof(word)));
		field_text(&f->data, "mount", m->dir);
		field_text(&f->data, "type", m->type);
		field_text(&f->data, "source", m->source);
		field_real(&f->data, "used_percent", used);
		field_count(&f->data, inodes ? "inodes_free" : "bytes_free", inodes ? available : available * m->frsize);
		field_count(&f->data, inodes ? "inodes_total" : "bytes_total", inodes ? total : total * m->frsize);
	}
}

static void judge_full(const struct doctor_snapshot *s, const struct doctor_config *config, struct doctor_findings *out)
{
	judge_mounts(s, config, false, out);
}

static void judge_inodes(const struct doctor_snapshot *s, const struct doctor_config *config, struct doctor_findings *out)
{
	judge_mounts(s, config, true, out);
}

const struct doctor_rule rule_full = {
	.name = "full",
	.help = "a filesystem 90 % used or more (critical from 98 %), as df counts",
	.man = /* iolens-doctor(1), RULES: the paragraph after its name (roff) */
		"A filesystem 90\\~% used or more\n"
		".RB ( warning ),\n"
		"98\\~% or more\n"
		".RB ( critical ),\n"
		"counted as\n"
		".BR df (1)\n"
		"counts Use%: used / (used + available to users), from\n"
		".BR statvfs (3).\n"
		"Read-only mounts, pseudo filesystems (proc, sysfs, cgroup, devtmpfs and\n"
		"others), squashfs, overlay and ramfs are left out; a filesystem mounted\n"
		"twice is looked at once.\n",
	.thresholds = { TH_FULL_WARNING, TH_FULL_CRITICAL, -1 },
	.judge = judge_full,
};

const struct doctor_rule rule_inodes = {
	.name = "inodes",
	.help = "the same of its inodes",
	.man = /* iolens-doctor(1), RULES: the paragraph after its name (roff) */
		"The same for inodes: 90\\~% of them used or more\n"
		".RB ( warning ),\n"
		"98\\~% or more\n"
		".RB ( critical ).\n",
	.thresholds = { TH_FULL_WARNING, TH_FULL_CRITICAL, -1 },
	.judge = judge_inodes,
};
