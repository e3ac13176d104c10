/* SPDX-License-Identifier: GPL-2.0-or-later */
/* procfs.c: /proc/stat, meminfo, vmstat, loadavg, uptime, interrupts and pressure: their parsers and readers. */
#include "collect/procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/procfs_internal.h"
#include "collect/sysroot.h"
#include "common/util.h"

/* ---- /proc/stat -------------------------------------------------------------------- */

/* More than any kernel's NR_CPUS (8192): a bigger number is garbage, not a cpu to allocate for. */
#define PROCSTAT_MAX_CPUS 65536

static void cpu_times_unknown(struct cpu_times *times)
{
	times->user = times->nice = times->system = times->idle = times->iowait = PROCFS_UNKNOWN;
	times->irq = times->softirq = times->steal = times->guest = times->guest_nice = PROCFS_UNKNOWN;
}

/* The columns after "cpu" or "cpuN": Linux 2.4 had the first four, later ones came with 2.6.x. */
static int parse_cpu_times(struct span line, struct cpu_times *times)
{
	uint64_t *columns[] = {&times->user,	&times->nice,	 &times->system, &times->idle,
			       &times->iowait,	&times->irq,	 &times->softirq, &times->steal,
			       &times->guest,	&times->guest_nice};
	unsigned count = 0;
	struct span word;

	cpu_times_unknown(times);
	while (count < sizeof(columns) / sizeof(columns[0]) && procfs_next_word(&line, &word)) {
		if (!procfs_parse_u64(word, 10, columns[count]))
			return -EINVAL;
		count++;
	}
	return count >= 4 ? 0 : -EINVAL;
}

static void procstat_empty(struct procstat *stat)
{
	*stat = (struct procstat){0};
	cpu_times_unknown(&stat->total);
	stat->intr = stat->ctxt = stat->btime = stat->processes = PROCFS_UNKNOWN;
	stat->procs_running = stat->procs_blocked = PROCFS_UNKNOWN;
}

/* Makes room for cpu number `index`; the cpus in between stay absent (offline). */
static void procstat_grow(struct procstat *stat, unsigned *capacity, unsigned index)
{
	if (index >= *capacity) {
		unsigned wanted = *capacity ? *capacity * 2 : 8;

		while (wanted <= index)
			wanted *= 2;
		stat->cpu = xrealloc(stat->cpu, wanted * sizeof(*stat->cpu));
		stat->cpu_present = xrealloc(stat->cpu_present, wanted * sizeof(*stat->cpu_present));
		*capacity = wanted;
	}
	for (; stat->ncpu <= index; stat->ncpu++) {
		cpu_times_unknown(&stat->cpu[stat->ncpu]);
		stat->cpu_present[stat->ncpu] = false;
	}
}

static int procstat_line(struct procstat *out, unsigned *capacity, bool *have_total, struct span line)
{
	struct span key;
	uint64_t number;

	if (!procfs_next_word(&line, &key))
		return 0;
	if (span_equals(key, "cpu")) {
		*have_total = true;
		return parse_cpu_times(line, &out->total);
	}
	if (span_starts_with(key, "cpu")) {
		struct span digits = {key.start + 3, key.end};

		if (!procfs_parse_u64(digits, 10, &number))
			return 0; /* some other "cpu..." line */
		if (number >= PROCSTAT_MAX_CPUS)
			return -EINVAL;
		procstat_grow(out, capacity, (unsigned)number);
		if (out->cpu_present[number])
			return -EINVAL; /* a cpu twice: not one sample of the file */
		out->cpu_present[number] = true;
		return parse_cpu_times(line, &out->cpu[number]);
	}

	static const struct {
		const char *key;
		size_t offset;
	} counters[] = {
		{"intr", offsetof(struct procstat, intr)},
		{"ctxt", offsetof(struct procstat, ctxt)},
		{"btime", offsetof(struct procstat, btime)},
		{"processes", offsetof(struct procstat, processes)},
		{"procs_running", offsetof(struct procstat, procs_running)},
		{"procs_blocked", offsetof(struct procstat, procs_blocked)},
	};
	for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
		if (span_equals(key, counters[i].key))
			return procfs_parse_first(line, (uint64_t *)((char *)out + counters[i].offset)) ? 0 : -EINVAL;
	return 0;
}

int procstat_parse(const char *text, size_t len, struct procstat *out)
{
	const char *cursor = text, *end = text + len;
	unsigned capacity = 0;
	bool have_total = false;
	struct span line;
	int rc = 0;

	procstat_empty(out);
	while (rc == 0 && procfs_next_line(&cursor, end, &line))
		rc = procstat_line(out, &capacity, &have_total, line);
	if (rc == 0 && !have_total)
		rc = -EINVAL;
	if (rc != 0) {
		procstat_free(out);
		procstat_empty(out);
	}
	return rc;
}

int procstat_read(struct procstat *out)
{
	static struct sysroot_file file = SYSROOT_FILE("/proc/stat");
	const char *text;
	size_t len;
	int rc = procfs_read_hot(&file, &text, &len);

	if (rc != 0) {
		procstat_empty(out);
		return rc;
	}
	return procstat_parse(text, len, out);
}

void procstat_free(struct procstat *stat)
{
	free(stat->cpu);
	free(stat->cpu_present);
	stat->cpu = NULL;
	stat->cpu_present = NULL;
	stat->ncpu = 0;
}

/* ---- /proc/meminfo ----------------------------------------------------------------- */

#define MEMINFO_FIELD(key, field) {key, sizeof(key) - 1, offsetof(struct meminfo, field)}
static const struct {
	const char *key;
	size_t length; /* compared first: most lines are not ours */
	size_t offset;
} meminfo_fields[] = {
	MEMINFO_FIELD("MemTotal", mem_total),	      MEMINFO_FIELD("MemFree", mem_free),
	MEMINFO_FIELD("MemAvailable", mem_available), MEMINFO_FIELD("Buffers", buffers),
	MEMINFO_FIELD("Cached", cached),	      MEMINFO_FIELD("SwapCached", swap_cached),
	MEMINFO_FIELD("Active", active),	      MEMINFO_FIELD("Inactive", inactive),
	MEMINFO_FIELD("Active(file)", active_file),   MEMINFO_FIELD("Inactive(file)", inactive_file),
	MEMINFO_FIELD("Mlocked", mlocked),	      MEMINFO_FIELD("SwapTotal", swap_total),
	MEMINFO_FIELD("SwapFree", swap_free),	      MEMINFO_FIELD("Dirty", dirty),
	MEMINFO_FIELD("Writeback", writeback),	      MEMINFO_FIELD("AnonPages", anon_pages),
	MEMINFO_FIELD("Mapped", mapped),	      MEMINFO_FIELD("Shmem", shmem),
	MEMINFO_FIELD("Slab", slab),		      MEMINFO_FIELD("SReclaimable", sreclaimable),
	MEMINFO_FIELD("SUnreclaim", sunreclaim),      MEMINFO_FIELD("PageTables", page_tables),
	MEMINFO_FIELD("CommitLimit", commit_limit),   MEMINFO_FIELD("Committed_AS", committed_as),
};
#define MEMINFO_FIELDS (sizeof(meminfo_fields) / sizeof(meminfo_fields[0]))

static void meminfo_unknown(struct meminfo *info)
{
	for (size_t i = 0; i < MEMINFO_FIELDS; i++)
		*(uint64_t *)((char *)info + meminfo_fields[i].offset) = PROCFS_UNKNOWN;
}

/* "Key:   1234 kB": the value in bytes; counts without a unit (HugePages_*) are not ours. */
static int meminfo_value(struct span line, uint64_t *bytes)
{
	struct span number, unit, extra;
	uint64_t kib;

	if (!procfs_next_word(&line, &number) || !procfs_next_word(&line, &unit) || procfs_next_word(&line, &extra))
		return -EINVAL;
	if (!span_equals(unit, "kB") || !procfs_parse_u64(number, 10, &kib) || kib > UINT64_MAX / 1024)
		return -EINVAL;
	*bytes = kib * 1024;
	return 0;
}

int meminfo_parse(const char *text, size_t len, struct meminfo *out)
{
	const char *cursor = text, *end = text + len;
	struct span line;

	meminfo_unknown(out);
	while (procfs_next_line(&cursor, end, &line)) {
		const char *colon = memchr(line.start, ':', span_length(line));
		struct span key;

		if (!colon)
			continue;
		key = (struct span){line.start, colon};
		for (size_t i = 0; i < MEMINFO_FIELDS; i++) {
			if (span_length(key) != meminfo_fields[i].length ||
			    memcmp(key.start, meminfo_fields[i].key, meminfo_fields[i].length))
				continue;
			if (meminfo_value((struct span){colon + 1, line.end},
					  (uint64_t *)((char *)out + meminfo_fields[i].offset)) != 0) {
				meminfo_unknown(out);
				return -EINVAL;
			}
			break;
		}
	}
	/* Every kernel has MemTotal: without it this is not meminfo, or not all of it. */
	if (out->mem_total == PROCFS_UNKNOWN) {
		meminfo_unknown(out);
		return -EINVAL;
	}
	return 0;
}

int proc_io_parse(const char *text, size_t len, struct proc_io *out)
{
	static const struct {
		const char *key;
		size_t length, offset;
	} fields[] = {
		{ "rchar", 5, offsetof(struct proc_io, rchar) },
		{ "read_bytes", 10, offsetof(struct proc_io, read_bytes) },
		{ "write_bytes", 11, offsetof(struct proc_io, write_bytes) },
	};
	const char *cursor = text, *end = text + len;
	unsigned found = 0;
	struct span line;

	memset(out, 0, sizeof(*out));
	while (procfs_next_line(&cursor, end, &line)) {
		const char *colon = memchr(line.start, ':', span_length(line));
		struct span rest, number, extra;

		if (!colon)
			continue;
		for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
			if ((size_t)(colon - line.start) != fields[i].length ||
			    memcmp(line.start, fields[i].key, fields[i].length))
				continue;
			rest = (struct span){colon + 1, line.end};
			if (!procfs_next_word(&rest, &number) || procfs_next_word(&rest, &extra) ||
			    !procfs_parse_u64(number, 10, (uint64_t *)((char *)out + fields[i].offset)))
				return -EINVAL;
			found |= 1u << i;
		}
	}
	return found == 7 ? 0 : -EINVAL;
}

int proc_io_read(pid_t pid, struct proc_io *out)
{
	char path[64], text[1024];
	ssize_t length;

	snprintf(path, sizeof(path), "/proc/%d/io", (int)pid);
	length = sysroot_read_small(path, text, sizeof(text));
	if (length < 0)
		return (int)length;
	return proc_io_parse(text, (size_t)length, out);
}

bool proc_comm_read(pid_t pid, char *name, size_t size)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (sysroot_read_small(path, name, size) <= 0)
		return false;
	name[strcspn(name, "\n")] = '\0';
	return true;
}

int proc_io_sample_read(pid_t pid, struct proc_io_sample *out)
{
	char path[64], text[1024];
	struct proc_task task;
	ssize_t length;
	int rc;

	*out = (struct proc_io_sample){ .pid = pid, .start_time = PROCFS_UNKNOWN };
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((length = sysroot_read_small(path, text, sizeof(text))) < 0)
		return (int)length;
	if ((rc = proc_task_parse(text, (size_t)length, &task)) != 0)
		return rc;
	out->start_time = task.start_time;
	out->ppid = task.ppid;
	snprintf(out->comm, sizeof(out->comm), "%s", task.comm);
	return proc_io_read(pid, &out->io);
}

bool proc_io_delta(const struct proc_io_sample *before, const struct proc_io_sample *after, struct proc_io_delta *out)
{
	*out = (struct proc_io_delta){0};
	if (before->pid != after->pid || before->start_time != after->start_time || strcmp(before->comm, after->comm))
		return false;
	if (after->io.rchar < before->io.rchar || after->io.read_bytes < before->io.read_bytes ||
	    after->io.write_bytes < before->io.write_bytes)
		return false;
	out->rchar = after->io.rchar - before->io.rchar;
	out->read_bytes = after->io.read_bytes - before->io.read_bytes;
	out->write_bytes = after->io.write_bytes - before->io.write_bytes;
	proc_io_delta_pages(out);
	return true;
}

void proc_io_delta_pages(struct proc_io_delta *d)
{
	const uint64_t page = 4096;

	d->read_pages = d->rchar / page;
	d->missed_pages = d->read_bytes / page;
	d->written_pages = d->write_bytes / page;
	d->hit_pages = d->read_pages > d->missed_pages ? d->read_pages - d->missed_pages : 0;
}

int proc_task_parse(const char *text, size_t len, struct proc_task *out)
{
	const char *open_paren = memchr(text, '(', len), *close_paren = NULL, *end = text + len;
	struct span rest, word;
	uint64_t value;
	unsigned field = 3;

	*out = (struct proc_task){ .start_time = PROCFS_UNKNOWN, .vsize = PROCFS_UNKNOWN, .rss = PROCFS_UNKNOWN,
				   .blkio_ticks = PROCFS_UNKNOWN };
	/* The command name runs to the last ')': a name may hold one. */
	for (const char *p = end; open_paren && p > open_paren; p--)
		if (p[-1] == ')') {
			close_paren = p - 1;
			break;
		}
	if (!open_paren || !close_paren ||
	    !procfs_parse_int(procfs_trim((struct span){ text, open_paren }), &out->pid) || out->pid <= 0)
		goto bad;
	procfs_copy_name(out->comm, sizeof(out->comm), (struct span){ open_paren + 1, close_paren });
	rest = (struct span){ close_paren + 1, end };
	if (memchr(rest.start, '\n', (size_t)(rest.end - rest.start)))
		rest.end = memchr(rest.start, '\n', (size_t)(rest.end - rest.start));
	for (; procfs_next_word(&rest, &word); field++) {
		if (field == 3) {
			/* One letter (R, S, D, T, t, X, Z, P, I, ...), never a NUL or a digit. */
			char c = *word.start;
			if (word.end - word.start != 1 || !((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')))
				goto bad;
			out->state = *word.start;
			continue;
		}
		if (field == 4) {
			if (!procfs_parse_int(word, &out->ppid))
				goto bad;
			continue;
		}
		if (field != 14 && field != 15 && (field < 22 || field > 24) && field != 42)
			continue;
		if (!procfs_parse_u64(word, 10, &value))
			goto bad;
		switch (field) {
		case 14: out->utime = value; break;
		case 15: out->stime = value; break;
		case 22: out->start_time = value; break;
		case 23: out->vsize = value; break;
		case 24: out->rss = value; break;
		default: out->blkio_ticks = value; break;
		}
		if (field == 42)
			break;
	}
	if (field <= 15) /* the loop ends past the last field it read */
		goto bad;
	return 0;
bad:
	*out = (struct proc_task){ .start_time = PROCFS_UNKNOWN, .vsize = PROCFS_UNKNOWN, .rss = PROCFS_UNKNOWN,
				   .blkio_ticks = PROCFS_UNKNOWN };
	return -EINVAL;
}

int proc_switches_parse(const char *text, size_t len, uint64_t *switches)
{
	const char *cursor = text, *end = text + len;
	struct span line;
	uint64_t voluntary = PROCFS_UNKNOWN, involuntary = PROCFS_UNKNOWN;

	*switches = 0;
	while (procfs_next_line(&cursor, end, &line)) {
		uint64_t *field = span_starts_with(line, "voluntary_ctxt_switches:")      ? &voluntary
				  : span_starts_with(line, "nonvoluntary_ctxt_switches:") ? &involuntary
											   : NULL;
		if (!field)
			continue;
		line.start = memchr(line.start, ':', span_length(line)) + 1;
		if (!procfs_parse_first(line, field))
			return -EINVAL;
	}
	if (voluntary == PROCFS_UNKNOWN || involuntary == PROCFS_UNKNOWN)
		return -EINVAL;
	*switches = voluntary + involuntary;
	return 0;
}

int proc_ids_parse(const char *text, size_t len, int pid_here, struct proc_ids *out)
{
	const char *cursor = text, *end = text + len;
	struct span line, word, last;
	bool have_uid = false;

	out->ns_pid = pid_here;
	out->signals_ignored = 0;
	while (procfs_next_line(&cursor, end, &line)) {
		if (span_starts_with(line, "Uid:")) {
			uint64_t uid;
			line.start += 4;
			for (unsigned i = 0; i < 4; i++) {
				if (!procfs_next_word(&line, &word) || !procfs_parse_u64(word, 10, &uid) ||
				    uid > UINT32_MAX)
					return -EINVAL;
				out->uid[i] = (uint32_t)uid;
			}
			have_uid = true;
		} else if (span_starts_with(line, "NSpid:")) {
			line.start += 6;
			last.start = NULL;
			while (procfs_next_word(&line, &word))
				last = word;
			if (!last.start || !procfs_parse_int(last, &out->ns_pid) || out->ns_pid <= 0)
				return -EINVAL;
		} else if (span_starts_with(line, "SigIgn:")) {
			line.start += 7;
			if (!procfs_next_word(&line, &word) || !procfs_parse_u64(word, 16, &out->signals_ignored) ||
			    procfs_next_word(&line, &word))
				return -EINVAL;
		}
	}
	return have_uid ? 0 : -EINVAL;
}

int meminfo_read(struct meminfo *out)
{
	static struct sysroot_file file = SYSROOT_FILE("/proc/meminfo");
	const char *text;
	size_t len;
	int rc = procfs_read_hot(&file, &text, &len);

	if (rc != 0) {
		meminfo_unknown(out);
		return rc;
	}
	return meminfo_parse(text, len, out);
}

/* ---- /proc/vmstat ------------------------------------------------------------------ */

#define VMSTAT_FIELD(key, field) {key, sizeof(key) - 1, offsetof(struct vmstat, field)}
static const struct {
	const char *key;
	size_t length;
	size_t offset;
} vmstat_fields[] = {
	VMSTAT_FIELD("pgpgin", pgpgin),
	VMSTAT_FIELD("pgpgout", pgpgout),
	VMSTAT_FIELD("pswpin", pswpin),
	VMSTAT_FIELD("pswpout", pswpout),
	VMSTAT_FIELD("pgfault", pgfault),
	VMSTAT_FIELD("pgmajfault", pgmajfault),
	VMSTAT_FIELD("pgfree", pgfree),
	VMSTAT_FIELD("pgsteal_file", pgsteal_file),
	VMSTAT_FIELD("pgscan_file", pgscan_file),
	VMSTAT_FIELD("workingset_refault_file", workingset_refault_file),
	VMSTAT_FIELD("workingset_refault_anon", workingset_refault_anon),
	VMSTAT_FIELD("nr_file_pages", nr_file_pages),
	VMSTAT_FIELD("nr_dirty", nr_dirty),
	VMSTAT_FIELD("nr_writeback", nr_writeback),
	VMSTAT_FIELD("nr_dirtied", nr_dirtied),
	VMSTAT_FIELD("nr_dirty_threshold", nr_dirty_threshold),
	VMSTAT_FIELD("nr_dirty_background_threshold", nr_dirty_background_threshold),
};
#define VMSTAT_FIELDS (sizeof(vmstat_fields) / sizeof(vmstat_fields[0]))

static void vmstat_unknown(struct vmstat *stat)
{
	for (size_t i = 0; i < VMSTAT_FIELDS; i++)
		*(uint64_t *)((char *)stat + vmstat_fields[i].offset) = PROCFS_UNKNOWN;
	stat->pgalloc = PROCFS_UNKNOWN;
}

int vmstat_parse(const char *text, size_t len, struct vmstat *out)
{
	const char *cursor = text, *end = text + len;
	uint64_t pgalloc = 0, refault_before_5_9 = PROCFS_UNKNOWN, value;
	bool known = false, have_pgalloc = false;
	struct span line, key;

	vmstat_unknown(out);
	while (procfs_next_line(&cursor, end, &line)) {
		uint64_t *field = NULL;
		/* "key value": the key up to the one space (memchr: some 190 lines a sample, most not ours). */
		const char *space = memchr(line.start, ' ', span_length(line));

		if (!space || space == line.start)
			continue;
		key = (struct span){line.start, space};
		line.start = space;
		for (size_t i = 0; i < VMSTAT_FIELDS && !field; i++)
			if (span_length(key) == vmstat_fields[i].length &&
			    !memcmp(key.start, vmstat_fields[i].key, vmstat_fields[i].length))
				field = (uint64_t *)((char *)out + vmstat_fields[i].offset);
		/* Zones vary (dma, dma32, normal, movable, device); the sum wraps as the counters do. */
		if (!field && span_starts_with(key, "pgalloc_"))
			field = &value;
		/* Before 5.9 only file pages had refaults counted, under this name. */
		if (!field && span_equals(key, "workingset_refault"))
			field = &refault_before_5_9;
		if (!field)
			continue;
		if (!procfs_parse_first(line, field)) {
			vmstat_unknown(out);
			return -EINVAL;
		}
		if (field == &value) {
			pgalloc += value;
			have_pgalloc = true;
		}
		known = true;
	}
	if (!known) {
		vmstat_unknown(out);
		return -EINVAL;
	}
	if (have_pgalloc)
		out->pgalloc = pgalloc;
	if (out->workingset_refault_file == PROCFS_UNKNOWN)
		out->workingset_refault_file = refault_before_5_9;
	return 0;
}

int vmstat_read(struct vmstat *out)
{
	static struct sysroot_file file = SYSROOT_FILE("/proc/vmstat");
	const char *text;
	size_t len;
	int rc = procfs_read_hot(&file, &text, &len);

	if (rc != 0) {
		vmstat_unknown(out);
		return rc;
	}
	return vmstat_parse(text, len, out);
}

/* ---- /proc/loadavg, /proc/uptime --------------------------------------------------- */

int loadavg_parse(const char *text, size_t len, struct loadavg *out)
{
	const char *cursor = text;
	struct span line, load1, load5, load15, tasks, last_pid;
	const char *slash;

	*out = (struct loadavg){0};
	if (!procfs_next_line(&cursor, text + len, &line) || !procfs_next_word(&line, &load1) ||
	    !procfs_next_word(&line, &load5) || !procfs_next_word(&line, &load15) || !procfs_next_word(&line, &tasks) ||
	    !procfs_next_word(&line, &last_pid))
		return -EINVAL;
	slash = memchr(tasks.start, '/', span_length(tasks));
	if (!slash || !procfs_parse_fixed(load1, &out->load1) || !procfs_parse_fixed(load5, &out->load5) ||
	    !procfs_parse_fixed(load15, &out->load15) ||
	    !procfs_parse_u64((struct span){tasks.start, slash}, 10, &out->running) ||
	    !procfs_parse_u64((struct span){slash + 1, tasks.end}, 10, &out->total) ||
	    !procfs_parse_u64(last_pid, 10, &out->last_pid)) {
		*out = (struct loadavg){0};
		return -EINVAL;
	}
	return 0;
}

int loadavg_read(struct loadavg *out)
{
	static struct sysroot_file file = SYSROOT_FILE("/proc/loadavg");
	const char *text;
	size_t len;
	int rc = procfs_read_hot(&file, &text, &len);

	if (rc != 0) {
		*out = (struct loadavg){0};
		return rc;
	}
	return loadavg_parse(text, len, out);
}

int uptime_parse(const char *text, size_t len, double *seconds)
{
	const char *cursor = text;
	struct span line, word;

	*seconds = 0;
	if (!procfs_next_line(&cursor, text + len, &line) || !procfs_next_word(&line, &word) ||
	    !procfs_parse_fixed(word, seconds))
		return -EINVAL;
	return 0;
}

int uptime_read(double *seconds)
{
	static struct sysroot_file file = SYSROOT_FILE("/proc/uptime");
	const char *text;
	size_t len;
	int rc = procfs_read_hot(&file, &text, &len);

	if (rc != 0) {
		*seconds = 0;
		return rc;
	}
	return uptime_parse(text, len, seconds);
}

/* ---- /proc/interrupts -------------------------------------------------------------- */

/* "NAME: count count ... the rest": at most `columns` counts (ERR: and MIS: have one). */
static int interrupts_line(struct span line, unsigned columns, struct irq_line *irq)
{
	struct span name, word, rest;
	const char *colon;
	unsigned counted = 0;
	size_t used = 0;

	*irq = (struct irq_line){0};
	if (!procfs_next_word(&line, &name))
		return 1; /* a blank line */
	colon = memchr(name.start, ':', span_length(name));
	if (!colon || colon == name.start)
		return -EINVAL;
	procfs_copy_name(irq->name, sizeof(irq->name), (struct span){name.start, colon});
	/* Older kernels and arch lines may leave no blank after the colon. */
	line.start = colon + 1;
	rest = line;
	while (counted < columns && procfs_next_word(&line, &word)) {
		uint64_t count;

		if (!procfs_parse_u64(word, 10, &count))
			break; /* the chip's name: fewer counts than cpus */
		if (irq->count > UINT64_MAX - count)
			return -EINVAL;
		irq->count += count;
		counted++;
		rest = line;
	}
	if (counted == 0)
		return -EINVAL;
	/* The chip and the devices, with the column padding squeezed to single blanks. */
	while (procfs_next_word(&rest, &word) && used + 2 < sizeof(irq->what)) {
		size_t length = span_length(word);

		if (used > 0)
			irq->what[used++] = ' ';
		if (length > sizeof(irq->what) - 1 - used)
			length = sizeof(irq->what) - 1 - used;
		memcpy(irq->what + used, word.start, length);
		used += length;
	}
	irq->what[used] = '\0';
	return 0;
}

int interrupts_parse(const char *text, size_t len, struct interrupts *out)
{
	const char *cursor = text, *end = text + len;
	struct span header, line, word;
	unsigned columns = 0, capacity = 0;

	*out = (struct interrupts){0};
	/* The header names one column per online cpu: "CPU0 CPU1 CPU3" when cpu2 is offline. */
	if (!procfs_next_line(&cursor, end, &header))
		return -EINVAL;
	while (procfs_next_word(&header, &word)) {
		if (!span_starts_with(word, "CPU"))
			return -EINVAL;
		columns++;
	}
	if (columns == 0)
		return -EINVAL;
	while (procfs_next_line(&cursor, end, &line)) {
		struct irq_line irq;
		int rc = interrupts_line(line, columns, &irq);

		if (rc > 0)
			continue;
		if (rc < 0) {
			interrupts_free(out);
			return rc;
		}
		if (out->count == capacity) {
			capacity = capacity ? capacity * 2 : 64;
			out->line = xrealloc(out->line, capacity * sizeof(*out->line));
		}
		out->line[out->count++] = irq;
	}
	return 0;
}

int interrupts_read(struct interrupts *out)
{
	static struct sysroot_file file = SYSROOT_FILE("/proc/interrupts");
	const char *text;
	size_t len;
	int rc = procfs_read_hot(&file, &text, &len);

	if (rc != 0) {
		*out = (struct interrupts){0};
		return rc;
	}
	return interrupts_parse(text, len, out);
}

void interrupts_free(struct interrupts *irqs)
{
	free(irqs->line);
	irqs->line = NULL;
	irqs->count = 0;
}

/* ---- /proc/pressure ---------------------------------------------------------------- */

/* "avg10=0.00 avg60=0.00 avg300=0.00 total=0": all four, in any order; keys to come are passed over. */
static int psi_values(struct span line, struct psi_line *out)
{
	unsigned seen = 0;
	struct span word;

	while (procfs_next_word(&line, &word)) {
		const char *equals = memchr(word.start, '=', span_length(word));
		struct span key, value;
		bool ok = true;

		if (!equals)
			return -EINVAL;
		key = (struct span){word.start, equals};
		value = (struct span){equals + 1, word.end};
		if (span_equals(key, "avg10")) {
			ok = procfs_parse_fixed(value, &out->avg10);
			seen |= 1;
		} else if (span_equals(key, "avg60")) {
			ok = procfs_parse_fixed(value, &out->avg60);
			seen |= 2;
		} else if (span_equals(key, "avg300")) {
			ok = procfs_parse_fixed(value, &out->avg300);
			seen |= 4;
		} else if (span_equals(key, "total")) {
			ok = procfs_parse_u64(value, 10, &out->total_us);
			seen |= 8;
		}
		if (!ok)
			return -EINVAL;
	}
	if (seen != 15)
		return -EINVAL;
	out->present = true;
	return 0;
}

int psi_parse(const char *text, size_t len, struct psi *out)
{
	const char *cursor = text, *end = text + len;
	struct span line, kind;
	int rc = 0;

	*out = (struct psi){0};
	while (rc == 0 && procfs_next_line(&cursor, end, &line)) {
		if (!procfs_next_word(&line, &kind))
			continue;
		if (span_equals(kind, "some"))
			rc = psi_values(line, &out->some);
		else if (span_equals(kind, "full"))
			rc = psi_values(line, &out->full);
	}
	/* irq has only "full"; the others always have "some". */
	if (rc != 0 || (!out->some.present && !out->full.present)) {
		*out = (struct psi){0};
		return -EINVAL;
	}
	out->available = true;
	return 0;
}

int psi_read(const char *resource, struct psi *out)
{
	static struct sysroot_file files[] = {
		SYSROOT_FILE("/proc/pressure/cpu"),
		SYSROOT_FILE("/proc/pressure/memory"),
		SYSROOT_FILE("/proc/pressure/io"),
		SYSROOT_FILE("/proc/pressure/irq"),
	};
	static const char *const names[] = {"cpu", "memory", "io", "irq"};
	const char *text;
	size_t len, i = 0;
	int rc;

	*out = (struct psi){0};
	while (i < sizeof(names) / sizeof(names[0]) && (!resource || strcmp(resource, names[i]) != 0))
		i++;
	if (i == sizeof(names) / sizeof(names[0]))
		return -EINVAL;
	rc = procfs_read_hot(&files[i], &text, &len);
	/* No CONFIG_PSI, psi=0, or a kernel before 4.20 (irq: before 6.1): not measured, not an error. */
	if (rc == -ENOENT || rc == -EOPNOTSUPP)
		return 0;
	if (rc != 0)
		return rc;
	return psi_parse(text, len, out);
}
