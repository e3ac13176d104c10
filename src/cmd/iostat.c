/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iostat.c: the iostat link: sysstat iostat's options, reports and JSON, from the collectors stat uses. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <locale.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#include "cmd/command.h"
#include "collect/bio.h"
#include "cmd/compat.h"
#include "collect/diskstats.h"
#include "collect/sysroot.h"
#include "collect/system.h"
#include "common/util.h"
#include "vtrace.h"

/* What the command line asked, as iostat's I_D_* flags say it. */
struct iostat_options {
	bool cpu, disk, extended, short_output, omit_idle, omit_since_boot, timestamp, json;
	bool human, pretty, compact, devmap_name;
	bool latency;      /* --latency: iolens's percentiles after iostat's columns (-x) */
	bool everything;   /* -p ALL (or -p alone): every line of /proc/diskstats, in its order */
	bool unfiltered;   /* devices were named: show them even with no I/O since boot */
	bool all_devices;  /* every whole device (the default, or ALL) */
	bool kilobytes, megabytes;
	int decimals;      /* --dec=N, -1: the default */
	long interval, count;
};

enum { T_DEV, T_PART, T_PART_DEV };

/* A device iostat reports on, with its counters at the two last samples. */
struct io_device {
	char name[64];
	int type;
	bool exist, warned;
	bool partition;    /* its requests' latencies are its disk's */
	struct disk_stats stats[2];
};

static struct iostat_options o = { .decimals = -1 };
static struct io_device **devices;
static size_t device_count;
static volatile sig_atomic_t interrupted;
/* --latency: the disks' latency histograms at the two last samples, when eBPF counts. */
static struct bio_disks latency[2];
static bool latency_known[2];

static _Noreturn void iostat_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static _Noreturn void iostat_usage_error(const char *fmt, ...)
{
	char text[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	/* iostat prints its usage and exits 1; one line here, with the same status. */
	fprintf(stderr, "%s: %s (see %s --help)\n", program_name, text, program_name);
	exit(EXIT_FAIL);
}

static void usage(bool all)
{
	static const char brief[] =
		"Usage: iostat [options] [DEVICE... | ALL] [INTERVAL [COUNT]]\n"
		"\n"
		"sysstat iostat's reports, through a link named iostat: CPU use and each\n"
		"device's I/O, since boot and then every INTERVAL seconds.\n"
		"\n"
		"Options:\n"
		"  -c           the CPU report only\n"
		"  -d           the device report only\n"
		"  -x           extended statistics: the 22 columns of iostat -x\n"
		"  -s           with -x, the short extended report\n"
		"  -z           omit devices with no I/O in the interval\n"
		"  -p [DEV,...|ALL]  the devices and their partitions (ALL: every one)\n"
		"  -h           human: sizes with units, % signs, a report in parts with -x\n"
		"  -k, -m       kilobytes (the default), megabytes\n"
		"  -y           omit the first report (the averages since boot)\n"
		"  -t           the time of each report\n"
		"  -N           device-mapper devices by their registered names\n"
		"  -o JSON      sysstat's JSON document\n"
		"  --dec=N      N decimal places (0, 1 or 2)\n"
		"  --latency    with -x, iolens's r_p50 r_p99 w_p50 w_p99 (ms, eBPF) last\n"
		"  --human, --pretty, --compact  -h's halves; -x -h in one part\n"
		"  -V           the version\n"
		"\n"
		"Exit status: 0, or 1 on bad usage (as iostat).\n"
		"\n"
		"Examples:\n"
		"  iostat -xz 1      extended statistics every second, busy devices only\n"
		"  iostat -dxm 2 5   five device reports in MB, two seconds apart\n";

	if (!all) {
		fputs(brief, stdout);
		printf("\nMore: %s --help-all, and man iolens-iostat.\n", program_name);
		exit(EXIT_OK);
	}
	fputs(brief, stdout);
	fputs("\n"
	      "Not taken (iostat's): -g and -H (groups), -j (persistent names), -f and +f\n"
	      "(another /sys): each is refused with a one-line message and exit 1.\n"
	      "\n"
	      "Columns of -x: r/s rkB/s rrqm/s %rrqm r_await rareq-sz w/s wkB/s wrqm/s\n"
	      "%wrqm w_await wareq-sz d/s dkB/s drqm/s %drqm d_await dareq-sz f/s f_await\n"
	      "aqu-sz %util; of the device report: tps kB_read/s kB_wrtn/s kB_dscd/s\n"
	      "kB_read kB_wrtn kB_dscd (MB with -m, blocks under POSIXLY_CORRECT).\n"
	      "\n"
	      "More: man iolens-iostat.\n",
	      stdout);
	exit(EXIT_OK);
}

/* ---- devices ---------------------------------------------------------------------------- */

static bool all_digits(const char *text)
{
	return strspn(text, "0123456789") == strlen(text);
}

/*
 * The device list, kept as iostat keeps it: in name order, except with -p ALL, where devices
 * come in /proc/diskstats' order (sda10 after sda9).
 */
static struct io_device *device_add(const char *name, int type)
{
	size_t at = device_count;

	for (size_t i = 0; i < device_count; i++) {
		int cmp = strcmp(devices[i]->name, name);

		if (!cmp) {
			if (type == T_PART_DEV && devices[i]->type == T_DEV)
				devices[i]->type = type;
			return devices[i];
		}
		if (!o.everything && cmp > 0) {
			at = i;
			break;
		}
	}
	struct io_device **grown = realloc(devices, (device_count + 1) * sizeof(*devices));
	struct io_device *d = calloc(1, sizeof(*d));

	if (!grown || !d) {
		warn_errno("memory", ENOMEM);
		exit(EXIT_FAIL);
	}
	devices = grown;
	memmove(devices + at + 1, devices + at, (device_count - at) * sizeof(*devices));
	devices[at] = d;
	device_count++;
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->type = type;
	return d;
}

/* A device as typed: "/dev/sda", a link to it, or "sda"; cciss!c0d0 as diskstats spells it. */
static void device_name(const char *typed, char *out, size_t size)
{
	char *resolved = realpath(typed, NULL);
	const char *name = typed;

	if (resolved)
		name = !strncmp(resolved, "/dev/", 5) ? resolved + 5 : resolved;
	snprintf(out, size, "%s", name);
	for (char *p = out; *p; p++)
		if (*p == '!')
			*p = '/';
	free(resolved);
}

/* -N: "vg-root" typed is dm-0, as /dev/mapper says. */
static void devmap_to_kernel_name(char *name, size_t size)
{
	char path[PATH_MAX], *resolved;

	snprintf(path, sizeof(path), "/dev/mapper/%s", name);
	if ((resolved = realpath(path, NULL))) {
		if (!strncmp(resolved, "/dev/", 5))
			snprintf(name, size, "%s", resolved + 5);
		free(resolved);
	}
}

static void add_typed_device(const char *typed, int type)
{
	char name[64];

	device_name(typed, name, sizeof(name));
	if (o.devmap_name)
		devmap_to_kernel_name(name, sizeof(name));
	device_add(name, type);
}

/* Whole devices are those of /sys/block: not partitions. */
static bool whole_device(const struct diskstats *stats, unsigned i)
{
	return !stats->kind[i].partition;
}

static void read_devices(const struct diskstats *stats, int curr)
{
	for (size_t i = 0; i < device_count; i++)
		devices[i]->exist = false;

	if (o.everything) {
		for (unsigned i = 0; i < stats->count; i++) {
			struct io_device *d = device_add(stats->disk[i].name, T_DEV);

			d->stats[curr] = stats->disk[i];
			d->partition = stats->kind[i].partition;
			d->exist = true;
		}
		return;
	}
	/*
	 * The devices named, then (-p DEV) their partitions. The list grows as it is read: an entry
	 * put before the one read moves that one on, to be seen again and passed over (found).
	 */
	for (size_t i = 0; i < device_count; i++) {
		struct io_device *d = devices[i];
		const struct disk_stats *found;

		if (d->exist || !(found = diskstats_find(stats, d->name)))
			continue;
		d->stats[curr] = *found;
		d->partition = stats->kind[found - stats->disk].partition;
		d->exist = true;
		if (d->type != T_PART_DEV)
			continue;
		char whole[64];

		snprintf(whole, sizeof(whole), "%s", d->name);
		for (unsigned j = 0; j < stats->count; j++) {
			if (!stats->kind[j].partition || strcmp(stats->kind[j].whole, whole))
				continue;
			struct io_device *part = device_add(stats->disk[j].name, T_PART);

			part->stats[curr] = stats->disk[j];
			part->partition = true;
			part->exist = true;
		}
	}
	if (o.all_devices)
		for (unsigned i = 0; i < stats->count; i++) {
			if (!whole_device(stats, i))
				continue;
			struct io_device *d = device_add(stats->disk[i].name, T_DEV);

			d->stats[curr] = stats->disk[i];
			d->partition = false;
			d->exist = true;
		}
	for (size_t i = 0; i < device_count; i++)
		if (!devices[i]->exist && !devices[i]->warned) {
			warn_msg("%s: no such device in /proc/diskstats", printable_name(devices[i]->name));
			devices[i]->warned = true;
		}
}

/* The name shown: -N gives a device-mapper device its registered name. */
static const char *shown_name(const struct io_device *d, char *buf, size_t size)
{
	snprintf(buf, size, "%s", d->name);
	if (o.devmap_name && !strncmp(d->name, "dm-", 3)) {
		char path[PATH_MAX], text[128];

		snprintf(path, sizeof(path), "/sys/block/%s/dm/name", d->name);
		if (!sysroot_read_string(path, text, sizeof(text)) && text[0])
			snprintf(buf, size, "%s", text);
	}
	for (char *p = buf; *p; p++)
		if (*p == '!')
			*p = '/';
	return buf;
}

/* ---- numbers, printed as sysstat's cprintf_* print them ---------------------------------- */

enum { NO_UNIT = -1, UNIT_SECTOR = 0, UNIT_KILOBYTE = 2 };
static const char units[] = { 's', 'B', 'k', 'M', 'G', 'T', 'P', '?' };

/* S_VALUE(): a change per second, the interval in hundredths of a second. */
static double s_value(uint64_t before, uint64_t after, uint64_t itv)
{
	return (double)(after - before) / (double)itv * 100;
}

static void print_unit(int unit, int width, double value)
{
	if (width < 4)
		width = 4;
	if (unit == UNIT_SECTOR) {
		value /= 2;
		unit = UNIT_KILOBYTE;
	}
	while (value >= 1024) {
		value /= 1024;
		unit++;
	}
	if (unit >= (int)sizeof(units))
		unit = sizeof(units) - 1;
	printf(" %*.*f%c", width - 1, o.decimals ? 1 : 0, value, units[unit]);
}

static void print_f(int unit, int width, int decimals, double value)
{
	if (decimals > 0 && o.decimals >= 0)
		decimals = o.decimals;
	if (unit < 0)
		printf(" %*.*f", width, decimals, value);
	else
		print_unit(unit, width, value);
}

static void print_pc(int width, int decimals, double value)
{
	if (decimals > 0 && o.decimals >= 0)
		decimals = o.decimals;
	if (o.human) {
		if (width < 4)
			width = 4;
		width -= 1;
		if (decimals > 1)
			decimals -= 1;
	}
	printf(" %*.*f%s", width, decimals, value, o.human ? "%" : "");
}

static void print_u64(int unit, int width, uint64_t value)
{
	if (unit < 0)
		printf(" %*llu", width, (unsigned long long)value);
	else
		print_unit(unit, width, (double)value);
}

static void tabs(int n)
{
	while (n-- > 0)
		putchar('\t');
}

/* S_TIME_FORMAT=ISO: dates as ISO 8601, as sysstat's tools print them. */
static bool iso_time(void)
{
	const char *format = getenv("S_TIME_FORMAT");

	return format && !strcmp(format, "ISO");
}

/* ---- the reports --------------------------------------------------------------------------- */

struct cpu_sample {
	uint64_t user, nice, sys, idle, iowait, steal, total;
};

static double cpu_pc(uint64_t before, uint64_t after, uint64_t jiffies)
{
	return after < before ? 0.0 : (double)(after - before) / (double)jiffies * 100;
}

static void write_cpu(const struct cpu_sample *p, const struct cpu_sample *c, int tab)
{
	uint64_t jiffies = c->total - p->total ? c->total - p->total : 1;
	double v[6] = {
		cpu_pc(p->user, c->user, jiffies),   cpu_pc(p->nice, c->nice, jiffies),
		cpu_pc(p->sys, c->sys, jiffies),     cpu_pc(p->iowait, c->iowait, jiffies),
		cpu_pc(p->steal, c->steal, jiffies), c->idle < p->idle ? 0.0 : cpu_pc(p->idle, c->idle, jiffies),
	};

	if (o.json) {
		tabs(tab);
		printf("\"avg-cpu\":  {\"user\": %.2f, \"nice\": %.2f, \"system\": %.2f,"
		       " \"iowait\": %.2f, \"steal\": %.2f, \"idle\": %.2f}",
		       v[0], v[1], v[2], v[3], v[4], v[5]);
		return;
	}
	printf("avg-cpu:  %%user   %%nice %%system %%iowait  %%steal   %%idle\n");
	printf("       ");
	for (int i = 0; i < 6; i++)
		print_pc(7, 2, v[i]);
	printf("\n\n");
}

/* The unit and its factor from sectors: kB (2), MB (2048), or sectors (POSIXLY_CORRECT). */
static int unit_factor(const char **units_name, const char **space)
{
	*space = " ";
	if (o.kilobytes) {
		*units_name = "kB";
		return 2;
	}
	if (o.megabytes) {
		*units_name = "MB";
		return 2048;
	}
	*space = "";
	*units_name = o.extended ? "sec" : "Blk";
	return 1;
}

static void write_disk_header(int hpart)
{
	const char *u, *spc;

	unit_factor(&u, &spc);
	if (!o.pretty)
		printf("Device       ");
	if (o.extended) {
		if (o.short_output)
			printf("      tps     %s%s/s    rqm/s   await  areq-sz  aqu-sz  %%util", spc, u);
		else {
			if (hpart == 1 || !hpart)
				printf("     r/s    %sr%s/s   rrqm/s  %%rrqm r_await rareq-sz", spc, u);
			if (hpart == 2 || !hpart)
				printf("     w/s    %sw%s/s   wrqm/s  %%wrqm w_await wareq-sz", spc, u);
			if (hpart == 3 || !hpart)
				printf("     d/s    %sd%s/s   drqm/s  %%drqm d_await dareq-sz", spc, u);
			if (hpart == 4 || !hpart)
				printf("     f/s f_await  aqu-sz  %%util%s",
				       o.latency ? "   r_p50   r_p99   w_p50   w_p99" : "");
		}
	} else if (o.short_output)
		printf("      tps   %s%s_read/s    %s%s_w+d/s   %s%s_read    %s%s_w+d", spc, u, spc, u, spc, u, spc, u);
	else
		printf("      tps   %s%s_read/s   %s%s_wrtn/s   %s%s_dscd/s   %s%s_read   %s%s_wrtn   %s%s_dscd",
		       spc, u, spc, u, spc, u, spc, u, spc, u, spc, u);
	if (o.pretty)
		printf(" Device");
	printf("\n");
}

/* One direction's figures as write_ext_stat makes them: ticks are 32-bit, as the kernel's. */
struct direction {
	double ios_s, sectors_s, merges_s, merges_pc, await, arqsz;
};

static struct direction direction(uint64_t ios0, uint64_t ios1, uint64_t merges0, uint64_t merges1,
				  uint64_t sect0, uint64_t sect1, uint32_t ticks0, uint32_t ticks1, uint64_t itv)
{
	uint64_t ios = ios1 - ios0, merges = merges1 - merges0;

	return (struct direction){
		.ios_s = s_value(ios0, ios1, itv),
		.sectors_s = s_value(sect0, sect1, itv),
		.merges_s = s_value(merges0, merges1, itv),
		.merges_pc = merges + ios ? (double)merges / (double)(merges + ios) * 100 : 0.0,
		.await = ios ? (uint32_t)(ticks1 - ticks0) / (double)ios : 0.0,
		.arqsz = ios ? (double)(sect1 - sect0) / (double)ios : 0.0,
	};
}

/*
 * --latency: the median and 99th percentile of a disk's reads and writes (start to completion,
 * ms) completed between the two samples; NaN when unknown (no eBPF, the report since boot, a
 * partition, whose requests are its disk's).
 */
static void latency_figures(const struct io_device *d, int curr, double out[4])
{
	static uint64_t histogram[LOG_LINEAR_BUCKETS];

	for (int k = 0; k < 4; k++)
		out[k] = NAN;
	if (!latency_known[0] || !latency_known[1] || d->partition)
		return;
	const struct bio_disk *a = bio_disks_find(&latency[!curr], d->stats[curr].major, d->stats[curr].minor);
	const struct bio_disk *b = bio_disks_find(&latency[curr], d->stats[curr].major, d->stats[curr].minor);

	for (unsigned op = BIO_LAT_READ; op <= BIO_LAT_WRITE; op++) {
		for (unsigned bucket = 0; bucket < LOG_LINEAR_BUCKETS; bucket++) {
			uint64_t before = a ? a->histogram[BIO_LAT_TOTAL][op][bucket] : 0;
			uint64_t after = b ? b->histogram[BIO_LAT_TOTAL][op][bucket] : 0;

			histogram[bucket] = after > before ? after - before : 0;
		}
		out[op * 2] = (double)vtrace_histogram_quantile(histogram, 0.5) / 1e6;
		out[op * 2 + 1] = (double)vtrace_histogram_quantile(histogram, 0.99) / 1e6;
	}
}

static void write_ext(const struct disk_stats *j, const struct disk_stats *i, uint64_t itv, int fctr, int hpart,
		      const char *name, int tab, const double lat[4])
{
	static const char *const lat_keys[4] = { "r_p50", "r_p99", "w_p50", "w_p99" };
	struct direction r = direction(j->rd_ios, i->rd_ios, j->rd_merges, i->rd_merges, j->rd_sectors, i->rd_sectors,
				       (uint32_t)j->rd_ticks, (uint32_t)i->rd_ticks, itv);
	struct direction w = direction(j->wr_ios, i->wr_ios, j->wr_merges, i->wr_merges, j->wr_sectors, i->wr_sectors,
				       (uint32_t)j->wr_ticks, (uint32_t)i->wr_ticks, itv);
	struct direction dc = direction(j->dc_ios, i->dc_ios, j->dc_merges, i->dc_merges, j->dc_sectors, i->dc_sectors,
					(uint32_t)j->dc_ticks, (uint32_t)i->dc_ticks, itv);
	uint64_t fl_ios = i->fl_ios - j->fl_ios;
	double f_s = s_value(j->fl_ios, i->fl_ios, itv);
	double f_await = fl_ios ? (uint32_t)((uint32_t)i->fl_ticks - (uint32_t)j->fl_ticks) / (double)fl_ios : 0.0;
	double aqu =
	    (double)(uint32_t)((uint32_t)i->time_in_queue - (uint32_t)j->time_in_queue) / (double)itv * 100 / 1000.0;
	double util = (double)(uint32_t)((uint32_t)i->io_ticks - (uint32_t)j->io_ticks) / (double)itv * 100 / 10.0;
	/* The short report: every direction together (flushes are not requests of their own). */
	uint64_t nr0 = j->rd_ios + j->wr_ios + j->dc_ios, nr1 = i->rd_ios + i->wr_ios + i->dc_ios;
	uint32_t ticks = ((uint32_t)i->rd_ticks - (uint32_t)j->rd_ticks) +
	    ((uint32_t)i->wr_ticks - (uint32_t)j->wr_ticks) + ((uint32_t)i->dc_ticks - (uint32_t)j->dc_ticks);
	uint64_t sect =
	    (i->rd_sectors - j->rd_sectors) + (i->wr_sectors - j->wr_sectors) + (i->dc_sectors - j->dc_sectors);
	double await = nr1 - nr0 ? ticks / (double)(nr1 - nr0) : 0.0;
	double arqsz = nr1 - nr0 ? sect / (double)(nr1 - nr0) : 0.0;
	double tps = s_value(nr0, nr1, itv);
	double rqm =
	    s_value(j->rd_merges + j->wr_merges + j->dc_merges, i->rd_merges + i->wr_merges + i->dc_merges, itv);
	double sectors = r.sectors_s + w.sectors_s + dc.sectors_s;

	if (o.json) {
		const char *u = o.megabytes ? "MB" : o.kilobytes ? "kB" : "sec";

		tabs(tab);
		printf("{\"disk_device\": \"%s\", ", name);
		if (o.short_output)
			printf("\"tps\": %.2f, \"%s/s\": %.2f, \"rqm/s\": %.2f, \"await\": %.2f, "
			       "\"areq-sz\": %.2f, \"aqu-sz\": %.2f, ",
			       tps, u, sectors / fctr, rqm, await, arqsz / 2, aqu);
		else {
			printf("\"r/s\": %.2f, \"w/s\": %.2f, \"d/s\": %.2f, \"f/s\": %.2f, ", r.ios_s, w.ios_s,
			       dc.ios_s, f_s);
			printf("\"r%s/s\": %.2f, \"w%s/s\": %.2f, \"d%s/s\": %.2f, ", u, r.sectors_s / fctr, u,
			       w.sectors_s / fctr, u, dc.sectors_s / fctr);
			printf("\"rrqm/s\": %.2f, \"wrqm/s\": %.2f, \"drqm/s\": %.2f, "
			       "\"rrqm\": %.2f, \"wrqm\": %.2f, \"drqm\": %.2f, "
			       "\"r_await\": %.2f, \"w_await\": %.2f, \"d_await\": %.2f, \"f_await\": %.2f, "
			       "\"rareq-sz\": %.2f, \"wareq-sz\": %.2f, \"dareq-sz\": %.2f, "
			       "\"aqu-sz\": %.2f, ",
			       r.merges_s, w.merges_s, dc.merges_s, r.merges_pc, w.merges_pc, dc.merges_pc, r.await,
			       w.await, dc.await, f_await, r.arqsz / 2, w.arqsz / 2, dc.arqsz / 2, aqu);
		}
		printf("\"util\": %.2f", util);
		for (int k = 0; o.latency && !o.short_output && k < 4; k++)
			if (isnan(lat[k]))
				printf(", \"%s\": null", lat_keys[k]);
			else
				printf(", \"%s\": %.2f", lat_keys[k], lat[k]);
		printf("}");
		return;
	}
	int sector_unit = o.human ? UNIT_SECTOR : NO_UNIT, kb_unit = o.human ? UNIT_KILOBYTE : NO_UNIT;
	double div = o.human ? 1 : fctr;

	if (!o.pretty)
		printf("%-13s", name);
	if (o.short_output) {
		print_f(NO_UNIT, 8, 2, tps);
		print_f(sector_unit, 9, 2, sectors / div);
		print_f(NO_UNIT, 8, 2, rqm);
		print_f(NO_UNIT, 7, 2, await);
		print_f(kb_unit, 8, 2, arqsz / 2);
		print_f(NO_UNIT, 7, 2, aqu);
		print_pc(6, 2, util);
	} else {
		const struct direction *dirs[3] = { &r, &w, &dc };

		for (int part = 1; part <= 3; part++) {
			const struct direction *x = dirs[part - 1];

			if (hpart && hpart != part)
				continue;
			print_f(NO_UNIT, 7, 2, x->ios_s);
			print_f(sector_unit, 9, 2, x->sectors_s / div);
			print_f(NO_UNIT, 8, 2, x->merges_s);
			print_pc(6, 2, x->merges_pc);
			print_f(NO_UNIT, 7, 2, x->await);
			print_f(kb_unit, 8, 2, x->arqsz / 2);
		}
		if (!hpart || hpart == 4) {
			print_f(NO_UNIT, 7, 2, f_s);
			print_f(NO_UNIT, 7, 2, f_await);
			print_f(NO_UNIT, 7, 2, aqu);
			print_pc(6, 2, util);
			for (int k = 0; o.latency && k < 4; k++)
				if (isnan(lat[k]))
					printf(" %7s", "-");
				else
					print_f(NO_UNIT, 7, 2, lat[k]);
		}
	}
	if (o.pretty)
		printf(" %s", name);
	printf("\n");
}

/* Sectors between the samples, a 32-bit counter's wrap counted forward as iostat does. */
static uint64_t sectors_between(uint64_t before, uint64_t after)
{
	uint64_t delta = after - before;

	if (after < before && before <= 0xffffffff)
		delta &= 0xffffffff;
	return delta;
}

static void write_basic(const struct disk_stats *j, const struct disk_stats *i, uint64_t itv, int fctr,
			const char *name, int tab)
{
	uint64_t rd = sectors_between(j->rd_sectors, i->rd_sectors), wr = sectors_between(j->wr_sectors, i->wr_sectors);
	uint64_t dc = sectors_between(j->dc_sectors, i->dc_sectors);
	double tps = s_value(j->rd_ios + j->wr_ios + j->dc_ios, i->rd_ios + i->wr_ios + i->dc_ios, itv);
	double rs = s_value(j->rd_sectors, i->rd_sectors, itv), ws = s_value(j->wr_sectors, i->wr_sectors, itv);
	double ds = s_value(j->dc_sectors, i->dc_sectors, itv);

	if (o.json) {
		const char *u = o.kilobytes ? "kB" : o.megabytes ? "MB" : "Blk";

		tabs(tab);
		printf("{\"disk_device\": \"%s\", \"tps\": %.2f, ", name, tps);
		printf("\"%s_read/s\": %.2f, \"%s_wrtn/s\": %.2f, \"%s_dscd/s\": %.2f, "
		       "\"%s_read\": %llu, \"%s_wrtn\": %llu, \"%s_dscd\": %llu}",
		       u, rs / fctr, u, ws / fctr, u, ds / fctr, u, (unsigned long long)rd / fctr, u,
		       (unsigned long long)wr / fctr, u, (unsigned long long)dc / fctr);
		return;
	}
	int unit = o.human ? UNIT_SECTOR : NO_UNIT;

	if (!o.pretty)
		printf("%-13s", name);
	if (!o.human) {
		rs /= fctr;
		ws /= fctr;
		ds /= fctr;
	}
	print_f(NO_UNIT, 8, 2, tps);
	if (o.short_output) {
		print_f(unit, 12, 2, rs);
		print_f(unit, 12, 2, ws + ds);
		print_u64(unit, 10, o.human ? rd : rd / fctr);
		print_u64(unit, 10, o.human ? wr + dc : (wr + dc) / fctr);
	} else {
		print_f(unit, 12, 2, rs);
		print_f(unit, 12, 2, ws);
		print_f(unit, 12, 2, ds);
		print_u64(unit, 10, o.human ? rd : rd / fctr);
		print_u64(unit, 10, o.human ? wr : wr / fctr);
		print_u64(unit, 10, o.human ? dc : dc / fctr);
	}
	if (o.pretty)
		printf(" %s", name);
	printf("\n");
}

/*
 * The locale's date (%x) as iostat prints it: two-digit years in the C locale are what a
 * script reading iostat expects, so -Wformat-y2k is told so here, once.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-y2k"
static void locale_date(char *buf, size_t size, const struct tm *tm, bool with_time)
{
	if (iso_time())
		strftime(buf, size, with_time ? "%FT%T%z" : "%Y-%m-%d", tm);
	else
		strftime(buf, size, with_time ? "%x %X" : "%x", tm);
}
#pragma GCC diagnostic pop

static void write_timestamp(int tab, const struct tm *now)
{
	char text[64];

	locale_date(text, sizeof(text), now, true);
	if (o.json) {
		tabs(tab);
		printf("\"timestamp\": \"%s\",\n", text);
	} else
		printf("%s\n", text);
}

static void write_stats(int curr, const struct cpu_sample cpu[2], const uint64_t uptime_cs[2], const struct tm *now,
			bool skip)
{
	int tab = 4;

	if (o.json && !skip) {
		tabs(tab++);
		printf("{\n");
	}
	if (o.timestamp && !skip)
		write_timestamp(tab, now);
	if (o.cpu && !skip) {
		write_cpu(&cpu[!curr], &cpu[curr], tab);
		if (o.json)
			printf("%s\n", o.disk ? "," : "");
	}
	uint64_t itv = uptime_cs[curr] - uptime_cs[!curr] ? uptime_cs[curr] - uptime_cs[!curr] : 1;

	if (o.disk) {
		int hl = 0, hh = 0;
		bool next = false;
		struct disk_stats zero = {0};
		const char *u, *spc;
		int fctr = unit_factor(&u, &spc);

		if (o.pretty && o.extended && !o.short_output && !o.json && !o.compact) {
			hl = 1;
			hh = 4;
		}
		for (int h = hl; h <= hh; h++) {
			if (!skip) {
				if (o.json) {
					tabs(tab++);
					printf("\"disk\": [\n");
				} else
					write_disk_header(h);
			}
			for (size_t k = 0; k < device_count; k++) {
				const struct io_device *d = devices[k];
				const struct disk_stats *i = &d->stats[curr], *j = &d->stats[!curr];
				char name[128];

				if (!d->exist)
					continue;
				if (!o.unfiltered && !i->rd_ios && !i->wr_ios && !i->dc_ios && !i->fl_ios)
					continue;
				if (o.omit_idle && i->rd_ios == j->rd_ios && i->wr_ios == j->wr_ios &&
				    i->dc_ios == j->dc_ios && i->fl_ios == j->fl_ios)
					continue;
				/* Removed and added again: its counters started over. */
				if (i->rd_ios + i->wr_ios + i->dc_ios + i->fl_ios <
					j->rd_ios + j->wr_ios + j->dc_ios + j->fl_ios &&
				    (!j->rd_sectors || i->rd_sectors < j->rd_sectors) &&
				    (!j->wr_sectors || i->wr_sectors < j->wr_sectors) &&
				    (!j->dc_sectors || i->dc_sectors < j->dc_sectors))
					j = &zero;
				if (skip)
					continue;
				if (o.json && next)
					printf(",\n");
				next = true;
				shown_name(d, name, sizeof(name));
				if (o.extended) {
					double lat[4];

					latency_figures(d, curr, lat);
					write_ext(j, i, itv, fctr, h, name, tab, lat);
				}
				else
					write_basic(j, i, itv, fctr, name, tab);
			}
			if (h > 0 && h < hh && !skip)
				printf("\n");
		}
		if (o.json && !skip) {
			printf("\n");
			tabs(--tab);
			printf("]\n");
		}
	}
	if (!skip) {
		if (o.json) {
			tabs(--tab);
			printf("}");
		} else
			printf("\n");
	}
}

/* ---- the command line and the loop ------------------------------------------------------- */

static void on_interrupt(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* Processors as iostat counts them: the cpuN directories of /sys, else /proc/stat's lines. */
static int cpu_count(const struct procstat *stat)
{
	DIR *dir = opendir("/sys/devices/system/cpu");
	struct dirent *entry;
	int n = 0;

	if (dir) {
		while ((entry = readdir(dir)))
			if (!strncmp(entry->d_name, "cpu", 3) && isdigit((unsigned char)entry->d_name[3]))
				n++;
		closedir(dir);
	}
	return n ? n : (int)stat->ncpu;
}

static void parse_p_list(char *list)
{
	o.unfiltered = true;
	for (char *t = strtok(list, ","); t; t = strtok(NULL, ","))
		if (!strcmp(t, "ALL"))
			o.everything = true;
		else
			add_typed_device(t, T_PART_DEV);
}

static void parse_options(int argc, char **argv)
{
	int it = 0;
	bool report_set = false;

	o.count = 1;
	for (int opt = 1; opt < argc;) {
		const char *arg = argv[opt];

		if (!strcmp(arg, "--help"))
			usage(false);
		else if (!strcmp(arg, "--help-all"))
			usage(true);
		else if (!strcmp(arg, "-p")) {
			/* -p DEV,... or -p ALL; a -p followed by a number or an option means ALL. */
			if (opt + 1 < argc && !all_digits(argv[opt + 1]) && argv[opt + 1][0] != '-') {
				parse_p_list(argv[opt + 1]);
				opt += 2;
			} else {
				o.everything = true;
				opt++;
			}
		} else if (!strcmp(arg, "-g") || !strcmp(arg, "-j") || !strcmp(arg, "-f") || !strcmp(arg, "+f"))
			iostat_usage_error("%s is iostat's, not taken through this link", arg);
		else if (!strcmp(arg, "--human")) {
			o.human = true;
			opt++;
		} else if (!strcmp(arg, "--pretty")) {
			o.pretty = true;
			opt++;
		} else if (!strcmp(arg, "--latency")) {
			o.latency = true;
			opt++;
		} else if (!strcmp(arg, "--compact")) {
			o.compact = true;
			opt++;
		} else if (!strncmp(arg, "--dec=", 6)) {
			if (strlen(arg) != 7 || arg[6] < '0' || arg[6] > '2')
				iostat_usage_error("--dec takes 0, 1 or 2, not '%s'", printable_name(arg + 6));
			o.decimals = arg[6] - '0';
			opt++;
		} else if (!strcmp(arg, "-o")) {
			if (opt + 1 >= argc || strcmp(argv[opt + 1], "JSON"))
				iostat_usage_error("-o takes JSON%s%s", opt + 1 < argc ? ", not " : "",
						   opt + 1 < argc ? printable_name(argv[opt + 1]) : "");
			o.json = true;
			opt += 2;
		} else if (arg[0] == '-') {
			for (int i = 1; arg[i]; i++)
				switch (arg[i]) {
				case 'c':
					o.cpu = report_set = true;
					break;
				case 'd':
					o.disk = report_set = true;
					break;
				case 'h':
					o.pretty = o.human = true;
					break;
				case 'k':
					if (o.megabytes)
						iostat_usage_error("-k and -m: one unit");
					o.kilobytes = true;
					break;
				case 'm':
					if (o.kilobytes)
						iostat_usage_error("-k and -m: one unit");
					o.megabytes = true;
					break;
				case 'N':
					o.devmap_name = true;
					break;
				case 'p':
					o.everything = true;
					break;
				case 's':
					o.short_output = true;
					break;
				case 't':
					o.timestamp = true;
					break;
				case 'x':
					o.extended = true;
					break;
				case 'y':
					o.omit_since_boot = true;
					break;
				case 'z':
					o.omit_idle = true;
					break;
				case 'V':
					printf("iostat (iolens %s): sysstat iostat's options and reports\n",
					       IOLENS_VERSION);
					exit(EXIT_OK);
				case 'H':
					iostat_usage_error("-H is iostat's, not taken through this link");
				default:
					if (isprint((unsigned char)arg[i]))
						iostat_usage_error("invalid option -- '%c'", arg[i]);
					iostat_usage_error("invalid option -- '\\x%02x'", (unsigned char)arg[i]);
				}
			opt++;
		} else if (!all_digits(arg)) {
			/* A device (ALL: every one, even idle). */
			o.unfiltered = true;
			if (strcmp(arg, "ALL"))
				add_typed_device(arg, T_DEV);
			else
				o.all_devices = true;
			opt++;
		} else if (!it) {
			errno = 0;
			o.interval = strtol(arg, NULL, 10);
			if (errno || o.interval > INT_MAX)
				iostat_usage_error("interval '%s' is too large", printable_name(arg));
			o.count = -1;
			it = 1;
			opt++;
		} else if (it > 0) {
			errno = 0;
			o.count = strtol(arg, NULL, 10);
			if (errno || o.count < 1)
				iostat_usage_error("count '%s': at least 1", printable_name(arg));
			if (!o.interval)
				iostat_usage_error("a count needs an interval above 0");
			it = -1;
			opt++;
		} else
			iostat_usage_error("'%s' after the interval and count", printable_name(arg));
	}
	if (!o.interval)
		o.count = 1;
	if (!report_set)
		o.cpu = o.disk = true;
	if (o.everything || o.extended || o.unfiltered)
		o.disk = true;
	if (!o.unfiltered)
		o.all_devices = true;
	if (!o.kilobytes && !o.megabytes && !getenv("POSIXLY_CORRECT"))
		o.kilobytes = true;
}

static void take_sample(int curr, struct cpu_sample cpu[2], uint64_t uptime_cs[2], struct system_sample *s)
{
	unsigned failed = system_sample_read(s, SYS_UPTIME | SYS_PROCSTAT | SYS_DISKSTATS);

	if (failed & (SYS_UPTIME | SYS_PROCSTAT)) {
		unsigned which = failed & SYS_UPTIME ? SYS_UPTIME : SYS_PROCSTAT;

		warn_errno(system_source_name(which), -s->error[system_source_index(which)]);
		exit(EXIT_FAIL + 1); /* iostat: "Cannot read /proc/uptime", exit 2 */
	}
	if (failed & SYS_DISKSTATS)
		warn_errno(system_source_name(SYS_DISKSTATS), -s->error[system_source_index(SYS_DISKSTATS)]);
	/* /proc/uptime's hundredths, as iostat reads them. */
	uptime_cs[curr] = (uint64_t)(s->uptime * 100 + 0.5);
	const struct cpu_times *t = &s->procstat.total;

	cpu[curr] = (struct cpu_sample){
		.user = t->user, .nice = t->nice, .sys = t->system + t->softirq + t->irq, .idle = t->idle,
		.iowait = t->iowait, .steal = t->steal,
		.total = t->user + t->nice + t->system + t->idle + t->iowait + t->irq + t->steal + t->softirq,
	};
	read_devices(&s->disks, curr);
	if (o.latency) {
		bio_disks_free(&latency[curr]);
		latency_known[curr] = bio_read_disks(&latency[curr]) == 0;
	}
}

int cmd_iostat(int argc, char **argv)
{
	struct cpu_sample cpu[2] = {0};
	uint64_t uptime_cs[2] = {0};
	struct system_sample sample;
	struct utsname uts;
	struct tm now;
	time_t clock_now = time(NULL);
	char date[64];
	int curr = 1;
	bool skip;
	struct timespec next;

	/* iostat's dates and numbers in the user's locale (JSON keeps the C decimal point). */
	setlocale(LC_TIME, "");
	parse_options(argc, argv);
	if (!o.json)
		setlocale(LC_NUMERIC, "");

	localtime_r(&clock_now, &now);
	uname(&uts);
	locale_date(date, sizeof(date), &now, false);

	struct procstat stat = {0};
	int ncpu = procstat_read(&stat) ? 1 : cpu_count(&stat);

	procstat_free(&stat);
	if (!o.json)
		printf("%s %s (%s) \t%s \t_%s_\t(%d CPU)\n\n", uts.sysname, uts.release, uts.nodename, date,
		       uts.machine, ncpu);
	else {
		printf("{\"sysstat\": {\n\t\"hosts\": [\n\t\t{\n");
		printf("\t\t\t\"nodename\": \"%s\",\n\t\t\t\"sysname\": \"%s\",\n\t\t\t\"release\": \"%s\",\n",
		       uts.nodename, uts.sysname, uts.release);
		printf("\t\t\t\"machine\": \"%s\",\n\t\t\t\"number-of-cpus\": %d,\n\t\t\t\"date\": \"%s\",\n",
		       uts.machine, ncpu, date);
		printf("\t\t\t\"statistics\": [\n");
	}
	fflush(stdout);
	if (o.latency && !o.extended)
		o.latency = false;
	if (o.latency) {
		const char *why = NULL;

		/* Loaded only when asked: iostat's own columns need no eBPF. */
		if (bio_start(BIO_WANT_DISKS, &why)) {
			warn_msg("--latency: %s", why ? why : "eBPF did not load");
			o.latency = false;
		}
	}

	struct sigaction act = { .sa_handler = on_interrupt };

	/* Ctrl-C (as iostat) and SIGTERM end the run between reports, a JSON document closed. */
	sigaction(SIGINT, &act, NULL);
	sigaction(SIGTERM, &act, NULL);
	skip = o.omit_since_boot && o.interval > 0;
	clock_gettime(CLOCK_MONOTONIC, &next);
	long count = o.count;

	do {
		take_sample(curr, cpu, uptime_cs, &sample);
		clock_now = time(NULL);
		localtime_r(&clock_now, &now);
		write_stats(curr, cpu, uptime_cs, &now, skip);
		system_sample_free(&sample);
		if (!skip && count > 0)
			count--;
		if (count) {
			curr ^= 1;
			fflush(stdout);
			/* Every INTERVAL seconds from the start, as iostat's alarm() ticks. */
			next.tv_sec += o.interval;
			while (!interrupted && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
				;
			if (interrupted)
				count = 0;
			else if (o.json && count && !skip)
				printf(",");
			skip = false;
		}
		printf("\n");
		fflush(stdout);
	} while (count);
	if (o.json)
		printf("\t\t\t]\n\t\t}\n\t]\n}}\n");
	if (fflush(stdout) || ferror(stdout))
		return EXIT_FAIL;
	return EXIT_OK;
}
