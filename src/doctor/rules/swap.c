/* SPDX-License-Identifier: GPL-2.0-or-later */
/* swap.c: rule swap: the machine swapping (critical while a disk is saturated, information when all swap is zram). */
#include "collect/procfs.h"
#include "common/util.h"
#include "doctor/judge.h"
#include "doctor/rules.h"

static void judge(const struct doctor_snapshot *s, const struct doctor_config *config, struct doctor_findings *out)
{
	uint64_t page = s->page_size;
	double in, out_rate, read, written;
	char in_text[16], out_text[16], read_text[16], written_text[16], avail_text[16], total_text[16];
	bool all_zram = s->swaps && s->swaps_zram == s->swaps, disk_saturated;
	struct doctor_finding *f;

	(void)config;
	if (!s->vm_known || s->seconds <= 0 || s->pswpin[0] == PROCFS_UNKNOWN || s->pswpin[1] < s->pswpin[0] ||
	    s->pswpout[1] < s->pswpout[0])
		return;
	in = (double)(s->pswpin[1] - s->pswpin[0]) * (double)page / s->seconds;
	out_rate = (double)(s->pswpout[1] - s->pswpout[0]) * (double)page / s->seconds;
	if (in + out_rate < MiB)
		return;
	read = s->pgpgin[1] >= s->pgpgin[0] ? (double)(s->pgpgin[1] - s->pgpgin[0]) * 1024 / s->seconds : 0;
	written = s->pgpgout[1] >= s->pgpgout[0] ? (double)(s->pgpgout[1] - s->pgpgout[0]) * 1024 / s->seconds : 0;
	/* Swap on zram is compressed memory, not a disk: its cost is CPU. */
	disk_saturated = snap_disk_saturated(s);
	f = doctor_finding_add(out, all_zram ? DOCTOR_INFO : disk_saturated ? DOCTOR_CRITICAL : DOCTOR_WARNING, "swap",
			       "swapping is disk I/O in memory's path: a process that touches a page swapped out waits "
			       "for the disk, and swap competes with the service's own I/O (a redis whose memory "
			       "was swapped out refused clients)");
	doctor_text(f->what, sizeof(f->what), "the machine swaps%s",
		    all_zram ? " to zram (compressed memory)" : disk_saturated ? " while a disk is saturated" : "");
	doctor_text(f->numbers, sizeof(f->numbers),
		    "swapped in %s/s, out %s/s (pswpin, pswpout in /proc/vmstat); all disks read %s/s, wrote %s/s "
		    "(pgpgin, pgpgout); memory available %s of %s (MemAvailable)",
		    human_size((uint64_t)in, in_text, sizeof(in_text)),
		    human_size((uint64_t)out_rate, out_text, sizeof(out_text)),
		    human_size((uint64_t)read, read_text, sizeof(read_text)),
		    human_size((uint64_t)written, written_text, sizeof(written_text)),
		    s->mem_known ? human_size(s->mem_available, avail_text, sizeof(avail_text)) : "?",
		    s->mem_known ? human_size(s->mem_total, total_text, sizeof(total_text)) : "?");
	doctor_text(f->more, sizeof(f->more),
		    "iolens stat -s -m --vm " DOCTOR_MORE_SAMPLES "; iolens stat -x " DOCTOR_MORE_SAMPLES "");
	field_real(&f->data, "swap_in_bytes_per_s", in);
	field_real(&f->data, "swap_out_bytes_per_s", out_rate);
	field_real(&f->data, "disk_read_bytes_per_s", read);
	field_real(&f->data, "disk_write_bytes_per_s", written);
	field_bool(&f->data, "zram", all_zram);
	field_count_if(&f->data, "mem_available_bytes", s->mem_available, s->mem_known);
}

const struct doctor_rule rule_swap = {
	.name = "swap",
	.list_rank = 40, /* its place in --help-all and RULES */
	.judge_rank = 60, /* its findings' place among those of one severity */
	.help = "swapping at 1 MiB/s or more (critical while a disk is saturated;\n"
		"info when all swap is zram)",
	.man = /* iolens-doctor(1), RULES: the paragraph after its name (roff) */
		"Pages swapped in and out at 1\\~MiB/s or more\n"
		".RB ( pswpin ,\n"
		".B pswpout\n"
		"of\n"
		".IR /proc/vmstat ),\n"
		"with what all disks read and wrote\n"
		".RB ( pgpgin ,\n"
		".BR pgpgout )\n"
		"and the memory available.\n"
		".B critical\n"
		"when a whole disk is saturated at the same time (busy 90\\~% of the window,\n"
		"as the disk rule counts it), as when a database's rewrite saturates the\n"
		"disk while it swaps;\n"
		".B warning\n"
		"otherwise;\n"
		".B info\n"
		"when every swap area is a zram device (compressed memory: no disk I/O).\n",
	.thresholds = { -1 },
	.judge = judge,
	.alerts = {
		{ "warning", -1, SWAP_BYTES " >= 1048576", "1m",
		  "the machine swaps {{ $value | humanize1024 }}B/s (pages of 4 KiB)" },
		{ "critical", -1, SWAP_BYTES " >= 1048576 and on() max(" DISK_UTIL ") >= 90", "1m",
		  "the machine swaps {{ $value | humanize1024 }}B/s while a disk is saturated" },
	},
};
