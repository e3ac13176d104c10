/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disk.c: rule disk: a disk busy most of the window (iostat's %util), with its queue, waits, io
 * pressure and the busiest processes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "doctor/judge.h"
#include "doctor/rules.h"
#include "model/disk.h"

/* Mean time per request (ms) and queue length between two samples of a device. */
static void await_between(const struct disk_stats *a, const struct disk_stats *b, double seconds, double *await,
			  double *queue)
{
	struct disk_ext x;
	double ios;

	disk_ext_compute(a, b, seconds, &x);
	ios = x.r_s + x.w_s;
	*await = ios > 0 ? (x.r_await * x.r_s + x.w_await * x.w_s) / ios : 0;
	*queue = x.aqu_sz;
}

/*
 * "comm (pid) 12 MiB/s read, 3 MiB/s written; ..." of the n busiest commands, and the same as
 * data: the processes of one command added up (fio's 8 jobs are one load, "fio (4242 and 7
 * more)"), pid the busiest of them.
 */
struct command_rate {
	const struct snap_io_rate *first; /* the busiest process of the command */
	unsigned processes;
	double read_rate, write_rate;
};

static int compare_command_rates(const void *a_, const void *b_)
{
	const struct command_rate *a = a_, *b = b_;
	double ta = a->read_rate + a->write_rate, tb = b->read_rate + b->write_rate;

	return ta < tb ? 1 : ta > tb ? -1 : 0;
}

static void busiest(const struct doctor_snapshot *s, size_t n, char *buf, size_t len, struct doctor_fields *list)
{
	struct command_rate *commands = xcalloc(s->nrates ? s->nrates : 1, sizeof(*commands));
	size_t ncommands = 0, used = 0;

	for (size_t i = 0; i < s->nrates; i++) {
		const struct snap_io_rate *r = &s->rates[i];
		size_t c = 0;

		if (r->read_rate + r->write_rate <= 0)
			continue;
		while (c < ncommands && strcmp(commands[c].first->comm, r->comm))
			c++;
		if (c == ncommands)
			commands[ncommands++].first = r;
		else if (r->read_rate + r->write_rate > commands[c].first->read_rate + commands[c].first->write_rate)
			commands[c].first = r;
		commands[c].processes++;
		commands[c].read_rate += r->read_rate;
		commands[c].write_rate += r->write_rate;
	}
	qsort(commands, ncommands, sizeof(*commands), compare_command_rates);
	buf[0] = '\0';
	for (size_t i = 0; i < ncommands && i < n; i++) {
		const struct command_rate *c = &commands[i];
		struct doctor_fields *o = field_object(list, NULL);
		char read_text[16], write_text[16], more[40] = "", in[600];

		if (c->processes > 1)
			snprintf(more, sizeof(more), " and %u more", c->processes - 1);
		used +=
		    (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s (%d%s)%s %s/s read, %s/s written",
				     i ? "; " : "", c->first->comm, (int)c->first->pid, more,
				     snap_in_container(s, c->first->pid, c->first->comm, in, sizeof(in)),
				     human_size((uint64_t)c->read_rate, read_text, sizeof(read_text)),
				     human_size((uint64_t)c->write_rate, write_text, sizeof(write_text)));
		field_int(o, "pid", c->first->pid);
		field_text(o, "comm", c->first->comm);
		field_container(o, s, c->first->pid, c->first->comm);
		field_count(o, "processes", c->processes);
		field_real(o, "read_bytes_per_s", c->read_rate);
		field_real(o, "write_bytes_per_s", c->write_rate);
	}
	free(commands);
}

static void judge(const struct doctor_snapshot *s, const struct doctor_config *config, struct doctor_findings *out)
{
	double seconds = s->disk_seconds, mid_seconds = s->disk_mid_seconds;
	double some = snap_psi_share(&s->io_some, seconds), full = snap_psi_share(&s->io_full, seconds);

	(void)config;
	for (size_t i = 0; i < s->ndisks && s->seconds > 0 && seconds > 0; i++) {
		const struct snap_disk *disk = &s->disks[i];
		char read_text[16], write_text[16], top[512] = "";
		struct doctor_fields top_list = {0};
		struct doctor_finding *f;
		struct disk_ext x;
		size_t used;

		disk_ext_compute(&disk->start, &disk->end, seconds, &x);
		if (x.util < DISK_SATURATED_UTIL)
			continue;
		f = doctor_finding_add(out, full >= 50 ? DOCTOR_CRITICAL : DOCTOR_WARNING, "disk",
				       "a request to a saturated disk waits behind the ones queued before it: every "
				       "reader and writer of it slows down, and those who wait for them");
		doctor_text(f->what, sizeof(f->what), "disk %s is saturated: busy %.0f %% of the time", disk->end.name,
			    x.util);
		used = (size_t)snprintf(
		    f->numbers, sizeof(f->numbers),
		    "%%util %.1f, aqu-sz %.2f, r_await %.2f ms, w_await %.2f ms, %.0f r/s %s/s, %.0f w/s "
		    "%s/s (/proc/diskstats, as iostat -x)",
		    x.util, x.aqu_sz, x.r_await, x.w_await, x.r_s,
		    human_size((uint64_t)(x.rkb_s * 1024), read_text, sizeof(read_text)), x.w_s,
		    human_size((uint64_t)(x.wkb_s * 1024), write_text, sizeof(write_text)));
		if (disk->mid_known && mid_seconds > 0 && seconds > mid_seconds) {
			double await1, await2, queue1, queue2;

			await_between(&disk->start, &disk->mid, mid_seconds, &await1, &queue1);
			await_between(&disk->mid, &disk->end, seconds - mid_seconds, &await2, &queue2);
			used +=
			    (size_t)snprintf(f->numbers + used, sizeof(f->numbers) - used,
					     "; await %.2f then %.2f ms, aqu-sz %.2f then %.2f (first and second half)",
					     await1, await2, queue1, queue2);
			field_real(&f->data, "await_ms_first_half", await1);
			field_real(&f->data, "await_ms_second_half", await2);
		} else {
			field_null(&f->data, "await_ms_first_half");
			field_null(&f->data, "await_ms_second_half");
		}
		if (some >= 0 && used < sizeof(f->numbers))
			used += (size_t)snprintf(
			    f->numbers + used, sizeof(f->numbers) - used,
			    "; tasks stalled on I/O %.0f %% of the time, all of them %.0f %% (PSI io some, "
			    "full)",
			    some, full >= 0 ? full : 0);
		busiest(s, 3, top, sizeof(top), &top_list);
		if (top[0] && used < sizeof(f->numbers))
			snprintf(f->numbers + used, sizeof(f->numbers) - used,
				 "; most I/O (all disks, /proc/PID/io): %s", top);
		doctor_text(f->more, sizeof(f->more),
			    "iolens stat -x --psi " DOCTOR_MORE_SAMPLES "; iolens cachetop " DOCTOR_MORE_SAMPLES "");
		field_text(&f->data, "device", disk->end.name);
		field_real(&f->data, "util", x.util);
		field_real(&f->data, "aqu_sz", x.aqu_sz);
		field_real(&f->data, "r_await_ms", x.r_await);
		field_real(&f->data, "w_await_ms", x.w_await);
		field_real(&f->data, "r_s", x.r_s);
		field_real(&f->data, "w_s", x.w_s);
		field_real(&f->data, "read_bytes_per_s", x.rkb_s * 1024);
		field_real(&f->data, "write_bytes_per_s", x.wkb_s * 1024);
		field_real_if(&f->data, "psi_io_some_percent", some, some >= 0);
		field_real_if(&f->data, "psi_io_full_percent", full, full >= 0);
		field_list_move(&f->data, "top", &top_list);
	}
}

const struct doctor_rule rule_disk = {
	.name = "disk",
	.list_rank = 20, /* its place in --help-all and RULES */
	.judge_rank = 40, /* its findings' place among those of one severity */
	.help = "a disk busy 90 % of the time or more (iostat's %util), with aqu-sz,\n"
		"await, io pressure (PSI) and the processes doing the most I/O\n"
		"(critical when tasks all stall on I/O half the time: PSI io full)",
	.man = /* iolens-doctor(1), RULES: the paragraph after its name (roff) */
		"A whole device (not a partition; loop, device-mapper and md devices\n"
		"included) busy 90\\~% of the time or more\n"
		".RB ( %util ,\n"
		"from the\n"
		".B io_ticks\n"
		"of\n"
		".IR /proc/diskstats ,\n"
		"computed as\n"
		".B iostat \\-x\n"
		"computes it), with its aqu-sz, r_await and w_await, requests and bytes per\n"
		"second, await and aqu-sz in the first and second half of the window\n"
		"(growing when the queue builds up), the share of time tasks stalled on I/O\n"
		"(PSI\n"
		".IR /proc/pressure/io :\n"
		".B some\n"
		"and\n"
		".BR full ),\n"
		"and the three processes that read and wrote the most from storage\n"
		".RI ( /proc/PID/io ,\n"
		"all disks together: the kernel does not say which disk).\n"
		"Severity\n"
		".BR warning ;\n"
		".B critical\n"
		"when every runnable task stalled on I/O half the time or more (PSI io full\n"
		"\\(>= 50\\~%).\n",
	.thresholds = { -1 },
	.judge = judge,
	.alerts = {
		{ "warning", -1, DISK_UTIL " >= 90", "1m",
		  "disk {{ $labels.device }} is saturated: busy {{ $value | printf \"%.0f\" }} % of the time" },
		{ "critical", -1,
		  DISK_UTIL " >= 90 and on() 100 * rate(iolens_pressure_full_seconds_total{resource=\"io\"}[1m]) >= 50",
		  "1m", "disk {{ $labels.device }} is saturated, and every task waits on I/O half the time or more" },
	},
};
