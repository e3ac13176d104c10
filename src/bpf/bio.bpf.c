/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bio.bpf.c: block I/O per process and per cgroup (each request charged to the process that
 * submitted it, counted as it completes, with its latency) and latency histograms per disk, from
 * the block tracepoints.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bio.h"
#include "histogram.h"

char LICENSE[] SEC("license") = "GPL";

#define REQ_OP_MASK_VALUE 0xff /* the kernel's REQ_OP_MASK: (1 << REQ_OP_BITS) - 1 */

/*
 * Requests in flight, by their address, with who submitted them: first in `in_flight_slots`,
 * an array each request has a place in (its address's cache line, modulo the array's size),
 * which costs no lock; in the hash `in_flight` when that place is another request's. The
 * kernel's requests are a fixed set per queue, carved side by side from whole pages, so those
 * of a queue seldom share a place. The hash's insertion and deletion (a bucket lock and a free
 * list shared by the CPU that makes the request and the one that completes it) were most of
 * biotop's cost: about 500 ns each on this VM, against 100 for the whole program without them.
 * A hash, not an LRU: what an LRU would forget on its own, requests merged into another, on_merge
 * forgets as the kernel merges them; any other that never completes is overwritten by the next
 * request at its address. With block_getrq (before Linux 6.5), a request is kept under its first
 * bio's address until it is first seen (live bios and requests never share an address).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE); /* read by the collector as memory, without a copy */
	__uint(max_entries, BIO_IN_FLIGHT_SLOTS);
	__type(key, __u32);
	__type(value, struct bio_slot);
} in_flight_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BIO_MAX_IN_FLIGHT);
	__type(key, __u64);
	__type(value, struct bio_submitter);
} in_flight SEC(".maps");

/*
 * Requests in the hash now. While it holds none (most of the time), a request not in its place is
 * not looked for there: a lookup that finds nothing still hashes the key and walks a bucket, about
 * 30 ns of each completion on this VM.
 */
__u64 in_flight_hashed;

/* The places there are, less one (set before loading: IOLENS_BIO_PLACES, for tests of the hash). */
const volatile __u32 place_mask = BIO_IN_FLIGHT_SLOTS - 1;

/*
 * The place of a request (its address: key) in `in_flight_slots`. The verifier refuses
 * arithmetic on a pointer, and the address is one; its low 32 bits, moved alone, are a number
 * to it (the program is privileged: CAP_PERFMON).
 */
static __always_inline struct bio_slot *place_of(__u64 key)
{
	__u32 index = ((__u32)key >> 6) & place_mask;

	return bpf_map_lookup_elem(&in_flight_slots, &index);
}

static __always_inline void ended_unseen(const struct bio_submitter *who);

/*
 * A request starts: kept in its place if that is free (or its own), else in the hash. With fresh
 * (a request that starts, at block_io_start), an entry already at its address is of the request
 * there before it, whose end no program saw (ended_unseen): the kernel freed it, so it ended.
 */
static __always_inline void remember(__u64 key, struct bio_submitter *who, bool fresh)
{
	struct bio_slot *place = place_of(key);
	struct bio_submitter *earlier;

	if (place) {
		__u64 was = place->rq;

		/* Taken by compare-and-swap: two CPUs starting requests with the same place, one wins. */
		if (was == key || (!was && __sync_val_compare_and_swap(&place->rq, 0, key) == 0)) {
			if (fresh && was == key)
				ended_unseen(&place->who);
			else if (fresh && in_flight_hashed && (earlier = bpf_map_lookup_elem(&in_flight, &key))) {
				/* its address's entry left in the hash while its place was another's */
				ended_unseen(earlier);
				if (bpf_map_delete_elem(&in_flight, &key) == 0)
					__sync_fetch_and_sub(&in_flight_hashed, 1);
			}
			place->who = *who;
			return;
		}
	}
	if (bpf_map_update_elem(&in_flight, &key, who, BPF_NOEXIST) == 0) {
		__sync_fetch_and_add(&in_flight_hashed, 1);
		return;
	}
	/* its own entry, left by its earlier use */
	if (fresh && (earlier = bpf_map_lookup_elem(&in_flight, &key)))
		ended_unseen(earlier);
	bpf_map_update_elem(&in_flight, &key, who, BPF_EXIST);
}

/* A request in flight, and its place (NULL: it is in the hash). */
static __always_inline struct bio_submitter *recall(__u64 key, struct bio_slot **place)
{
	*place = place_of(key);
	if (*place && (*place)->rq == key)
		return &(*place)->who;
	*place = NULL;
	return in_flight_hashed ? bpf_map_lookup_elem(&in_flight, &key) : NULL;
}

/* A request ends: its place is free again, or its entry leaves the hash. */
static __always_inline void forget(__u64 key, struct bio_slot *place)
{
	if (place)
		__sync_lock_test_and_set(&place->rq, 0);
	else if (bpf_map_delete_elem(&in_flight, &key) == 0)
		__sync_fetch_and_sub(&in_flight_hashed, 1);
}

/* A request that may be anywhere (merged away, or its address now a driver command's) is forgotten. */
static __always_inline void forget_any(__u64 key)
{
	struct bio_slot *place;

	if (recall(key, &place))
		forget(key, place);
}

/* Each process's counts on each disk, by tgid and disk. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, BIO_MAX_PROCESSES);
	__type(key, struct bio_key);
	__type(value, struct bio_counts);
} processes SEC(".maps");

/* Each cgroup's counts on each disk, by its cgroup v2 id and disk. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, BIO_MAX_CGROUPS);
	__type(key, struct bio_key);
	__type(value, struct bio_counts);
} cgroups SEC(".maps");

/* enum bio_want: which of processes, cgroups and latency are filled (set before loading). */
const volatile __u32 want = BIO_WANT_PROCESSES | BIO_WANT_CGROUPS | BIO_WANT_DISKS;

/* Disks by BIO_DISK_KEY: their slot in `latency`. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, BIO_MAX_DISK_KEYS);
	__type(key, __u64);
	__type(value, __u32);
} disks SEC(".maps");

/*
 * The histograms, at BIO_LATENCY_INDEX: shared by the CPUs, added to atomically (a per-CPU
 * copy of 7 MiB for each CPU would not scale with the CPUs; a cache line shared is the cost).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BIO_MAX_DISKS * BIO_LAT_KINDS * BIO_LAT_OPS);
	__type(key, __u32);
	__type(value, struct bio_histogram);
} latency SEC(".maps");

/*
 * The sum of the latencies each histogram counts, in ns, at the same index (a Prometheus
 * histogram's _sum): each CPU its own (3 KiB), added to without a lock (a program does not run
 * again on its CPU while it runs), summed by bio.c. Shared, its three atomic adds a request were
 * lines moving between the CPUs completing requests.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, BIO_MAX_DISKS * BIO_LAT_KINDS * BIO_LAT_OPS);
	__type(key, __u32);
	__type(value, __u64);
} latency_sum SEC(".maps");

/*
 * Bytes completed that no process was charged for: of requests whose process had been forgotten by
 * the time they completed (or could not be remembered), or whose start no program saw.
 */
__u64 unattributed_bytes;

/*
 * Requests whose end no program saw, and their bytes (their size at their start, or at their issue
 * where block_rq_issue is counted), charged to their process and cgroup as their address started
 * another request (block_io_start). Under load the kernel ran no BPF program at the
 * block_rq_complete of 0.01 to 0.5 % of requests (Linux 6.18 on this VM, fio at 150,000 requests/s
 * on a loop device and the virtio disk: perf counted every one, the programs' run_cnt fewer, their
 * recursion_misses none); a process's bytes are whole again once its requests' addresses are used
 * again, which the same load does soon after (tests/cli/bio_unseen.sh).
 */
__u64 completions_unseen, completions_unseen_bytes;

/* Tests: every skip_completions-th request completed whole is ignored here, as the kernel may (0: none). */
const volatile __u32 skip_completions = 0;
__u64 completions_seen;
/*
 * Disks given a slot in latency: as many as the machine had at load and a few more (the map is
 * sized to them by the loader), at most BIO_MAX_DISKS. A slot of max_disks is none.
 */
const volatile __u32 max_disks = BIO_MAX_DISKS;
/* Slots handed out (may pass max_disks: those disks have none). */
__u32 disk_slots;
/* Requests completed on disks beyond max_disks, not in any histogram. */
__u64 disks_not_kept;

/*
 * The group /proc/diskstats counts a request (or the bio it is made from) in, by its flags
 * (cmd_flags, bi_opf): BIO_OPS for a flush, -1 for what it does not count (driver commands).
 */
static __always_inline int op_of_flags(__u32 flags)
{
	__u32 op = flags & REQ_OP_MASK_VALUE;

	if (op == REQ_OP_DISCARD)
		return BIO_DISCARD;
	if (op == REQ_OP_FLUSH)
		return BIO_OPS;
	if (op >= REQ_OP_DRV_IN)
		return -1;
	return op & 1 ? BIO_WRITE : BIO_READ; /* op_is_write: writes are the odd ones */
}

static __always_inline int op_of(struct request *rq)
{
	return op_of_flags(rq->cmd_flags);
}

/*
 * The bits of the request flags RQF_FLUSH_SEQ and RQF_IO_STAT, set before load from the kernel's
 * BTF (bio.c: an enum since 6.9, without a name in 6.12, so CO-RE cannot look them up; before 6.9
 * they were defines, bits 4 and 13). BIO_FLAG_UNKNOWN: the kernel's bit is not known, and the
 * flag is taken as never set.
 */
const volatile __u32 rqf_flush_seq = 4, rqf_io_stat = 13;
#define rq_flag(rq, bit) ((bit) < BIO_FLAG_UNKNOWN && ((rq)->rq_flags & (1u << ((bit) & 31))))

/*
 * Whether the request is inside a flush sequence (RQF_FLUSH_SEQ): a write with PREFLUSH or FUA on
 * a disk with a write cache, or the flush request run for it, completes its parts with the flag
 * set and ends (once, and /proc/diskstats counts it then) with it cleared. Bit 4 before 6.9.
 */
static __always_inline bool in_flush_sequence(struct request *rq)
{
	return rq_flag(rq, rqf_flush_seq);
}

/*
 * Whether the request's start_time_ns is its own: RQF_IO_STAT, set as the kernel starts it for
 * /proc/diskstats (iostats on). Without it the field may hold a start of the request's earlier
 * life (since 6.11 it is not cleared): a queue whose iostats were turned off showed 422 s. Bit 13
 * before 6.9.
 */
static __always_inline bool kernel_started(struct request *rq)
{
	return rq->start_time_ns && rq_flag(rq, rqf_io_stat);
}

/*
 * The request's disk as BIO_DISK_KEY, or 0 when it has none. tp_btf's arguments are typed
 * pointers: read directly (a fault reads 0), not through bpf_probe_read_kernel, whose calls
 * were a third of the program's time. The request queue has its disk from Linux 5.15 (before,
 * the request its own rq_disk, until 5.18), the bio its bdev from 5.12 (before, bi_disk): the
 * newer is read where the BTF has it, so 5.15 reads as 6.1 does; the other branch goes at load.
 */
struct request___rq_disk {
	struct gendisk *rq_disk;
} __attribute__((preserve_access_index));
struct bio___bi_disk {
	struct gendisk *bi_disk;
} __attribute__((preserve_access_index));

static __always_inline __u64 disk_key(struct gendisk *disk)
{
	return disk ? BIO_DISK_KEY(disk->major, disk->first_minor) : 0;
}

static __always_inline __u64 disk_of(struct request *rq)
{
	if (bpf_core_field_exists(rq->q->disk))
		return disk_key(rq->q->disk);
	return disk_key(((struct request___rq_disk *)rq)->rq_disk);
}

/* A bio's disk (whole: a partition's bdev has its disk's gendisk), as disk_of. */
static __always_inline __u64 disk_of_bio(struct bio *bio)
{
	if (bpf_core_field_exists(bio->bi_bdev))
		return disk_key(bio->bi_bdev ? bio->bi_bdev->bd_disk : NULL);
	return disk_key(((struct bio___bi_disk *)bio)->bi_disk);
}

/*
 * The slots of the disks seen last, direct-mapped by a hash of the disk: each entry the disk's
 * 32 bits (major << 20 | minor) above its slot, one 64-bit word written and read at once, so
 * that two CPUs filling the same entry leave one whole entry or the other, never a mix.
 */
#define SLOT_CACHE 64
__u64 slot_cache[SLOT_CACHE];

/* A disk's entry in slot_cache and untimed_start: Knuth's multiplicative hash, 6 bits. */
static __always_inline __u32 entry_of(__u32 disk)
{
	return ((disk * 2654435761u) >> 26) & (SLOT_CACHE - 1);
}

/* A disk as 32 bits: major << 20 | minor. */
static __always_inline __u32 disk32(__u64 key)
{
	return (__u32)(key >> 32) << 20 | ((__u32)key & 0xfffff);
}

/*
 * Disks (by entry_of, so with the others of their entry) whose requests completed without a
 * start of the kernel's (start_time_ns, kept when the queue counts iostats: the default): their
 * requests are timed by on_start itself. Learnt from the first such completion (its latency
 * unknown); a clock read per request saved elsewhere (about 100 ns in this VM).
 */
__u8 untimed_start[SLOT_CACHE];

/* The slot of the disk (allocated as a disk is first seen), or max_disks. */
static __always_inline __u32 slot_of(__u64 key)
{
	__u32 *known, slot, disk = disk32(key), entry = entry_of(disk);
	__u64 cached;

	if (!key || !(want & BIO_WANT_DISKS))
		return max_disks;
	cached = slot_cache[entry];
	if (cached && cached >> 32 == disk)
		return (__u32)cached & 0xffff;
	known = bpf_map_lookup_elem(&disks, &key);
	if (known) {
		slot = *known;
	} else {
		slot = __sync_fetch_and_add(&disk_slots, 1);
		if (slot > max_disks)
			slot = max_disks;
		/* Two CPUs seeing a new disk at once: one slot wins, the other stays unused. */
		if (bpf_map_update_elem(&disks, &key, &slot, BPF_NOEXIST)) {
			known = bpf_map_lookup_elem(&disks, &key);
			slot = known ? *known : max_disks;
		}
	}
	/* Bit 16 marks the entry used (disk 0:0 with slot 0 would be a word of zeros). */
	slot_cache[entry] = (__u64)disk << 32 | 1u << 16 | slot;
	return slot;
}

/* Which latency op a request is, from the group /proc/diskstats counts it in. */
static __always_inline __u32 latency_op_of(int op)
{
	return op == BIO_OPS    ? BIO_LAT_FLUSH
	    : op == BIO_DISCARD ? BIO_LAT_DISCARD
	    : op == BIO_WRITE   ? BIO_LAT_WRITE
				: BIO_LAT_READ;
}

/* Zeros, for new counts: too large (984 bytes) for the stack. */
const struct bio_counts zero_counts = {};

/* A cgroup's counts on a disk, made as its first request there starts. */
static __always_inline struct bio_counts *cgroup_counts(struct bio_key *key)
{
	struct bio_counts *counts = bpf_map_lookup_elem(&cgroups, key);

	if (!counts && bpf_map_update_elem(&cgroups, key, &zero_counts, BPF_NOEXIST) == 0) {
		counts = bpf_map_lookup_elem(&cgroups, key);
		if (counts)
			counts->since_ns = bpf_ktime_get_ns();
	}
	return counts ? counts : bpf_map_lookup_elem(&cgroups, key);
}

/*
 * What each CPU's last start found (or made) in `processes` and `cgroups`: the entries of a
 * process, its disk and its cgroup, with the process's start and name as they were then. A
 * request of the same process, name, cgroup and disk (most requests: a process makes many in a
 * row) looks in neither map: their lookups were 50 ns of each start on this VM. Good while
 * `entries_lost` has not moved since: a completion that finds its process's or cgroup's entry
 * gone (the LRU forgot it) moves it, and every CPU looks again.
 */
struct last_start {
	struct bio_key process; /* tgid, disk */
	__u64 start_ns;         /* the leader's start_boottime */
	__u64 cgroup;
	__u64 comm[2];
	__u64 lost; /* entries_lost when this was set */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct last_start);
} last_starts SEC(".maps");

/* Entries a completion did not find (forgotten by the LRU): last_starts are looked at again. */
__u64 entries_lost;

/*
 * The entries of the process and cgroup that start a request on a disk, made if they are not
 * there (the process's also if its tgid is now another process's), with its cgroup and name as
 * they are now: a shell's child that did I/O before its exec is named by what it became. False
 * when the process's could not be made (its request's bytes are then unattributed_bytes).
 */
static __always_inline bool make_entries(struct bio_submitter *who, __u64 start, const __u64 *comm)
{
	struct bio_counts *counts;

	if (want & BIO_WANT_CGROUPS) {
		struct bio_key group = { .id = who->cgroup, .disk = who->disk };

		cgroup_counts(&group);
	}
	if (!(want & BIO_WANT_PROCESSES))
		return true;
	struct bio_key process = { .id = who->tgid, .disk = who->disk };

	counts = bpf_map_lookup_elem(&processes, &process);
	if (!counts || counts->start_ns != start) {
		/* A new process on this disk (or its tgid reused): zeros, then its start and since. */
		bpf_map_update_elem(&processes, &process, &zero_counts, BPF_ANY);
		counts = bpf_map_lookup_elem(&processes, &process);
		if (!counts)
			return false;
		counts->start_ns = start;
		counts->since_ns = bpf_ktime_get_ns();
	}
	if (counts->cgroup != who->cgroup)
		counts->cgroup = who->cgroup;
	if (((__u64 *)counts->comm)[0] != comm[0] || ((__u64 *)counts->comm)[1] != comm[1]) {
		((__u64 *)counts->comm)[0] = comm[0];
		((__u64 *)counts->comm)[1] = comm[1];
	}
	return true;
}

/*
 * A request starts (key: its address, or its first bio's), in the context of the task that
 * submitted it (blk_mq_submit_bio): that task's process and cgroup are charged (for writeback, a
 * kworker flush thread: its process, and its cgroup as the task's own, the root cgroup; see
 * iolens-biotop(1)). Completions run in interrupt context, where the current task means nothing.
 */
static __always_inline void started(__u64 key, int op, __u64 disk, __u32 bytes, bool fresh)
{
	/*
	 * The process and cgroup read from the task itself, as bpf_get_current_pid_tgid and
	 * bpf_get_current_cgroup_id read them (task_dfl_cgroup's kernfs id): a helper's call was
	 * about 20 ns here (an AMD VM whose every kernel return goes through the SRSO thunk).
	 */
	struct task_struct *task = bpf_get_current_task_btf(), *leader = task->group_leader;
	struct bio_submitter who = { .tgid = task->tgid };
	__u64 start, comm[2], lost;
	struct last_start *last;
	__u32 zero = 0;

	who.op = (__u16)op;
	who.latency_op = (__u16)latency_op_of(op);
	who.bytes = bytes;
	who.disk = disk;
	who.slot = slot_of(who.disk);
	who.cgroup = task->cgroups->dfl_cgrp->kn->id;
	/*
	 * The start is the kernel's: blk_account_io_start sets the request's start_time_ns right after
	 * block_io_start (to the plug's cached time if plugged; before 6.5, as the request is
	 * allocated, before block_getrq), as /proc/diskstats takes it; timed here only on a disk that
	 * keeps none (untimed_start).
	 */
	if (untimed_start[entry_of(disk32(who.disk))])
		who.start_ns = bpf_ktime_get_ns();
	if (op < BIO_OPS) {
		start = leader->start_boottime;
		comm[0] = *(__u64 *)&leader->comm[0];
		comm[1] = *(__u64 *)&leader->comm[8];
		lost = entries_lost;
		last = bpf_map_lookup_elem(&last_starts, &zero);
		if (!last || last->process.id != who.tgid || last->process.disk != who.disk ||
		    last->start_ns != start || last->cgroup != who.cgroup || last->comm[0] != comm[0] ||
		    last->comm[1] != comm[1] || last->lost != lost) {
			if (make_entries(&who, start, comm) && last) {
				last->process.id = who.tgid;
				last->process.disk = who.disk;
				last->start_ns = start;
				last->cgroup = who.cgroup;
				last->comm[0] = comm[0];
				last->comm[1] = comm[1];
				last->lost = lost;
			}
		}
	}
	remember(key, &who, fresh);
}

/*
 * tp_btf: attached by BTF id, no tracefs needed. block_io_start (Linux 6.5) fires as a request
 * is made from a bio (blk_account_io_start), in its submitter's context.
 */
SEC("tp_btf/block_io_start")
int BPF_PROG(on_start, struct request *rq)
{
	int op = op_of(rq);

	if (op < 0) {
		/* A driver command (SG_IO...) at the address of a request merged away: not that request. */
		forget_any((__u64)rq);
		return 0;
	}
	started((__u64)rq, op, disk_of(rq), rq->__data_len, true);
	return 0;
}

/*
 * Where block_io_start is missing (before 6.5; bio.c chooses): block_getrq fires in the same
 * call, in the same context, a few lines before it (blk_mq_submit_bio: trace_block_getrq(bio),
 * then blk_mq_bio_to_request, which gives the request its first bio and accounts its start),
 * with the bio the request is made from, not the request. The submitter is kept under the bio's
 * address, and moved to the request's as the request is first seen (recall_request).
 */
const volatile bool by_getrq = false;

SEC("tp_btf/block_getrq")
int BPF_PROG(on_getrq, struct bio *bio)
{
	int op = op_of_flags(bio->bi_opf);

	if (op >= 0)
		started((__u64)bio, op, disk_of_bio(bio), bio->bi_iter.bi_size, false);
	return 0;
}

/*
 * Bios of a request looked at for block_getrq's entry: the first, and those a front merge put
 * before it while the request waited in a plug (bio_attempt_front_merge makes the merged bio the
 * request's first); the entry of a request that had more is not found (submitter_unseen).
 */
#define GETRQ_FIRST_BIOS 4

/*
 * Requests with data completed whole whose start no program saw: started before the counting, or
 * (block_getrq) their first bio's entry not found.
 */
__u64 submitter_unseen;

/*
 * With block_getrq, the request's own start (start_time_ns, which blk_account_io_start gives each
 * request made at an address) kept in its entry as it is moved there, where the kernel keeps one:
 * on_complete takes the same for the start (a time of the kernel's monotonic clock, before the
 * completion: not ahead of its own). See recall_request.
 */
static __always_inline void stamp(struct bio_submitter *who, struct request *rq)
{
	if (kernel_started(rq))
		who->start_ns = rq->start_time_ns;
}

/*
 * A request in flight (recall), or with block_getrq, its first bio's entry (or one of the first
 * GETRQ_FIRST_BIOS: front merges) moved to it as it is first seen; *key says where the entry is
 * now. Made under the request's address before the bio's goes: a program that interrupts another
 * on this CPU inside the hash (a completion in a softirq) may be refused the hash's bucket lock
 * (-EBUSY), and then the entry is used where it is, under the bio's address.
 *
 * With block_getrq, an entry under the request's address may be an earlier request's there, whose
 * completion no program saw: the kernel runs none for 0.01 to 0.5 % of completions under load
 * (6.18 on this VM: completions_unseen; iolens-stat(1), r_lat).
 * block_io_start overwrites it as the next request there starts; here that request would be
 * charged to the earlier one's process and op at its first sight (1 MiB of a reader's 64 in
 * stat_top_bio.sh). So an entry whose start is not the request's, while one of its first bios
 * has an entry, is dropped for the bio's; without one (a merge gave the request an earlier
 * start) it is kept.
 */
static __always_inline struct bio_submitter *recall_request(struct request *rq, struct bio_slot **place, __u64 *key)
{
	struct bio_submitter *who, *found, moved;
	struct bio_slot *bio_place;
	struct bio *bio;

	*key = (__u64)rq;
	who = recall(*key, place);
	if (!by_getrq || (who && (!kernel_started(rq) || who->start_ns == rq->start_time_ns)))
		return who;
	bio = rq->bio;
	for (int i = 0; i < GETRQ_FIRST_BIOS && bio; i++, bio = bio->bi_next) {
		found = recall((__u64)bio, &bio_place);
		if (!found)
			continue;
		/*
		 * An earlier request's, forgotten, not charged (ended_unseen) as block_io_start's are:
		 * here the entry may be this request's own under another start (a sanitized run charged
		 * 128 KiB twice), and block_getrq's kernels have no test of unseen completions.
		 */
		if (who)
			forget(*key, *place);
		moved = *found;
		stamp(&moved, rq);
		remember(*key, &moved, false);
		who = recall(*key, place);
		if (!who) {
			*key = (__u64)bio;
			*place = bio_place;
			return found;
		}
		forget((__u64)bio, bio_place);
		return who;
	}
	if (who)
		stamp(who, rq);
	return who;
}

/*
 * The request enters a scheduler's or a software queue (block_getrq only): where it may wait and
 * be front-merged, which gives it another first bio; its entry moved to it before.
 */
SEC("tp_btf/block_rq_insert")
int BPF_PROG(on_insert, struct request *rq)
{
	struct bio_slot *place;
	__u64 key;

	if (op_of(rq) >= 0)
		recall_request(rq, &place, &key);
	return 0;
}

/* Whether only disks are counted: then on_start is not loaded, the request's own start_time_ns is its start. */
static __always_inline bool disks_only(void)
{
	return !(want & (BIO_WANT_PROCESSES | BIO_WANT_CGROUPS));
}

/*
 * A request merged into another (attempt_merge: next into rq) ends without a completion of its
 * own: its entry goes (its bytes complete as the other's).
 */
SEC("tp_btf/block_rq_merge")
int BPF_PROG(on_merge, struct request *rq)
{
	forget_any((__u64)rq);
	return 0;
}

/*
 * The driver is handed the request: its device time starts (again, if it was requeued), timed
 * here, not from the request's io_start_time_ns: since Linux 6.9 that is the plug's cached clock
 * (blk_time_get_ns), the same moment as its start_time_ns for a request made and issued under
 * one plug (an O_DIRECT read through iomap, io_submit's batch), which would give it no queue time
 * and a device time as long as the whole. With only disks counted, the request is first seen
 * here: its entry is made, over any left at its address, with the issue's time alone (its op and
 * disk the completion reads from the request: 20-30 ns less here than reading them at the issue).
 */
SEC("tp_btf/block_rq_issue")
int BPF_PROG(on_issue, struct request *rq)
{
	__u64 key = (__u64)rq;
	struct bio_submitter *who, fresh = {};
	struct bio_slot *place;
	int op = op_of(rq);

	if (op < 0)
		return 0;
	if (disks_only()) {
		fresh.issue_ns = bpf_ktime_get_ns();
		remember(key, &fresh, false);
		return 0;
	}
	who = recall_request(rq, &place, &key);
	if (who) { /* else started before the counting did */
		who->issue_ns = bpf_ktime_get_ns();
		who->bytes = rq->__data_len; /* with the bios merged into it since its start */
	}
	return 0;
}

static __always_inline void add_latency(__u32 slot, __u32 kind, __u32 op, __u64 ns)
{
	__u32 index = BIO_LATENCY_INDEX(slot, kind, op);
	struct bio_histogram *histogram = bpf_map_lookup_elem(&latency, &index);
	__u64 *sum = bpf_map_lookup_elem(&latency_sum, &index);
	unsigned bucket = log_linear_bucket(ns);

	if (histogram && bucket < LOG_LINEAR_BUCKETS)
		__sync_fetch_and_add(&histogram->bucket[bucket], 1);
	/* ns + 1: every request moves the sum, even one of 0 ns (bio.c takes the count off) */
	if (sum)
		*sum += ns + 1;
}

/*
 * value, below n (the caller checked it), as an index the verifier knows is below n: Linux 6.1's
 * forgets a bound checked after the value was spilled to the stack, as the compiler may spill
 * it before its check; checked again here (the barrier hides what the compiler knows), a u64
 * (whose spills keep their bounds).
 */
static __always_inline __u64 index_below(__u32 value, __u32 n)
{
	__u64 index = value;

	barrier_var(index);
	return index < n ? index : 0;
}

/*
 * A request whose end no program saw, found as its address started another: its bytes charged to
 * its process and cgroup (their entries made since, or unattributed_bytes), a request completed.
 */
static __always_inline void ended_unseen(const struct bio_submitter *who)
{
	struct bio_key process = { .id = who->tgid, .disk = who->disk },
		       of_cgroup = { .id = who->cgroup, .disk = who->disk };
	__u32 op = who->op, bytes = who->bytes;
	struct bio_counts *counts;

	__sync_fetch_and_add(&completions_unseen, 1);
	__sync_fetch_and_add(&completions_unseen_bytes, bytes);
	if (op >= BIO_OPS)
		return;
	if (want & BIO_WANT_PROCESSES) {
		counts = bpf_map_lookup_elem(&processes, &process);
		if (counts) {
			__sync_fetch_and_add(&counts->bytes[index_below(op, BIO_OPS)], bytes);
			__sync_fetch_and_add(&counts->requests[index_below(op, BIO_OPS)], 1);
		} else {
			__sync_fetch_and_add(&unattributed_bytes, bytes);
		}
	}
	if (want & BIO_WANT_CGROUPS) {
		counts = bpf_map_lookup_elem(&cgroups, &of_cgroup);
		if (counts) {
			__sync_fetch_and_add(&counts->bytes[index_below(op, BIO_OPS)], bytes);
			__sync_fetch_and_add(&counts->requests[index_below(op, BIO_OPS)], 1);
		}
	}
}

/*
 * A request completed whole, of a process or cgroup: counted, and its latency (start to completion)
 * kept when its start is known.
 */
static __always_inline void add_request(struct bio_counts *counts, __u32 op, __u64 start_ns, __u64 now)
{
	__u64 ns = now - start_ns, small, bucket = bio_small_bucket(ns);

	if (op >= BIO_OPS)
		return;
	__sync_fetch_and_add(&counts->requests[index_below(op, BIO_OPS)], 1);
	if (!start_ns || op >= BIO_SMALL_OPS || bucket >= BIO_SMALL_BUCKETS)
		return;
	small = index_below(op, BIO_SMALL_OPS);
	bucket = index_below(bucket, BIO_SMALL_BUCKETS);
	__sync_fetch_and_add(&counts->latency[small][bucket], 1);
	__sync_fetch_and_add(&counts->latency_sum_ns[small], ns);
	/* Raised by compare-and-swap: two CPUs raising it at once never lower it. */
	for (int tries = 0; tries < 4; tries++) {
		__u64 max = counts->latency_max_ns[small];

		if (ns <= max || __sync_val_compare_and_swap(&counts->latency_max_ns[small], max, ns) == max)
			break;
	}
}

/*
 * A request's bytes completed (maybe in parts): added to its submitter as /proc/diskstats adds
 * its sectors. The part that completes what was left of it ends it: a request, its latencies
 * added to its process's and cgroup's and to its disk's histograms, and forgotten.
 */
SEC("tp_btf/block_rq_complete")
int BPF_PROG(on_complete, struct request *rq, blk_status_t error, unsigned int nr_bytes)
{
	__u64 key = (__u64)rq, now;
	struct bio_slot *place;
	struct bio_submitter *who;
	struct bio_counts *counts = NULL, *group = NULL;
	__u32 op = 0, slot, latency_op;
	__u64 start_ns = 0, issue_ns = 0, disk = 0;
	int kind;

	if (skip_completions && nr_bytes && nr_bytes >= rq->__data_len &&
	    __sync_fetch_and_add(&completions_seen, 1) % skip_completions == skip_completions - 1)
		return 0; /* (tests) as if the kernel had run no program here */
	who = recall_request(rq, &place, &key);
	if (disks_only()) {
		/*
		 * Only disks counted: all from the request but the issue (none for one issued
		 * before the counting began).
		 */
		kind = op_of(rq);
		if (kind < 0 || nr_bytes < rq->__data_len || in_flush_sequence(rq))
			return 0;
		if (who) {
			issue_ns = who->issue_ns;
			forget(key, place);
		}
		latency_op = latency_op_of(kind);
		slot = slot_of(disk_of(rq));
	} else if (!who) {
		/* Its start was not seen: in no process's or cgroup's counts, nor the disk's histograms. */
		kind = op_of(rq);
		if (kind >= 0 && kind < BIO_OPS) {
			__sync_fetch_and_add(&unattributed_bytes, nr_bytes);
			if (nr_bytes >= rq->__data_len)
				__sync_fetch_and_add(&submitter_unseen, 1);
		}
		return 0;
	} else {
		struct bio_key process = { .id = who->tgid, .disk = who->disk },
			       of_cgroup = { .id = who->cgroup, .disk = who->disk };

		if (op_of(rq) < 0) { /* an entry left by a request merged away, its address now a driver command's */
			forget(key, place);
			return 0;
		}
		op = who->op;
		if (op < BIO_OPS && (want & BIO_WANT_PROCESSES)) {
			counts = bpf_map_lookup_elem(&processes, &process);
			if (counts) {
				__sync_fetch_and_add(&counts->bytes[index_below(op, BIO_OPS)], nr_bytes);
			} else {
				__sync_fetch_and_add(&unattributed_bytes, nr_bytes);
				__sync_fetch_and_add(&entries_lost, 1);
			}
		}
		if (op < BIO_OPS && (want & BIO_WANT_CGROUPS)) {
			group = bpf_map_lookup_elem(&cgroups, &of_cgroup);
			if (group)
				__sync_fetch_and_add(&group->bytes[index_below(op, BIO_OPS)], nr_bytes);
			else
				__sync_fetch_and_add(&entries_lost, 1);
		}
		if (nr_bytes < rq->__data_len || in_flush_sequence(rq)) /* __data_len: what was left before this part */
			return 0;
		slot = who->slot;
		latency_op = who->latency_op;
		issue_ns = who->issue_ns;
		start_ns = who->start_ns;
		disk = who->disk;
		forget(key, place);
	}
	now = bpf_ktime_get_ns();
	/*
	 * The start /proc/diskstats counts from (blk_account_io_done: now - start_time_ns; the plug's
	 * cached time when plugged), else block_io_start's moment as on_start took it on a disk with
	 * iostats off (untimed_start); the issue as on_issue timed it.
	 */
	if (kernel_started(rq)) {
		if (rq->start_time_ns <= now)
			start_ns = rq->start_time_ns;
	} else if (disk && !start_ns) {
		/*
		 * A disk that keeps no start: on_start times its requests from now on (this one's
		 * latency is unknown).
		 */
		__u32 entry = entry_of(disk32(disk));

		if (!untimed_start[entry])
			untimed_start[entry] = 1;
	}
	if (counts)
		add_request(counts, op, start_ns, now);
	if (group)
		add_request(group, op, start_ns, now);
	if (!(want & BIO_WANT_DISKS))
		return 0;
	if (slot >= max_disks || latency_op >= BIO_LAT_OPS) {
		__sync_fetch_and_add(&disks_not_kept, 1);
		return 0;
	}
	if (!start_ns) {
		/*
		 * Nothing to count from: disks alone are timed from the kernel's start, which a
		 * queue with iostats 0 does not keep.
		 */
		__sync_fetch_and_add(&disks_not_kept, 1);
		return 0;
	}
	add_latency(slot, BIO_LAT_TOTAL, latency_op, now - start_ns);
	if (issue_ns >= start_ns && issue_ns <= now) {
		add_latency(slot, BIO_LAT_DEVICE, latency_op, now - issue_ns);
		add_latency(slot, BIO_LAT_QUEUE, latency_op, issue_ns - start_ns);
	}
	return 0;
}

/*
 * Nothing: loaded only for bench/bio-overhead.sh (IOLENS_BIO_FLOOR=1). Its run time, as
 * kernel.bpf_stats_enabled counts it, is what that counting adds to every program's run (its
 * clock reads: 55 ns here), to be taken from the others'.
 */
SEC("tp_btf/block_rq_complete")
int BPF_PROG(on_floor, struct request *rq)
{
	return 0;
}
