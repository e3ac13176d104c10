/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bio.c: loads bio.bpf.c through its generated skeleton, and reads its counts of block I/O per
 * process and per cgroup, with their latencies, and its latency histograms per disk.
 */
#include "collect/bio.h"
#include "collect/ebpf.h"
#include "collect/sysroot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <vtrace.h>
#include <vtrace/quantile.h>

#include "common/util.h"

/* The eBPF program's buckets are libvtrace's: its functions read them. */
_Static_assert(LOG_LINEAR_BUCKETS == VTRACE_HISTOGRAM_BUCKETS, "histogram.h and vtrace.h disagree");
_Static_assert(sizeof(struct bio_histogram) == LOG_LINEAR_BUCKETS * sizeof(__u64), "bio_histogram's size");

_Static_assert(BIO_SMALL_BUCKETS == 98, "bio_small_bucket's scale");
_Static_assert(sizeof(struct bio_counts) == 968 &&
		   offsetof(struct bio_counts, bytes) - offsetof(struct bio_counts, comm) >= 64 + 16,
	       "bio_counts: the memory stated in bio.h and the man pages");

/*
 * A table's order: by pid (the cgroup's id in a table of cgroups; a process's pid may be 0: the
 * idle task's), then disk.
 */
static int compare_rows(bool cgroups, const struct bio_process *a, const struct bio_process *b)
{
	uint64_t x = cgroups ? a->cgroup : (uint64_t)(uint32_t)a->pid,
		 y = cgroups ? b->cgroup : (uint64_t)(uint32_t)b->pid;

	if (x == y) {
		x = (uint64_t)a->disk_major << 32 | a->disk_minor;
		y = (uint64_t)b->disk_major << 32 | b->disk_minor;
	}
	return (x > y) - (x < y);
}

const struct bio_process *bio_table_find(const struct bio_table *table, const struct bio_process *like)
{
	unsigned low = 0, high = table->count;

	while (low < high) {
		unsigned middle = low + (high - low) / 2;
		const struct bio_process *p = &table->process[middle];
		int order = compare_rows(table->cgroups, p, like);

		if (!order)
			return p->since_ns == like->since_ns ? p : NULL;
		if (order < 0)
			low = middle + 1;
		else
			high = middle;
	}
	return NULL;
}

uint64_t bio_small_lower(unsigned bucket)
{
	unsigned exponent;

	if (bucket == 0)
		return 0;
	if (bucket >= BIO_SMALL_BUCKETS - 1)
		return 1ull << BIO_SMALL_LAST_BIT;
	exponent = BIO_SMALL_FIRST_BIT + ((bucket - 1) >> BIO_SMALL_SUB_BITS);
	return (uint64_t)((1u << BIO_SMALL_SUB_BITS) + ((bucket - 1) & ((1u << BIO_SMALL_SUB_BITS) - 1)))
	       << (exponent - BIO_SMALL_SUB_BITS);
}

uint64_t bio_small_upper(unsigned bucket)
{
	return bucket >= BIO_SMALL_BUCKETS - 1 ? UINT64_MAX : bio_small_lower(bucket + 1) - 1;
}

/* A bucket's middle; the last one's (17.2 s and more) is its lower bound, or the longest known in it. */
static uint64_t middle_of(unsigned bucket, uint64_t max_ns)
{
	if (bucket >= BIO_SMALL_BUCKETS - 1)
		return max_ns > bio_small_lower(bucket) ? max_ns : bio_small_lower(bucket);
	return bio_small_lower(bucket) + (bio_small_upper(bucket) - bio_small_lower(bucket)) / 2;
}

/* The rank of quantile q among total values, as vt_quantile takes it: ceil(q * total), at least 1. */
static uint64_t rank_of(double q, uint64_t total)
{
	uint64_t rank = (uint64_t)(q * (double)total);

	if ((double)rank < q * (double)total)
		rank++;
	return rank ? rank : 1;
}

/*
 * A percentile within what was seen: least and most bound every value counted (exact when their
 * flags say so). The lowest rank is least, the highest most, where those are exact; any other is
 * interpolated in its bucket (vt_quantile) and kept between them: a bucket's middle may lie
 * below the one value it holds, or above the longest.
 */
static uint64_t percentile_seen(const uint64_t *count, uint64_t total, uint64_t last_upper, double q, uint64_t least,
				bool least_exact, uint64_t most, bool most_exact)
{
	uint64_t rank = rank_of(q, total), value;

	if (rank >= total && most_exact)
		return most;
	if (rank <= 1 && least_exact)
		return least;
	value = vt_quantile(count, BIO_SMALL_BUCKETS, bio_small_lower, last_upper, q);
	if (value < least)
		value = least;
	/* (A longest of 0 is one not known: a percentile is never clamped to it.) */
	if (most && value > most)
		value = most;
	return value;
}

void bio_latency_figures(const struct bio_latency *now, const struct bio_latency *then, struct bio_latency_figures *out)
{
	uint64_t count[BIO_SMALL_BUCKETS], total = 0, last_upper, sum, most, least = 0;
	unsigned highest = 0;
	bool max_exact;

	memset(out, 0, sizeof(*out));
	for (unsigned b = 0; b < BIO_SMALL_BUCKETS; b++) {
		/* u32 counts: a difference modulo 2^32 is right across a wrap. */
		count[b] = (uint32_t)(now->bucket[b] - (then ? then->bucket[b] : 0));
		total += count[b];
		if (count[b])
			highest = b;
	}
	if (!total)
		return;
	out->requests = total;
	sum = now->sum_ns - (then ? then->sum_ns : 0);
	out->average_ns = sum / total;
	if (total == 1) { /* one request: its latency is known exactly, and is every figure */
		out->p50_ns = out->p99_ns = out->max_ns = sum;
		return;
	}
	/*
	 * The longest: exact when it is the longest since the counting began (it rose in between, or
	 * there is no between); else at most that and its bucket's top, shown as the bucket's middle
	 * (or the longest since the start, where that is in the bucket), never below the average.
	 */
	max_exact = !then || now->max_ns != then->max_ns;
	if (max_exact || (now->max_ns >= bio_small_lower(highest) && now->max_ns <= bio_small_upper(highest)))
		out->max_ns = now->max_ns;
	else
		out->max_ns = middle_of(highest, now->max_ns);
	if (out->max_ns && out->max_ns < out->average_ns)
		out->max_ns = out->average_ns;
	/* The shortest is at least what the others leave of the sum, each at most the longest's bound. */
	most = max_exact                             ? now->max_ns
	    : now->max_ns < bio_small_upper(highest) ? now->max_ns
						     : bio_small_upper(highest);
	if (most && total - 1 <= sum / most && sum > (total - 1) * most)
		least = sum - (total - 1) * most;
	/* The last bucket (17.2 s and more) ends at the longest known. */
	last_upper = middle_of(BIO_SMALL_BUCKETS - 1, now->max_ns);
	out->p50_ns =
	    percentile_seen(count, total, last_upper, 0.5, least, max_exact && total == 2, out->max_ns, max_exact);
	out->p99_ns =
	    percentile_seen(count, total, last_upper, 0.99, least, max_exact && total == 2, out->max_ns, max_exact);
}

void bio_latency_add(struct bio_latency *into, const struct bio_latency *from)
{
	for (unsigned b = 0; b < BIO_SMALL_BUCKETS; b++)
		into->bucket[b] += from->bucket[b];
	into->sum_ns += from->sum_ns;
	if (from->max_ns > into->max_ns)
		into->max_ns = from->max_ns;
}

void bio_latency_both(const struct bio_process *p, struct bio_latency *out)
{
	*out = p->latency[BIO_READ];
	bio_latency_add(out, &p->latency[BIO_WRITE]);
}

void bio_unended_free(struct bio_unended_set *set)
{
	free(set->request);
	memset(set, 0, sizeof(*set));
}

void bio_table_free(struct bio_table *table)
{
	free(table->process);
	memset(table, 0, sizeof(*table));
}

const struct bio_disk *bio_disks_find(const struct bio_disks *disks, unsigned major, unsigned minor)
{
	for (unsigned i = 0; i < disks->count; i++)
		if (disks->disk[i].major == major && disks->disk[i].minor == minor)
			return &disks->disk[i];
	return NULL;
}

/*
 * A disk's histogram as read: shared by the reads that follow until its sum moves (struct
 * latency_kept), freed with the last of them. A histogram of no request is no_requests.
 */
struct shared_histogram {
	unsigned long refs; /* (atomic: reads are freed by any thread) */
	uint64_t bucket[LOG_LINEAR_BUCKETS];
};
static const uint64_t no_requests[LOG_LINEAR_BUCKETS];

static void histogram_put(const uint64_t *bucket)
{
	struct shared_histogram *h;

	if (!bucket || bucket == no_requests)
		return;
	h = (struct shared_histogram *)((const char *)bucket - offsetof(struct shared_histogram, bucket));
	if (__atomic_sub_fetch(&h->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(h);
}

void bio_disks_free(struct bio_disks *disks)
{
	for (unsigned i = 0; i < disks->count; i++)
		for (unsigned kind = 0; kind < BIO_LAT_KINDS; kind++)
			for (unsigned op = 0; op < BIO_LAT_OPS; op++)
				histogram_put(disks->disk[i].histogram[kind][op]);
	free(disks->disk);
	memset(disks, 0, sizeof(*disks));
}

const char *bio_mechanism_name(enum bio_mechanism mechanism)
{
	return mechanism == BIO_BY_IO_START ? "block_io_start" : mechanism == BIO_BY_GETRQ ? "block_getrq" : "block_rq";
}

const char *bio_mechanism_mode(enum bio_mechanism mechanism)
{
	switch (mechanism) {
	case BIO_BY_IO_START:
		return "ebpf (tracepoints block_io_start, block_rq_issue/merge/complete)";
	case BIO_BY_GETRQ:
		return "ebpf (tracepoints block_getrq, block_rq_insert/issue/merge/complete)";
	default:
		return "ebpf (tracepoints block_rq_issue/merge/complete)";
	}
}

const char *bio_mechanism_less_exact(enum bio_mechanism mechanism)
{
	if (mechanism != BIO_BY_GETRQ)
		return NULL;
	return "each request's process seen at block_getrq (no block_io_start before Linux 6.5): requests that "
	       "request-based device-mapper (multipath) makes are charged to no process";
}

uint64_t bio_histogram_count(const uint64_t *histogram)
{
	uint64_t total = 0;

	for (unsigned b = 0; b < LOG_LINEAR_BUCKETS; b++)
		total += histogram[b];
	return total;
}

#ifdef IOLENS_BPF
#include "collect/bpf_dl.h"
#include <sys/mman.h>

#include "bio.skel.h"

static struct bio_bpf *skeleton;
static struct bio_key *keys; /* a batch's keys: (tgid or cgroup id, disk) */
static struct bio_counts *values;

/*
 * The places for requests in flight: BIO_IN_FLIGHT_SLOTS, or fewer (a power of two) from
 * IOLENS_BIO_PLACES, so that a test can send most requests to the hash (1: all but one).
 */
static unsigned in_flight_places(void)
{
	const char *env = getenv("IOLENS_BIO_PLACES");
	char *end;
	unsigned long n = env ? strtoul(env, &end, 10) : 0;

	if (!env || end == env || *end || !n || n > BIO_IN_FLIGHT_SLOTS || (n & (n - 1)))
		return BIO_IN_FLIGHT_SLOTS;
	return (unsigned)n;
}

/*
 * The disks given a histogram: those of /sys/block at load and DISK_HEADROOM more that appear
 * after (a loop device attached, a disk plugged in), at most BIO_MAX_DISKS: 220 KiB of locked
 * memory a disk. IOLENS_BIO_DISKS=N asks for N (tests).
 */
#define DISK_HEADROOM 8
static unsigned disk_slots_wanted(void)
{
	const char *env = getenv("IOLENS_BIO_DISKS");
	unsigned long n = 0;
	struct dirent *entry;
	char *end;
	DIR *dir;

	if (env && (n = strtoul(env, &end, 10)) > 0 && end != env && !*end)
		return n < BIO_MAX_DISKS ? (unsigned)n : BIO_MAX_DISKS;
	if (!(dir = opendir("/sys/block")))
		return BIO_MAX_DISKS;
	for (n = DISK_HEADROOM; n < BIO_MAX_DISKS && (entry = readdir(dir));)
		n += entry->d_name[0] != '.';
	closedir(dir);
	return (unsigned)n;
}

/*
 * Tests: IOLENS_BIO_SKIP_COMPLETIONS=N makes the program ignore every Nth request completed whole,
 * as the kernel itself may run no program at a completion (bio.bpf.c's completions_unseen).
 */
static unsigned skip_completions(void)
{
	const char *env = getenv("IOLENS_BIO_SKIP_COMPLETIONS");
	char *end;
	unsigned long n = env ? strtoul(env, &end, 10) : 0;

	return !env || end == env || *end || n > 1000000 ? 0 : (unsigned)n;
}

int bio_request_flag_bit(const struct btf *btf, const char *name, unsigned old_bit, unsigned *bit, const char **why)
{
	static char text[160];
	long long value = -1;
	int rc = ebpf_enumerator_in(btf, name, "__RQF_", &value);

	if (rc == 0 && value >= 0 && value < 32) {
		*bit = (unsigned)value;
		*why = "the kernel's BTF";
		return 0;
	}
	if (rc == -ENOENT) {
		*bit = old_bit;
		*why = "no __RQF_ enumerator here: the bit of the defines before 6.9";
		return 0;
	}
	*bit = BIO_FLAG_UNKNOWN;
	if (rc == -ENODATA)
		snprintf(text, sizeof(text), "no BTF to find the request flag %s in", name + 2);
	else if (rc == 0)
		snprintf(text, sizeof(text), "the request flag %s is %lld in this kernel's BTF, not a bit", name + 2,
			 value);
	else
		snprintf(text, sizeof(text), "this kernel's BTF has request flags (__RQF_*) but not %s", name);
	*why = text;
	return -ESRCH;
}

/* The request flags' bits the program reads (flags[0] FLUSH_SEQ, [1] IO_STAT): 0, or -errno with why. */
static int request_flags(const struct btf *vmlinux, unsigned flags[2], const char **why)
{
	const char *how[2];
	int rc = bio_request_flag_bit(vmlinux, "__RQF_FLUSH_SEQ", 4, &flags[0], &how[0]);

	if (rc) {
		*why = how[0];
		return rc;
	}
	rc = bio_request_flag_bit(vmlinux, "__RQF_IO_STAT", 13, &flags[1], &how[1]);
	if (rc) {
		*why = how[1];
		return rc;
	}
	if (getenv("IOLENS_BPF_DEBUG"))
		fprintf(stderr, "bio: RQF_FLUSH_SEQ: bit %u (%s)\nbio: RQF_IO_STAT: bit %u (%s)\n", flags[0], how[0],
			flags[1], how[1]);
	return 0;
}

/*
 * The operations bio.bpf.c tells apart, by the values vmlinux.h gave it at build time (enum
 * req_op, the same since 4.10), held to this kernel's: 0, or -ESRCH with why.
 */
static int request_ops(const struct btf *vmlinux, const char **why)
{
	static const struct {
		const char *name;
		long long value;
	} ops[] = {
		{ "REQ_OP_READ", 0 }, { "REQ_OP_WRITE", 1 }, { "REQ_OP_FLUSH", 2 }, { "REQ_OP_DISCARD", 3 },
		{ "REQ_OP_DRV_IN", 34 },
		{ "__REQ_FAILFAST_DEV", 8 }, /* the first flag's bit is REQ_OP_BITS: what REQ_OP_MASK keeps */
	};
	static char text[160];

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		long long value = -1;

		if (ebpf_enumerator_in(vmlinux, ops[i].name, NULL, &value) != 0 || value != ops[i].value) {
			snprintf(text, sizeof(text), "this kernel's BTF has %s %s, not %lld as iolens was built for",
				 ops[i].name, value < 0 ? "nowhere" : "as another value", ops[i].value);
			*why = text;
			return -ESRCH;
		}
	}
	return 0;
}

/*
 * What mechanism_check_in reads of the BTF: the request flags, the operations, the map types
 * (ebpf_compat); the block tracepoints.
 */
static const char *const bio_btf_enums[] = { "__RQF_", "REQ_OP_", "__REQ_", "BPF_MAP_TYPE_", NULL };
static const char *const bio_btf_typedefs[] = { "block_", NULL };

static enum bio_mechanism chosen = BIO_BY_DISKS;

/*
 * Whether this kernel can count with the mechanism: block_rq_issue, block_rq_merge and
 * block_rq_complete, which every mechanism uses, its own tracepoints, the request flags' bits
 * (into flags) and the operations' values. 0, or -errno with why.
 */
static int mechanism_check_in(const struct btf *vmlinux, enum bio_mechanism m, unsigned flags[2], const char **why)
{
	static const char *const needs[][5] = {
		[BIO_BY_IO_START] = { "block_rq_issue", "block_rq_merge", "block_rq_complete", "block_io_start" },
		[BIO_BY_GETRQ] = { "block_rq_issue", "block_rq_merge", "block_rq_complete", "block_getrq",
				   "block_rq_insert" },
		[BIO_BY_DISKS] = { "block_rq_issue", "block_rq_merge", "block_rq_complete" },
	};
	static char text[256];
	struct utsname host;

	if (!vmlinux) {
		*why = "this kernel has no BTF";
		return -ENODATA;
	}
	if ((unsigned)m > BIO_BY_DISKS) {
		*why = "no such mechanism";
		return -EINVAL;
	}
	for (size_t i = 0; i < 5 && needs[m][i]; i++)
		if (!ebpf_tracepoint_in(vmlinux, needs[m][i])) {
			snprintf(text, sizeof(text), "this kernel (%s) has no tracepoint %s",
				 uname(&host) == 0 ? printable_name(host.release) : "?", needs[m][i]);
			*why = text;
			return -EOPNOTSUPP;
		}
	/* The programs need BPF's atomic exchange and compare-and-exchange (5.12); a kernel before
	 * 5.11 (ebpf_compat) has neither, and passes block_getrq (queue, bio, op). */
	if (ebpf_compat(vmlinux)) {
		snprintf(text, sizeof(text),
			 "this kernel (%s) is older than the block programs, which need BPF's atomic "
			 "compare-and-exchange (Linux 5.12)",
			 uname(&host) == 0 ? printable_name(host.release) : "?");
		*why = text;
		return -EOPNOTSUPP;
	}
	if (request_flags(vmlinux, flags, why) != 0 || request_ops(vmlinux, why) != 0)
		return -EOPNOTSUPP;
	return 0;
}

int bio_mechanism_check(enum bio_mechanism mechanism, const char **why)
{
	struct btf *vmlinux;
	unsigned flags[2];
	int rc = ebpf_init(why);

	if (rc)
		return rc;
	vmlinux = btf__load_vmlinux_btf();
	rc = mechanism_check_in(vmlinux, mechanism, flags, why);
	btf__free(vmlinux);
	return rc;
}

/*
 * How the submitters are seen (submitters: processes or cgroups are counted; else the disks
 * alone, BIO_BY_DISKS): block_io_start where this kernel has it, else block_getrq;
 * IOLENS_BIO_MECHANISM's when set (for tests), refused where the kernel cannot. 0, with the
 * request flags' bits, or -errno with why.
 */
static int choose_mechanism(const struct btf *vmlinux, bool submitters, enum bio_mechanism *out, unsigned flags[2],
			    const char **why)
{
	static char text[400];
	const char *asked = getenv("IOLENS_BIO_MECHANISM");
	int rc, first_rc = 0;

	if (asked && !*asked)
		asked = NULL;
	if (!submitters && !asked) {
		*out = BIO_BY_DISKS;
		return mechanism_check_in(vmlinux, BIO_BY_DISKS, flags, why);
	}
	for (enum bio_mechanism m = BIO_BY_IO_START; m <= BIO_BY_GETRQ; m++) {
		if (asked && strcmp(asked, bio_mechanism_name(m)) != 0)
			continue;
		rc = mechanism_check_in(vmlinux, m, flags, why);
		if (rc == 0) {
			*out = submitters ? m : BIO_BY_DISKS;
			return 0;
		}
		if (asked) {
			snprintf(text, sizeof(text), "IOLENS_BIO_MECHANISM=%s: %s", asked, *why);
			*why = text;
			return rc;
		}
		if (!first_rc) {
			first_rc = rc;
			snprintf(text, sizeof(text), "%s", *why);
		} else if (strcmp(text, *why) != 0) {
			/* Neither: why block_io_start cannot, and block_getrq's reason when it is another. */
			size_t len = strlen(text);

			snprintf(text + len, sizeof(text) - len, "; with block_getrq: %s", *why);
		}
	}
	if (asked) {
		snprintf(text, sizeof(text), "IOLENS_BIO_MECHANISM=%s: not block_io_start or block_getrq",
			 printable_name(asked));
		*why = text;
		return -EINVAL;
	}
	*why = text;
	return first_rc;
}

enum bio_mechanism bio_mechanism(void)
{
	return chosen;
}

/*
 * The in-flight slots, mapped read-only: a read of the requests not seen ending looks at the used
 * ones in memory, where a copy of every slot through the kernel took a MiB a read.
 */
static const struct bio_slot *slots_mapped;
static size_t slots_mapped_bytes;
static unsigned slots_mapped_count;

static int map_slots(unsigned places, const char **why)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t bytes = (size_t)places * sizeof(struct bio_slot);
	void *at;

	if (page > 0)
		bytes = (bytes + (size_t)page - 1) / (size_t)page * (size_t)page;
	at = mmap(NULL, bytes, PROT_READ, MAP_SHARED, bpf_map__fd(skeleton->maps.in_flight_slots), 0);
	if (at == MAP_FAILED)
		return ebpf_failed(skeleton->obj, "in-flight slots' mapping", -errno, why);
	slots_mapped = at;
	slots_mapped_bytes = bytes;
	slots_mapped_count = places;
	return 0;
}

static void unmap_slots(void)
{
	if (slots_mapped)
		munmap((void *)slots_mapped, slots_mapped_bytes);
	slots_mapped = NULL;
}

int bio_start(unsigned want, const char **why)
{
	enum bio_mechanism mechanism = BIO_BY_DISKS;
	bool submitters = want & (BIO_WANT_PROCESSES | BIO_WANT_CGROUPS);
	struct btf *vmlinux;
	unsigned flags[2];
	const char *floor;
	unsigned places, disks;
	int rc;

	if (skeleton)
		return 0;
	keys = calloc(BIO_MAX_PROCESSES, sizeof(*keys));
	values = calloc(BIO_MAX_PROCESSES > BIO_MAX_CGROUPS ? BIO_MAX_PROCESSES : BIO_MAX_CGROUPS, sizeof(*values));
	if (!keys || !values) {
		bio_stop();
		*why = "out of memory";
		return -ENOMEM;
	}
	rc = ebpf_init(why);
	if (rc) {
		bio_stop();
		return rc;
	}
	/* What choose_mechanism asks of the kernel's BTF, without libbpf's parse of the whole. */
	vmlinux = ebpf_vmlinux_digest(bio_btf_enums, bio_btf_typedefs);
	rc = choose_mechanism(vmlinux, submitters, &mechanism, flags, why);
	btf__free(vmlinux);
	if (rc) {
		bio_stop();
		return rc;
	}
	skeleton = bio_bpf__open();
	if (!skeleton) {
		rc = ebpf_failed(NULL, "open", -EINVAL, why);
		bio_stop();
		return rc;
	}
	/* What is not wanted is not filled, and its map takes one entry, not megabytes. */
	skeleton->rodata->want = want;
	skeleton->rodata->rqf_flush_seq = flags[0];
	skeleton->rodata->rqf_io_stat = flags[1];
	/* Disks alone: the request's start_time_ns is its start, on_issue its first sight. */
	chosen = mechanism;
	skeleton->rodata->by_getrq = chosen == BIO_BY_GETRQ;
	bpf_program__set_autoload(skeleton->progs.on_start, chosen == BIO_BY_IO_START);
	bpf_program__set_autoload(skeleton->progs.on_getrq, chosen == BIO_BY_GETRQ);
	bpf_program__set_autoload(skeleton->progs.on_insert, chosen == BIO_BY_GETRQ);
	/* The empty program, for bench/bio-overhead.sh's measure of what bpf_stats adds to each run. */
	floor = getenv("IOLENS_BIO_FLOOR");
	bpf_program__set_autoload(skeleton->progs.on_floor, floor && !strcmp(floor, "1"));
	/* Without disks' histograms, the issue's time is not used. */
	if (!(want & BIO_WANT_DISKS))
		bpf_program__set_autoload(skeleton->progs.on_issue, false);
	skeleton->rodata->skip_completions = skip_completions();
	places = in_flight_places();
	skeleton->rodata->place_mask = places - 1;
	bpf_map__set_max_entries(skeleton->maps.in_flight_slots, places);
	if (!(want & BIO_WANT_PROCESSES))
		bpf_map__set_max_entries(skeleton->maps.processes, 1);
	if (!(want & BIO_WANT_CGROUPS))
		bpf_map__set_max_entries(skeleton->maps.cgroups, 1);
	disks = want & BIO_WANT_DISKS ? disk_slots_wanted() : 0;
	skeleton->rodata->max_disks = disks;
	bpf_map__set_max_entries(skeleton->maps.latency, disks ? disks * BIO_LAT_KINDS * BIO_LAT_OPS : 1);
	bpf_map__set_max_entries(skeleton->maps.latency_sum, disks ? disks * BIO_LAT_KINDS * BIO_LAT_OPS : 1);
	rc = ebpf_load_attach(skeleton->skeleton, why);
	if (!rc)
		rc = map_slots(places, why);
	if (rc) {
		bio_stop();
		return rc;
	}
	return 0;
}

static int by_pid(const void *a, const void *b)
{
	return compare_rows(false, a, b);
}

static int by_cgroup(const void *a, const void *b)
{
	return compare_rows(true, a, b);
}

/*
 * A map's entries, whole, by batches (count of them, each key_size and value_size bytes, into
 * keys and values): 0 or -errno. Arrays and hashes alike; the last batch ends with ENOENT.
 */
static int read_whole(int fd, __u32 capacity, void *key_out, size_t key_size, void *value_out, size_t value_size,
		      __u32 *count)
{
	__u32 token[2], total = 0;
	void *from = NULL;

	while (total < capacity) {
		__u32 n = capacity - total;
		int rc = bpf_map_lookup_batch(fd, from, token, (char *)key_out + (size_t)total * key_size,
					      (char *)value_out + (size_t)total * value_size, &n, NULL);

		if (rc && errno != ENOENT)
			return -errno;
		total += n;
		if (rc)
			break;
		from = token;
	}
	*count = total;
	return 0;
}

/* A map of counts (by process and disk, or by cgroup and disk), whole, into a table. */
static int read_counts(struct bpf_map *map, bool cgroups, struct bio_table *out)
{
	__u32 total = 0;
	/* In batches, a few system calls for the whole map; a full buffer ends it (the map holds no more). */
	int rc = read_whole(bpf_map__fd(map), cgroups ? BIO_MAX_CGROUPS : BIO_MAX_PROCESSES, keys, sizeof(*keys),
			    values, sizeof(*values), &total);

	if (rc)
		return rc;
	out->cgroups = cgroups;
	out->process = calloc(total ? total : 1, sizeof(*out->process));
	if (!out->process)
		return -ENOMEM;
	for (__u32 i = 0; i < total; i++) {
		struct bio_process *p = &out->process[i];
		const struct bio_counts *v = &values[i];

		if (cgroups) {
			p->cgroup = keys[i].id;
		} else {
			p->pid = (pid_t)(__u32)keys[i].id;
			p->start_ns = v->start_ns;
			p->cgroup = v->cgroup;
			memcpy(p->name, v->comm, sizeof(p->name) - 1);
			p->name[sizeof(p->name) - 1] = '\0';
		}
		p->since_ns = v->since_ns;
		p->disk_major = (unsigned)(keys[i].disk >> 32);
		p->disk_minor = (unsigned)keys[i].disk;
		memcpy(p->bytes, v->bytes, sizeof(p->bytes));
		memcpy(p->requests, v->requests, sizeof(p->requests));
		for (unsigned op = 0; op < BIO_SMALL_OPS; op++) {
			memcpy(p->latency[op].bucket, v->latency[op], sizeof(p->latency[op].bucket));
			p->latency[op].sum_ns = v->latency_sum_ns[op];
			p->latency[op].max_ns = v->latency_max_ns[op];
		}
	}
	qsort(out->process, total, sizeof(*out->process), cgroups ? by_cgroup : by_pid);
	/* One moved by the LRU while the batches went through the map may come twice: kept once. */
	for (__u32 i = 0; i < total; i++)
		if (!out->count || compare_rows(cgroups, &out->process[out->count - 1], &out->process[i]))
			out->process[out->count++] = out->process[i];
	return 0;
}

/* A table of processes or of cgroups, with the program's counts of what no row holds. */
static int read_table(bool cgroups, struct bio_table *out)
{
	int rc;

	memset(out, 0, sizeof(*out));
	if (!skeleton)
		return -ENOTCONN;
	rc = read_counts(cgroups ? skeleton->maps.cgroups : skeleton->maps.processes, cgroups, out);
	if (rc || !skeleton->bss)
		return rc;
	out->unattributed_bytes = skeleton->bss->unattributed_bytes;
	out->unseen_completions = skeleton->bss->completions_unseen;
	out->unseen_completion_bytes = skeleton->bss->completions_unseen_bytes;
	return 0;
}

int bio_read(struct bio_table *out)
{
	return read_table(false, out);
}

int bio_read_cgroups(struct bio_table *out)
{
	return read_table(true, out);
}

uint64_t bio_unseen_completions(void)
{
	return skeleton && skeleton->bss ? __atomic_load_n(&skeleton->bss->completions_unseen, __ATOMIC_RELAXED) : 0;
}

/* One entry of the requests in flight, as a row. */
static struct bio_unended unended_of(const struct bio_submitter *who)
{
	return (struct bio_unended){ .pid = (pid_t)who->tgid, .disk_major = (unsigned)(who->disk >> 32),
				     .disk_minor = (unsigned)who->disk, .op = who->op, .bytes = who->bytes,
				     .issue_ns = who->issue_ns };
}

/* bio_read_unended's buffers for the hash, made when first needed and kept until bio_stop. */
static struct bio_submitter *unended_whos;
static void *unended_hash_keys;

static void unended_buffers_free(void)
{
	free(unended_whos);
	free(unended_hash_keys);
	unended_whos = NULL;
	unended_hash_keys = NULL;
}

int bio_read_unended(struct bio_unended_set *out)
{
	__u32 hashed = 0, places = slots_mapped_count;
	size_t used = 0, room = 64;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!skeleton || !slots_mapped)
		return -ENOTCONN;
	if (skeleton->bss && skeleton->bss->in_flight_hashed) {
		if (!unended_whos) {
			unended_whos = calloc(BIO_MAX_IN_FLIGHT, sizeof(*unended_whos));
			unended_hash_keys = calloc(BIO_MAX_IN_FLIGHT, sizeof(__u64));
		}
		if (!unended_whos || !unended_hash_keys) {
			unended_buffers_free();
			return -ENOMEM;
		}
		rc = read_whole(bpf_map__fd(skeleton->maps.in_flight), BIO_MAX_IN_FLIGHT, unended_hash_keys,
				sizeof(__u64), unended_whos, sizeof(*unended_whos), &hashed);
		if (rc)
			return rc;
	}
	out->request = xcalloc(room + hashed, sizeof(*out->request));
	/* A slot may change as it is read, as it could between a copy's lookups: taken as it is. */
	for (__u32 i = 0; i < places; i++) {
		struct bio_submitter who;

		if (!__atomic_load_n(&slots_mapped[i].rq, __ATOMIC_RELAXED))
			continue;
		memcpy(&who, (const void *)&slots_mapped[i].who, sizeof(who));
		if (used == room) {
			room *= 2;
			out->request = xrealloc(out->request, (room + hashed) * sizeof(*out->request));
		}
		out->request[used++] = unended_of(&who);
	}
	for (__u32 i = 0; i < hashed; i++)
		out->request[used++] = unended_of(&unended_whos[i]);
	out->count = used;
	return 0;
}

/*
 * The disks map as last walked: its entries, the disks with a slot among them, and disk_slots
 * as it was before the walk. A disk first seen is handed a slot (disk_slots moves) before its
 * entry is added, so the walk is made again only when disk_slots moved since, or when the last
 * walk found fewer entries than slots handed out (one being added as it walked, or a slot lost
 * by one of two CPUs that saw a new disk at once): one or two system calls a disk saved, each
 * read (doctor's window reads three times).
 */
static struct disks_walked {
	bool known;
	__u32 slots_before; /* disk_slots before the walk */
	unsigned entries;   /* what the walk found, with a slot or not */
	unsigned count;
	__u64 key[BIO_MAX_DISKS];
	__u32 slot[BIO_MAX_DISKS];
} walked;

/*
 * The histograms as last read, by BIO_LATENCY_INDEX, each with its sum then. A request adds to
 * its histogram and then to the sum (its latency + 1 ns: every request moves it), and the sums
 * are read before the histograms: one whose sum has not moved since has had no request since,
 * and is shared from here instead of read again (18 KiB and a system call each, twelve a disk,
 * most of them an idle disk's or of an op it never sees). One whose sum is 0 has none at all.
 */
static struct latency_kept {
	uint64_t sum;                 /* as the map holds it: the latencies + 1 ns each */
	uint64_t count;               /* the requests the histogram counts */
	struct shared_histogram *read; /* one reference, or NULL: none kept */
} *kept;
static size_t nkept;
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

static void kept_free(void)
{
	pthread_mutex_lock(&kept_lock);
	for (size_t i = 0; i < nkept; i++)
		if (kept[i].read)
			histogram_put(kept[i].read->bucket);
	free(kept);
	kept = NULL;
	nkept = 0;
	walked = (struct disks_walked){0}; /* (the next start's disks are its own) */
	pthread_mutex_unlock(&kept_lock);
}

/* Every histogram's sum of latencies (each CPU's added up) below index n, into totals: 0 or -errno. */
static int read_sums(int fd, __u32 n, int cpus, __u64 *totals)
{
	__u64 *per_cpu = calloc((size_t)n * (size_t)cpus + 1, sizeof(*per_cpu));
	__u32 *indexes = calloc((size_t)n + 1, sizeof(*indexes)), got = 0;
	int rc = per_cpu && indexes ? 0 : -ENOMEM;

	/* In batches (a system call for them all), else one by one (a kernel without them for arrays). */
	if (!rc && (read_whole(fd, n, indexes, sizeof(*indexes), per_cpu, (size_t)cpus * sizeof(*per_cpu), &got) != 0 ||
		    got != n))
		for (__u32 i = 0; i < n && !rc; i++)
			if (bpf_map_lookup_elem(fd, &i, per_cpu + (size_t)i * (size_t)cpus) != 0)
				rc = -errno;
	for (__u32 i = 0; i < n && !rc; i++) {
		totals[i] = 0;
		for (int cpu = 0; cpu < cpus; cpu++)
			totals[i] += per_cpu[(size_t)i * (size_t)cpus + (size_t)cpu];
	}
	free(per_cpu);
	free(indexes);
	return rc;
}

/*
 * The histogram at index, whose sum (as the map holds it) is sum, into *bucket (a reference):
 * the one kept when it has not moved, else read. *sum_ns: the latencies it counts, summed.
 */
static int read_histogram(int fd, __u32 index, uint64_t sum, const uint64_t **bucket, uint64_t *sum_ns)
{
	struct latency_kept *k = index < nkept ? &kept[index] : NULL;
	struct shared_histogram *h;
	uint64_t count;

	*sum_ns = 0;
	*bucket = no_requests;
	if (!sum)
		return 0;
	if (k && k->read && k->sum == sum) {
		__atomic_add_fetch(&k->read->refs, 1, __ATOMIC_RELAXED);
		*bucket = k->read->bucket;
		*sum_ns = sum > k->count ? sum - k->count : 0;
		return 0;
	}
	if (!(h = malloc(sizeof(*h))))
		return -ENOMEM;
	h->refs = 1;
	if (bpf_map_lookup_elem(fd, &index, h->bucket) != 0) {
		int err = -errno;

		free(h);
		return err;
	}
	*bucket = h->bucket;
	/* (a request counted in the histogram whose sum came after the sums were read: a moment's ns low) */
	count = bio_histogram_count(h->bucket);
	*sum_ns = sum > count ? sum - count : 0;
	if (index >= nkept) {
		size_t room = (size_t)index + 1;
		struct latency_kept *more = realloc(kept, room * sizeof(*kept));

		if (!more)
			return 0; /* (read, not kept) */
		memset(more + nkept, 0, (room - nkept) * sizeof(*more));
		kept = more;
		nkept = room;
	}
	k = &kept[index];
	if (k->read)
		histogram_put(k->read->bucket);
	h->refs++; /* (no other holds it yet) */
	*k = (struct latency_kept){ sum, count, h };
	return 0;
}

/* walked made again from the map (under kept_lock). */
static void walk_disks(int disks_fd)
{
	__u64 key, *from = NULL;
	__u32 slot;

	walked = (struct disks_walked){ .known = skeleton->bss != NULL };
	if (skeleton->bss)
		walked.slots_before = __atomic_load_n(&skeleton->bss->disk_slots, __ATOMIC_ACQUIRE);
	/* The disks map only grows (disks are never forgotten): walking it by keys sees each once. */
	while (walked.count < BIO_MAX_DISKS && bpf_map_get_next_key(disks_fd, from, &key) == 0) {
		from = &key;
		if (bpf_map_lookup_elem(disks_fd, &key, &slot) != 0)
			continue; /* (not counted: walked again) */
		walked.entries++;
		if (slot < skeleton->rodata->max_disks) {
			walked.key[walked.count] = key;
			walked.slot[walked.count++] = slot;
		}
	}
}

int bio_read_disks(struct bio_disks *out)
{
	__u64 disk_keys[BIO_MAX_DISKS];
	__u32 slots[BIO_MAX_DISKS], nsums = 0;
	unsigned found;
	int latency_fd, sum_fd, cpus = libbpf_num_possible_cpus(), rc;
	__u64 *sums;

	memset(out, 0, sizeof(*out));
	if (!skeleton)
		return -ENOTCONN;
	if (cpus <= 0)
		return cpus < 0 ? cpus : -EINVAL;
	latency_fd = bpf_map__fd(skeleton->maps.latency);
	sum_fd = bpf_map__fd(skeleton->maps.latency_sum);
	pthread_mutex_lock(&kept_lock);
	if (!walked.known || walked.entries < walked.slots_before ||
	    __atomic_load_n(&skeleton->bss->disk_slots, __ATOMIC_ACQUIRE) != walked.slots_before)
		walk_disks(bpf_map__fd(skeleton->maps.disks));
	found = walked.count;
	memcpy(disk_keys, walked.key, found * sizeof(*disk_keys));
	memcpy(slots, walked.slot, found * sizeof(*slots));
	pthread_mutex_unlock(&kept_lock);
	for (unsigned i = 0; i < found; i++)
		if (BIO_LATENCY_INDEX(slots[i] + 1, 0, 0) > nsums)
			nsums = BIO_LATENCY_INDEX(slots[i] + 1, 0, 0);
	out->disk = calloc(found ? found : 1, sizeof(*out->disk));
	sums = calloc((size_t)nsums + 1, sizeof(*sums));
	if (!out->disk || !sums) {
		free(sums);
		bio_disks_free(out);
		return -ENOMEM;
	}
	rc = read_sums(sum_fd, nsums, cpus, sums); /* (before the histograms: see struct latency_kept) */
	pthread_mutex_lock(&kept_lock);
	for (; !rc && out->count < found; out->count++) {
		struct bio_disk *disk = &out->disk[out->count];

		disk->major = (unsigned)(disk_keys[out->count] >> 32);
		disk->minor = (unsigned)disk_keys[out->count];
		for (__u32 kind = 0; kind < BIO_LAT_KINDS && !rc; kind++)
			for (__u32 op = 0; op < BIO_LAT_OPS && !rc; op++) {
				__u32 index = BIO_LATENCY_INDEX(slots[out->count], kind, op);

				rc = read_histogram(latency_fd, index, sums[index], &disk->histogram[kind][op],
						    &disk->sum_ns[kind][op]);
			}
	}
	pthread_mutex_unlock(&kept_lock);
	free(sums);
	if (rc) {
		bio_disks_free(out);
		return rc;
	}
	out->not_kept = skeleton->bss ? skeleton->bss->disks_not_kept : 0;
	return 0;
}

void bio_stop(void)
{
	if (skeleton)
		bio_bpf__destroy(skeleton);
	skeleton = NULL;
	chosen = BIO_BY_DISKS;
	free(keys);
	free(values);
	keys = NULL;
	values = NULL;
	unmap_slots();
	unended_buffers_free();
	kept_free(); /* (the next start's slots are its own) */
}

static bool in_flight_of(const struct bio_unended_set *unended, pid_t pid)
{
	for (size_t i = 0; unended && i < unended->count; i++)
		if (unended->request[i].pid == pid)
			return true;
	return false;
}

/*
 * Whether this process sees the pids the programs record (the kernel's first namespace's): its
 * NSpid line has one number. Else kill(2) would ask of other processes.
 */
static bool in_first_pid_namespace(void)
{
	static int known = -1;
	char text[4096], *line;
	ssize_t length;

	if (known < 0) {
		known = 0;
		if ((length = read_small_at(AT_FDCWD, "/proc/self/status", text, sizeof(text) - 1)) > 0 &&
		    (text[length] = '\0', line = strstr(text, "\nNSpid:")) != NULL) {
			line += 7;
			line[strcspn(line, "\n")] = '\0';
			known = !strchr(line + strspn(line, " \t"), '\t') && !strchr(line + strspn(line, " \t"), ' ');
		}
	}
	return known;
}

unsigned bio_forget_ended(const struct bio_table *table, const struct bio_unended_set *unended)
{
	unsigned forgotten = 0;
	pid_t last = 0;
	bool gone = false;
	struct bio_counts now;

	if (!skeleton || table->cgroups || !in_first_pid_namespace())
		return 0;
	for (unsigned i = 0; i < table->count; i++) { /* (sorted by pid: each asked once) */
		const struct bio_process *p = &table->process[i];
		struct bio_key key = { .id = (__u32)p->pid, .disk = (__u64)p->disk_major << 32 | p->disk_minor };

		if (p->pid != last) {
			last = p->pid;
			gone = p->pid > 0 && kill(p->pid, 0) != 0 && errno == ESRCH && !in_flight_of(unended, p->pid);
		}
		/* Only counts the table has: a last request that ended since it was read (a window's end
		 * is read before its snapshot is made, up to a second before) is the next window's. */
		if (gone && bpf_map_lookup_elem(bpf_map__fd(skeleton->maps.processes), &key, &now) == 0 &&
		    now.since_ns == p->since_ns && !memcmp(now.requests, p->requests, sizeof(p->requests)) &&
		    bpf_map_delete_elem(bpf_map__fd(skeleton->maps.processes), &key) == 0)
			forgotten++;
	}
	return forgotten;
}

#else /* built without eBPF */

unsigned bio_forget_ended(const struct bio_table *table, const struct bio_unended_set *unended)
{
	(void)table;
	(void)unended;
	return 0;
}

int bio_start(unsigned want, const char **why)
{
	(void)want;
	*why = ebpf_why(NULL, -ENOSYS, "build");
	return -ENOSYS;
}

int bio_read(struct bio_table *out)
{
	memset(out, 0, sizeof(*out));
	return -ENOSYS;
}

int bio_read_cgroups(struct bio_table *out)
{
	memset(out, 0, sizeof(*out));
	return -ENOSYS;
}

int bio_read_disks(struct bio_disks *out)
{
	memset(out, 0, sizeof(*out));
	return -ENOSYS;
}

int bio_read_unended(struct bio_unended_set *out)
{
	memset(out, 0, sizeof(*out));
	return -ENOSYS;
}

uint64_t bio_unseen_completions(void)
{
	return 0;
}

enum bio_mechanism bio_mechanism(void)
{
	return BIO_BY_DISKS;
}

int bio_mechanism_check(enum bio_mechanism mechanism, const char **why)
{
	(void)mechanism;
	*why = ebpf_why(NULL, -ENOSYS, "build");
	return -ENOSYS;
}

void bio_stop(void)
{
}

#endif
