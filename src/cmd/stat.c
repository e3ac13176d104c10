/* SPDX-License-Identifier: GPL-2.0-or-later */
/* stat.c: iolens stat: a dstat-compatible live monitor with iostat -x, pressure, page cache and libvtrace columns. */
#include <errno.h>
#include <math.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "cmd/command.h"
#include "cmd/recorded.h"
#include "cmd/stat.h"
#include "collect/bio.h"
#include "collect/cache_events.h"
#include "collect/ebpf.h"
#include "collect/segments.h"
#include "collect/sysroot.h"
#include "collect/system.h"
#include "common/path_walk.h"
#include "common/signals.h"
#include "common/util.h"
#include "render/out.h"
#include "render/record.h"
#include "store/window.h"

#define MAX_GROUPS 128

/* What the options asked for. */
struct stat_options {
	enum group_kind order[G_KINDS * 2]; /* group kinds in the order asked */
	unsigned norder;
	char *cpus, *disks, *nets, *swaps, *irqs; /* -C -D -N -S -I lists, NULL when not given */
	bool full, cpu_adv;
	bool integer, floats, nocolor, noheaders, noupdate, no_boot_sample;
	bool color;           /* --color: colours even off a terminal */
	bool bits;            /* --bits */
	bool human;           /* --human: -x's sizes scaled (iostat -h) */
	bool omit_idle;       /* -z: disks without I/O in the interval left out (iostat -z) */
	bool partitions;      /* --partitions: each disk listed followed by its partitions (iostat -p) */
	bool all_devices;     /* --partitions=ALL: also the devices without a medium or any I/O (iostat -p ALL) */
	bool verbose;         /* --verbose: the details of what stderr says (dstat's -v is --vmstat) */
	bool dstat;           /* run as dstat (the link): its groups and look where iolens stat differs by design */
	bool light;           /* --bw: dstat's colours for a light background */
	bool debug;           /* --debug: each line ends with the milliseconds it took, as dstat's */
	unsigned missing;     /* dstat plugins asked for that iolens stat has not (said on stderr) */
	bool latency;         /* --latency: -x with its latency percentiles, eBPF's (iostat's columns alone without) */
	const char *output_file;
	const char *pidfile;  /* --pidfile: our pid in it while we run */
	enum out_format format;
	double delay;
	uint64_t count;
	const char *replay; /* IOLENS_REPLAY: recorded samples instead of the live system */
	/* --from, --to: a window of iolens record's store (--record-dir) instead of the live system */
	const char *from, *to, *record_dir;
};

struct run {
	struct stat_options *opts;
	struct group groups[MAX_GROUPS];
	unsigned ngroups;
	unsigned needs;
	struct monitor monitor;
	bool tty;
	/* -x in the table: each sample a report, iostat's rows of disks under the other groups' line */
	bool rows;
	FILE *csv;       /* --output FILE */
	bool csv_stdout; /* --csv: CSV on standard output (as well as in FILE) */
	bool csv_header_written;
	unsigned lines_since_header;
	struct system_sample samples[2];
	int current;     /* samples[current] is the latest */
	unsigned replay_index;
	struct store_window *window; /* --from: the recording played back */
	struct recorded_gap window_gap;          /* the last frame taken from it */
	char layout[4096]; /* the groups' keys: when it changes, headers are printed again */
	const struct system_sample *then; /* the sample before the one the groups are built from (NULL: boot) */
	struct segment_set vtrace; /* --vtrace */
	uint64_t vtrace_then_ns;
	bool failed;
	/* an intermediate update is on the screen, not yet ended by a newline */
	bool partial_line;
	unsigned visible;  /* groups that fit the terminal */
	unsigned warned;  /* sources already said to be unreadable */
	unsigned unavailable; /* sources not to read at all (eBPF that could not start, or a replay) */
	/*
	 * Disks of -D that had a medium at the start: their medium going (or another's taking its
	 * place) is their going away.
	 */
	struct sized_disk {
		char name[64];
		uint64_t diskseq;  /* its medium's (0: not known, before Linux 5.15) */
		bool replaced;     /* another medium since the last sample: the interval's figures are of neither */
	} sized[16];
	unsigned nsized;
};


/* NO_COLOR (no-color.org): set and not empty. */
static bool no_color(void)
{
	const char *value = getenv("NO_COLOR");

	return value && *value;
}

/* A terminal that cannot draw colours: no TERM, or TERM=dumb (dstat asks curses; these are what it says no to). */
static bool term_without_color(void)
{
	const char *term = getenv("TERM");

	return !term || !*term || !strcmp(term, "dumb");
}


/* --help: a screen; --help-all: the whole list below. */
static const char brief_help[] =
	"Usage:\n"
	" iolens stat [options] [delay [count]]\n"
	"\n"
	"A live view of the system as dstat shows it (its options, columns and look),\n"
	"with iostat -x's disk figures, pressure stall, the page cache and libvtrace\n"
	"servers. The first line is the average since boot, as dstat prints it.\n"
	"\n"
	"dstat's groups (the default is -cdngy):\n"
	"  -c, --cpu              cpu: usr sys idl wai stl\n"
	"  -d, --disk             disk read and write, bytes per second (-D LIST: which)\n"
	"  -n, --net              network receive and send (-N LIST: which interfaces)\n"
	"  -g, --page             paging in and out\n"
	"  -y, --sys              interrupts and context switches\n"
	"  -m, --mem              memory used, free, buffers, cache\n"
	"  -t, --time             the time\n"
	"  -a, --all              -cdngy\n"
	"  -M LIST                groups by plugin name (--list shows them all)\n"
	"      --top-cpu --top-io --top-bio --top-mem --disk-util ... dstat's plugins\n"
	"\n"
	"iolens's groups:\n"
	"  -x, --disk-ext         iostat -x, a row per disk fitted to the terminal\n"
	"      --latency          -x and its read and write latency p50, p99, max by eBPF\n"
	"      --psi              pressure stall: io, memory and cpu\n"
	"      --cache            page cache: cached, dirty, writeback, added, removed\n"
	"      --vtrace           every libvtrace server: op/s, %util, hung requests\n"
	"\n"
	"Output:\n"
	"      --json, --csv      one JSON object or CSV line per sample\n"
	"      --output FILE      also append CSV to FILE\n"
	"      --from TIME [--to TIME]  iolens record's store played back (03:00, -2h)\n"
	"      --verbose          the whole reason of each message on stderr\n"
	"  -h, --help             this help; --help-all: every option\n"
	"\n"
	"Examples:\n"
	"  iolens stat                   cpu, disk, net, paging, system, every second\n"
	"  iolens stat -tcmdx 5          the time, memory and iostat -x, every 5 seconds\n";

static _Noreturn void usage(bool all)
{
	if (!all)
		help_brief("stat", brief_help);
	printf("Usage:\n"
	       " %s [options] [delay [count]]\n"
	       "\n"
	       "A live view of the system, as dstat shows it (its options and columns), with\n"
	       "iostat -x's disk figures, pressure stall, the page cache and libvtrace servers.\n"
	       "Rates are measured over the real time between samples. The first line is the\n"
	       "average since boot, as dstat prints it.\n"
	       "\n"
	       "dstat's groups (the default is -cdngy):\n"
	       "  -c, --cpu              cpu: usr sys idl wai stl (usr counts hard and soft irqs, as dstat)\n"
	       "      --cpu-adv          cpu with hiq and siq apart\n"
	       "      --cpu-use          each cpu's busy percentage, a column each\n"
	       "  -C LIST                cpus to show: 0,3,total, or all (every cpu)\n"
	       "  -d, --disk             disk read and write, bytes per second\n"
	       "  -D LIST                disks to show: total,vda,/dev/disk/by-id/...\n"
	       "  -n, --net              network receive and send, bytes per second\n"
	       "  -N LIST                interfaces to show: eth0,total\n"
	       "  -g, --page             page in/out (block I/O) and swap in/out, bytes per second\n"
	       "  -y, --sys              interrupts and context switches per second\n"
	       "  -m, --mem              memory used, free, buffers, cache\n"
	       "  -s, --swap             swap used and free\n"
	       "  -S LIST                swap areas to show: /dev/sda2,total\n"
	       "  -l, --load             load average\n"
	       "  -p, --proc             processes running, blocked, new per second\n"
	       "  -i, --int              interrupts per second, the busiest ones\n"
	       "  -I LIST                interrupts to show: numbers, device names, total: 5,eth2\n"
	       "  -r, --io               disk requests per second\n"
	       "  -t, --time             the time (DSTAT_TIMEFMT: its strftime format)\n"
	       "  -T, --epoch            the time in seconds since the epoch\n"
	       "      --tcp --udp --unix --socket --raw   sockets\n"
	       "      --fs               open files and inodes\n"
	       "      --aio              asynchronous I/O requests\n"
	       "      --vm               page faults, allocations and frees per second\n"
	       "      --lock             file locks\n"
	       "      --ipc              System V message queues, semaphores, shared memory\n"
	       "      --mem-adv          memory with total, dirty, shared and reclaimable\n"
	       "      --vm-adv           pages reclaimed and scanned (kswapd, direct), kswapd runs,\n"
	       "                         allocation stalls per second\n"
	       "      --zones            free pages and high watermark of the DMA32 and Normal zones\n"
	       "      --page24 --swap-old  dstat's other names of -g and -s\n"
	       "  -a, --all              -cdngy\n"
	       "  -f, --full             every cpu, disk, interface, interrupt and swap area\n"
	       "  -v, --vmstat           -pmgdsc -D total\n"
	       "  -M LIST                groups by their plugin names: -M cpu,disk,disk-util (see --list)\n"
	       "      --list             list the plugin names this stat knows, and exit\n"
	       "\n"
	       "dstat's external plugins:\n"
	       "      --disk-util        per disk: %%util, the time with I/O in flight\n"
	       "      --disk-tps         requests (transfers) per second, read and write, as -d lists disks\n"
	       "      --disk-wait        per disk: average read and write wait, ms\n"
	       "      --disk-avgqu       per disk: average queue length\n"
	       "      --net-packets      packets received and sent per second, as -n lists interfaces\n"
	       "      --proc-count       the number of processes\n"
	       "      --top-cpu          the process that used the most cpu, %% of all cpus\n"
	       "      --top-mem          the process with the most memory (resident)\n"
	       "      --top-io           the process that read and wrote the most (syscalls: /proc/PID/io\n"
	       "                         rchar, wchar), bytes per second\n"
	       "      --top-bio          the process that made the most block I/O, bytes per second: by eBPF\n"
	       "                         (root), each request charged to the process that submitted it\n"
	       "                         (writeback to kworker); else /proc/PID/io read_bytes, write_bytes\n"
	       "                         (writes counted when dirtied), as dstat's; by eBPF also its\n"
	       "                         latency p99 (ms; p50, max, avg in JSON)\n"
	       "      --top-latency      the process that waited the most for a cpu, ns per second\n"
	       "      --top-int          the busiest interrupt, per second\n"
	       "      --top-oom          the process the OOM killer would pick first, its score\n"
	       "      --top-cpu-adv --top-io-adv --top-bio-adv  the same with its pid and more\n"
	       "      --top-cputime      the process that ran the most on a cpu (schedstat)\n"
	       "      --top-cputime-avg  the process whose time slices were the longest\n"
	       "      --top-latency-avg  the process that waited the longest per time slice\n"
	       "      --top-childwait    the process whose ended children used the most cpu\n"
	       "      --disk-avgrq --disk-svctm  per disk: sectors, busy ms per request\n"
	       "      --freespace        per mount point: space used and free\n"
	       "      --snooze           the seconds from the sample before\n"
	       "      --dstat --dstat-cpu --dstat-ctxt --dstat-mem  this stat's own cost\n"
	       "                         dstat's other plugins (--redis ...) are said as not\n"
	       "                         loaded and left out; none left: exit 8, as dstat\n"
	       "\n"
	       "iolens's groups:\n"
	       "  -x, --disk-ext         iostat -x per disk: r/s w/s rkB/s wkB/s rrqm/s wrqm/s\n"
	       "                         r_await w_await aqu-sz rareq-sz wareq-sz %%util; JSON\n"
	       "                         and CSV also iostat's discard, flush and %%merged columns,\n"
	       "                         and %%cap for a disk with a saved capacity (--capacity-dir)\n"
	       "      --latency          -x and by eBPF latency p50, p99 and max of reads and writes\n"
	       "                         (r_p50_ns ...; device and queue time apart), the table\n"
	       "                         r_p50 r_p99 r_max w_p50 w_p99 w_max after %%util\n"
	       "  -z, --omit-idle        iostat -z: disks that did no I/O in the interval left out\n"
	       "      --partitions[=DISKS]  iostat -p: each disk listed followed by its partitions;\n"
	       "                         =DISKS (a list, as -D) shows those disks and their partitions\n"
	       "      --human            iostat -h: -x's sizes with their unit (B, k, M, G), not in kB\n"
	       "      --capacity-dir DIR where disks' capacities are kept (bench --profile\n"
	       "                         --save-capacity; default $IOLENS_CAPACITY_DIR, else\n"
	       "                         /var/lib/iolens/capacity): -x's %%cap (cap_pct), the share\n"
	       "                         of its capacity a disk's load uses\n"
	       "      --psi              pressure: io, memory and cpu stall, some and full, %% of the time\n"
	       "      --cache            page cache: cached, dirty, writeback; pages added and removed\n"
	       "      --vtrace           every libvtrace server: op/s, %%util, and how many of its ops have\n"
	       "                         a request in flight for over a second (hang)\n"
	       "\n"
	       "Output:\n"
	       "      --integer          whole numbers only\n"
	       "      --float            decimals wherever they fit\n"
	       "      --bits             disk and network traffic in bits per second (JSON and CSV: bytes)\n"
	       "      --color            colours even when standard output is not a terminal\n"
	       "      --bw, --blackonwhite, --black-on-white\n"
	       "                         dstat's colours for a light background\n"
	       "      --debug            each line ends with the ms it took, as dstat's\n"
	       "      --profile          taken, does nothing (dstat's is of its Python code)\n"
	       "      --nocolor          no colours, and so no updates, as dstat's help says (there are\n"
	       "                         no colours off a terminal, on TERM=dumb or with NO_COLOR set)\n"
	       "      --noheaders        the headers once, not again when they scroll away\n"
	       "      --noupdate         no updates of the current line within a delay\n"
	       "      --output FILE      also write CSV to FILE (appended when it exists), whatever\n"
	       "                         standard output shows\n"
	       "  -o FILE                the same as --output FILE (dstat's -o)\n"
	       "      --json             one JSON object per sample, one per line (bytes, ns, counts)\n"
	       "      --csv              CSV on standard output instead of the table\n"
	       "      --pidfile FILE     write the process id to FILE, removed at the end\n"
	       "      --no-boot-sample   leave out the first line, the average since boot (iostat -y)\n"
	       "      --sysroot DIR      read /proc and /sys under DIR (a recorded tree)\n"
	       "      --from TIME        play back the window of iolens record's store from TIME\n"
	       "                         (03:00, yesterday 03:00, 2026-12-04T03:00Z, -2h, @EPOCH)\n"
	       "      --to TIME          ... until TIME (default now)\n"
	       "      --record-dir DIR   the store (default: iolens record's)\n"
	       "      --verbose          the whole reason of each message on stderr\n"
	       "  -h, --help             a screen of help; --help-all: all of this\n"
	       "  -V, --version          show the version\n"
	       "\n"
	       "DSTAT_OPTS in the environment holds options read before those of the command line.\n"
	       "\n"
	       "Examples:\n"
	       "  %s                      cpu, disk, net, paging, system, every second\n"
	       "  %s -tcmdx 5             with the time, memory and iostat -x, every 5 seconds\n"
	       "  %s -d -D total,vda --psi --cache 1 60\n"
	       "  %s --json -cdx 1 10 > samples.jsonl\n"
	       "  %s -cdngy --output run.csv 10\n",
	       program_name, program_name, program_name, program_name, program_name, program_name);
	exit(EXIT_OK);
}

/* ---- Options ------------------------------------------------------------------------ */

static void want(struct stat_options *o, enum group_kind kind)
{
	if (kind == G_cpu_adv) { /* --cpu-adv: the cpu groups with hiq and siq apart */
		o->cpu_adv = true;
		kind = G_cpu;
	}
	for (unsigned i = 0; i < o->norder; i++)
		if (o->order[i] == kind)
			return;
	if (o->norder < sizeof(o->order) / sizeof(o->order[0]))
		o->order[o->norder++] = kind;
}

/*
 * dstat 0.7.4's plugins that iolens stat has not (its /usr/share/dstat/dstat_*.py, and the
 * internal ones for Linux 2.4): asked for, each is said as dstat says a plugin that failed to
 * load, and left out; with nothing else asked for, stat ends as dstat does then (exit 8).
 */
static const char *const missing_plugins[] = {
	"battery", "battery-remain", "condor-queue", "cpufreq", "dbus", "fan", "fuse", "gpfs", "gpfs-ops",
	"helloworld", "ib", "innodb-buffer", "innodb-io", "innodb-ops", "jvm-full", "jvm-vm", "lustre",
	"md-status", "memcache-hits", "mongodb-conn", "mongodb-mem", "mongodb-opcount", "mongodb-queue",
	"mongodb-stats", "mysql5-cmds", "mysql5-conn", "mysql5-innodb", "mysql5-innodb-basic",
	"mysql5-innodb-extra", "mysql5-io", "mysql5-keys", "mysql-io", "mysql-keys", "nfs3", "nfs3-ops",
	"nfsd3", "nfsd3-ops", "nfsd4-ops", "nfsstat4", "ntp", "postfix", "power", "qmail", "redis", "rpc",
	"rpcd", "sendmail", "snmp-cpu", "snmp-load", "snmp-mem", "snmp-net", "snmp-net-err", "snmp-sys",
	"squid", "test", "thermal", "utmp", "vm-cpu", "vm-mem", "vm-mem-adv", "vmk-hba", "vmk-int", "vmk-nic",
	"vz-cpu", "vz-io", "vz-ubc", "wifi", "zfs-arc", "zfs-l2arc", "zfs-zil",
	"cpu24", "int24", "disk24", "disk24-old",
};

/* One of missing_plugins (dstat takes '_' for '-' too): said, as dstat says it, and counted. */
static bool missing_plugin(struct stat_options *o, const char *name)
{
	char plugin[64];

	if (strlen(name) >= sizeof(plugin))
		return false;
	for (size_t i = 0; i <= strlen(name); i++)
		plugin[i] = name[i] == '_' ? '-' : name[i];
	for (size_t i = 0; i < sizeof(missing_plugins) / sizeof(missing_plugins[0]); i++)
		if (!strcmp(missing_plugins[i], plugin)) {
			for (char *p = plugin; *p; p++)
				*p = *p == '-' ? '_' : *p;
			fprintf(stderr, "Module dstat_%s failed to load. (not in iolens stat)\n", plugin);
			o->missing++;
			return true;
		}
	return false;
}

/* The options of dstat's plugins iolens stat has not (--redis, --helloworld): said and taken out of the arguments. */
static void drop_missing_plugins(struct stat_options *o, int *argc, char **argv)
{
	static const char *const with_argument[] = { "--output", "--pidfile", "--sysroot", "--capacity-dir", "--mods",
						     "--modules" };
	int out = 1;

	for (int i = 1; i < *argc; i++) {
		const char *a = argv[i];
		bool takes = false;

		if (!strcmp(a, "--")) {
			while (i < *argc)
				argv[out++] = argv[i++];
			break;
		}
		if (!strncmp(a, "--", 2) && a[2] && !strchr(a, '=') && missing_plugin(o, a + 2))
			continue;
		argv[out++] = argv[i];
		/* The argument of an option that takes one is not an option. */
		for (size_t k = 0; k < sizeof(with_argument) / sizeof(with_argument[0]); k++)
			takes |= !strcmp(a, with_argument[k]);
		if (a[0] == '-' && a[1] != '-' && a[1] && strpbrk(a + 1, "oMCDNSI"))
			takes |= !strpbrk(a + 1, "oMCDNSI")[1];
		if (takes && i + 1 < *argc)
			argv[out++] = argv[++i];
	}
	argv[out] = NULL;
	*argc = out;
}
/* One plugin by name (-M NAME, --NAME): false when there is none of that name. */
static bool want_plugin(struct stat_options *o, const char *name)
{
	for (unsigned k = 0; k < G_KINDS; k++) {
		const struct stat_group *group = group_kind_of((enum group_kind)k);
		bool named = group->alias && !strcmp(group->alias, name);

		for (unsigned i = 0; i < sizeof(group->plugins) / sizeof(group->plugins[0]) && group->plugins[i]; i++)
			named |= !strcmp(group->plugins[i], name);
		if (named) {
			want(o, (enum group_kind)k);
			return true;
		}
	}
	return false;
}

/* dstat -M cpu,disk: the plugins of a list. */
static void want_plugins(struct stat_options *o, const char *list)
{
	char copy[1024], *save = NULL;

	if (strlen(list) >= sizeof(copy))
		usage_error("-M: the list is too long");
	snprintf(copy, sizeof(copy), "%s", list);
	if (!strtok_r(copy, ",", &save))
		usage_error("-M: no plugin named (see --list)");
	snprintf(copy, sizeof(copy), "%s", list);
	for (char *p = strtok_r(copy, ",", &save); p; p = strtok_r(NULL, ",", &save))
		if (!want_plugin(o, p) && !missing_plugin(o, p))
			usage_error("-M: no plugin '%s' (see --list)", p);
}

/* One section of --list, as dstat prints it: a title, then names after a tab, wrapped before 80 columns. */
static void list_section(const char *title, const char *const *names, size_t count)
{
	int room = 80 - 8;

	printf("%s:\n\t", title);
	for (size_t i = 0; i < count; i++) {
		room -= (int)strlen(names[i]) + 2;
		if (room <= 0) {
			fputs("\n\t", stdout);
			room = 80 - (int)strlen(names[i]) - 10;
		}
		printf("%s%s", names[i], i + 1 < count ? "," : "\n");
	}
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The plugin names of the groups of a --list section, sorted. */
static void list_group_section(const char *title, enum group_section section)
{
	const char *names[G_KINDS * 3];
	size_t n = 0;

	for (unsigned k = 0; k < G_KINDS; k++) {
		const struct stat_group *group = group_kind_of((enum group_kind)k);

		for (unsigned i = 0; group->section == section && i < 3 && group->plugins[i]; i++)
			names[n++] = group->plugins[i];
	}
	qsort(names, n, sizeof(names[0]), compare_names);
	list_section(title, names, n);
}

static _Noreturn void list_plugins(void)
{
	list_group_section("internal", GROUP_DSTAT);
	list_group_section("dstat's external plugins", GROUP_DSTAT_PLUGIN);
	list_group_section("iolens", GROUP_IOLENS);
	exit(EXIT_OK);
}

/* A -C/-D/-N/-S/-I list must name something: "" or "," would show nothing, silently. */
static void check_list(const char *option, const char *arg)
{
	if (!arg[strspn(arg, ",")])
		usage_error("%s: '%s' names nothing (a list of names separated by commas)", option, arg);
}

static char *set_list(char *old, const char *arg)
{
	free(old);
	return xstrdup(arg);
}

/* A list with more names at its end. */
static char *add_to_list(char *old, const char *arg)
{
	char *joined;

	if (!old)
		return xstrdup(arg);
	joined = xcalloc(1, strlen(old) + strlen(arg) + 2);
	sprintf(joined, "%s,%s", old, arg);
	free(old);
	return joined;
}

/*
 * The delay: a plain decimal number of seconds ("2", "0.5"), 0.01 to 86400. Not what strtod
 * also takes (0x2, 1e-9, inf, " 2"): a typo there would be a busy loop or a surprise.
 */
static double parse_delay(const char *text)
{
	const char *p = text;
	unsigned digits = 0;
	double value;

	while (*p >= '0' && *p <= '9')
		p++, digits++;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			digits++;
	if (*p || !digits || *text == '.' || p[-1] == '.')
		usage_error("delay: '%s' is not a number of seconds (a plain decimal, as 2 or 0.5)", text);
	value = strtod(text, NULL);
	if (!(value >= 0.01 && value <= 86400))
		usage_error("delay: '%s' is out of range: 0.01 to 86400 seconds", text);
	return value;
}

/* Run through the dstat link (or as iolens dstat): dstat's look, not iolens stat's. */
static bool as_dstat(void)
{
	size_t len = strlen(program_name);

	return len >= 5 && !strcmp(program_name + len - 5, "dstat");
}

/* The options that are not a group's (those are made from the groups: stat_long_options). */
enum {
	OPT_INTEGER = 0x3000, OPT_FLOAT, OPT_NOCOLOR, OPT_NOHEADERS, OPT_NOUPDATE, OPT_OUTPUT, OPT_NO_BOOT, OPT_SYSROOT,
	OPT_JSON, OPT_CSV, OPT_LIST, OPT_COLOR, OPT_PIDFILE, OPT_BITS, OPT_HUMAN, OPT_PARTITIONS, OPT_CAPACITY_DIR,
	OPT_VERBOSE, OPT_BW, OPT_DEBUG, OPT_PROFILE, OPT_LATENCY, OPT_FROM, OPT_TO, OPT_RECORD_DIR,
	OPT_PLUGIN,          /* --NAME of a group that is one of dstat's plugin options (plugin_option) */
	OPT_GROUP = 0x4000,  /* + the kind: --NAME of a group with an option of its own */
};
static const struct option other_options[] = {
	COMMON_LONG_OPTIONS,
	{ "all", no_argument, NULL, 'a' },               { "full", no_argument, NULL, 'f' },
	{ "vmstat", no_argument, NULL, 'v' },            { "integer", no_argument, NULL, OPT_INTEGER },
	{ "float", no_argument, NULL, OPT_FLOAT },       { "nocolor", no_argument, NULL, OPT_NOCOLOR },
	{ "noheaders", no_argument, NULL, OPT_NOHEADERS }, { "noupdate", no_argument, NULL, OPT_NOUPDATE },
	{ "output", required_argument, NULL, OPT_OUTPUT }, { "no-boot-sample", no_argument, NULL, OPT_NO_BOOT },
	{ "sysroot", required_argument, NULL, OPT_SYSROOT }, { "json", no_argument, NULL, OPT_JSON },
	{ "csv", no_argument, NULL, OPT_CSV },           { "list", no_argument, NULL, OPT_LIST },
	{ "color", no_argument, NULL, OPT_COLOR },       { "pidfile", required_argument, NULL, OPT_PIDFILE },
	{ "mods", required_argument, NULL, 'M' },        { "modules", required_argument, NULL, 'M' },
	{ "bits", no_argument, NULL, OPT_BITS },
	/* iostat's -h, -p and -z (its -y is --no-boot-sample: dstat has -h, -p and -y). */
	{ "human", no_argument, NULL, OPT_HUMAN },       { "partitions", optional_argument, NULL, OPT_PARTITIONS },
	{ "omit-idle", no_argument, NULL, 'z' },         { "capacity-dir", required_argument, NULL, OPT_CAPACITY_DIR },
	{ "verbose", no_argument, NULL, OPT_VERBOSE },   { "latency", no_argument, NULL, OPT_LATENCY },
	/* dstat's look: black on white, its timing of each line, its Python profile (none here). */
	{ "bw", no_argument, NULL, OPT_BW },             { "black-on-white", no_argument, NULL, OPT_BW },
	{ "blackonwhite", no_argument, NULL, OPT_BW },   { "debug", no_argument, NULL, OPT_DEBUG },
	{ "profile", no_argument, NULL, OPT_PROFILE },
	{ "from", required_argument, NULL, OPT_FROM },   { "to", required_argument, NULL, OPT_TO },
	{ "record-dir", required_argument, NULL, OPT_RECORD_DIR },
};
#define OTHER_SHORT_OPTIONS "afvzo:M:C:D:N:S:I:hV"

/*
 * The options: the others, then each group's names in the groups' rank (--cpu and -c, --tcp,
 * --top-cpu...); short, the groups' letters and the others'. A group's first name has its
 * letter or a value of its own; its other names, and dstat's plugin options, OPT_PLUGIN.
 */
static const struct option *stat_long_options(char *shorts, size_t size)
{
	static struct option options[sizeof(other_options) / sizeof(other_options[0]) + G_KINDS * 4 + 1];
	const struct stat_group *const *ranked = groups_by_rank();
	size_t n = sizeof(other_options) / sizeof(other_options[0]), used = 0;

	memcpy(options, other_options, sizeof(other_options));
	for (unsigned r = 0; r < G_KINDS; r++) {
		const struct stat_group *group = ranked[r];
		int own = group->letter ? group->letter : group->plugin_option ? OPT_PLUGIN
				       : OPT_GROUP + (int)group_kind_find(group);

		for (unsigned i = 0; i < 3 && group->plugins[i]; i++)
			options[n++] = (struct option){ group->plugins[i], no_argument, NULL, i ? OPT_PLUGIN : own };
		if (group->alias)
			options[n++] = (struct option){ group->alias, no_argument, NULL, OPT_PLUGIN };
		if (group->letter && used + 2 < size)
			shorts[used++] = group->letter;
	}
	options[n] = (struct option){ 0 };
	snprintf(shorts + used, size - used, "%s", OTHER_SHORT_OPTIONS);
	return options;
}

/* A group's short option (-c) or its own --NAME: false when opt is neither. */
static bool want_option(struct stat_options *o, int opt)
{
	if (opt >= OPT_GROUP && opt < OPT_GROUP + G_KINDS) {
		want(o, (enum group_kind)(opt - OPT_GROUP));
		return true;
	}
	for (unsigned k = 0; opt > 0 && opt < 0x80 && k < G_KINDS; k++)
		if (group_kind_of((enum group_kind)k)->letter == opt) {
			want(o, (enum group_kind)k);
			return true;
		}
	return false;
}

static void parse_options(struct stat_options *o, int argc, char **argv)
{
	char shorts[64];
	const struct option *long_options = stat_long_options(shorts, sizeof(shorts));
	int opt, rc, index = 0;

	if (o->dstat)
		option_errors_as_python();
	drop_missing_plugins(o, &argc, argv);
	while ((opt = next_option(argc, argv, shorts, long_options, &index)) != -1) {
		switch (opt) {
		case 'M': want_plugins(o, optarg); break;
		case OPT_LIST: list_plugins();
		case OPT_PLUGIN: want_plugin(o, long_options[index].name); break;
		case OPT_BITS: o->bits = true; break;
		case OPT_HUMAN: o->human = true; break;
		case 'z': o->omit_idle = true; break;
		case OPT_PARTITIONS:
			/* iostat -p DISKS: those disks (as -D adds them) and their partitions; -p ALL: every disk's. */
			o->partitions = true;
			if (optarg)
				check_list("--partitions", optarg);
			if (optarg && strcmp(optarg, "ALL"))
				o->disks = add_to_list(o->disks, optarg);
			if (optarg && !strcmp(optarg, "ALL"))
				o->all_devices = true;
			break;
		case OPT_VERBOSE: o->verbose = true; break;
		case OPT_BW: o->light = true; break;
		case OPT_DEBUG: o->debug = true; break;
		case OPT_PROFILE: break; /* dstat's profile is of its Python code: nothing to write here */
		case OPT_LATENCY: o->latency = true; want(o, G_disk_ext); break;
		case 'a':
			want(o, G_cpu); want(o, G_disk); want(o, G_net); want(o, G_page); want(o, G_sys);
			break;
		case 'v':
			/*
			 * dstat 0.7 shows the system group where its help says swap; iolens stat
			 * does what the help says.
			 */
			want(o, G_proc);
			want(o, G_mem);
			want(o, G_page);
			want(o, G_disk);
			want(o, o->dstat ? G_sys : G_swap);
			want(o, G_cpu);
			o->disks = set_list(o->disks, "total");
			break;
		case 'f': o->full = true; break;
		case 'C': check_list("-C", optarg); o->cpus = set_list(o->cpus, optarg); break;
		case 'D': check_list("-D", optarg); o->disks = set_list(o->disks, optarg); break;
		case 'N': check_list("-N", optarg); o->nets = set_list(o->nets, optarg); break;
		case 'S': check_list("-S", optarg); o->swaps = set_list(o->swaps, optarg); break;
		case 'I': check_list("-I", optarg); o->irqs = set_list(o->irqs, optarg); break;
		case OPT_INTEGER: o->integer = true; break;
		case OPT_FLOAT: o->floats = true; break;
		case OPT_NOCOLOR: o->nocolor = o->noupdate = true; o->color = false; break;
		case OPT_COLOR: o->color = true; o->nocolor = o->noupdate = false; break;
		case OPT_PIDFILE: o->pidfile = optarg; break;
		case OPT_NOHEADERS: o->noheaders = true; break;
		case OPT_NOUPDATE: o->noupdate = true; break;
		case 'o':
		case OPT_OUTPUT: o->output_file = optarg; break;
		case OPT_NO_BOOT: o->no_boot_sample = true; break;
		case OPT_JSON:
		case OPT_CSV:
			if (o->format != OUT_TABLE && o->format != (opt == OPT_JSON ? OUT_JSON : OUT_CSV))
				usage_error("--csv and --json: choose one");
			o->format = opt == OPT_JSON ? OUT_JSON : OUT_CSV;
			break;
		case OPT_CAPACITY_DIR:
			if (!*optarg)
				usage_error("--capacity-dir: an empty name");
			groups_capacity_dir(optarg);
			break;
		case OPT_FROM: o->from = optarg; break;
		case OPT_TO: o->to = optarg; break;
		case OPT_RECORD_DIR: o->record_dir = optarg; break;
		case OPT_SYSROOT:
			rc = sysroot_set(optarg);
			if (rc)
				usage_error("--sysroot: %s: %s", optarg, strerror(-rc));
			break;
		case 'h': usage(false);
		case COMMON_OPT_HELP_ALL: usage(true);
		case 'V':
			/* Through the dstat link, say what answers: not dstat itself. */
			if (o->dstat) {
				printf("iolens stat %s (dstat-compatible)\n", IOLENS_VERSION);
				exit(EXIT_OK);
			}
			print_version();
		default:
			if (!want_option(o, opt))
				usage_hint();
		}
	}
	if (o->integer && o->floats)
		usage_error("--integer and --float: choose one");
	if (!o->norder && o->missing) {
		/* As dstat when no plugin it was asked for loaded. */
		fputs("None of the stats you selected are available.\n", stderr);
		exit(8);
	}
	if (!o->norder) {
		/* dstat says so on standard output, where a script reading its lines sees it first. */
		if (o->dstat && o->format == OUT_TABLE)
			puts("You did not select any stats, using -cdngy by default.");
		want(o, G_cpu); want(o, G_disk); want(o, G_net); want(o, G_page); want(o, G_sys);
	}
	o->delay = 1;
	if (optind < argc)
		o->delay = parse_delay(argv[optind++]);
	if (optind < argc && (parse_u64(argv[optind++], &o->count) || !o->count))
		usage_error("count: '%s' is not a positive whole number", argv[optind - 1]);
	if (optind < argc)
		usage_error("too many arguments");
}

/* ---- Groups ------------------------------------------------------------------------- */

static void add_group(struct run *r, enum group_kind kind, const char *item)
{
	if (r->ngroups == MAX_GROUPS)
		return;
	for (unsigned g = 0; g < r->ngroups; g++)
		if (r->groups[g].kind == kind && !strcmp(r->groups[g].item, item ? item : ""))
			return; /* named twice (vda and a link to it): shown once */
	group_init(&r->groups[r->ngroups], kind, item);
	r->needs |= group_needs(kind);
	r->ngroups++;
}

/* "/dev/sda" -> "sda", as dstat accepts both; a link (/dev/disk/by-id/...) to the device it names. */
static const char *device_name(const char *name, char *buf, size_t size)
{
	char resolved[4096];

	if (!strncmp(name, "/dev/", 5) && strchr(name + 5, '/') && realpath(name, resolved) &&
	    !strncmp(resolved, "/dev/", 5) && !strchr(resolved + 5, '/') && strlen(resolved + 5) < size) {
		memcpy(buf, resolved + 5, strlen(resolved + 5) + 1);
		return buf;
	}
	return !strncmp(name, "/dev/", 5) && !strchr(name + 5, '/') ? name + 5 : name;
}

static enum group_items items_of(enum group_kind kind)
{
	return group_kind_of(kind)->items;
}

/* The disk groups that are of one disk each, never of a total. */
static bool per_disk(enum group_kind kind)
{
	return items_of(kind) == ITEMS_EACH_DISK;
}

/* The groups of disks: -d, -r, -x and dstat's disk plugins. */
static bool disk_kind(enum group_kind kind)
{
	return items_of(kind) == ITEMS_DISK || per_disk(kind);
}

/*
 * iostat -z: a device that completed no request and was never busy in the interval (the
 * first line: since boot). One busy without completing (a request stuck) is not idle; one
 * that is new or went away is not either: it shows, or says it went away.
 */
static bool disk_idle(const struct system_sample *then, const struct system_sample *now, const char *name)
{
	const struct disk_stats *b = diskstats_find(&now->disks, name), *a;
	static const struct disk_stats zero;

	if (!b)
		return false;
	a = then ? diskstats_find(&then->disks, name) : &zero;
	return a && a->rd_ios == b->rd_ios && a->wr_ios == b->wr_ios && a->dc_ios == b->dc_ios &&
	       a->fl_ios == b->fl_ios && a->io_ticks == b->io_ticks;
}

/* A disk's group, followed by its partitions' with --partitions; with -z, those that did I/O in the interval. */
static void add_disk(struct run *r, enum group_kind kind, const char *name, const struct system_sample *s)
{
	const struct stat_options *o = r->opts;

	if (!strcmp(name, "total") || !o->omit_idle || !disk_idle(r->then, s, name))
		add_group(r, kind, name);
	if (!o->partitions || !strcmp(name, "total"))
		return;
	for (unsigned d = 0; d < s->disks.count; d++) {
		const char *part = s->disks.disk[d].name;
		if (s->disks.kind[d].partition && !strcmp(s->disks.kind[d].whole, name) &&
		    (!o->omit_idle || !disk_idle(r->then, s, part)))
			add_group(r, kind, part);
	}
}

/* A device with a size: not a loop device detached (its counters stay), nor an empty ram disk. Unknown: yes. */
static bool has_medium(const char *name)
{
	uint64_t sectors;

	return block_device_value(name, "size", &sectors) != 0 || sectors > 0;
}

/*
 * One group per item of a -C/-D/-N/-S list. At the start every name must exist (exit 2
 * otherwise); later, one that went away stays, with '-' for its values.
 */
static bool validating;

static void add_listed(struct run *r, enum group_kind kind, const char *list, const char *what,
		       bool (*exists)(const struct system_sample *, const char *), const struct system_sample *s)
{
	char copy[1024], *save = NULL, buf[256];

	snprintf(copy, sizeof(copy), "%s", list);
	for (char *p = strtok_r(copy, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		const char *name = kind == G_swap ? p : device_name(p, buf, sizeof(buf));
		if ((kind == G_cpu || kind == G_cpu_adv) && !strcmp(name, "all")) {
			/* dstat's -C all: every cpu, one group each. */
			for (unsigned c = 0; c < s->procstat.ncpu; c++)
				if (s->procstat.cpu_present[c]) {
					snprintf(buf, sizeof(buf), "%u", c);
					add_group(r, kind, buf);
				}
			continue;
		}
		if (validating && strcmp(name, "total") && !exists(s, name))
			usage_error("%s '%s' not found", what, p);
		if (per_disk(kind) && !strcmp(name, "total"))
			continue; /* iostat -x has no total, nor have dstat's disk-util, disk-wait and disk-avgqu */
		if (disk_kind(kind))
			add_disk(r, kind, name, s);
		else
			add_group(r, kind, name);
	}
}

static bool cpu_exists(const struct system_sample *s, const char *name)
{
	char *end;
	long n = strtol(name, &end, 10);

	return *name && !*end && n >= 0 && (unsigned long)n < s->procstat.ncpu && s->procstat.cpu_present[n];
}

static bool disk_exists(const struct system_sample *s, const char *name)
{
	return diskstats_find(&s->disks, name) != NULL;
}

static bool net_exists(const struct system_sample *s, const char *name)
{
	for (unsigned i = 0; i < s->netdev.count; i++)
		if (!strcmp(s->netdev.dev[i].name, name))
			return true;
	return false;
}

static bool swap_exists(const struct system_sample *s, const char *name)
{
	for (unsigned i = 0; i < s->swaps.count; i++)
		if (!strcmp(s->swaps.area[i].name, name))
			return true;
	return false;
}

/*
 * Whether an interrupt line serves a device of that name, as dstat matches them: the
 * devices are what follows the chip and the trigger ("IO-APIC 1-edge i8042",
 * "PCI-MSIX-0000:00:03.0 1-edge virtio0-input.0"), comma-separated, compared whole and
 * without regard to case.
 */
static bool irq_serves(const struct irq_line *line, const char *device)
{
	char copy[sizeof(line->what)], *save = NULL, *devices = copy;

	snprintf(copy, sizeof(copy), "%s", line->what);
	for (int skip = 0; skip < 2 && devices; skip++) {
		devices = strchr(devices, ' ');
		if (devices)
			devices++;
	}
	if (!devices)
		return false;
	for (char *d = strtok_r(devices, ",", &save); d; d = strtok_r(NULL, ",", &save)) {
		while (*d == ' ')
			d++;
		size_t n = strlen(d);
		while (n && d[n - 1] == ' ')
			d[--n] = '\0';
		if (!strcasecmp(d, device))
			return true;
	}
	return false;
}

/* The interrupts of -I: numbers ("24", "NMI"), devices named in /proc/interrupts ("eth0"), or "total". */
static void irq_list(const struct system_sample *s, const char *list, char *out, size_t size)
{
	char copy[1024], *save = NULL;
	size_t used = 0;

	out[0] = '\0';
	snprintf(copy, sizeof(copy), "%s", list);
	for (char *p = strtok_r(copy, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		const char *found = !strcmp(p, "total") ? "total" : NULL;
		for (unsigned i = 0; i < s->interrupts.count && !found; i++)
			if (!strcasecmp(s->interrupts.line[i].name, p))
				found = s->interrupts.line[i].name;
		for (unsigned i = 0; i < s->interrupts.count && !found; i++)
			if (irq_serves(&s->interrupts.line[i], p))
				found = s->interrupts.line[i].name;
		if (!found && validating)
			usage_error("interrupt '%s' not found", p);
		if (!found)
			found = p; /* gone since the start: shown as '-' */
		used += (size_t)snprintf(out + used, size - used, "%s%s", used ? "," : "", found);
	}
}

/* The busiest interrupts, as dstat picks them: numbered ones with more than 10, the timers left out. */
static void irq_default(const struct system_sample *s, bool full, char *out, size_t size)
{
	static const char *const boring[] = { "0", "1", "2", "8" };
	const char *picked[64];
	unsigned n = 0;
	size_t used = 0;

	for (unsigned i = 0; i < s->interrupts.count && n < 64; i++) {
		const struct irq_line *line = &s->interrupts.line[i];
		bool skip = line->name[0] < '0' || line->name[0] > '9' || line->count <= 10;
		for (unsigned b = 0; b < 4 && !skip; b++)
			skip = !strcmp(line->name, boring[b]);
		if (!skip)
			picked[n++] = line->name;
	}
	out[0] = '\0';
	for (unsigned i = full || n <= 3 ? 0 : n - 3; i < n; i++)
		used += (size_t)snprintf(out + used, size - used, "%s%s", used ? "," : "", picked[i]);
}

/* Every name in -C, -D, -N, -S and -I must exist at the start, shown or not: a typo is an error (exit 2). */
static void validate_lists(const struct stat_options *o, const struct system_sample *s)
{
	struct run probe = { .opts = (struct stat_options *)o };
	char irqs[1024];

	if (o->cpus)
		add_listed(&probe, G_cpu, o->cpus, "cpu", cpu_exists, s);
	if (o->disks)
		add_listed(&probe, G_disk, o->disks, "disk", disk_exists, s);
	if (o->nets)
		add_listed(&probe, G_net, o->nets, "interface", net_exists, s);
	if (o->swaps)
		add_listed(&probe, G_swap, o->swaps, "swap area", swap_exists, s);
	if (o->irqs)
		irq_list(s, o->irqs, irqs, sizeof(irqs));
}

/* Whether a -D list names a device (iostat -x has no total: -x -D total shows the default devices). */
static bool lists_more_than_total(const char *list)
{
	char copy[1024], *save = NULL;

	snprintf(copy, sizeof(copy), "%s", list);
	for (char *p = strtok_r(copy, ",", &save); p; p = strtok_r(NULL, ",", &save))
		if (strcmp(p, "total"))
			return true;
	return false;
}

/* The group item of a libvtrace segment: its service, with its pid when another server has the same name. */
static void segment_item(const struct run *r, size_t i, char *buf, size_t size)
{
	const struct segment *s = r->vtrace.list[i];
	bool shared = false;

	for (size_t j = 0; j < r->vtrace.count && !shared; j++)
		shared = j != i && !strcmp(r->vtrace.list[j]->info->service, s->info->service);
	if (shared)
		snprintf(buf, size, "%s.%d", s->info->service, (int)s->pid);
	else
		snprintf(buf, size, "%s", s->info->service);
}

static void build_groups(struct run *r, const struct system_sample *s)
{
	struct stat_options *o = r->opts;
	char list[1024];

	r->ngroups = 0;
	r->needs = SYS_UPTIME;
	for (unsigned i = 0; i < o->norder; i++) {
		enum group_kind kind = o->order[i];
		/* What a kind needs, even when it has no group now (-z, all idle): it may have one next time. */
		r->needs |= group_needs(kind);
		switch (items_of(kind)) {
		case ITEMS_CPU:
			if (o->cpu_adv && kind == G_cpu)
				kind = G_cpu_adv;
			if (o->cpus)
				add_listed(r, kind, o->cpus, "cpu", cpu_exists, s);
			else if (o->full)
				for (unsigned c = 0; c < s->procstat.ncpu; c++) {
					snprintf(list, sizeof(list), "%u", c);
					if (s->procstat.cpu_present[c])
						add_group(r, kind, list);
				}
			else
				add_group(r, kind, "total");
			break;
		case ITEMS_DISK:
		case ITEMS_EACH_DISK:
			if (o->disks && (!per_disk(kind) || lists_more_than_total(o->disks))) {
				add_listed(r, kind, o->disks, "disk", disk_exists, s);
			} else if (o->full || per_disk(kind)) {
				/*
				 * Every device but partitions (stacked ones too: -f asks for all), and those
				 * that never did any I/O left out; -x's also those without a medium (a loop
				 * device detached, an empty ram disk): all of them with --partitions=ALL.
				 */
				for (unsigned d = 0; d < s->disks.count; d++) {
					const struct disk_stats *disk = &s->disks.disk[d];
					if (!s->disks.kind[d].partition &&
					    (o->all_devices ||
					     (disk->rd_ios + disk->wr_ios + disk->dc_ios + disk->fl_ios &&
					      (kind != G_disk_ext || has_medium(disk->name)))))
						add_disk(r, kind, disk->name, s);
				}
			} else {
				add_group(r, kind, "total");
			}
			break;
		case ITEMS_NET:
			if (o->nets)
				add_listed(r, kind, o->nets, "interface", net_exists, s);
			else if (o->full)
				for (unsigned n = 0; n < s->netdev.count; n++) {
					const struct netdev_stats *dev = &s->netdev.dev[n];
					/* As dstat: lo, and interfaces that never carried a packet, left out. */
					if (strcmp(dev->name, "lo") && dev->rx_packets + dev->tx_packets)
						add_group(r, kind, dev->name);
				}
			else
				add_group(r, kind, "total");
			break;
		case ITEMS_SWAP:
			if (o->swaps)
				add_listed(r, kind, o->swaps, "swap area", swap_exists, s);
			else if (o->full && s->swaps.count)
				for (unsigned w = 0; w < s->swaps.count; w++)
					add_group(r, kind, s->swaps.area[w].name);
			else
				add_group(r, kind, "total");
			break;
		case ITEMS_IRQS:
			if (o->irqs)
				irq_list(s, o->irqs, list, sizeof(list));
			else
				irq_default(s, o->full, list, sizeof(list));
			if (*list)
				add_group(r, kind, list);
			break;
		case ITEMS_CPUS: {
			/* dstat's cpu-use: a column per cpu (-C's, else all). */
			size_t used = 0;
			list[0] = '\0';
			if (o->cpus && strcmp(o->cpus, "all")) {
				snprintf(list, sizeof(list), "%s", o->cpus);
			} else {
				for (unsigned c = 0; c < s->procstat.ncpu && used < sizeof(list); c++)
					if (s->procstat.cpu_present[c])
						used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%u",
									 used ? "," : "", c);
			}
			add_group(r, kind, list);
			break;
		}
		case ITEMS_MOUNTS: {
			/*
			 * dstat's freespace: a group per mount point of /proc/self/mounts, as its
			 * filters leave them.
			 */
			char mounts[64][256];
			unsigned n = groups_freespace_mounts(mounts, 64);
			for (unsigned m = 0; m < n; m++)
				add_group(r, kind, mounts[m]);
			break;
		}
		case ITEMS_VTRACE:
			for (size_t v = 0; v < r->vtrace.count; v++) {
				segment_item(r, v, list, sizeof(list));
				add_group(r, kind, list);
			}
			break;
		case ITEMS_ONE:
			add_group(r, kind, NULL);
			break;
		}
	}
	r->needs &= ~r->unavailable;
}

/* The groups' keys in one string: a change (a device attached, a service started) calls for new headers. */
static void layout_of(const struct run *r, char *out, size_t size)
{
	size_t used = 0;

	out[0] = '\0';
	for (unsigned g = 0; g < r->ngroups && used < size; g++)
		used += (size_t)snprintf(out + used, size - used, "%s/%u,", r->groups[g].shown.key,
					 r->groups[g].shown.ncolumns);
}

/* ---- libvtrace segments ---------------------------------------------------------------- */

/* A request in flight for longer than this is hung (vstat's HANG, with its default). */
#define HANG_NS 1000000000ull

static void compute_vtrace(struct run *r, struct group *g)
{
	char item[sizeof(g->item)];

	for (size_t i = 0; i < r->vtrace.count; i++) {
		struct segment *s = r->vtrace.list[i];
		const struct vtrace_stats *now, *then;
		static const struct vtrace_stats zero;
		double seconds, ops, util;
		unsigned all, hung = 0;

		segment_item(r, i, item, sizeof(item));
		if (strcmp(item, g->item))
			continue;
		all = s->info->op_count;
		if (segment_impossible(s, all)) /* counters no server writes: unknown, as vstat shows them */
			break;
		now = &s->current[all];
		then = s->has_previous ? &s->previous[all] : &zero;
		/* The first line covers the server's life so far, as the system's covers the time since boot. */
		seconds = (double)(s->current_ns - (s->has_previous ? s->previous_ns : s->info->created_ns)) / 1e9;
		ops = seconds > 0 && now->completions >= then->completions
			      ? (double)(now->completions - then->completions) / seconds : 0;
		util = seconds > 0 && now->busy_ns >= then->busy_ns
			       ? 100.0 * (double)(now->busy_ns - then->busy_ns) / (seconds * 1e9) : 0;
		for (unsigned op = 0; op < all; op++) {
			const struct vtrace_stats *o = &s->current[op];
			hung += !segment_impossible(s, op) && o->oldest_ns && o->begins > o->completions &&
			    s->current_ns > o->oldest_ns && s->current_ns - o->oldest_ns > HANG_NS;
		}
		g->shown.values[0] = g->shown.raw[0] = ops;
		g->shown.values[1] = g->shown.raw[1] = util > 100 ? 100 : util;
		g->shown.values[2] = g->shown.raw[2] = hung;
		return;
	}
	for (unsigned c = 0; c < g->shown.ncolumns; c++)
		g->shown.values[c] = g->shown.raw[c] = NAN;
}

/* ---- Samples ---------------------------------------------------------------------------- */

/*
 * The next frame of --from's window a delay after the last (frames closer are passed over:
 * `--from 03:00 60` of a recording every 10 s shows a line a minute; the window's last frame
 * ends it, however close), read as a sample. 1, or 0
 * at the end, 2 when the machine restarted since the last (its counters began again: a new
 * start, no line). A restart or a clock step between two frames is said.
 */
static int window_sample(struct run *r, struct system_sample *s, unsigned *failed)
{
	uint64_t real = 0, mono = 0, step = (uint64_t)(r->opts->delay * 1e9 * 0.95);
	char a[32], boot[40];
	const unsigned char *tree;
	const char *said;
	size_t len;
	bool restarted;
	int rc;

	rc = store_window_next(r->window, step, &tree, &len, &real, &mono);
	if ((said = store_window_said(r->window)))
		warn_msg("%s: %s", printable_name(r->opts->record_dir), said);
	if (rc == 0)
		return 0;
	if (sysroot_memory_set(tree, len) != 0)
		warn_msg("%s: the frame of %s is not a tree of files: passed over", printable_name(r->opts->record_dir),
			 recorded_clock(real, a, sizeof(a)));
	restarted = recorded_gap(&r->window_gap, real, mono, recorded_boot(tree, len, boot, sizeof(boot)));
	*failed = system_sample_read(s, r->needs);
	s->mono_ns = mono;
	s->real_ns = real;
	return restarted ? 2 : 1;
}

/*
 * Reads a sample: live, a frame of --from's window, or the next recorded one (IOLENS_REPLAY=DIR:
 * DIR/0, DIR/1 ..., each with a "time" file). 0, 1 when it begins anew (the machine restarted),
 * or -ENOENT at the end of a recording.
 */
static int take_sample(struct run *r, struct system_sample *s)
{
	unsigned failed;
	int fresh = 0;

	if (r->window) {
		fresh = window_sample(r, s, &failed);
		if (fresh == 0)
			return -ENOENT;
		fresh = fresh == 2;
	} else if (r->opts->replay) {
		char dir[4096], text[128];
		unsigned long long mono = 0, real = 0;

		snprintf(dir, sizeof(dir), "%s/%u", r->opts->replay, r->replay_index++);
		if (sysroot_set(dir) != 0)
			return -ENOENT;
		if (sysroot_read_small("/time", text, sizeof(text)) > 0)
			sscanf(text, "%llu %llu", &mono, &real);
		failed = system_sample_read(s, r->needs);
		s->mono_ns = mono;
		s->real_ns = real;
	} else {
		failed = system_sample_read(s, r->needs);
	}
	/* Each source that cannot be read is said once; its columns show '-'. */
	for (unsigned bit = 0; bit < SYS_SOURCES; bit++) {
		unsigned flag = 1u << bit;
		if ((failed & flag) && !(r->warned & flag)) {
			if (r->window && s->error[bit] == -ENOENT)
				warn_msg("%s: not kept by iolens record", system_source_name(flag));
			else
				warn_errno(system_source_name(flag), -s->error[bit]);
			r->warned |= flag;
			r->failed = true;
		}
	}
	return fresh;
}

/* ---- Output ------------------------------------------------------------------------------ */

/* The terminal's rows and columns, 0 when unknown. */
static void terminal_size(unsigned *rows, unsigned *columns)
{
	struct winsize ws = {0};

	ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws);
	if (rows)
		*rows = ws.ws_row;
	if (columns)
		*columns = ws.ws_col;
}

static unsigned terminal_rows(void)
{
	unsigned rows;

	terminal_size(&rows, NULL);
	return rows ? rows : 25;
}

/* A closed pipe (| head) ends the run quietly. */
static void check_output(FILE *stream)
{
	if (ferror(stream) || fflush(stream) != 0) {
		if (errno == EPIPE)
			exit(EXIT_OK);
		warn_errno("output", errno);
		exit(EXIT_FAIL);
	}
}

static struct mon_group *shown(struct run *r, bool since_boot)
{
	static struct mon_group groups[MAX_GROUPS];

	for (unsigned g = 0; g < r->ngroups; g++) {
		groups[g] = r->groups[g].shown;
		if (r->opts->dstat)
			group_dstat_view(&r->groups[g], g ? &r->groups[g - 1] : NULL, &groups[g], since_boot);
	}
	return groups;
}

/* With --top-bio or -x: how block I/O is counted (bio_mechanism_name, or "procfs"); else NULL. */
static const char *bio_mechanism_used;

static void print_json(struct run *r, const struct system_sample *s, uint64_t interval_ns, bool since_boot)
{
	struct out_record *line = out_record_new();
	int err;

	out_rec_ns(line, "time_ns", s->real_ns);
	out_rec_ns(line, "interval_ns", interval_ns);
	out_rec_bool(line, "since_boot", since_boot);
	if (bio_mechanism_used)
		out_rec_text(line, "bio_mechanism", bio_mechanism_used);
	for (unsigned g = 0; g < r->ngroups; g++) {
		const struct mon_group *m = &r->groups[g].shown;
		struct out_record *group;
		char key[96];

		if (r->groups[g].kind == G_time || r->groups[g].kind == G_epoch)
			continue; /* time_ns says it */
		group = out_rec_object(line, m->key);
		/* Each column's key names its unit ("usr_pct", "read_bytes_per_s"); unknown is NaN: null. */
		for (unsigned c = 0; c < m->ncolumns; c++) {
			const struct mon_column *col = &m->columns[c];
			if (col->type == MON_NAME) {
				/*
				 * A top plugin's process: its name as the kernel has it (null when
				 * none), and its pid.
				 */
				out_rec_text(group, "name", r->groups[g].name[0] ? r->groups[g].name : NULL);
				if (r->groups[g].kind != G_top_int)
					out_rec_count_if(group, "pid", (uint64_t)r->groups[g].pid,
							 r->groups[g].pid > 0);
				continue;
			}
			snprintf(key, sizeof(key), "%s%s%s", col->key, col->unit && *col->unit ? "_" : "", col->unit);
			out_rec_real(group, key, m->raw[c]);
		}
	}
	err = out_record_write(line, stdout, OUT_RECORD_LINE);
	out_record_free(line);
	if (err)
		errno = -err;
	check_output(stdout);
}

/* On a terminal, as dstat: how many of the groups fit its width (at least one); monitor.more when not all. */
static unsigned groups_that_fit(struct run *r, const struct mon_group *groups, unsigned ngroups)
{
	unsigned visible = ngroups, columns = 0;

	terminal_size(NULL, &columns);
	if (r->tty && columns) {
		unsigned width = 0;
		for (visible = 0; visible < ngroups; visible++) {
			unsigned w = width + (visible ? 1 : 0) + (unsigned)monitor_group_width(&groups[visible]);
			if (w + (visible + 1 < ngroups) > columns)
				break;
			width = w;
		}
		if (!visible)
			visible = 1;
	}
	r->monitor.more = visible < ngroups;
	return visible;
}

/*
 * The width -x's rows are fitted to: COLUMNS when set to a number (as ps and ls take it), else
 * the terminal's; 0, every column, off a terminal (a pipe, a file), as iostat -x prints them.
 */
static unsigned rows_width(void)
{
	const char *env = getenv("COLUMNS");
	unsigned columns = 0;

	if (env && *env) {
		char *end;
		unsigned long value = strtoul(env, &end, 10);
		if (!*end && value > 0 && value < 100000)
			return (unsigned)value;
	}
	if (!isatty(STDOUT_FILENO))
		return 0;
	terminal_size(NULL, &columns);
	return columns ? columns : 80;
}

/*
 * With -x, a sample is a report, as iostat's: the other groups' line under its headers (when
 * there are others), then iostat -x's header and a row per disk, then an empty line.
 */
static void print_report(struct run *r, struct mon_group *groups)
{
	static struct mon_group line[MAX_GROUPS];
	const struct group *disks[MAX_GROUPS];
	char *names[MAX_GROUPS], value[64];
	unsigned ndisks = 0, nline = 0, device_width = 6, columns[64], ncolumns;
	bool cut;

	for (unsigned g = 0; g < r->ngroups; g++) {
		if (r->groups[g].kind == G_disk_ext)
			disks[ndisks++] = &r->groups[g];
		else
			line[nline++] = groups[g];
	}
	if (nline) {
		unsigned visible = groups_that_fit(r, line, nline);

		monitor_header(&r->monitor, line, visible);
		monitor_line(&r->monitor, line, visible, true);
		fputc('\n', stdout);
	}
	/* A disk's name escaped as in any table (iolens(1), NAMES IN OUTPUT), the column as wide as the widest. */
	for (unsigned d = 0; d < ndisks; d++) {
		size_t shown, len;

		names[d] = escape_text(disks[d]->item, ESCAPE_TERMINAL);
		len = text_fit(names[d], 64, &shown);
		names[d][len] = '\0';
		if (shown > device_width)
			device_width = (unsigned)shown;
	}
	ncolumns = groups_ext_rows_layout(disks, ndisks, rows_width(), device_width, columns, &cut);
	printf("%-*s", (int)device_width, "Device");
	for (unsigned c = 0; c < ncolumns; c++)
		printf(" %*s", groups_ext_row_width(columns[c]), groups_ext_row_nick(columns[c]));
	fputs(cut ? " >\n" : "\n", stdout);
	for (unsigned d = 0; d < ndisks; d++) {
		size_t shown;

		text_fit(names[d], 64, &shown);
		printf("%s%*s", names[d], (int)(device_width - shown), "");
		for (unsigned c = 0; c < ncolumns; c++) {
			groups_ext_row_value(disks[d], columns[c], r->opts->integer, value, sizeof(value));
			printf(" %*s", groups_ext_row_width(columns[c]), value);
		}
		fputc('\n', stdout);
		free(names[d]);
	}
	fputc('\n', stdout);
	check_output(stdout);
}

static void print_sample(struct run *r, const struct system_sample *s, uint64_t interval_ns, bool since_boot,
			 bool final)
{
	struct stat_options *o = r->opts;
	char layout[sizeof(r->layout)];
	struct mon_group *groups = shown(r, since_boot);
	bool new_layout;

	layout_of(r, layout, sizeof(layout));
	new_layout = strcmp(layout, r->layout) != 0;
	if (new_layout)
		snprintf(r->layout, sizeof(r->layout), "%s", layout);

	if ((r->csv || r->csv_stdout) && final) {
		/* CSV lines are written whole: Ctrl-C never leaves half of one. */
		sigset_t block, old;
		sigemptyset(&block);
		sigaddset(&block, SIGINT);
		sigaddset(&block, SIGTERM);
		sigprocmask(SIG_BLOCK, &block, &old);
		FILE *streams[2] = { r->csv, r->csv_stdout ? stdout : NULL };
		for (int i = 0; i < 2; i++) {
			if (!streams[i])
				continue;
			/* Through the dstat link, FILE has dstat's CSV: its headers, its values. */
			bool as_dstat = o->dstat && streams[i] == r->csv;

			if ((!r->csv_header_written || new_layout) &&
			    (as_dstat ? monitor_csv_dstat_header(streams[i], groups, r->ngroups)
				      : monitor_csv_header(streams[i], groups, r->ngroups)) != 0)
				check_output(streams[i]);
			if ((as_dstat ? monitor_csv_dstat_line(streams[i], groups, r->ngroups)
				      : monitor_csv_line(streams[i], groups, r->ngroups, (unsigned long long)s->real_ns,
							 since_boot)) != 0)
				check_output(streams[i]);
		}
		r->csv_header_written = true;
		sigprocmask(SIG_SETMASK, &old, NULL);
	}
	if (o->format == OUT_JSON) {
		if (final)
			print_json(r, s, interval_ns, since_boot);
		return;
	}
	if (o->format == OUT_CSV)
		return;
	for (unsigned g = 0; g < r->ngroups; g++)
		group_table_view(&r->groups[g], &groups[g]);
	if (r->rows) {
		if (final)
			print_report(r, groups);
		return;
	}
	/* The table: headers at the start, when the groups change, and when they scrolled away. */
	if (final || r->tty) {
		unsigned visible = groups_that_fit(r, groups, r->ngroups);
		bool header;

		if (r->monitor.more && r->visible != visible)
			new_layout = true;
		r->visible = visible;
		header = new_layout || (r->tty && !o->noheaders && r->lines_since_header >= terminal_rows() - 2);
		/* An update on the screen is erased and drawn again; the headers go above it when due. */
		if (r->partial_line)
			fputs("\r\033[2K", stdout);
		if (header) {
			monitor_header(&r->monitor, groups, visible);
			r->lines_since_header = 0;
		}
		monitor_line(&r->monitor, groups, visible, final);
		r->partial_line = !final;
		if (final && o->debug) /* dstat's --debug: the milliseconds from reading the sample to drawing it */
			printf("%6.2fms", (double)(monotonic_ns() - s->mono_ns) / 1e6);
		if (final) {
			fputc('\n', stdout);
			r->lines_since_header++;
		}
		check_output(stdout);
	}
}

static void compute_all(struct run *r, const struct system_sample *then, const struct system_sample *now,
			double seconds, bool since_boot)
{
	for (unsigned g = 0; g < r->ngroups; g++) {
		if (r->groups[g].kind == G_vtrace)
			compute_vtrace(r, &r->groups[g]);
		else
			group_compute(&r->groups[g], then, now, seconds, since_boot);
	}
}

/* Columns the kernel or the tree cannot fill are said once at the start: they show '-'. */
static void say_unknowns(struct run *r, const struct system_sample *s)
{
	bool psi = false, disks = false;

	for (unsigned g = 0; g < r->ngroups; g++) {
		psi |= r->groups[g].kind == G_psi;
		disks |= items_of(r->groups[g].kind) == ITEMS_DISK && !strcmp(r->groups[g].item, "total");
	}
	if (psi && (s->have & SYS_PSI) && !s->psi_io.available && !s->psi_memory.available && !s->psi_cpu.available) {
		warn_msg("pressure stall is unknown ('-'): no %s/proc/pressure (no CONFIG_PSI, or psi=0 at boot)",
			 strcmp(sysroot_get(), "/") ? printable_name(sysroot_get()) : "");
		r->failed = true;
	}
	if (disks && (s->have & SYS_DISKSTATS) && s->disks.count) {
		bool any = false;
		for (unsigned i = 0; i < s->disks.count; i++)
			any |= s->disks.kind[i].in_sysfs;
		if (!any) {
			warn_msg(
			    "disk totals are unknown ('-'): no /sys/class/block to tell whole disks from the rest");
			r->failed = true;
		}
	}
}

/*
 * DSTAT_OPTS: options before those of the command line, split at blanks, as dstat reads
 * them. The new argv (its strings are the environment's copy's) lives as long as the process.
 */
static char **with_dstat_opts(int *argc, char **argv)
{
	const char *env = getenv("DSTAT_OPTS");
	static char *copy;
	static char **args; /* kept: parse_options may exit (--list, --help, a usage error) */
	char *save = NULL;
	int n = 0;

	args = xcalloc((size_t)*argc + (env ? strlen(env) / 2 + 2 : 1) + 1, sizeof(*args));
	args[n++] = argv[0];
	if (env && *env) {
		copy = xstrdup(env);
		for (char *p = strtok_r(copy, " \t\n", &save); p; p = strtok_r(NULL, " \t\n", &save))
			args[n++] = p;
	}
	for (int i = 1; i < *argc; i++)
		args[n++] = argv[i];
	args[n] = NULL;
	*argc = n;
	return args;
}

/*
 * dstat's --output: a preamble before the headers (its version, author and address for a new
 * file, two blank lines when appending), then the host, user, command line and date, quoted
 * and separated as dstat writes them.
 */
static void dstat_csv_preamble(FILE *out, bool made, int argc, char **argv)
{
	struct utsname host;
	struct passwd *pw = getpwuid(geteuid());
	const char *user = getenv("LOGNAME");
	char date[128];
	time_t now = time(NULL);
	struct tm tm;

	/* As Python's getpass.getuser(): LOGNAME, USER, LNAME, USERNAME, then the password file. */
	for (const char *const *name = (const char *const[]){ "USER", "LNAME", "USERNAME", NULL };
	     !(user && *user) && *name; name++)
		user = getenv(*name);
	if (!(user && *user))
		user = pw ? pw->pw_name : "";
	if (uname(&host) != 0)
		snprintf(host.nodename, sizeof(host.nodename), "%s", "");
	if (made)
		fputs("\"Dstat 0.8.0 CSV output\"\n"
		      "\"Author:\",\"Dag Wieers <dag@wieers.com>\",,,,"
		      "\"URL:\",\"http://dag.wieers.com/home-made/dstat/\"\n",
		      out);
	else
		fputs("\n\n", out);
	fprintf(out, "\"Host:\",\"%s\",,,,\"User:\",\"%s\"\n", host.nodename, user);
	fputs("\"Cmdline:\",\"dstat", out);
	for (int i = 1; i < argc; i++)
		fprintf(out, " %s", argv[i]);
	strftime(date, sizeof(date), "%d %b %Y %H:%M:%S %Z", localtime_r(&now, &tm));
	fprintf(out, "\",,,,\"Date:\",\"%s\"\n", date);
	fflush(out);
}

/*
 * Whether a disk named in -D is still there: in /proc/diskstats, and with its medium if it had
 * one at the start (a loop device detached stays in diskstats with no size: gone all the same).
 */
static bool disk_present(struct run *r, const struct system_sample *s, const char *name)
{
	uint64_t sectors;

	if (!disk_exists(s, name))
		return false;
	for (unsigned i = 0; i < r->nsized; i++)
		if (!strcmp(r->sized[i].name, name))
			return !r->sized[i].replaced &&
			       (block_device_value(name, "size", &sectors) != 0 || sectors > 0);
	return true;
}

/* The disks of -D with a medium at the start: their medium going is their going away. */
static void note_sized(struct run *r, const struct system_sample *s)
{
	uint64_t sectors;

	for (unsigned g = 0; g < r->ngroups && r->nsized < sizeof(r->sized) / sizeof(r->sized[0]); g++) {
		const struct group *group = &r->groups[g];
		struct sized_disk *disk = &r->sized[r->nsized];
		bool known = false;

		if (!disk_kind(group->kind) ||
		    !strcmp(group->item, "total") || !r->opts->disks || !disk_exists(s, group->item))
			continue;
		for (unsigned i = 0; i < r->nsized; i++)
			known |= !strcmp(r->sized[i].name, group->item);
		if (!known && block_device_value(group->item, "size", &sectors) == 0 && sectors > 0) {
			/* (Not snprintf: GCC's -Wrestrict cannot tell the two apart, both in *r.) */
			size_t len = strnlen(group->item, sizeof(disk->name) - 1);

			memcpy(disk->name, group->item, len);
			disk->name[len] = '\0';
			if (block_device_value(disk->name, "diskseq", &disk->diskseq) != 0)
				disk->diskseq = 0;
			disk->replaced = false;
			r->nsized++;
		}
	}
}

/*
 * Each sample: a disk of -D whose medium changed since the last (a loop device detached and
 * attached again between two samples, maybe by another program: diskseq) is one that went away,
 * for that interval: its counters are of another device. From the next, the new medium's.
 */
static void note_replaced(struct run *r)
{
	for (unsigned i = 0; i < r->nsized; i++) {
		struct sized_disk *disk = &r->sized[i];
		uint64_t now;

		disk->replaced = disk->diskseq && block_device_value(disk->name, "diskseq", &now) == 0 &&
				 now != disk->diskseq;
		if (disk->replaced)
			disk->diskseq = now;
	}
}

/*
 * A disk, interface or cpu named in -D, -N or -C that went away during the run: said once
 * each (its columns show '-'), and the run ends with exit status 1, as the man page says.
 */
static void say_gone(struct run *r, const struct system_sample *s)
{
	static char said[32][80];
	static unsigned nsaid;

	for (unsigned g = 0; g < r->ngroups; g++) {
		const struct group *group = &r->groups[g];
		const char *what = NULL;
		char key[80];
		bool seen = false;

		if (!strcmp(group->item, "total"))
			continue;
		switch (items_of(group->kind)) {
		case ITEMS_DISK:
		case ITEMS_EACH_DISK:
			if (r->opts->disks && (s->have & SYS_DISKSTATS) && !disk_present(r, s, group->item))
				what = "disk";
			break;
		case ITEMS_NET:
			if (r->opts->nets && (s->have & SYS_NETDEV) && !net_exists(s, group->item))
				what = "interface";
			break;
		case ITEMS_CPU:
			if (r->opts->cpus && (s->have & SYS_PROCSTAT) && !cpu_exists(s, group->item))
				what = "cpu";
			break;
		default:
			break;
		}
		if (!what)
			continue;
		for (unsigned c = 0; c < group->shown.ncolumns; c++)
			r->groups[g].shown.values[c] = r->groups[g].shown.raw[c] = NAN;
		r->failed = true;
		snprintf(key, sizeof(key), "%s %s", what, group->item);
		for (unsigned i = 0; i < nsaid && !seen; i++)
			seen = !strcmp(said[i], key);
		if (seen)
			continue;
		warn_msg("%s '%s' went away: its columns show '-'", what, printable_name(group->item));
		if (nsaid < sizeof(said) / sizeof(said[0]))
			snprintf(said[nsaid++], sizeof(said[0]), "%s", key);
	}
}

static void sleep_until(uint64_t deadline)
{
	sleep_until_ns(deadline, &stop_signal);
}

/* --verbose: messages with their whole reason, however long. */
static bool verbose_messages;

/*
 * A message on what a run lacks, and why: at most 100 characters, the whole reason with
 * --verbose. A long reason gives way to what fixes it (root for eBPF) or to --verbose.
 */
static void warn_because(const char *what, const char *why)
{
	size_t room = 100 - 4 - strlen(program_name) - strlen(what), lead = strcspn(why, "(:");

	if (!strcmp(why, EBPF_NEEDS_PRIVILEGE)) {
		warn_msg("%s: eBPF %s", what, why);
	} else if (verbose_messages || strlen(why) <= room) {
		warn_msg("%s: %s", what, why);
	} else if (!ebpf_may_trace()) {
		warn_msg("%s: eBPF needs root or CAP_BPF+CAP_PERFMON", what);
	} else {
		/* The reason's first clause when it says something ("libbpf cannot be loaded"), else --verbose. */
		while (lead && why[lead - 1] == ' ')
			lead--;
		if (lead >= 20 && lead + 16 <= room)
			warn_msg("%s: %.*s (see --verbose)", what, (int)lead, why);
		else
			warn_msg("%s: eBPF did not load (--verbose says why)", what);
	}
}

/*
 * bio.bpf.c's counts, for --top-bio and -x's latencies: true when it loads; else false with why
 * not (a recording or a tree under --sysroot has no kernel of its own to trace).
 */
static bool bio_source(const struct stat_options *o, bool elsewhere, const char **why)
{
	/* Asked by --top-bio and -x alike: eBPF loaded, or refused, once, with the maps either needs. */
	static int loaded; /* 0: not tried yet, 1: loaded, -1: not */
	static const char *refused;

	if (!loaded) {
		unsigned want = 0;

		for (unsigned i = 0; i < o->norder; i++)
			want |= o->order[i] == G_top_bio ? BIO_WANT_PROCESSES
				: o->order[i] == G_disk_ext && o->latency ? BIO_WANT_DISKS : 0;
		refused = o->replay ? "a recording has no kernel to trace" : "--sysroot's tree has no kernel to trace";
		loaded = !elsewhere && bio_start(want, &refused) == 0 ? 1 : -1;
		bio_mechanism_used = loaded > 0 ? bio_mechanism_name(bio_mechanism()) : "procfs";
		if (loaded > 0 && bio_mechanism_less_exact(bio_mechanism()))
			warn_msg("--top-bio: %s", bio_mechanism_less_exact(bio_mechanism()));
	}
	*why = refused;
	return loaded > 0;
}

/*
 * --top-bio: block I/O per process by eBPF where it loads; else /proc/PID/io's read_bytes and
 * write_bytes (a recording's too). -x --latency's percentiles: eBPF's histograms per disk where it
 * loads; else unknown ('-', null; the table leaves their columns out): the averages (r_await,
 * w_await) from /proc/diskstats remain. One eBPF program for both: when it does not load, one
 * line says so, of what was asked.
 */
static void bio_sources(const struct stat_options *o, bool elsewhere)
{
	bool top_bio = false, disk_ext = false;
	const char *why;

	for (unsigned i = 0; i < o->norder; i++) {
		top_bio |= o->order[i] == G_top_bio;
		/* -x's columns are iostat's, from /proc/diskstats: eBPF only for the percentiles asked. */
		disk_ext |= o->order[i] == G_disk_ext && o->latency;
		if (o->order[i] == G_disk_ext)
			bio_mechanism_used = "procfs"; /* (JSON's bio_mechanism: no eBPF, until it loads) */
	}
	if ((!top_bio && !disk_ext) || bio_source(o, elsewhere, &why)) {
		groups_top_bio_by_ebpf(top_bio);
		groups_disk_latency_by_ebpf(disk_ext);
		return;
	}
	warn_because(top_bio && disk_ext ? "-x: no latency, --top-bio counts /proc/PID/io"
		     : top_bio ? "--top-bio counts /proc/PID/io" : "-x: no latency percentiles", why);
}

/* --output FILE: the CSV file, opened once (dstat's preamble first through the link); false when it cannot be. */
static bool open_csv_output(struct run *r, const struct stat_options *o, int argc, char **args)
{
	struct path_output csv;
	char path_why[512];

	/* Opened once, never through where another user could lead it but not write themselves. */
	if (path_output_open(o->output_file, 0, 0666, &csv, path_why, sizeof(path_why)) != 0 ||
	    !(r->csv = fdopen(csv.fd, "ae"))) {
		if (csv.fd >= 0)
			snprintf(path_why, sizeof(path_why), "%s", strerror(errno));
		warn_msg("%s: %s", printable_name(o->output_file), path_why);
		path_output_close(&csv, true);
		return false;
	}
	csv.fd = -1; /* the stream's now */
	if (o->dstat)
		dstat_csv_preamble(r->csv, csv.made, argc, args);
	else if (!csv.made)
		fputs("\n", r->csv);
	path_output_close(&csv, false);
	return true;
}

/*
 * The sources the groups asked for start (--cache's eBPF events), or are said unknown; a
 * recorded tree (elsewhere) has neither a kernel to trace nor servers of its own. True when
 * libvtrace servers are shown.
 */
static bool start_group_sources(struct run *r, const struct stat_options *o, bool elsewhere)
{
	bool has_vtrace = false;

	for (unsigned i = 0; i < o->norder; i++) {
		if (o->order[i] == G_vtrace) {
			has_vtrace = !elsewhere;
			if (elsewhere)
				warn_msg("libvtrace servers are not shown: they are this machine's, not the %s",
					 o->replay ? "recording's" : "tree's under --sysroot");
		}
		if (o->order[i] == G_cache) {
			const char *why = o->replay ? "a recording has no kernel to ask"
						   : "the kernel is this machine's, not the tree's under --sysroot";
			if (elsewhere || cache_events_start(&why) != 0) {
				warn_because("pages added and removed are unknown ('-')", why);
				r->failed = !elsewhere;
				r->unavailable |= SYS_CACHE_EVENTS;
			}
		}
		/* A recording's disks are another machine's: their capacities only from a --capacity-dir given. */
		if (o->order[i] == G_disk_ext && elsewhere && !groups_capacity_dir_given())
			groups_capacity_off(o->replay
						? "a recording's disks are another machine's (give --capacity-dir)"
						: "--sysroot's disks are not this machine's (give --capacity-dir)");
	}
	return has_vtrace;
}

/*
 * Until the next tick (deadline): dstat's intermediate updates of a long delay on a terminal,
 * the line so far redrawn every second; then the sleep.
 */
static void wait_for_tick(struct run *r, struct system_sample *then, uint64_t *deadline, bool has_vtrace)
{
	const struct stat_options *o = r->opts;
	bool updates = r->tty && !r->rows && !o->noupdate && o->delay > 1 && !o->replay;

	*deadline += (uint64_t)(o->delay * 1e9);
	/* dstat's intermediate updates: the line so far, redrawn every second of a long delay. */
	while (updates && !stop_signal && monotonic_ns() + 1000000000ull < *deadline) {
		struct system_sample partial;
		sleep_until(monotonic_ns() + 1000000000ull);
		if (stop_signal)
			break;
		take_sample(r, &partial);
		if (has_vtrace)
			segment_set_refresh(&r->vtrace);
		compute_all(r, then, &partial, (double)(partial.mono_ns - then->mono_ns) / 1e9, false);
		print_sample(r, &partial, partial.mono_ns - then->mono_ns, false, false);
		system_sample_free(&partial);
	}
	if (!o->replay) {
		uint64_t late, step = (uint64_t)(o->delay * 1e9);
		sleep_until(*deadline);
		/*
		 * Stopped or starved past half a tick: as dstat, skip the ticks missed rather
		 * than catch up with lines a moment apart; this line covers the whole gap,
		 * measured, and the next one a whole tick from it (on the old ticks it could
		 * be a few ms: a rate no one should read).
		 */
		late = monotonic_ns();
		if (late > *deadline + step / 2)
			*deadline = late;
	}
}

/* --from and --to: the recording's window, played back instead of the live system. */
static void open_window(struct run *r, struct stat_options *o)
{
	uint64_t from, to;
	char why[512];
	int rc;

	if (!o->from)
		usage_error("--to needs --from: the window's start");
	recorded_range(o->from, o->to, &o->record_dir, &from, &to);
	rc = store_window_open(&r->window, o->record_dir, from, to, why, sizeof(why));
	if (rc) {
		warn_msg("%s", why);
		exit(EXIT_FAIL);
	}
	o->replay = o->record_dir; /* as any recording: no kernel to trace, its disks not this machine's */
	o->no_boot_sample = true; /* the window's first frame is where its lines begin */
}

int cmd_stat(int argc, char **argv)
{
	struct stat_options o = { .format = OUT_TABLE, .dstat = as_dstat() };
	struct run r = { .opts = &o };
	struct system_sample zero = {0};
	uint64_t start, deadline;
	bool has_vtrace = false, elsewhere;
	const char *env_replay = getenv("IOLENS_REPLAY");
	struct path_output pidfile = { .fd = -1, .dir_fd = -1 };
	char path_why[512];
	int rc;

	char **args = with_dstat_opts(&argc, argv);

	parse_options(&o, argc, args);
	verbose_messages = warn_verbose = o.verbose;
	groups_verbose(o.verbose);
	groups_show_units(o.bits, o.human);
	if (env_replay && *env_replay)
		o.replay = env_replay;
	if (o.from || o.to)
		open_window(&r, &o);
	r.tty = isatty(STDOUT_FILENO) && o.format == OUT_TABLE;
	/* No colours where the terminal has none, and so no updates drawn with escapes either (as --nocolor). */
	if (r.tty && !o.color && term_without_color())
		o.nocolor = o.noupdate = true;
	r.monitor =
	    (struct monitor){ .out = stdout,
			      .color = o.format == OUT_TABLE && (o.color || (r.tty && !o.nocolor && !no_color())),
			      .integer = o.integer,
			      .floats = o.floats,
			      .light = o.light };
	if (o.pidfile && pidfile_write(o.pidfile, &pidfile, path_why, sizeof(path_why)) != 0) {
		warn_msg("%s: %s", printable_name(o.pidfile), path_why);
		r.failed = true;
		o.pidfile = NULL;
	}
	if (o.output_file && !open_csv_output(&r, &o, argc, args))
		return EXIT_FAIL;
	r.csv_stdout = o.format == OUT_CSV;
	for (unsigned i = 0; i < o.norder; i++)
		r.rows |= o.format == OUT_TABLE && o.order[i] == G_disk_ext;
	/* A recorded tree has neither a kernel to trace nor servers of its own. */
	elsewhere = o.replay || strcmp(sysroot_get(), "/");
	has_vtrace = start_group_sources(&r, &o, elsewhere);
	bio_sources(&o, elsewhere);
	stop_on_signals();

	/* The first sample: every source the groups might need, to check the lists against. */
	r.needs = SYS_UPTIME | SYS_PROCSTAT | SYS_DISKSTATS;
	if (o.replay)
		r.unavailable |= SYS_CACHE_EVENTS;
	for (unsigned i = 0; i < o.norder; i++)
		r.needs |= group_needs(o.order[i]);
	if (o.nets)
		r.needs |= SYS_NETDEV;
	if (o.swaps)
		r.needs |= SYS_SWAPS;
	if (o.irqs)
		r.needs |= SYS_INTERRUPTS;
	r.needs &= ~r.unavailable;
	if (take_sample(&r, &r.samples[0]) < 0) {
		if (r.window)
			warn_msg("%s: nothing recorded from %s to %s", printable_name(o.record_dir), o.from,
				 o.to ? o.to : "now");
		else
			warn_msg("no recorded sample in %s", printable_name(o.replay));
		store_window_close(r.window);
		return EXIT_FAIL;
	}
	if (has_vtrace) {
		segment_set_refresh(&r.vtrace);
		if (!r.vtrace.count)
			warn_msg("no libvtrace server is running (in %s): each shows when it starts",
				 printable_name(vtrace_directory()));
	}
	validating = true;
	validate_lists(&o, &r.samples[0]);
	build_groups(&r, &r.samples[0]);
	validating = false;
	if (!o.replay)
		note_sized(&r, &r.samples[0]);
	say_unknowns(&r, &r.samples[0]);
	r.current = 0;
	start = o.replay ? r.samples[0].mono_ns : monotonic_ns();
	deadline = start;

	/* The first line: the average since boot, unless left out. */
	if (!o.no_boot_sample) {
		double uptime = r.samples[0].uptime > 0 ? r.samples[0].uptime : 1;
		compute_all(&r, &zero, &r.samples[0], uptime, true);
		print_sample(&r, &r.samples[0], (uint64_t)(uptime * 1e9 + 0.5), true, true);
	}
	for (uint64_t line = o.no_boot_sample ? 0 : 1; (!o.count || line < o.count) && !stop_signal; line++) {
		struct system_sample *then = &r.samples[r.current], *now = &r.samples[!r.current];
		wait_for_tick(&r, then, &deadline, has_vtrace);
		if (stop_signal)
			break;
		system_sample_free(now);
		rc = take_sample(&r, now);
		if (rc < 0)
			break; /* the recording ended */
		if (rc > 0) { /* restarted: its counters begin again, this sample the start of the next line */
			r.current = !r.current;
			line--;
			continue;
		}
		if (has_vtrace)
			segment_set_refresh(&r.vtrace);
		/* Devices and services come and go (and with -z, idle disks): the groups follow, with new headers. */
		r.then = then;
		build_groups(&r, now);
		double seconds = now->mono_ns > then->mono_ns ? (double)(now->mono_ns - then->mono_ns) / 1e9 : 0;
		compute_all(&r, then, now, seconds, false);
		note_replaced(&r);
		say_gone(&r, now);
		print_sample(&r, now, now->mono_ns - then->mono_ns, false, true);
		r.current = !r.current;
	}
	if (r.monitor.color)
		fputs("\033[0;0m", stdout);
	if (r.partial_line)
		fputc('\n', stdout); /* Ctrl-C during an update: the line so far stays, ended */
	fflush(stdout);
	if (r.csv && r.csv != stdout)
		fclose(r.csv);
	cache_events_stop();
	bio_stop();
	if (o.pidfile)
		path_output_close(&pidfile, true);
	system_sample_free(&r.samples[0]);
	system_sample_free(&r.samples[1]);
	segment_set_free(&r.vtrace);
	sysroot_memory_set(NULL, 0); /* the window's trees go with it */
	store_window_close(r.window);
	free(o.cpus);
	free(o.disks);
	free(o.nets);
	free(o.swaps);
	free(o.irqs);
	(void)start;
	return r.failed ? EXIT_FAIL : EXIT_OK;
}
