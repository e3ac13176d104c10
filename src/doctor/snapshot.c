/* snapshot.c: a doctor snapshot as text and back (doctor --record, --replay): a line per value, parsed span by span, every field checked. */
#include "doctor/snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/container.h"
#include "collect/span.h"
#include "common/util.h"

#define SNAPSHOT_MAGIC "iolens-doctor-snapshot"
#define SNAPSHOT_VERSION 1
#define SNAPSHOT_MAX_BYTES (64u << 20)
#define SNAPSHOT_MAX_REAL 1e13
#define SNAPSHOT_MAX_ITEMS 100000 /* of each kind: more is no snapshot doctor wrote */

void doctor_snapshot_free(struct doctor_snapshot *s)
{
	for (size_t i = 0; i < s->nvtrace; i++)
		free(s->vtrace[i].ops);
	free(s->direct_files);
	free(s->direct);
	free(s->disks);
	free(s->rates);
	free(s->bio_procs);
	free(s->tasks);
	free(s->probes);
	free(s->vtrace);
	free(s->cache_procs);
	free(s->cache_files);
	free(s->memcgs);
	free(s->containers);
	free(s->mounts);
	*s = (struct doctor_snapshot){0};
}

/* ---- Writing ------------------------------------------------------------------------------ */

/* A text field: " " then the text with what would split or break the line as \xNN; "-" when empty. */
static void put_text(FILE *f, const char *text)
{
	fputc(' ', f);
	if (!text[0] || !strcmp(text, "-")) {
		fputs(text[0] ? "\\x2d" : "-", f);
		return;
	}
	for (const unsigned char *c = (const unsigned char *)text; *c; c++)
		if (*c <= ' ' || *c >= 0x7f || *c == '\\')
			fprintf(f, "\\x%02x", *c);
		else
			fputc(*c, f);
}

/* A real exactly (17 significant digits read back the same double). */
static void put_real(FILE *f, double value)
{
	fprintf(f, " %.17g", isfinite(value) ? value : -1.0);
}

static void put_disk_sample(FILE *f, const char *which, const struct disk_stats *d)
{
	fprintf(f, "disk_sample %s %u %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu\n",
		which, d->nfields, (unsigned long long)d->rd_ios, (unsigned long long)d->rd_merges,
		(unsigned long long)d->rd_sectors, (unsigned long long)d->rd_ticks, (unsigned long long)d->wr_ios,
		(unsigned long long)d->wr_merges, (unsigned long long)d->wr_sectors, (unsigned long long)d->wr_ticks,
		(unsigned long long)d->in_flight, (unsigned long long)d->io_ticks, (unsigned long long)d->time_in_queue,
		(unsigned long long)d->dc_ios, (unsigned long long)d->dc_merges, (unsigned long long)d->dc_sectors,
		(unsigned long long)d->dc_ticks, (unsigned long long)d->fl_ios, (unsigned long long)d->fl_ticks);
}

static void put_latency(FILE *f, const char *which, const struct snap_latency *l)
{
	fprintf(f, "disk_latency %s %llu", which, (unsigned long long)l->count);
	put_real(f, l->p50_ns);
	put_real(f, l->p99_ns);
	put_real(f, l->device_p50_ns);
	put_real(f, l->device_p99_ns);
	put_real(f, l->queue_p50_ns);
	put_real(f, l->queue_p99_ns);
	fputc('\n', f);
}

int doctor_snapshot_write(const struct doctor_snapshot *s, FILE *f)
{
	const struct snap_psi *psi[3] = { &s->io_some, &s->io_full, &s->memory_some };
	static const char *const psi_names[3] = { "io_some", "io_full", "memory_some" };

	fprintf(f, "%s %d\n", SNAPSHOT_MAGIC, SNAPSHOT_VERSION);
	fputs("seconds", f);
	put_real(f, s->seconds);
	fprintf(f, "\npage_size %llu\nsamples %u\nodirect_ebpf %d\ncache_ebpf %d\ncache_files_known %d\n",
		(unsigned long long)s->page_size, s->samples, s->odirect_ebpf, s->cache_ebpf, s->cache_files_known);
	if (s->cache_mechanism[0])
		fprintf(f, "cache_mechanism %s\n", s->cache_mechanism);
	for (size_t i = 0; i < s->ndirect_files; i++) {
		const struct snap_direct_file *d = &s->direct_files[i];

		fprintf(f, "direct_file %u %u %llu %d %d %llu %llu", d->major, d->minor, (unsigned long long)d->ino, d->block,
			d->cache_known, (unsigned long long)d->cached_pages, (unsigned long long)d->file_pages);
		put_text(f, d->path);
		fputc('\n', f);
	}
	for (size_t i = 0; i < s->ndirect; i++) {
		const struct snap_direct_process *p = &s->direct[i];

		fprintf(f, "direct %d", (int)p->pid);
		put_text(f, p->comm);
		fprintf(f, " %d %u", p->first_fd, p->first_flags);
		put_text(f, p->seen_by);
		put_text(f, p->call);
		put_real(f, p->first_seen_seconds);
		fprintf(f, " %d %llu %llu", p->io_known, (unsigned long long)p->read_bytes, (unsigned long long)p->write_bytes);
		put_real(f, p->rate_seconds);
		fprintf(f, " %d %u", p->ended, p->nfiles);
		for (unsigned k = 0; k < p->nfiles; k++)
			fprintf(f, " %zu %llu", p->files[k], (unsigned long long)p->opens[k]);
		if (p->bio_known)
			fprintf(f, " %llu %llu %llu %llu %llu %llu %llu %llu", (unsigned long long)p->bio_read_requests,
				(unsigned long long)p->bio_read_bytes, (unsigned long long)p->bio_write_requests,
				(unsigned long long)p->bio_write_bytes, (unsigned long long)p->bio_read_unended_requests,
				(unsigned long long)p->bio_read_unended_bytes, (unsigned long long)p->bio_write_unended_requests,
				(unsigned long long)p->bio_write_unended_bytes);
		fputc('\n', f);
	}
	fputs("disk_seconds", f);
	put_real(f, s->disk_seconds);
	put_real(f, s->disk_mid_seconds);
	fputc('\n', f);
	for (size_t i = 0; i < s->ndisks; i++) {
		const struct snap_disk *d = &s->disks[i];

		fputs("disk", f);
		put_text(f, d->end.name);
		fprintf(f, " %u %u %d\n", d->end.major, d->end.minor, d->mid_known);
		put_disk_sample(f, "start", &d->start);
		if (d->mid_known)
			put_disk_sample(f, "mid", &d->mid);
		put_disk_sample(f, "end", &d->end);
		if (d->latency_known) {
			put_latency(f, "window", &d->latency);
			if (d->mid_known) {
				put_latency(f, "first", &d->first);
				put_latency(f, "second", &d->second);
			}
		}
		if (d->capacity_known) {
			fputs("disk_capacity", f);
			put_real(f, d->capacity_qd1_read_ns);
			put_real(f, d->capacity_qd1_write_ns);
			put_real(f, d->capacity_pct);
			fputc('\n', f);
		}
	}
	fprintf(f, "bio_known %d\n", s->bio_known);
	if (s->bio_unattributed_bytes)
		fprintf(f, "bio_unattributed_bytes %llu\n", (unsigned long long)s->bio_unattributed_bytes);
	if (s->bio_mechanism[0])
		fprintf(f, "bio_mechanism %s\n", s->bio_mechanism);
	for (size_t i = 0; i < s->nbio_procs; i++) {
		const struct snap_bio_proc *b = &s->bio_procs[i];

		fprintf(f, "bio_proc %d", (int)b->pid);
		put_text(f, b->comm);
		fprintf(f, " %d %llu %llu %u %u %d", b->kernel, (unsigned long long)b->requests, (unsigned long long)b->bytes,
			b->disk_major, b->disk_minor, b->several_disks);
		put_real(f, b->p50_ns);
		put_real(f, b->p99_ns);
		fputc('\n', f);
	}
	for (int k = 0; k < 3; k++)
		fprintf(f, "psi %s %d %llu %llu\n", psi_names[k], psi[k]->known, (unsigned long long)psi[k]->start_us,
			(unsigned long long)psi[k]->end_us);
	for (size_t i = 0; i < s->nrates; i++) {
		const struct snap_io_rate *r = &s->rates[i];

		fprintf(f, "rate %d", (int)r->pid);
		put_text(f, r->comm);
		put_real(f, r->read_rate);
		put_real(f, r->write_rate);
		put_real(f, r->rchar_rate);
		fputc('\n', f);
	}
	fprintf(f, "vm %d", s->vm_known);
	for (int k = 0; k < 2; k++)
		fprintf(f, " %llu %llu %llu %llu %llu", (unsigned long long)s->pswpin[k], (unsigned long long)s->pswpout[k],
			(unsigned long long)s->pgpgin[k], (unsigned long long)s->pgpgout[k],
			(unsigned long long)s->refault_file[k]);
	fprintf(f, "\nmem %d %llu %llu %llu\n", s->mem_known, (unsigned long long)s->mem_total,
		(unsigned long long)s->mem_available, (unsigned long long)s->cached);
	fprintf(f, "swaps %u %u\n", s->swaps, s->swaps_zram);
	fprintf(f, "dirty %llu %llu %llu %llu %u\n", (unsigned long long)s->dirty_peak, (unsigned long long)s->writeback_peak,
		(unsigned long long)s->dirty_thresh, (unsigned long long)s->dirty_bg_thresh, s->writeback_samples);
	for (size_t i = 0; i < s->ntasks; i++) {
		const struct snap_task *t = &s->tasks[i];

		fprintf(f, "task %d %d", (int)t->pid, (int)t->tid);
		put_text(f, t->comm);
		put_text(f, t->wchan);
		fprintf(f, " %u %u %u %llu %d %llu %llu %u\n", t->first, t->last, t->samples, (unsigned long long)t->stuck_ns,
			t->switches_known, (unsigned long long)t->switches_first, (unsigned long long)t->switches_last,
			t->throttled);
	}
	for (size_t i = 0; i < s->nprobes; i++)
		fprintf(f, "probe %d\n", (int)s->probes[i]);
	for (size_t i = 0; i < s->nvtrace; i++) {
		const struct snap_vtrace *v = &s->vtrace[i];

		fprintf(f, "vtrace %d", (int)v->pid);
		put_text(f, v->service);
		put_text(f, v->segment);
		if (v->uid_known) {
			fprintf(f, " %u", (unsigned)v->uid);
			put_text(f, v->user);
		}
		fputc('\n', f);
		for (unsigned k = 0; k < v->nops; k++) {
			const struct snap_vtrace_op *o = &v->ops[k];

			fputs("op", f);
			put_text(f, o->name);
			fprintf(f, " %d %llu %llu %llu %llu %llu %llu\n", o->impossible, (unsigned long long)o->begins,
				(unsigned long long)o->completions, (unsigned long long)o->service_ns,
				(unsigned long long)o->oldest_age_ns, (unsigned long long)o->completions_before,
				(unsigned long long)o->service_ns_before);
		}
	}
	for (size_t i = 0; i < s->ncache_procs; i++) {
		const struct snap_cache_proc *p = &s->cache_procs[i];

		fprintf(f, "cache_proc %d", (int)p->pid);
		put_text(f, p->comm);
		fprintf(f, " %llu %llu %llu %llu\n", (unsigned long long)p->memcg, (unsigned long long)p->accesses,
			(unsigned long long)p->misses, (unsigned long long)p->refaults);
	}
	for (size_t i = 0; i < s->ncache_files; i++) {
		const struct snap_cache_file *c = &s->cache_files[i];

		fprintf(f, "cache_file %u %u %llu %llu %llu %llu", c->major, c->minor, (unsigned long long)c->ino,
			(unsigned long long)c->accesses, (unsigned long long)c->misses, (unsigned long long)c->refaults);
		put_text(f, c->name);
		fputc('\n', f);
	}
	for (size_t i = 0; i < s->nmemcgs; i++) {
		const struct snap_memcg *m = &s->memcgs[i];

		fprintf(f, "memcg %d %llu", (int)m->pid, (unsigned long long)m->id);
		put_text(f, m->path);
		fprintf(f, " %d %llu %llu %llu %d\n", m->version, (unsigned long long)m->max, (unsigned long long)m->current,
			(unsigned long long)m->refaults, m->at_limit);
	}
	for (size_t i = 0; i < s->ncontainers; i++) {
		const struct snap_container *c = &s->containers[i];

		fprintf(f, "container %d", (int)c->pid);
		put_text(f, c->comm);
		put_text(f, c->runtime);
		put_text(f, c->id);
		put_text(f, c->name);
		put_text(f, c->pod);
		put_text(f, c->namespace_);
		fprintf(f, " %u", (unsigned)c->uid);
		put_text(f, c->label);
		fputc('\n', f);
	}
	for (size_t i = 0; i < s->nmounts; i++) {
		const struct snap_mount *m = &s->mounts[i];

		fputs("mount", f);
		put_text(f, m->dir);
		put_text(f, m->type);
		put_text(f, m->source);
		fprintf(f, " %d %d %llu %llu %llu %llu %llu %llu %llu %d %d", (int)m->state, m->duplicate,
			(unsigned long long)m->blocks, (unsigned long long)m->bfree, (unsigned long long)m->bavail,
			(unsigned long long)m->files, (unsigned long long)m->ffree, (unsigned long long)m->favail,
			(unsigned long long)m->frsize, m->held, (int)m->probe_pid);
		put_real(f, m->probe_seconds);
		put_real(f, m->probe_started);
		put_text(f, m->probe_asks);
		fputc('\n', f);
	}
	return ferror(f) ? -EIO : 0;
}

/* ---- Parsing ------------------------------------------------------------------------------ */

struct parser {
	struct span line;    /* what is left of the line */
	unsigned number;     /* the line's */
	char *why;
	size_t why_len;
	bool failed;
};

static bool fail(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(struct parser *p, const char *fmt, ...)
{
	char what[256];
	va_list args;

	if (p->failed)
		return false;
	va_start(args, fmt);
	vsnprintf(what, sizeof(what), fmt, args);
	va_end(args);
	snprintf(p->why, p->why_len, "line %u: %s", p->number, what);
	p->failed = true;
	return false;
}

static bool next(struct parser *p, struct span *word, const char *what)
{
	if (p->failed)
		return false;
	if (!procfs_next_word(&p->line, word))
		return fail(p, "%s missing", what);
	return true;
}

/* Whether the line has another field (for the fields later versions of a line added at its end). */
static bool more(const struct parser *p)
{
	struct span rest = p->line, word;

	return procfs_next_word(&rest, &word);
}

static uint64_t u64(struct parser *p, const char *what)
{
	struct span word;
	uint64_t value = 0;

	if (next(p, &word, what) && !procfs_parse_u64(word, 10, &value))
		fail(p, "%s: '%.*s' is not a whole number", what, (int)(span_length(word) > 40 ? 40 : span_length(word)),
		     word.start);
	return value;
}

static uint64_t u64_max(struct parser *p, const char *what, uint64_t max)
{
	uint64_t value = u64(p, what);

	if (!p->failed && value > max)
		fail(p, "%s: %llu is more than %llu", what, (unsigned long long)value, (unsigned long long)max);
	return p->failed ? 0 : value;
}

static bool flag(struct parser *p, const char *what)
{
	return u64_max(p, what, 1) != 0;
}

static int integer(struct parser *p, const char *what)
{
	struct span word;
	int value = 0;

	if (next(p, &word, what) && !procfs_parse_int(word, &value))
		fail(p, "%s: not a number", what);
	return value;
}

static pid_t pid_of(struct parser *p, const char *what)
{
	return (pid_t)u64_max(p, what, 0x7fffffff);
}

static double real(struct parser *p, const char *what)
{
	struct span word;
	char text[64], *end;
	double value;

	if (!next(p, &word, what))
		return 0;
	if (span_length(word) >= sizeof(text)) {
		fail(p, "%s: too long for a number", what);
		return 0;
	}
	memcpy(text, word.start, span_length(word));
	text[span_length(word)] = '\0';
	errno = 0;
	value = strtod(text, &end);
	if (errno || end == text || *end || !isfinite(value)) {
		fail(p, "%s: '%s' is not a number", what, text);
		return 0;
	}
	/* Rates of 10 TB/s, 300,000 years: more is no machine's, and would overflow what is computed from it. */
	if (fabs(value) > SNAPSHOT_MAX_REAL) {
		fail(p, "%s: %s is beyond %g", what, text, SNAPSHOT_MAX_REAL);
		return 0;
	}
	return value;
}

static int hex(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* A text field into buf (size bytes with its NUL): "-" is empty, \xNN a byte. */
static void word_text(struct parser *p, const char *what, char *buf, size_t size)
{
	struct span word;
	size_t used = 0;

	buf[0] = '\0';
	if (!next(p, &word, what))
		return;
	if (span_equals(word, "-"))
		return;
	for (const char *c = word.start; c < word.end; c++) {
		char byte = *c;

		if (byte == '\\') {
			int high, low;

			if (word.end - c < 4 || c[1] != 'x' || (high = hex(c[2])) < 0 || (low = hex(c[3])) < 0 ||
			    (high == 0 && low == 0)) {
				fail(p, "%s: a backslash must start \\xNN (not \\x00)", what);
				return;
			}
			byte = (char)(high << 4 | low);
			c += 3;
		}
		if (used + 1 >= size) {
			fail(p, "%s: longer than %zu bytes", what, size - 1);
			return;
		}
		buf[used++] = byte;
	}
	buf[used] = '\0';
}

/* Room for one more item of an array, at most SNAPSHOT_MAX_ITEMS: its place, zeroed, or NULL. */
static void *grow(struct parser *p, void **array, size_t *count, size_t size, const char *what)
{
	char *item;

	if (*count >= SNAPSHOT_MAX_ITEMS) {
		fail(p, "more than %d %s lines", SNAPSHOT_MAX_ITEMS, what);
		return NULL;
	}
	/* Room for twice as many when full (its room is the power of two at or above count): a line
	 * each, a realloc each was quadratic (58,622 cache_file lines: minutes under ASan). */
	if ((*count & (*count - 1)) == 0)
		*array = xrealloc(*array, (*count ? *count * 2 : 1) * size);
	item = (char *)*array + *count * size;
	memset(item, 0, size);
	(*count)++;
	return item;
}

#define GROW(p, array, count, what) grow(p, (void **)&(array), &(count), sizeof(*(array)), what)

static void parse_disk_sample(struct parser *p, struct doctor_snapshot *s)
{
	struct span which;
	struct snap_disk *disk;
	struct disk_stats *d;

	if (!s->ndisks) {
		fail(p, "disk_sample before any disk line");
		return;
	}
	disk = &s->disks[s->ndisks - 1];
	if (!next(p, &which, "which sample"))
		return;
	if (span_equals(which, "start"))
		d = &disk->start;
	else if (span_equals(which, "mid"))
		d = &disk->mid;
	else if (span_equals(which, "end"))
		d = &disk->end;
	else {
		fail(p, "disk_sample: start, mid or end");
		return;
	}
	d->nfields = (unsigned)u64_max(p, "nfields", 64);
	d->rd_ios = u64(p, "rd_ios");
	d->rd_merges = u64(p, "rd_merges");
	d->rd_sectors = u64(p, "rd_sectors");
	d->rd_ticks = u64(p, "rd_ticks");
	d->wr_ios = u64(p, "wr_ios");
	d->wr_merges = u64(p, "wr_merges");
	d->wr_sectors = u64(p, "wr_sectors");
	d->wr_ticks = u64(p, "wr_ticks");
	d->in_flight = u64(p, "in_flight");
	d->io_ticks = u64(p, "io_ticks");
	d->time_in_queue = u64(p, "time_in_queue");
	d->dc_ios = u64(p, "dc_ios");
	d->dc_merges = u64(p, "dc_merges");
	d->dc_sectors = u64(p, "dc_sectors");
	d->dc_ticks = u64(p, "dc_ticks");
	d->fl_ios = u64(p, "fl_ios");
	d->fl_ticks = u64(p, "fl_ticks");
	/* (its name and numbers are the disk line's, copied to each sample by it) */
}

static void parse_disk_latency(struct parser *p, struct doctor_snapshot *s)
{
	struct span which;
	struct snap_disk *disk;
	struct snap_latency *l;

	if (!s->ndisks) {
		fail(p, "disk_latency before any disk line");
		return;
	}
	disk = &s->disks[s->ndisks - 1];
	if (!next(p, &which, "which span"))
		return;
	if (span_equals(which, "window"))
		l = &disk->latency;
	else if (span_equals(which, "first"))
		l = &disk->first;
	else if (span_equals(which, "second"))
		l = &disk->second;
	else {
		fail(p, "disk_latency: window, first or second");
		return;
	}
	disk->latency_known = true;
	l->count = u64(p, "count");
	l->p50_ns = real(p, "p50_ns");
	l->p99_ns = real(p, "p99_ns");
	l->device_p50_ns = real(p, "device_p50_ns");
	l->device_p99_ns = real(p, "device_p99_ns");
	l->queue_p50_ns = real(p, "queue_p50_ns");
	l->queue_p99_ns = real(p, "queue_p99_ns");
	if (!p->failed && (l->p50_ns < 0 || l->p99_ns < 0 || l->device_p50_ns < 0 || l->device_p99_ns < 0 ||
			   l->queue_p50_ns < 0 || l->queue_p99_ns < 0))
		fail(p, "disk_latency: a latency below 0");
}

static void parse_line(struct parser *p, struct span key, struct doctor_snapshot *s)
{
	if (span_equals(key, "seconds")) {
		s->seconds = real(p, "seconds");
		if (!p->failed && (s->seconds < 0 || s->seconds > 86400))
			fail(p, "seconds: from 0 to 86400");
	} else if (span_equals(key, "page_size")) {
		s->page_size = u64(p, "page_size");
		if (!p->failed && (s->page_size < 512 || s->page_size > (1u << 24) || (s->page_size & (s->page_size - 1))))
			fail(p, "page_size: a power of two from 512 to 16 MiB");
	} else if (span_equals(key, "samples")) {
		s->samples = (unsigned)u64_max(p, "samples", UINT32_MAX);
	} else if (span_equals(key, "odirect_ebpf")) {
		s->odirect_ebpf = flag(p, "odirect_ebpf");
	} else if (span_equals(key, "cache_ebpf")) {
		s->cache_ebpf = flag(p, "cache_ebpf");
	} else if (span_equals(key, "cache_mechanism")) {
		word_text(p, "cache_mechanism", s->cache_mechanism, sizeof(s->cache_mechanism));
		if (!p->failed && strcmp(s->cache_mechanism, "tracepoints") && strcmp(s->cache_mechanism, "fentry") &&
		    strcmp(s->cache_mechanism, "kprobes"))
			fail(p, "cache_mechanism: tracepoints, fentry or kprobes");
	} else if (span_equals(key, "cache_files_known")) {
		s->cache_files_known = flag(p, "cache_files_known");
	} else if (span_equals(key, "direct_file")) {
		struct snap_direct_file *d = GROW(p, s->direct_files, s->ndirect_files, "direct_file");

		if (!d)
			return;
		d->major = (unsigned)u64_max(p, "major", UINT32_MAX);
		d->minor = (unsigned)u64_max(p, "minor", UINT32_MAX);
		d->ino = u64(p, "ino");
		d->block = flag(p, "block");
		d->cache_known = flag(p, "cache_known");
		d->cached_pages = u64(p, "cached_pages");
		d->file_pages = u64(p, "file_pages");
		word_text(p, "path", d->path, sizeof(d->path));
	} else if (span_equals(key, "direct")) {
		struct snap_direct_process *d = GROW(p, s->direct, s->ndirect, "direct");

		if (!d)
			return;
		d->pid = pid_of(p, "pid");
		word_text(p, "comm", d->comm, sizeof(d->comm));
		d->first_fd = integer(p, "fd");
		d->first_flags = (unsigned)u64_max(p, "flags", UINT32_MAX);
		word_text(p, "seen_by", d->seen_by, sizeof(d->seen_by));
		if (!p->failed && strcmp(d->seen_by, "fdinfo") && strcmp(d->seen_by, "ebpf"))
			fail(p, "seen_by: fdinfo or ebpf");
		word_text(p, "call", d->call, sizeof(d->call));
		d->first_seen_seconds = real(p, "first_seen_seconds");
		d->io_known = flag(p, "io_known");
		d->read_bytes = u64(p, "read_bytes");
		d->write_bytes = u64(p, "write_bytes");
		d->rate_seconds = real(p, "rate_seconds");
		d->ended = flag(p, "ended");
		d->nfiles = (unsigned)u64_max(p, "files", SNAP_DIRECT_FILES);
		for (unsigned k = 0; k < d->nfiles && !p->failed; k++) {
			d->files[k] = (size_t)u64_max(p, "file", SNAPSHOT_MAX_ITEMS);
			d->opens[k] = u64(p, "opens");
		}
		if (!p->failed && more(p)) { /* its block requests: absent from snapshots recorded before they were counted */
			d->bio_known = true;
			d->bio_read_requests = u64(p, "bio_read_requests");
			d->bio_read_bytes = u64(p, "bio_read_bytes");
			d->bio_write_requests = u64(p, "bio_write_requests");
			d->bio_write_bytes = u64(p, "bio_write_bytes");
			if (!p->failed && more(p)) { /* not seen ending: absent before they were counted */
				d->bio_read_unended_requests = u64(p, "bio_read_unended_requests");
				d->bio_read_unended_bytes = u64(p, "bio_read_unended_bytes");
				d->bio_write_unended_requests = u64(p, "bio_write_unended_requests");
				d->bio_write_unended_bytes = u64(p, "bio_write_unended_bytes");
			}
		}
	} else if (span_equals(key, "disk_seconds")) {
		s->disk_seconds = real(p, "disk_seconds");
		s->disk_mid_seconds = real(p, "disk_mid_seconds");
	} else if (span_equals(key, "disk")) {
		struct snap_disk *d = GROW(p, s->disks, s->ndisks, "disk");

		if (!d)
			return;
		word_text(p, "name", d->end.name, sizeof(d->end.name));
		d->end.major = (unsigned)u64_max(p, "major", UINT32_MAX);
		d->end.minor = (unsigned)u64_max(p, "minor", UINT32_MAX);
		d->mid_known = flag(p, "mid_known");
		d->start = d->mid = d->end;
	} else if (span_equals(key, "disk_sample")) {
		parse_disk_sample(p, s);
	} else if (span_equals(key, "disk_latency")) {
		parse_disk_latency(p, s);
	} else if (span_equals(key, "disk_capacity")) {
		struct snap_disk *d = s->ndisks ? &s->disks[s->ndisks - 1] : NULL;

		if (!d) {
			fail(p, "disk_capacity before any disk line");
			return;
		}
		d->capacity_known = true;
		d->capacity_qd1_read_ns = real(p, "capacity_qd1_read_ns");
		d->capacity_qd1_write_ns = real(p, "capacity_qd1_write_ns");
		d->capacity_pct = real(p, "capacity_pct");
		/* -1: unknown, as written */
		if (d->capacity_qd1_read_ns < 0)
			d->capacity_qd1_read_ns = NAN;
		if (d->capacity_qd1_write_ns < 0)
			d->capacity_qd1_write_ns = NAN;
		if (d->capacity_pct < 0)
			d->capacity_pct = NAN;
	} else if (span_equals(key, "bio_known")) {
		s->bio_known = flag(p, "bio_known");
	} else if (span_equals(key, "bio_unattributed_bytes")) {
		s->bio_unattributed_bytes = u64(p, "bio_unattributed_bytes");
	} else if (span_equals(key, "bio_mechanism")) {
		word_text(p, "bio_mechanism", s->bio_mechanism, sizeof(s->bio_mechanism));
		if (!p->failed && strcmp(s->bio_mechanism, "block_io_start") && strcmp(s->bio_mechanism, "block_getrq"))
			fail(p, "bio_mechanism: block_io_start or block_getrq");
	} else if (span_equals(key, "bio_proc")) {
		struct snap_bio_proc *b = GROW(p, s->bio_procs, s->nbio_procs, "bio_proc");

		if (!b)
			return;
		b->pid = pid_of(p, "pid");
		word_text(p, "comm", b->comm, sizeof(b->comm));
		b->kernel = flag(p, "kernel");
		b->requests = u64(p, "requests");
		b->bytes = u64(p, "bytes");
		b->disk_major = (unsigned)u64_max(p, "disk_major", UINT32_MAX);
		b->disk_minor = (unsigned)u64_max(p, "disk_minor", UINT32_MAX);
		b->several_disks = flag(p, "several_disks");
		b->p50_ns = real(p, "p50_ns");
		b->p99_ns = real(p, "p99_ns");
		if (!p->failed && (b->p50_ns < 0 || b->p99_ns < 0))
			fail(p, "bio_proc: a latency below 0");
	} else if (span_equals(key, "psi")) {
		struct span which;
		struct snap_psi *psi = NULL;

		if (!next(p, &which, "which"))
			return;
		psi = span_equals(which, "io_some") ? &s->io_some : span_equals(which, "io_full") ? &s->io_full
			: span_equals(which, "memory_some") ? &s->memory_some : NULL;
		if (!psi) {
			fail(p, "psi: io_some, io_full or memory_some");
			return;
		}
		psi->known = flag(p, "known");
		psi->start_us = u64(p, "start_us");
		psi->end_us = u64(p, "end_us");
	} else if (span_equals(key, "rate")) {
		struct snap_io_rate *r = GROW(p, s->rates, s->nrates, "rate");

		if (!r)
			return;
		r->pid = pid_of(p, "pid");
		word_text(p, "comm", r->comm, sizeof(r->comm));
		r->read_rate = real(p, "read_rate");
		r->write_rate = real(p, "write_rate");
		r->rchar_rate = real(p, "rchar_rate");
	} else if (span_equals(key, "vm")) {
		s->vm_known = flag(p, "known");
		for (int k = 0; k < 2; k++) {
			s->pswpin[k] = u64(p, "pswpin");
			s->pswpout[k] = u64(p, "pswpout");
			s->pgpgin[k] = u64(p, "pgpgin");
			s->pgpgout[k] = u64(p, "pgpgout");
			s->refault_file[k] = u64(p, "workingset_refault_file");
		}
	} else if (span_equals(key, "mem")) {
		s->mem_known = flag(p, "known");
		s->mem_total = u64(p, "mem_total");
		s->mem_available = u64(p, "mem_available");
		s->cached = u64(p, "cached");
	} else if (span_equals(key, "swaps")) {
		s->swaps = (unsigned)u64_max(p, "swaps", UINT32_MAX);
		s->swaps_zram = (unsigned)u64_max(p, "on zram", s->swaps);
	} else if (span_equals(key, "dirty")) {
		s->dirty_peak = u64(p, "dirty_peak");
		s->writeback_peak = u64(p, "writeback_peak");
		s->dirty_thresh = u64(p, "dirty_thresh");
		s->dirty_bg_thresh = u64(p, "dirty_bg_thresh");
		s->writeback_samples = (unsigned)u64_max(p, "writeback_samples", UINT32_MAX);
	} else if (span_equals(key, "task")) {
		struct snap_task *t = GROW(p, s->tasks, s->ntasks, "task");

		if (!t)
			return;
		t->pid = pid_of(p, "pid");
		t->tid = pid_of(p, "tid");
		word_text(p, "comm", t->comm, sizeof(t->comm));
		word_text(p, "wchan", t->wchan, sizeof(t->wchan));
		t->first = (unsigned)u64_max(p, "first", UINT32_MAX);
		t->last = (unsigned)u64_max(p, "last", UINT32_MAX);
		t->samples = (unsigned)u64_max(p, "samples", UINT32_MAX);
		t->stuck_ns = u64(p, "stuck_ns");
		t->switches_known = flag(p, "switches_known");
		t->switches_first = u64(p, "switches_first");
		t->switches_last = u64(p, "switches_last");
		t->throttled = (unsigned)u64_max(p, "throttled", UINT32_MAX);
	} else if (span_equals(key, "probe")) {
		pid_t *pid = GROW(p, s->probes, s->nprobes, "probe");

		if (pid)
			*pid = pid_of(p, "pid");
	} else if (span_equals(key, "vtrace")) {
		struct snap_vtrace *v = GROW(p, s->vtrace, s->nvtrace, "vtrace");

		if (!v)
			return;
		v->pid = pid_of(p, "pid");
		word_text(p, "service", v->service, sizeof(v->service));
		word_text(p, "segment", v->segment, sizeof(v->segment));
		if (!p->failed && more(p)) { /* whose: absent from snapshots recorded before it was said */
			v->uid_known = true;
			v->uid = (uint32_t)u64_max(p, "uid", UINT32_MAX - 1);
			word_text(p, "user", v->user, sizeof(v->user));
		}
	} else if (span_equals(key, "op")) {
		struct snap_vtrace *v = s->nvtrace ? &s->vtrace[s->nvtrace - 1] : NULL;
		struct snap_vtrace_op *o;
		size_t nops;

		if (!v) {
			fail(p, "op before any vtrace line");
			return;
		}
		nops = v->nops;
		if (!(o = GROW(p, v->ops, nops, "op")))
			return;
		v->nops = (unsigned)nops;
		word_text(p, "name", o->name, sizeof(o->name));
		o->impossible = flag(p, "impossible");
		o->begins = u64(p, "begins");
		o->completions = u64(p, "completions");
		o->service_ns = u64(p, "service_ns");
		o->oldest_age_ns = u64(p, "oldest_age_ns");
		o->completions_before = u64(p, "completions_before");
		o->service_ns_before = u64(p, "service_ns_before");
	} else if (span_equals(key, "cache_proc")) {
		struct snap_cache_proc *c = GROW(p, s->cache_procs, s->ncache_procs, "cache_proc");

		if (!c)
			return;
		c->pid = pid_of(p, "pid");
		word_text(p, "comm", c->comm, sizeof(c->comm));
		c->memcg = u64(p, "memcg");
		c->accesses = u64(p, "accesses");
		c->misses = u64(p, "misses");
		c->refaults = u64(p, "refaults");
	} else if (span_equals(key, "cache_file")) {
		struct snap_cache_file *c = GROW(p, s->cache_files, s->ncache_files, "cache_file");

		if (!c)
			return;
		c->major = (unsigned)u64_max(p, "major", UINT32_MAX);
		c->minor = (unsigned)u64_max(p, "minor", UINT32_MAX);
		c->ino = u64(p, "ino");
		c->accesses = u64(p, "accesses");
		c->misses = u64(p, "misses");
		c->refaults = u64(p, "refaults");
		word_text(p, "name", c->name, sizeof(c->name));
	} else if (span_equals(key, "memcg")) {
		struct snap_memcg *m = GROW(p, s->memcgs, s->nmemcgs, "memcg");

		if (!m)
			return;
		m->pid = pid_of(p, "pid");
		m->id = u64(p, "id");
		word_text(p, "path", m->path, sizeof(m->path));
		m->version = (int)u64_max(p, "version", 2);
		m->max = u64(p, "max");
		m->current = u64(p, "current");
		m->refaults = u64(p, "refaults");
		m->at_limit = flag(p, "at_limit");
	} else if (span_equals(key, "container")) {
		struct snap_container *c = GROW(p, s->containers, s->ncontainers, "container");
		bool runtime_known = false;

		if (!c)
			return;
		c->pid = pid_of(p, "pid");
		word_text(p, "comm", c->comm, sizeof(c->comm));
		word_text(p, "runtime", c->runtime, sizeof(c->runtime));
		for (int r = 1; r < CONTAINER_RUNTIMES; r++)
			runtime_known |= !strcmp(c->runtime, container_runtime_names[r]);
		if (!p->failed && !runtime_known)
			fail(p, "runtime: not one of docker, podman, containerd, cri-o, kubernetes, machine, lxc");
		word_text(p, "id", c->id, sizeof(c->id));
		if (!p->failed && c->id[0] && !container_id_valid(c->id, strlen(c->id)))
			fail(p, "id: not 64 hex digits");
		word_text(p, "name", c->name, sizeof(c->name));
		word_text(p, "pod", c->pod, sizeof(c->pod));
		word_text(p, "namespace", c->namespace_, sizeof(c->namespace_));
		c->uid = (uint32_t)u64_max(p, "uid", UINT32_MAX - 1);
		word_text(p, "label", c->label, sizeof(c->label));
	} else if (span_equals(key, "mount")) {
		struct snap_mount *m = GROW(p, s->mounts, s->nmounts, "mount");

		if (!m)
			return;
		word_text(p, "dir", m->dir, sizeof(m->dir));
		word_text(p, "type", m->type, sizeof(m->type));
		word_text(p, "source", m->source, sizeof(m->source));
		m->state = (enum snap_mount_state)u64_max(p, "state", MOUNT_FAILED);
		m->duplicate = flag(p, "duplicate");
		m->blocks = u64(p, "blocks");
		m->bfree = u64(p, "bfree");
		m->bavail = u64(p, "bavail");
		m->files = u64(p, "files");
		m->ffree = u64(p, "ffree");
		m->favail = u64(p, "favail");
		m->frsize = u64(p, "frsize");
		m->held = flag(p, "held");
		m->probe_pid = pid_of(p, "probe_pid");
		m->probe_seconds = real(p, "probe_seconds");
		m->probe_started = real(p, "probe_started");
		word_text(p, "probe_asks", m->probe_asks, sizeof(m->probe_asks));
	} else {
		fail(p, "unknown key '%.*s'", (int)(span_length(key) > 40 ? 40 : span_length(key)), key.start);
	}
}

/* What the lines cannot say alone: indexes in range, the page size there. */
static bool check(const struct doctor_snapshot *s, char *why, size_t why_len)
{
	for (size_t i = 0; i < s->ndirect; i++)
		for (unsigned k = 0; k < s->direct[i].nfiles; k++)
			if (s->direct[i].files[k] >= s->ndirect_files) {
				snprintf(why, why_len, "direct %d: file %zu, but %zu direct_file lines", (int)s->direct[i].pid,
					 s->direct[i].files[k], s->ndirect_files);
				return false;
			}
	if (!s->page_size) {
		snprintf(why, why_len, "no page_size line");
		return false;
	}
	return true;
}

int doctor_snapshot_parse(const char *text, size_t len, struct doctor_snapshot *out, char *why, size_t why_len)
{
	struct parser p = { .why = why, .why_len = why_len };
	const char *cursor = text, *end = text + len;
	struct span line, key;
	bool header = false;

	*out = (struct doctor_snapshot){0};
	while (!p.failed && procfs_next_line(&cursor, end, &line)) {
		p.number++;
		line = procfs_trim(line);
		if (!span_length(line) || line.start[0] == '#')
			continue;
		if (memchr(line.start, '\0', span_length(line))) {
			fail(&p, "a NUL byte");
			break;
		}
		p.line = line;
		procfs_next_word(&p.line, &key);
		if (!header) {
			uint64_t version;

			if (!span_equals(key, SNAPSHOT_MAGIC)) {
				fail(&p, "not a doctor snapshot (the first line is not '%s %d')", SNAPSHOT_MAGIC,
				     SNAPSHOT_VERSION);
				break;
			}
			version = u64(&p, "version");
			if (!p.failed && version != SNAPSHOT_VERSION)
				fail(&p, "version %llu: this doctor reads version %d", (unsigned long long)version,
				     SNAPSHOT_VERSION);
			header = true;
		} else {
			parse_line(&p, key, out);
		}
		if (!p.failed && procfs_next_word(&p.line, &key))
			fail(&p, "more fields than a %s line has", header ? "snapshot" : "header");
	}
	if (!p.failed && !header) {
		p.number = 1;
		fail(&p, "empty: not a doctor snapshot");
	}
	if (p.failed || !check(out, why, why_len)) {
		doctor_snapshot_free(out);
		return -1;
	}
	return 0;
}

int doctor_snapshot_load(const char *path, struct doctor_snapshot *out, char *why, size_t why_len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	char *text = NULL, message[384];
	size_t len = 0;
	struct stat st;
	int rc = -1;

	*out = (struct doctor_snapshot){0};
	if (fd < 0) {
		snprintf(why, why_len, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, why_len, "%s: not a regular file", path);
		goto cleanup;
	}
	if ((uint64_t)st.st_size > SNAPSHOT_MAX_BYTES) {
		snprintf(why, why_len, "%s: larger than %u MiB: not a doctor snapshot", path, SNAPSHOT_MAX_BYTES >> 20);
		goto cleanup;
	}
	text = xcalloc(1, (size_t)st.st_size + 1);
	while (len < (size_t)st.st_size) {
		ssize_t n = read(fd, text + len, (size_t)st.st_size - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(why, why_len, "%s: %s", path, strerror(errno));
			goto cleanup;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (doctor_snapshot_parse(text, len, out, message, sizeof(message)) != 0) {
		snprintf(why, why_len, "%s: %s", path, message);
		goto cleanup;
	}
	rc = 0;
cleanup:
	free(text);
	close(fd);
	return rc;
}
