/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cachestat.c: loads cachestat.bpf.c through its skeleton, and reads its totals, processes and files. */
#include "collect/cachestat.h"
#include "collect/ebpf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "common/key_map.h"
#include "common/util.h"

#ifdef IOLENS_BPF
#include "collect/bpf_dl.h"
#include <stdio.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cachestat.skel.h"
#include "cachestat_compat.skel.h"

static struct cachestat_bpf *skeleton;
static struct bpf_link *flush_link;
static struct ring_buffer *ring;
static bool per_counts; /* per process or per file: the records are taken (cachestat_take) */

/*
 * The hand-overs since the last cachestat_take (the ring buffer's, then the flush iterator's),
 * added up as they come by process and by file: a busy machine's ten seconds are a hundred
 * thousand records of a few thousand processes and files. Each sum is found by its key (the
 * pid, or the device and inode) in a key_map (keyed hashes: ids are chosen by whoever makes
 * processes and files) whose value is the sum's place in its array plus one.
 */
static struct sums {
	struct cachestat_proc *procs;
	struct cachestat_file *files;
	size_t nprocs, nfiles, procs_room, files_room;
	struct key_map proc_places, file_places;
	size_t last_proc; /* the last record's process */
} sums;

struct file_key {
	dev_t dev;
	uint64_t ino;
};

static void add_counters(struct cache_counters *to, const struct cache_counters *from);

/* The place of key's sum in places; -1: none yet. */
static long sum_place(const struct key_map *places, const void *key, size_t len)
{
	return (long)(uintptr_t)key_map_get(places, key, len) - 1;
}

/* A new sum's place in an array of *count (room for *room, of size each), made there, grown to have it. */
static void *sum_new(void *array, size_t *count, size_t *room, size_t size, struct key_map *places, const void *key,
		     size_t len)
{
	if (*count == *room)
		array = xrealloc(array, (*room = 2 * *room + 64) * size);
	memset((char *)array + *count * size, 0, size);
	key_map_put(places, key, len, (void *)(uintptr_t)++*count);
	return array;
}

static void keep_record(const struct cache_record *r)
{
	struct file_key id;
	struct cachestat_proc *p;
	long place;

	/* A thread hands over as it goes from file to file: its process's sum is the last one's. */
	if (sums.last_proc >= sums.nprocs || sums.procs[sums.last_proc].pid != r->tgid) {
		if ((place = sum_place(&sums.proc_places, &r->tgid, sizeof(r->tgid))) < 0) {
			sums.procs = sum_new(sums.procs, &sums.nprocs, &sums.procs_room, sizeof(*sums.procs),
					     &sums.proc_places, &r->tgid, sizeof(r->tgid));
			sums.procs[place = (long)sums.nprocs - 1].pid = r->tgid;
		}
		sums.last_proc = (size_t)place;
	}
	/* The last record's name, owner and cgroup: what the process is now. */
	p = &sums.procs[sums.last_proc];
	p->uid = r->uid;
	p->cgroup = r->cgroup;
	p->memcg = r->memcg;
	memcpy(p->comm, r->comm, sizeof(p->comm));
	p->comm[sizeof(p->comm) - 1] = '\0';
	add_counters(&p->counters, &r->delta);
	if (!r->ino)
		return;
	/* The kernel's dev_t is major << 20 | minor; userspace's is makedev's. */
	memset(&id, 0, sizeof(id));
	id.dev = makedev(r->dev >> 20, r->dev & 0xfffff);
	id.ino = r->ino;
	if ((place = sum_place(&sums.file_places, &id, sizeof(id))) < 0) {
		sums.files = sum_new(sums.files, &sums.nfiles, &sums.files_room, sizeof(*sums.files), &sums.file_places,
				     &id, sizeof(id));
		place = (long)sums.nfiles - 1;
		sums.files[place].dev = id.dev;
		sums.files[place].ino = id.ino;
	}
	add_counters(&sums.files[place].counters, &r->delta);
}

/* The sums emptied for the next round (their arrays kept). */
static void sums_clear(void)
{
	key_map_free(&sums.proc_places);
	key_map_free(&sums.file_places);
	sums.nprocs = sums.nfiles = 0;
}

static void sums_free(void)
{
	sums_clear();
	free(sums.procs);
	free(sums.files);
	memset(&sums, 0, sizeof(sums));
}

static int on_record(void *context, void *data, size_t size)
{
	(void)context;
	if (size >= sizeof(struct cache_record))
		keep_record(data);
	return 0;
}

/* Runs the flush iterator: every thread's counts so far, and reads that ended, kept if keep. */
static void flush(bool keep)
{
	struct cache_record r;
	size_t got = 0;
	ssize_t n;
	int fd;

	if (!flush_link || (fd = bpf_iter_create(bpf_link__fd(flush_link))) < 0)
		return;
	/* The iterator's output: whole records, however read() cuts them. */
	while ((n = read(fd, (char *)&r + got, sizeof(r) - got)) > 0) {
		got += (size_t)n;
		if (got == sizeof(r)) {
			if (keep)
				keep_record(&r);
			got = 0;
		}
	}
	close(fd);
}

/* Every hand-over since the last round: the ring buffer's, then every thread's counts so far. */
static void take_records(void)
{
	if (ring)
		ring_buffer__consume(ring);
	flush(true);
	/* What threads handed over while the iterator ran. */
	if (ring)
		ring_buffer__consume(ring);
}

/*
 * How reads and faults are seen. Misses, dirties, evictions, mapped pages and exits come from
 * tracepoints every kernel iolens loads on has (filemap adds and deletes, writeback_dirty_folio,
 * or before folios reached them a page and writeback_dirty_page, rss_stat, sched); the read and
 * fault tracepoints came in Linux 6.9. Before, the functions
 * they are in: fentry where the kernel has trampolines, else kprobes. Chosen from the kernel's
 * BTF (which tracepoints and functions it has) and from what loads.
 */
enum mechanism { MECH_TRACEPOINTS, MECH_FENTRY, MECH_KPROBES, MECHANISMS, MECH_AUTO = MECHANISMS };
static const char *const mechanism_names[MECHANISMS] = { "tracepoints", "fentry", "kprobes" };
static int mechanism = -1; /* the one counting, -1 before */
_Static_assert(MECHANISMS == CACHESTAT_MECHANISMS, "cachestat.h counts the mechanisms");

#define MECHANISM_ENV "IOLENS_CACHE_MECHANISM"

static const char *const access_tracepoints[] = { "mm_filemap_get_pages", "mm_filemap_fault", "mm_filemap_map_pages" };
static const char *const access_functions[] = { "filemap_read", "filemap_fault", "filemap_map_pages" };
#define SPLICE_FUNCTION "filemap_splice_read" /* since 6.5; before, splice reads through filemap_read */
#define OLD_READ_FUNCTION "generic_file_buffered_read" /* filemap_read before 5.12, same arguments */

/* What this kernel's BTF says it has; without BTF, nothing is known (the tracepoints are tried). */
struct kernel_facts {
	bool known;
	const char *missing_tracepoint, *missing_function; /* the first of each list missing, or NULL */
	bool splice;       /* filemap_splice_read */
	bool old_read;     /* generic_file_buffered_read, not filemap_read (before 5.12) */
	bool split_counts; /* threads keep their mapped pages apart (struct task_rss_stat, before 6.2) */
	bool page_adds;    /* mm_filemap_add_to_page_cache and _delete_from_ pass a struct page (before 5.17-5.19) */
	bool page_dirties; /* writeback_dirty_page, not writeback_dirty_folio (before 5.19) */
	bool compat;       /* programs built with IOLENS_BPF_COMPAT (before 5.11: ebpf_compat) */
	bool refault_function;   /* workingset_refault, where the kernel counts refaults */
	bool refault_tracepoint; /* mod_memcg_lruvec_state, where it adds them up (6.16) */
};

#define REFAULT_FUNCTION "workingset_refault"
#define REFAULT_TRACEPOINT "mod_memcg_lruvec_state"

/* Where refaults are seen: as the kernel counts them, or as pages evicted while counting, added back. */
enum refaults { REFAULTS_TRACEPOINT, REFAULTS_FUNCTION, REFAULTS_EVICTED };


/* Where threads keep their mapped pages apart, the functions that tell each fault's (cachestat.bpf.c). */
static const char *const split_functions[] = { "handle_mm_fault", "sync_mm_rss" };

static void learn_kernel(struct kernel_facts *facts)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	const char *page;

	*facts = (struct kernel_facts){0};
	if (!vmlinux)
		return;
	facts->known = true;
	for (size_t i = 0; i < sizeof(access_tracepoints) / sizeof(*access_tracepoints) && !facts->missing_tracepoint;
	     i++)
		if (!ebpf_tracepoint_in(vmlinux, access_tracepoints[i]))
			facts->missing_tracepoint = access_tracepoints[i];
	facts->old_read = btf__find_by_name_kind(vmlinux, access_functions[0], BTF_KIND_FUNC) < 0 &&
			  btf__find_by_name_kind(vmlinux, OLD_READ_FUNCTION, BTF_KIND_FUNC) >= 0;
	for (size_t i = facts->old_read;
	     i < sizeof(access_functions) / sizeof(*access_functions) && !facts->missing_function; i++)
		if (btf__find_by_name_kind(vmlinux, access_functions[i], BTF_KIND_FUNC) < 0)
			facts->missing_function = access_functions[i];
	facts->splice = btf__find_by_name_kind(vmlinux, SPLICE_FUNCTION, BTF_KIND_FUNC) >= 0;
	facts->split_counts = btf__find_by_name_kind(vmlinux, "task_rss_stat", BTF_KIND_STRUCT) >= 0;
	/* The page (not folio) tracepoints, by what their btf_trace_ typedefs pass. */
	page = ebpf_tracepoint_arg_struct(vmlinux, "mm_filemap_add_to_page_cache", 0);
	facts->page_adds = page && !strcmp(page, "page");
	facts->page_dirties = !ebpf_tracepoint_in(vmlinux, "writeback_dirty_folio") &&
			      ebpf_tracepoint_in(vmlinux, "writeback_dirty_page");
	facts->compat = ebpf_compat(vmlinux);
	facts->refault_function = btf__find_by_name_kind(vmlinux, REFAULT_FUNCTION, BTF_KIND_FUNC) >= 0;
	facts->refault_tracepoint = ebpf_tracepoint_in(vmlinux, REFAULT_TRACEPOINT);
	for (size_t i = 0; i < sizeof(split_functions) / sizeof(*split_functions) && facts->split_counts &&
			   !facts->missing_function; i++)
		if (btf__find_by_name_kind(vmlinux, split_functions[i], BTF_KIND_FUNC) < 0)
			facts->missing_function = split_functions[i];
	btf__free(vmlinux);
}

/*
 * The programs that see reads and faults, each loaded only with its mechanism and where it
 * applies; and those that see refaults, as `refaults` says (the function: fentry, with the
 * tracepoints too, or a kprobe).
 */
static void choose_programs(struct cachestat_bpf *s, enum mechanism which, const struct kernel_facts *facts,
			    enum refaults refaults)
{
	enum { ALWAYS, SPLICE, SPLIT, READ, OLD_READ };
	const struct {
		struct bpf_program *program;
		enum mechanism mechanism;
		int where;
	} programs[] = {
		{ s->progs.on_read, MECH_TRACEPOINTS, ALWAYS },	 { s->progs.on_fault, MECH_TRACEPOINTS, ALWAYS },
		{ s->progs.on_map_pages, MECH_TRACEPOINTS, ALWAYS }, { s->progs.read_fentry, MECH_FENTRY, READ },
		{ s->progs.splice_fentry, MECH_FENTRY, SPLICE },	 { s->progs.fault_fentry, MECH_FENTRY, ALWAYS },
		{ s->progs.map_pages_fentry, MECH_FENTRY, ALWAYS }, { s->progs.window_fentry, MECH_FENTRY, SPLIT },
		{ s->progs.window_fexit, MECH_FENTRY, SPLIT },	 { s->progs.fold_fentry, MECH_FENTRY, SPLIT },
		{ s->progs.read_kprobe, MECH_KPROBES, READ },	 { s->progs.splice_kprobe, MECH_KPROBES, SPLICE },
		{ s->progs.fault_kprobe, MECH_KPROBES, ALWAYS },
		{ s->progs.map_pages_kprobe, MECH_KPROBES, ALWAYS },
		{ s->progs.window_kprobe, MECH_KPROBES, SPLIT },
		{ s->progs.window_kretprobe, MECH_KPROBES, SPLIT },
		{ s->progs.fold_kprobe, MECH_KPROBES, SPLIT },
		{ s->progs.buffered_read_fentry, MECH_FENTRY, OLD_READ },
		{ s->progs.buffered_read_kprobe, MECH_KPROBES, OLD_READ },
	};
	bool splice = !facts->known || facts->splice, split = which != MECH_TRACEPOINTS && facts->split_counts;
	const bool applies[] = { [ALWAYS] = true,		  [SPLICE] = splice,		[SPLIT] = split,
				 [READ] = !facts->old_read, [OLD_READ] = facts->old_read };

	for (size_t i = 0; i < sizeof(programs) / sizeof(*programs); i++)
		bpf_program__set_autoload(programs[i].program,
					  programs[i].mechanism == which && applies[programs[i].where]);
	s->rodata->split_counts = split;
	s->rodata->whole_reads = which != MECH_TRACEPOINTS;
	s->rodata->kernel_refaults = refaults != REFAULTS_EVICTED;
	s->rodata->page_adds = facts->page_adds;
	bpf_program__set_autoload(s->progs.on_memcg_stat, refaults == REFAULTS_TRACEPOINT);
	bpf_program__set_autoload(s->progs.refault_fentry, refaults == REFAULTS_FUNCTION && which != MECH_KPROBES);
	bpf_program__set_autoload(s->progs.refault_kprobe, refaults == REFAULTS_FUNCTION && which == MECH_KPROBES);
	/* Adds, removals and dirties, whatever the mechanism: of a folio, or before folios of a page. */
	bpf_program__set_autoload(s->progs.on_add, !facts->page_adds);
	bpf_program__set_autoload(s->progs.on_delete, !facts->page_adds);
	bpf_program__set_autoload(s->progs.on_add_page, facts->page_adds);
	bpf_program__set_autoload(s->progs.on_delete_page, facts->page_adds);
	bpf_program__set_autoload(s->progs.on_dirty, !facts->page_dirties);
	bpf_program__set_autoload(s->progs.on_dirty_page, facts->page_dirties);
}

EBPF_DEFINE_OPEN(cachestat)

/* Opens, loads and attaches the programs of one mechanism: 0, or -errno with *why (the skeleton gone). */
static int load_with(const struct cachestat_options *options, enum mechanism which, const struct kernel_facts *facts,
		     enum refaults refaults, const char **why)
{
	int rc = ebpf_init(why); /* again: the warnings of an earlier try are not this one's */

	if (rc)
		return rc;
	skeleton = cachestat_open(facts->compat);
	if (!skeleton)
		return ebpf_failed(NULL, "open", -EINVAL, why);
	skeleton->rodata->per_process = options->per_process;
	skeleton->rodata->per_file = options->per_file;
	skeleton->rodata->only_tgid = (__u32)options->only_pid;
	skeleton->rodata->nr_cpus = (__u32)(libbpf_num_possible_cpus() > 0 ? libbpf_num_possible_cpus() : 1);
	skeleton->rodata->page_shift = (__u32)__builtin_ctzll(page_size());
	/* Per file, a hand-over each time a thread moves to another file: room for 130,000 an interval;
	 * per process, one as each thread exits; system-wide only, none (the smallest ring there is). */
	bpf_map__set_max_entries(skeleton->maps.records, options->per_file      ? 16u << 20
							 : options->per_process ? 1u << 20
										: (unsigned)page_size());
	choose_programs(skeleton, which, facts, refaults);
	/* The flush iterator is run by the reader, not attached to an event. */
	bpf_program__set_autoattach(skeleton->progs.flush, false);
	rc = ebpf_load_attach(skeleton->skeleton, why);
	per_counts = options->per_process || options->per_file;
	/* The flush counts the last pages of reads that ended, system-wide too. */
	if (!rc) {
		flush_link = bpf_program__attach_iter(skeleton->progs.flush, NULL);
		if (!flush_link)
			rc = ebpf_failed(skeleton->obj, "attach", -ENOMEM, why);
	}
	if (!rc && per_counts) {
		ring = ring_buffer__new(bpf_map__fd(skeleton->maps.records), on_record, NULL, NULL);
		if (!ring)
			rc = ebpf_failed(skeleton->obj, "attach", -ENOMEM, why);
	}
	if (rc)
		cachestat_stop();
	return rc;
}

/*
 * With refaults seen as the kernel counts them where it can (its tracepoint, else its function
 * where it can be probed), else as pages evicted while counting, added back (cachestat_refaults).
 */
static enum refaults refaults_seen;

static int load(const struct cachestat_options *options, enum mechanism which, const struct kernel_facts *facts,
		const char **why)
{
	int rc = -ENOENT;

	for (enum refaults r = REFAULTS_TRACEPOINT; r <= REFAULTS_EVICTED && rc; r++) {
		if ((r == REFAULTS_TRACEPOINT && !facts->refault_tracepoint) ||
		    (r == REFAULTS_FUNCTION && !facts->refault_function))
			continue;
		rc = load_with(options, which, facts, r, why);
		refaults_seen = r;
	}
	return rc;
}

/* A kprobe event source: perf's (what libbpf uses) or tracefs's. */
static bool has_kprobes(void)
{
	return access("/sys/bus/event_source/devices/kprobe/type", F_OK) == 0 ||
	       access("/sys/kernel/tracing/kprobe_events", F_OK) == 0 ||
	       access("/sys/kernel/debug/tracing/kprobe_events", F_OK) == 0;
}
#define NO_KPROBES "this kernel has no kprobes (no kprobe event source)"

/* Why fentry or kprobes did not load, said as what the kernel lacks where that is known. */
static const char *refused(enum mechanism which, int rc, const char *why)
{
	static char text[160];

	if (!ebpf_may_trace())
		return why;
	if (which == MECH_KPROBES && !has_kprobes())
		return NO_KPROBES;
	if (which == MECH_FENTRY && (rc == -EPERM || rc == -EOPNOTSUPP || rc == -524 /* the kernel's ENOTSUPP */)) {
		snprintf(text, sizeof(text), "this kernel does not load fentry programs (%s)",
			 rc == -524 ? "not supported" : strerror(-rc));
		return text;
	}
	return why;
}

/* IOLENS_CACHE_MECHANISM: MECH_AUTO when unset, -1 (with *why) when it names none or says procfs. */
static int wanted_mechanism(const char **why)
{
	static char text[160];
	const char *wanted = getenv(MECHANISM_ENV);

	if (!wanted || !*wanted || !strcmp(wanted, "auto"))
		return MECH_AUTO;
	for (int i = 0; i < MECHANISMS; i++)
		if (!strcmp(wanted, mechanism_names[i]))
			return i;
	if (!strcmp(wanted, "procfs"))
		snprintf(text, sizeof(text), "%s=procfs", MECHANISM_ENV);
	else
		snprintf(text, sizeof(text), "%s=%s: not auto, tracepoints, fentry, kprobes or procfs", MECHANISM_ENV,
			 printable_name(wanted));
	*why = text;
	return -1;
}

int cachestat_start(const struct cachestat_options *options, const char **why)
{
	static char text[1024];
	char first_why[480] = "";
	struct kernel_facts facts;
	struct utsname host;
	int rc, wanted;

	if (skeleton)
		return 0;
	rc = ebpf_init(why);
	if (rc)
		return rc;
	wanted = wanted_mechanism(why);
	if (wanted < 0)
		return -EINVAL;
	learn_kernel(&facts);
	if (uname(&host) != 0)
		snprintf(host.release, sizeof(host.release), "?");
	if (wanted == MECH_TRACEPOINTS || (wanted == MECH_AUTO && (!facts.known || !facts.missing_tracepoint))) {
		rc = load(options, MECH_TRACEPOINTS, &facts, why);
		if (!rc)
			mechanism = MECH_TRACEPOINTS;
		else if (wanted == MECH_TRACEPOINTS) {
			snprintf(text, sizeof(text), "%s=tracepoints: %s", MECHANISM_ENV, *why);
			*why = text;
		}
		return rc;
	}
	if (facts.missing_function) {
		if (wanted == MECH_AUTO)
			snprintf(text, sizeof(text),
				 "this kernel (%s) has neither the tracepoint %s nor the function %s", host.release,
				 facts.missing_tracepoint, facts.missing_function);
		else
			snprintf(text, sizeof(text), "%s=%s: this kernel (%s) has no function %s", MECHANISM_ENV,
				 mechanism_names[wanted], host.release, facts.missing_function);
		*why = text;
		return -ENOENT;
	}
	for (int which = MECH_FENTRY; which <= MECH_KPROBES; which++) {
		if (wanted != MECH_AUTO && wanted != which)
			continue;
		rc = load(options, (enum mechanism)which, &facts, why);
		if (!rc) {
			mechanism = which;
			return 0;
		}
		*why = refused((enum mechanism)which, rc, *why);
		if (wanted != MECH_AUTO) {
			snprintf(text, sizeof(text), "%s=%s: %s", MECHANISM_ENV, mechanism_names[which], *why);
			*why = text;
			return rc;
		}
		if (which == MECH_FENTRY) { /* kprobes next: fentry's reason kept for the message */
			snprintf(first_why, sizeof(first_why), "%s", *why);
			continue;
		}
		if (!strcmp(first_why, *why)) /* the same cause (not root, no BTF): said once */
			snprintf(text, sizeof(text), "%s", *why);
		else
			snprintf(text, sizeof(text),
				 "this kernel (%s) has no tracepoint %s, and fentry was refused (%s), and kprobes (%s)",
				 host.release, facts.missing_tracepoint, first_why, *why);
		*why = text;
	}
	return rc;
}

const char *cachestat_mechanism(void)
{
	return mechanism >= 0 ? mechanism_names[mechanism] : NULL;
}

const char *cachestat_mode(void)
{
	return skeleton ? "ebpf" : "procfs";
}

int cachestat_capabilities(struct cachestat_capability caps[CACHESTAT_MECHANISMS], bool probe)
{
	static char texts[MECHANISMS][480];
	bool busy = skeleton != NULL;
	struct kernel_facts facts;
	const char *why = NULL;

	for (int i = 0; i < MECHANISMS; i++) {
		caps[i] = (struct cachestat_capability){ mechanism_names[i], CACHESTAT_MAY, NULL };
		texts[i][0] = '\0';
	}
	if (busy) {
		caps[mechanism].verdict = CACHESTAT_CAN;
	} else if (ebpf_init(&why) != 0) {
		for (int i = 0; i < MECHANISMS; i++) {
			snprintf(texts[i], sizeof(texts[i]), "%s", why);
			caps[i] = (struct cachestat_capability){ mechanism_names[i], CACHESTAT_CANNOT, texts[i] };
		}
		return 0;
	}
	learn_kernel(&facts);
	for (int i = 0; i < MECHANISMS; i++) {
		if (caps[i].verdict == CACHESTAT_CAN)
			continue;
		if (!facts.known)
			snprintf(texts[i], sizeof(texts[i]), "this kernel has no BTF");
		else if (i == MECH_TRACEPOINTS && facts.missing_tracepoint)
			snprintf(texts[i], sizeof(texts[i]), "this kernel has no tracepoint %s",
				 facts.missing_tracepoint);
		else if (i != MECH_TRACEPOINTS && facts.missing_function)
			snprintf(texts[i], sizeof(texts[i]), "this kernel has no function %s", facts.missing_function);
		else if (i == MECH_KPROBES && !has_kprobes())
			snprintf(texts[i], sizeof(texts[i]), NO_KPROBES);
		else if (probe && !busy && ebpf_may_trace()) {
			int rc = load(&(struct cachestat_options){0}, (enum mechanism)i, &facts, &why);

			if (rc == 0) {
				caps[i].verdict = CACHESTAT_CAN;
				cachestat_stop();
			} else {
				snprintf(texts[i], sizeof(texts[i]), "%s", refused((enum mechanism)i, rc, why));
			}
		}
		if (texts[i][0]) {
			caps[i].verdict = CACHESTAT_CANNOT;
			caps[i].why_not = texts[i];
		}
	}
	return busy ? -EBUSY : 0;
}

const char *cachestat_caveat(void)
{
	/*
	 * A fault's window ends in a kretprobe, of which the kernel keeps max(10, 2 x cpus) at once:
	 * pages mapped while more faults wait are missed (this kernel counts each thread's apart).
	 */
	if (mechanism == MECH_KPROBES && skeleton && skeleton->rodata->split_counts)
		return "pages mapped by faults are missed when many faults wait at once";
	return NULL;
}

int cachestat_totals(struct cache_counters *out)
{
	struct cache_counters *values;
	__u32 key = 0;
	int ncpu;

	if (!skeleton)
		return -ENOTCONN;
	if (!per_counts) /* else cachestat_take has, just before */
		flush(false);
	ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0)
		return -EINVAL;
	values = xcalloc((size_t)ncpu, sizeof(*values));
	if (bpf_map_lookup_elem(bpf_map__fd(skeleton->maps.totals), &key, values) != 0) {
		int rc = -errno;

		free(values);
		return rc;
	}
	memset(out, 0, sizeof(*out));
	for (int cpu = 0; cpu < ncpu; cpu++) {
		out->reads += values[cpu].reads;
		out->maps += values[cpu].maps;
		out->misses += values[cpu].misses;
		out->hits += values[cpu].hits;
		out->write_misses += values[cpu].write_misses;
		out->dirties += values[cpu].dirties;
		out->evictions += values[cpu].evictions;
		out->dropped += values[cpu].dropped;
		out->refaults += values[cpu].refaults;
	}
	free(values);
	return 0;
}

static void add_counters(struct cache_counters *to, const struct cache_counters *from)
{
	to->reads += from->reads;
	to->maps += from->maps;
	to->misses += from->misses;
	to->hits += from->hits;
	to->write_misses += from->write_misses;
	to->dirties += from->dirties;
	to->evictions += from->evictions;
	to->refaults += from->refaults;
}

/* Differences added up (wrapping), then read as signed: a race's less-than-nothing is nothing. */
static void settle_counters(struct cache_counters *c)
{
#define CLIP(f) if ((int64_t)c->f < 0) c->f = 0;
	CLIP(reads) CLIP(maps) CLIP(misses) CLIP(hits) CLIP(write_misses) CLIP(dirties) CLIP(evictions) CLIP(refaults)
#undef CLIP
}

static int compare_procs(const void *x, const void *y)
{
	const struct cachestat_proc *a = x, *b = y;

	return (a->pid > b->pid) - (a->pid < b->pid);
}

static int compare_files(const void *x, const void *y)
{
	const struct cachestat_file *a = x, *b = y;

	if (a->dev != b->dev)
		return (a->dev > b->dev) - (a->dev < b->dev);
	return (a->ino > b->ino) - (a->ino < b->ino);
}

/* A copy of n sums of size each, settled and sorted (NULL-safe for none). */
static void *sums_out(const void *from, size_t n, size_t size, void (*settle)(void *),
		      int (*order)(const void *, const void *))
{
	char *out = xcalloc(n ? n : 1, size);

	if (n)
		memcpy(out, from, n * size);
	for (size_t i = 0; i < n; i++)
		settle(out + i * size);
	if (n > 1)
		qsort(out, n, size, order);
	return out;
}

static void settle_proc(void *p)
{
	settle_counters(&((struct cachestat_proc *)p)->counters);
}

static void settle_file(void *f)
{
	settle_counters(&((struct cachestat_file *)f)->counters);
}

int cachestat_take(struct cachestat_proc **procs, size_t *nprocs, struct cachestat_file **files, size_t *nfiles)
{
	if (!skeleton)
		return -ENOTCONN;
	take_records();
	if (procs) {
		*procs = sums_out(sums.procs, sums.nprocs, sizeof(**procs), settle_proc, compare_procs);
		*nprocs = sums.nprocs;
	}
	if (files) { /* by userspace's dev_t */
		*files = sums_out(sums.files, sums.nfiles, sizeof(**files), settle_file, compare_files);
		*nfiles = sums.nfiles;
	}
	sums_clear();
	return 0;
}

int cachestat_drain(void)
{
	int n = ring ? ring_buffer__consume(ring) : 0;

	return n > 0 ? n : 0;
}

void cachestat_stop(void)
{
	/* Nothing of libbpf's when nothing was started (libbpf itself may not be loaded). */
	if (ring)
		ring_buffer__free(ring);
	ring = NULL;
	if (flush_link)
		bpf_link__destroy(flush_link);
	flush_link = NULL;
	if (skeleton)
		cachestat_bpf__destroy(skeleton);
	skeleton = NULL;
	mechanism = -1;
	sums_free();
}

#else /* built without eBPF */

int cachestat_start(const struct cachestat_options *options, const char **why)
{
	(void)options;
	*why = ebpf_why(NULL, -ENOSYS, "build");
	return -ENOSYS;
}

int cachestat_totals(struct cache_counters *out)
{
	(void)out;
	return -ENOSYS;
}

int cachestat_take(struct cachestat_proc **procs, size_t *nprocs, struct cachestat_file **files, size_t *nfiles)
{
	if (procs) {
		*procs = NULL;
		*nprocs = 0;
	}
	if (files) {
		*files = NULL;
		*nfiles = 0;
	}
	return -ENOSYS;
}

void cachestat_stop(void)
{
}

int cachestat_drain(void)
{
	return 0;
}

const char *cachestat_mechanism(void)
{
	return NULL;
}

const char *cachestat_caveat(void)
{
	return NULL;
}

const char *cachestat_mode(void)
{
	return "procfs";
}

int cachestat_capabilities(struct cachestat_capability caps[CACHESTAT_MECHANISMS], bool probe)
{
	static const char *const names[CACHESTAT_MECHANISMS] = { "tracepoints", "fentry", "kprobes" };
	const char *why = ebpf_why(NULL, -ENOSYS, "build");

	(void)probe;
	for (int i = 0; i < CACHESTAT_MECHANISMS; i++)
		caps[i] = (struct cachestat_capability){ names[i], CACHESTAT_CANNOT, why };
	return 0;
}

#endif
