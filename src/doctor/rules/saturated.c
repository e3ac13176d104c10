/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * saturated.c: rule saturated: a disk whose queue grows while its requests take longer than the
 * disk takes at low load (eBPF's percentiles, its saved capacity), not its %util; and whose I/O
 * suffers.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/util.h"
#include "doctor/judge.h"
#include "doctor/rules.h"
#include "model/disk.h"

#define SATURATED_QUEUE 2.0      /* aqu-sz: more than one request in flight on average, each waiting on another */
#define SATURATED_RISE 1.5       /* the second half's aqu-sz against the first's: a queue that grows */
#define SATURATED_LATENCY 2.0    /* latency now against the disk's at low load */
#define SATURATED_REQUESTS 20    /* fewer requests in a span tell nothing */

/* Mean time of a request (ns), reads and writes weighted by their counts: diskstats' average. */
static double await_ns(const struct disk_ext *x)
{
	double ios = x->r_s + x->w_s;

	return ios > 0 ? (x->r_await * x->r_s + x->w_await * x->w_s) / ios * 1e6 : 0;
}

#define SATURATED_SHARE 0.2      /* the share of the disk's requests a process made to be named as the load's maker */

/*
 * Who made the load: of the processes' requests on the disk in the window (eBPF counts them per
 * process and disk), the user process with the most, or the kernel's threads when they made more
 * together (a loop device's workers and writeback take turns among kworkers): the one with the
 * most of them, *made their count, *threads how many. All of them in *total. NULL none. The most,
 * not the first: a snapshot's bio_proc lines are sorted when captured, not when replayed.
 */
static const struct snap_bio_proc *load_maker(const struct doctor_snapshot *s, const struct disk_stats *disk,
					      uint64_t *made, unsigned *threads, uint64_t *total)
{
	const struct snap_bio_proc *user = NULL, *kernel = NULL;
	uint64_t kernel_requests = 0;
	unsigned kernel_threads = 0;

	*total = 0;
	for (size_t i = 0; i < s->nbio_procs; i++) {
		const struct snap_bio_proc *p = &s->bio_procs[i];
		const struct snap_bio_proc **most = p->kernel ? &kernel : &user;

		if (p->disk_major != disk->major || p->disk_minor != disk->minor)
			continue;
		*total += p->requests;
		if (p->kernel) {
			kernel_requests += p->requests;
			kernel_threads++;
		}
		if (!*most || p->requests > (*most)->requests)
			*most = p;
	}
	if (kernel && (!user || kernel_requests > user->requests)) {
		*made = kernel_requests;
		*threads = kernel_threads;
		return kernel;
	}
	*made = user ? user->requests : 0;
	*threads = 1;
	return user;
}

/*
 * The process object without eBPF's counts: the busiest by /proc/PID/io (s's first rate) when s
 * is given, else no one; by says how it was found (NULL: null).
 */
static void process_unknown(struct doctor_fields *o, const struct doctor_snapshot *s, const char *by)
{
	if (s) {
		field_int(o, "pid", s->rates[0].pid);
		field_text(o, "comm", s->rates[0].comm);
		field_container(o, s, s->rates[0].pid, s->rates[0].comm);
	} else {
		field_null(o, "pid");
		field_null(o, "comm");
		field_null(o, "container");
	}
	field_null(o, "requests");
	field_null(o, "share");
	field_null(o, "kernel");
	field_null(o, "threads");
	field_null(o, "p50_ns");
	field_null(o, "p99_ns");
	field_null(o, "other_disks");
	field_text(o, "by", by);
}

/*
 * Who made the load: the process that made the most requests on it (eBPF), when it made a
 * share of them that counts, a kernel thread as well as a user's; else the most bytes
 * (/proc/PID/io). Into f's data (requests_by_processes, process) and its numbers, after used.
 */
static void load_process(const struct doctor_snapshot *s, const struct snap_disk *disk, struct doctor_finding *f,
			 size_t used)
{
	char process_text[800] = "", in[600];
	uint64_t total = 0, made = 0;
	unsigned threads = 0;
	const struct snap_bio_proc *p = s->bio_known ? load_maker(s, &disk->end, &made, &threads, &total) : NULL;
	struct doctor_fields *o;

	field_count_if(&f->data, "requests_by_processes", total, p != NULL); /* (before o: it moves the fields) */
	o = field_object(&f->data, "process");
	if (p && (double)made >= SATURATED_SHARE * (double)total) {
		char latency[64] = "", who[128] = "";

		if (p->p50_ns > 0)
			snprintf(latency, sizeof(latency), ", its p50 %.2f ms, p99 %.2f ms", p->p50_ns / 1e6,
				 p->p99_ns / 1e6);
		if (p->kernel && threads > 1)
			snprintf(who, sizeof(who),
				 "and %u other kernel threads (a loop device's workers, writeback) made", threads - 1);
		else
			snprintf(who, sizeof(who), "%smade", p->kernel ? "(a kernel thread) " : "");
		snprintf(process_text, sizeof(process_text),
			 "%s (%d)%s %s the most block requests on it, %llu of %llu (%.0f %%)%s (eBPF%s)", p->comm,
			 (int)p->pid, snap_in_container(s, p->pid, p->comm, in, sizeof(in)), who,
			 (unsigned long long)made, (unsigned long long)total, 100.0 * (double)made / (double)total,
			 latency, p->several_disks ? "; it used other disks too" : "");
		field_int(o, "pid", p->pid);
		field_text(o, "comm", p->comm);
		field_container(o, s, p->pid, p->comm);
		field_count(o, "requests", made);
		field_real(o, "share", (double)made / (double)total);
		field_bool(o, "kernel", p->kernel);
		field_int(o, "threads", threads);
		field_real_if(o, "p50_ns", p->p50_ns, p->p50_ns > 0);
		field_real_if(o, "p99_ns", p->p99_ns, p->p99_ns > 0);
		field_bool(o, "other_disks", p->several_disks);
		field_text(o, "by", "ebpf");
	} else if (p) { /* many made it, none much: naming one would name a bystander */
		snprintf(process_text, sizeof(process_text),
			 "no process made %.0f %% of the %llu block requests on it (the most: %llu, eBPF)",
			 100 * SATURATED_SHARE, (unsigned long long)total, (unsigned long long)made);
		process_unknown(o, NULL, "ebpf");
	} else if (s->nrates) {
		snprintf(process_text, sizeof(process_text),
			 "%s (%d)%s read and wrote the most (/proc/PID/io, all disks)", s->rates[0].comm,
			 (int)s->rates[0].pid, snap_in_container(s, s->rates[0].pid, s->rates[0].comm, in, sizeof(in)));
		process_unknown(o, s, "procfs");
	} else {
		process_unknown(o, NULL, NULL);
	}
	if (process_text[0])
		snprintf(f->numbers + used, used < sizeof(f->numbers) ? sizeof(f->numbers) - used : 0, "; %s",
			 process_text);
}

static void judge(const struct doctor_snapshot *s, const struct doctor_config *config, struct doctor_findings *out)
{
	double seconds = s->disk_seconds, mid_seconds = s->disk_mid_seconds;

	(void)config;
	for (size_t i = 0; i < s->ndisks && seconds > 0; i++) {
		const struct snap_disk *disk = &s->disks[i];
		bool halves = disk->mid_known && mid_seconds > 0 && seconds > mid_seconds;
		struct disk_ext x, first = {0}, second = {0};
		bool ebpf, rising, standing, waiting, reads;
		double now_ns, low_ns = NAN, aqu_now, qd1;
		const char *low_source, *low_kind;
		char queue_text[160];
		struct doctor_finding *f;
		size_t used;

		disk_ext_compute(&disk->start, &disk->end, seconds, &x);
		if ((x.r_s + x.w_s) * seconds < SATURATED_REQUESTS)
			continue;
		if (halves) {
			disk_ext_compute(&disk->start, &disk->mid, mid_seconds, &first);
			disk_ext_compute(&disk->mid, &disk->end, seconds - mid_seconds, &second);
		}
		ebpf = disk->latency_known && disk->latency.count >= SATURATED_REQUESTS;
		/* The queue: growing over the window, standing deep, or requests waiting in the block layer. */
		aqu_now = halves ? second.aqu_sz : x.aqu_sz;
		rising = halves && second.aqu_sz >= 1 && second.aqu_sz >= SATURATED_RISE * first.aqu_sz;
		standing = aqu_now >= SATURATED_QUEUE;
		/* Waiting with less than one request in flight on average is no load (a write behind a cache flush). */
		waiting = ebpf && aqu_now >= 1 && disk->latency.queue_p50_ns > 0 &&
			  disk->latency.queue_p50_ns >= disk->latency.device_p50_ns;
		if (!rising && !standing && !waiting)
			continue;
		/* Latency now: the second half's median (eBPF), else diskstats' average of it. */
		if (ebpf)
			now_ns = halves && disk->second.count >= SATURATED_REQUESTS ? disk->second.p50_ns
										    : disk->latency.p50_ns;
		else
			now_ns = await_ns(halves ? &second : &x);
		/* At low load: the capacity's QD1 latency, else the least the window shows. */
		reads = x.r_s >= x.w_s;
		qd1 = reads ? disk->capacity_qd1_read_ns : disk->capacity_qd1_write_ns;
		if (disk->capacity_known && !(qd1 > 0))
			qd1 = reads ? disk->capacity_qd1_write_ns : disk->capacity_qd1_read_ns;
		if (disk->capacity_known && qd1 > 0) {
			low_ns = qd1;
			low_kind = "capacity";
			low_source = reads ? "its capacity's QD1 random read p50, iolens bench --profile"
					   : "its capacity's QD1 random write p50, iolens bench --profile";
		} else if (ebpf) {
			low_ns = disk->latency.device_p50_ns;
			low_kind = "window";
			if (halves && disk->first.count >= SATURATED_REQUESTS && disk->first.p50_ns < low_ns)
				low_ns = disk->first.p50_ns;
			if (halves && disk->second.count >= SATURATED_REQUESTS && disk->second.p50_ns < low_ns)
				low_ns = disk->second.p50_ns;
			low_source = "the least of the device time p50 and the halves' p50: no capacity saved";
		} else if (halves && first.r_s + first.w_s > 0) {
			low_ns = await_ns(&first);
			low_kind = "first_half";
			low_source = "the first half's await: no eBPF, no capacity saved";
		} else {
			continue;
		}
		if (!(low_ns > 0) || now_ns < SATURATED_LATENCY * low_ns)
			continue;

		f = doctor_finding_add(
		    out, DOCTOR_WARNING, "saturated",
		    "requests come faster than the disk serves them: each waits behind those before it, "
		    "so every reader and writer of it slows down, whatever %util says");
		if (waiting)
			snprintf(queue_text, sizeof(queue_text),
				 "requests wait in its queue (queue time p50 %.2f ms, device time %.2f ms)",
				 disk->latency.queue_p50_ns / 1e6, disk->latency.device_p50_ns / 1e6);
		else if (rising)
			snprintf(queue_text, sizeof(queue_text), "its queue grows (aqu-sz %.1f then %.1f)",
				 first.aqu_sz, second.aqu_sz);
		else
			snprintf(queue_text, sizeof(queue_text), "%.1f requests are in flight on average (aqu-sz)",
				 aqu_now);
		doctor_text(f->what, sizeof(f->what),
			    "disk %s is saturated: %s and a request takes %.2f ms at the median, %.1fx what it "
			    "takes at low load",
			    disk->end.name, queue_text, now_ns / 1e6, now_ns / low_ns);
		if (ebpf)
			used = (size_t)snprintf(
			    f->numbers, sizeof(f->numbers),
			    "p50 %.2f ms, p99 %.2f ms (device time %.2f, %.2f ms; queue time %.2f, %.2f ms) of "
			    "%llu requests (eBPF)",
			    disk->latency.p50_ns / 1e6, disk->latency.p99_ns / 1e6, disk->latency.device_p50_ns / 1e6,
			    disk->latency.device_p99_ns / 1e6, disk->latency.queue_p50_ns / 1e6,
			    disk->latency.queue_p99_ns / 1e6, (unsigned long long)disk->latency.count);
		else
			used =
			    (size_t)snprintf(f->numbers, sizeof(f->numbers),
					     "r_await %.2f ms, w_await %.2f ms (/proc/diskstats' averages: no eBPF, no "
					     "percentiles)",
					     x.r_await, x.w_await);
		used += (size_t)snprintf(f->numbers + used, used < sizeof(f->numbers) ? sizeof(f->numbers) - used : 0,
					 "; at low load %.2f ms (%s); aqu-sz %.2f", low_ns / 1e6, low_source, x.aqu_sz);
		if (halves)
			used += (size_t)snprintf(f->numbers + used,
						 used < sizeof(f->numbers) ? sizeof(f->numbers) - used : 0,
						 " (%.2f then %.2f)", first.aqu_sz, second.aqu_sz);
		if (disk->capacity_known && isfinite(disk->capacity_pct))
			used += (size_t)snprintf(f->numbers + used,
						 used < sizeof(f->numbers) ? sizeof(f->numbers) - used : 0,
						 "; %.0f %% of its capacity", disk->capacity_pct);
		used +=
		    (size_t)snprintf(f->numbers + used, used < sizeof(f->numbers) ? sizeof(f->numbers) - used : 0,
				     "; %%util %.0f (not the test: a disk serving requests in parallel is 100 %% busy "
				     "with one in flight)",
				     x.util);
		field_text(&f->data, "device", disk->end.name);
		field_text(&f->data, "queue", waiting ? "waiting" : rising ? "rising" : "standing");
		field_text(&f->data, "latency_source", ebpf ? "ebpf" : "diskstats");
		field_real(&f->data, "latency_ns", now_ns);
		field_real(&f->data, "low_load_ns", low_ns);
		field_text(&f->data, "low_load_source", low_kind);
		field_real(&f->data, "rise", now_ns / low_ns);
		field_count_if(&f->data, "requests", disk->latency.count, ebpf);
		field_real_if(&f->data, "p50_ns", disk->latency.p50_ns, ebpf);
		field_real_if(&f->data, "p99_ns", disk->latency.p99_ns, ebpf);
		field_real_if(&f->data, "device_p50_ns", disk->latency.device_p50_ns, ebpf);
		field_real_if(&f->data, "device_p99_ns", disk->latency.device_p99_ns, ebpf);
		field_real_if(&f->data, "queue_p50_ns", disk->latency.queue_p50_ns, ebpf);
		field_real_if(&f->data, "queue_p99_ns", disk->latency.queue_p99_ns, ebpf);
		field_real(&f->data, "r_await_ms", x.r_await);
		field_real(&f->data, "w_await_ms", x.w_await);
		field_real(&f->data, "aqu_sz", x.aqu_sz);
		field_real_if(&f->data, "aqu_sz_first_half", first.aqu_sz, halves);
		field_real_if(&f->data, "aqu_sz_second_half", second.aqu_sz, halves);
		field_real(&f->data, "util", x.util);
		field_real_if(&f->data, "capacity_pct", disk->capacity_pct,
			      disk->capacity_known && isfinite(disk->capacity_pct));
		load_process(s, disk, f, used);
		doctor_text(f->more, sizeof(f->more),
			    "iolens stat -x " DOCTOR_MORE_SAMPLES "; iolens stat --top-bio " DOCTOR_MORE_SAMPLES "");
	}
}

const struct doctor_rule rule_saturated = {
	.name = "saturated",
	.list_rank = 30, /* its place in --help-all and RULES */
	.judge_rank = 50, /* its findings' place among those of one severity */
	.help = "a disk whose queue grows (aqu-sz rising, or 2 and more, or at 1 and\n"
		"more requests waiting in the block layer as long as the device serves\n"
		"them) while a request takes twice what the disk takes at low load or\n"
		"more (its capacity's QD1 latency, else the window's least); not %util",
	.man = /* iolens-doctor(1), RULES: the paragraph after its name (roff) */
		"A whole device that did 20 requests or more in the window, whose queue\n"
		"grows and whose requests take longer than the disk takes at low load,\n"
		"whatever its\n"
		".BR %util :\n"
		"a disk that serves requests in parallel (an SSD, NVMe, a RAID set, a\n"
		"virtual disk, a loop device) is 100\\~% busy with one request in flight and\n"
		"may serve many more, so %util says nothing of its saturation.\n"
		"The queue grows when aqu\\-sz (the mean number of requests in flight, from\n"
		".IR /proc/diskstats )\n"
		"in the second half of the window is 1 or more and 1.5 times the first\n"
		"half's; or stands at 2 or more (each request waits on another: a queue\n"
		"that grew before the window began); or, where eBPF times the requests,\n"
		"when their median queue time (start to issue: in the I/O scheduler and the\n"
		"block layer) is at least their median device time (issue to completion)\n"
		"while one request or more is in flight on average (less is a disk that\n"
		"idles part of the time: a write that waits for a cache flush waits, but\n"
		"not for a saturated disk).\n"
		"The latency is the median of the requests completed in the second half\n"
		"(eBPF, start to completion, reads and writes together; without eBPF the\n"
		"average await of /proc/diskstats, said as such); it must be twice or more\n"
		"what the disk takes at low load: the median latency at queue depth 1 of\n"
		"random 4\\~KiB reads (or writes, when it wrote more) in the disk's saved\n"
		"capacity\n"
		".RB ( \"iolens bench \\-\\-profile \\-\\-save\\-capacity\" ,\n"
		"looked for in\n"
		".B $IOLENS_CAPACITY_DIR\n"
		"or\n"
		".IR /var/lib/iolens/capacity );\n"
		"without one, the least of the window's device time median and its\n"
		"halves' medians (so a steady load that queues inside the device, not in\n"
		"the block layer, is found only with a capacity); without eBPF either, the\n"
		"first half's await.\n"
		"The finding gives the median and 99th percentile of the total, device and\n"
		"queue times, the low-load latency and where it comes from, aqu-sz and its\n"
		"halves, the share of the capacity used (as\n"
		".B iolens stat \\-x\n"
		"computes %cap), %util for comparison, and who made the load: the user\n"
		"process that made the most block requests on the disk in the window, or\n"
		"the kernel's threads when together they made more (a loop device's\n"
		"workers, writeback: named by the busiest, with their count), when that is\n"
		"a fifth of the requests or more, else no one (eBPF, which counts them per\n"
		"process and disk), with the p50 and p99 of its own requests there, and\n"
		"whether it used other disks too; without eBPF, or when no request on the disk was\n"
		"counted, the one that read and wrote the most bytes on all disks\n"
		".RI ( /proc/PID/io ).\n"
		"Severity\n"
		".BR warning .\n",
	.thresholds = { -1 },
	.judge = judge,
};
