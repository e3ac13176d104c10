/* doctor.c: iolens doctor: the I/O diagnosis a person would make, as rules over what the collectors see (first rules: O_DIRECT, full filesystems). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <mntent.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "cmd/cachestat_common.h"
#include "cmd/common.h"
#include "collect/fdinfo.h"
#include "collect/pagecache.h"
#include "collect/procfs.h"
#include "common/util.h"

enum severity { SEV_INFO, SEV_WARNING, SEV_CRITICAL };
static const char *const severity_names[] = { "info", "warning", "critical" };

/* Exit statuses beyond the house's 0, 1 and 2: what the worst finding was. */
enum { EXIT_WARNING = 3, EXIT_CRITICAL = 4 };

struct finding {
	enum severity severity;
	const char *rule;
	char what[512];    /* what is wrong, in one line */
	char numbers[768]; /* the numbers that show it */
	const char *why;   /* why it matters */
	char more[256];    /* the iolens command that shows more */
	struct json_object *data; /* the numbers for scripts */
};

struct doctor {
	struct finding *findings;
	size_t count;
	double seconds;
};

static struct finding *add_finding(struct doctor *d, enum severity severity, const char *rule, const char *why)
{
	struct finding *f;

	d->findings = xrealloc(d->findings, (d->count + 1) * sizeof(*d->findings));
	f = &d->findings[d->count++];
	memset(f, 0, sizeof(*f));
	f->severity = severity;
	f->rule = rule;
	f->why = why;
	f->data = json_object_new_object();
	return f;
}

static void text(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void text(char *buf, size_t len, const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	vsnprintf(buf, len, fmt, args);
	va_end(args);
}

/* ---- Rule: O_DIRECT ------------------------------------------------------------------- */

/* A process with files open O_DIRECT: its files, and its /proc/PID/io at the start. */
struct direct_process {
	pid_t pid;
	char comm[32];
	char files[4][512];
	unsigned nfiles;
	uint64_t cached_pages, file_pages; /* of those files, what the page cache holds now */
	struct proc_io io_start;
	bool io_known;
};

/* Every process's open files with O_DIRECT in their fdinfo flags. */
static size_t find_direct_processes(struct direct_process **out)
{
	DIR *proc = opendir("/proc");
	struct dirent *entry;
	size_t count = 0;

	*out = NULL;
	while (proc && (entry = readdir(proc))) {
		pid_t pid = (pid_t)strtol(entry->d_name, NULL, 10);
		char dir_path[64];
		struct direct_process found = { .pid = pid };
		DIR *fds;
		struct dirent *fd_entry;

		if (pid <= 0 || pid == getpid())
			continue;
		snprintf(dir_path, sizeof(dir_path), "/proc/%d/fd", (int)pid);
		if (!(fds = opendir(dir_path)))
			continue;
		while ((fd_entry = readdir(fds))) {
			char link[128], target[512];
			struct fdinfo info;
			struct stat st;
			ssize_t length;
			int fd = (int)strtol(fd_entry->d_name, NULL, 10);

			if (fd_entry->d_name[0] == '.' || fdinfo_read("/proc", pid, fd, &info) != 0 || !(info.flags & O_DIRECT))
				continue;
			snprintf(link, sizeof(link), "%s/%d", dir_path, fd);
			if (stat(link, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)))
				continue;
			length = readlink(link, target, sizeof(target) - 1);
			target[length > 0 ? length : 0] = '\0';
			if (found.nfiles < 4) {
				struct pagecache_stat cache;
				int file = open(link, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

				snprintf(found.files[found.nfiles++], sizeof(found.files[0]), "%s", target);
				if (file >= 0 && S_ISREG(st.st_mode) &&
				    pagecache_query(file, 0, (uint64_t)st.st_size, &cache) == 0) {
					found.cached_pages += cache.cached;
					found.file_pages += cache.pages;
				}
				if (file >= 0)
					close(file);
			}
		}
		closedir(fds);
		if (!found.nfiles)
			continue;
		proc_comm_read(pid, found.comm, sizeof(found.comm));
		found.io_known = proc_io_read(pid, &found.io_start) == 0;
		*out = xrealloc(*out, (count + 1) * sizeof(**out));
		(*out)[count++] = found;
	}
	if (proc)
		closedir(proc);
	return count;
}

static void rule_direct(struct doctor *d, struct direct_process *procs, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		struct direct_process *p = &procs[i];
		struct proc_io end;
		double read_rate = 0, write_rate = 0;
		bool rates = p->io_known && proc_io_read(p->pid, &end) == 0;
		struct finding *f;
		char read_text[16], write_text[16];
		size_t used = 0;

		if (rates && d->seconds > 0) {
			read_rate = (double)(end.read_bytes - p->io_start.read_bytes) / d->seconds;
			write_rate = (double)(end.write_bytes - p->io_start.write_bytes) / d->seconds;
		}
		/* Bypassing the cache matters when it moves data; an idle O_DIRECT descriptor is a note. */
		f = add_finding(d, rates && read_rate + write_rate > 0 ? SEV_WARNING : SEV_INFO, "odirect",
				"O_DIRECT bypasses the page cache: every read goes to the disk, even of data read a moment "
				"ago; the cache could serve repeated reads from memory (the seed's 1.4 s against 0.017 s)");
		text(f->what, sizeof(f->what), "process %d (%s) does its I/O with O_DIRECT on %s%s", (int)p->pid, p->comm,
		     p->files[0], p->nfiles > 1 ? " and more" : "");
		used += (size_t)snprintf(f->numbers + used, sizeof(f->numbers) - used, "flags with O_DIRECT (040000) in "
					"/proc/%d/fdinfo for %u file%s", (int)p->pid, p->nfiles, p->nfiles > 1 ? "s" : "");
		if (rates)
			snprintf(f->numbers + used, sizeof(f->numbers) - used, "; from storage %s/s read, %s/s written "
				 "over %.1f s (/proc/%d/io); the page cache holds %llu of its %llu pages",
				 human_size((uint64_t)read_rate, read_text, sizeof(read_text)),
				 human_size((uint64_t)write_rate, write_text, sizeof(write_text)), d->seconds, (int)p->pid,
				 (unsigned long long)p->cached_pages, (unsigned long long)p->file_pages);
		text(f->more, sizeof(f->more), "iolens cachetop -p %d; iolens pcstat --pid %d", (int)p->pid, (int)p->pid);
		json_object_object_add(f->data, "pid", json_object_new_int(p->pid));
		json_object_object_add(f->data, "comm", json_object_new_string(p->comm));
		{
			struct json_object *files = json_object_new_array();

			for (unsigned k = 0; k < p->nfiles; k++)
				json_object_array_add(files, json_object_new_string(p->files[k]));
			json_object_object_add(f->data, "files", files);
		}
		json_object_object_add(f->data, "read_bytes_per_s", rates ? out_json_real(read_rate) : NULL);
		json_object_object_add(f->data, "write_bytes_per_s", rates ? out_json_real(write_rate) : NULL);
		json_object_object_add(f->data, "cached_pages", json_object_new_uint64(p->cached_pages));
		json_object_object_add(f->data, "file_pages", json_object_new_uint64(p->file_pages));
	}
}

/* ---- Rule: full filesystems ------------------------------------------------------------ */

static bool pseudo_filesystem(const char *type)
{
	static const char *const pseudo[] = { "proc", "sysfs", "cgroup", "cgroup2", "devpts", "mqueue", "debugfs",
					      "tracefs", "securityfs", "pstore", "bpf", "configfs", "fusectl",
					      "binfmt_misc", "hugetlbfs", "autofs", "rpc_pipefs", "nsfs", "efivarfs",
					      "squashfs", "iso9660", "overlay", "devtmpfs", "ramfs" };

	for (size_t i = 0; i < sizeof(pseudo) / sizeof(pseudo[0]); i++)
		if (!strcmp(type, pseudo[i]))
			return true;
	return false;
}

/* df's Use%: used / (used + available to users), rounded up. */
static double percent_used(uint64_t total, uint64_t free_all, uint64_t available)
{
	uint64_t used = total > free_all ? total - free_all : 0;

	return used + available ? 100.0 * (double)used / (double)(used + available) : 0;
}

static void rule_full(struct doctor *d)
{
	FILE *mounts = setmntent("/proc/self/mounts", "re");
	struct mntent *m;
	dev_t *seen = NULL;
	size_t nseen = 0;

	while (mounts && (m = getmntent(mounts))) {
		struct statvfs vfs;
		struct stat st;
		size_t k;

		if (pseudo_filesystem(m->mnt_type) || hasmntopt(m, "ro") || stat(m->mnt_dir, &st) != 0 ||
		    statvfs(m->mnt_dir, &vfs) != 0 || !vfs.f_blocks)
			continue;
		for (k = 0; k < nseen && seen[k] != st.st_dev; k++)
			;
		if (k < nseen) /* a bind mount of one already seen */
			continue;
		seen = xrealloc(seen, (nseen + 1) * sizeof(*seen));
		seen[nseen++] = st.st_dev;
		for (int inodes = 0; inodes < 2; inodes++) {
			uint64_t total = inodes ? vfs.f_files : vfs.f_blocks;
			uint64_t free_all = inodes ? vfs.f_ffree : vfs.f_bfree;
			uint64_t available = inodes ? vfs.f_favail : vfs.f_bavail;
			double used = percent_used(total, free_all, available);
			char free_text[16], total_text[16];
			struct finding *f;

			if (!total || used < 90)
				continue;
			f = add_finding(d, used >= 98 ? SEV_CRITICAL : SEV_WARNING, inodes ? "inodes" : "full",
					inodes ? "with no inode left, no file can be created, however much space is free"
					       : "writes fail with ENOSPC when it fills, and ext4 and others slow down "
						 "well before, as free extents get scarce");
			text(f->what, sizeof(f->what), "%s (%s on %s) is %s", m->mnt_dir, m->mnt_type, m->mnt_fsname,
			     inodes ? "nearly out of inodes" : "nearly full");
			if (inodes)
				text(f->numbers, sizeof(f->numbers), "%.1f %% of inodes used: %llu free of %llu (statvfs)", used,
				     (unsigned long long)available, (unsigned long long)total);
			else
				text(f->numbers, sizeof(f->numbers), "%.1f %% used: %s free of %s (statvfs, as df counts)", used,
				     human_size(available * vfs.f_frsize, free_text, sizeof(free_text)),
				     human_size(total * vfs.f_frsize, total_text, sizeof(total_text)));
			text(f->more, sizeof(f->more), "df %s%s", inodes ? "-i " : "-h ", m->mnt_dir);
			json_object_object_add(f->data, "mount", json_object_new_string(m->mnt_dir));
			json_object_object_add(f->data, "type", json_object_new_string(m->mnt_type));
			json_object_object_add(f->data, "source", json_object_new_string(m->mnt_fsname));
			json_object_object_add(f->data, "used_percent", out_json_real(used));
			json_object_object_add(f->data, inodes ? "inodes_free" : "bytes_free",
					       json_object_new_uint64(inodes ? available : available * vfs.f_frsize));
			json_object_object_add(f->data, inodes ? "inodes_total" : "bytes_total",
					       json_object_new_uint64(inodes ? total : total * vfs.f_frsize));
		}
	}
	if (mounts)
		endmntent(mounts);
	free(seen);
}

/* ---- The command ------------------------------------------------------------------------- */

static _Noreturn void usage(void)
{
	printf("Usage:\n"
	       " %s [options] [seconds]\n"
	       "\n"
	       "Look at the machine for SECONDS (default 5) and say what is wrong with its I/O, the\n"
	       "worst first: what, the numbers that show it, why it matters, and the iolens command\n"
	       "that shows more. A healthy machine gets one line.\n"
	       "\n"
	       "Rules so far:\n"
	       "  odirect  a process doing its I/O with O_DIRECT (fdinfo flags), its rates and what\n"
	       "           the page cache holds of its files (warning when it moved data)\n"
	       "  full     a filesystem 90 %% used or more (critical from 98 %%), as df counts\n"
	       "  inodes   a filesystem with 90 %% of its inodes used or more (critical from 98 %%)\n"
	       "\n"
	       "Options:\n"
	       "      --json             one JSON document\n"
	       "  -h, --help             show this help\n"
	       "  -V, --version          show the version\n"
	       "\n"
	       "Exit status: 0 nothing at warning level or worse, 3 a warning, 4 something critical;\n"
	       "1 when the diagnosis itself failed, 2 on bad usage.\n"
	       "\n"
	       "Examples:\n"
	       "  %s             five seconds, then the findings\n"
	       "  %s --json 10   ten seconds, for a script\n",
	       program_name, program_name, program_name);
	exit(EXIT_OK);
}

static int compare_findings(const void *a_, const void *b_)
{
	const struct finding *a = a_, *b = b_;

	return (int)b->severity - (int)a->severity;
}

int cmd_doctor(int argc, char **argv)
{
	static const struct option long_options[] = {
		COMMON_LONG_OPTIONS,
		{ "json", no_argument, NULL, OUT_OPT_JSON },
		{ 0 }
	};
	struct doctor d = { .seconds = 5 };
	struct direct_process *direct;
	size_t ndirect;
	enum severity worst = SEV_INFO;
	bool json = false;
	int opt;

	while ((opt = getopt_long(argc, argv, "hV", long_options, NULL)) != -1) {
		switch (opt) {
		case OUT_OPT_JSON:
			json = true;
			break;
		case 'h':
			usage();
		case 'V':
			print_version();
		default:
			usage_hint();
		}
	}
	if (optind < argc && parse_seconds(argv[optind++], 3600, true, &d.seconds) != 0)
		usage_error("seconds: '%s' is not a number of seconds from 0 to 3600", argv[optind - 1]);
	if (optind < argc)
		usage_error("too many arguments: '%s'", argv[optind]);
	cache_signals();

	ndirect = find_direct_processes(&direct);
	sleep_until_ns(monotonic_ns() + (uint64_t)(d.seconds * 1e9), &cache_stop);
	rule_direct(&d, direct, ndirect);
	rule_full(&d);
	free(direct);

	if (d.count > 1)
		qsort(d.findings, d.count, sizeof(*d.findings), compare_findings);
	for (size_t i = 0; i < d.count; i++)
		if (d.findings[i].severity > worst)
			worst = d.findings[i].severity;
	if (json) {
		struct json_object *doc = json_object_new_object(), *list = json_object_new_array();

		json_object_object_add(doc, "seconds", out_json_real(d.seconds));
		json_object_object_add(doc, "worst", json_object_new_string(d.count ? severity_names[worst] : "none"));
		for (size_t i = 0; i < d.count; i++) {
			struct finding *f = &d.findings[i];
			struct json_object *o = json_object_new_object();

			json_object_object_add(o, "severity", json_object_new_string(severity_names[f->severity]));
			json_object_object_add(o, "rule", json_object_new_string(f->rule));
			json_object_object_add(o, "what", json_object_new_string(f->what));
			json_object_object_add(o, "numbers", json_object_new_string(f->numbers));
			json_object_object_add(o, "why", json_object_new_string(f->why));
			json_object_object_add(o, "more", json_object_new_string(f->more));
			json_object_object_add(o, "data", f->data);
			f->data = NULL;
			json_object_array_add(list, o);
		}
		json_object_object_add(doc, "findings", list);
		puts(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
							 JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(doc);
	} else if (!d.count) {
		printf("No I/O problem found in %.3g s.\n", d.seconds);
	} else {
		for (size_t i = 0; i < d.count; i++) {
			struct finding *f = &d.findings[i];

			printf("%s%s: %s\n  %s\n  why: %s\n  more: %s\n", i ? "\n" : "", severity_names[f->severity],
			       printable_name(f->what), f->numbers, f->why, f->more);
		}
	}
	for (size_t i = 0; i < d.count; i++)
		json_object_put(d.findings[i].data);
	free(d.findings);
	if (fflush(stdout) != 0)
		return cache_output_failed();
	return worst == SEV_CRITICAL ? EXIT_CRITICAL : worst == SEV_WARNING ? EXIT_WARNING : EXIT_OK;
}
