/* bio.bpf.c: block I/O per process: each request charged to the process that submitted it, counted as it completes, from the block tracepoints. */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "bio.h"

char LICENSE[] SEC("license") = "GPL";

#define REQ_OP_MASK_VALUE 0xff /* the kernel's REQ_OP_MASK: (1 << REQ_OP_BITS) - 1 */

/* Requests in flight, by their address, with who submitted them. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, BIO_MAX_IN_FLIGHT);
	__type(key, __u64);
	__type(value, struct bio_submitter);
} in_flight SEC(".maps");

/* Each process's counts, by tgid. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, BIO_MAX_PROCESSES);
	__type(key, __u32);
	__type(value, struct bio_counts);
} processes SEC(".maps");

/* Bytes of requests whose process had been forgotten by the time they completed. */
__u64 unattributed_bytes;

/* The group /proc/diskstats counts a request in, or -1 for one it does not count by size. */
static __always_inline int op_of(struct request *rq)
{
	__u32 op = rq->cmd_flags & REQ_OP_MASK_VALUE;

	if (op == REQ_OP_DISCARD)
		return BIO_DISCARD;
	if (op == REQ_OP_FLUSH || op >= REQ_OP_DRV_IN)
		return -1;
	return op & 1 ? BIO_WRITE : BIO_READ; /* op_is_write: writes are the odd ones */
}

/*
 * tp_btf: attached by BTF id, no tracefs needed. block_io_start fires as a request is made from
 * a bio, in the context of the task that submitted it (blk_mq_submit_bio): that task's process
 * is charged. Completions run in interrupt context, where the current task means nothing.
 */
SEC("tp_btf/block_io_start")
int BPF_PROG(on_start, struct request *rq)
{
	struct task_struct *leader = bpf_get_current_task_btf()->group_leader;
	struct bio_submitter who = { .tgid = bpf_get_current_pid_tgid() >> 32 };
	struct bio_counts *counts;
	__u64 key = (__u64)rq, start;
	int op = op_of(rq);

	if (op < 0)
		return 0;
	who.op = (__u32)op;
	start = leader->start_boottime;
	counts = bpf_map_lookup_elem(&processes, &who.tgid);
	if (!counts || counts->start_ns != start) {
		struct bio_counts fresh = { .start_ns = start, .since_ns = bpf_ktime_get_ns() };

		bpf_map_update_elem(&processes, &who.tgid, &fresh, BPF_ANY);
		counts = bpf_map_lookup_elem(&processes, &who.tgid);
		if (!counts)
			return 0;
	}
	/* The name as it is now: a shell's child that did I/O before its exec is named by what it became. */
	bpf_probe_read_kernel(counts->comm, sizeof(counts->comm), leader->comm);
	bpf_map_update_elem(&in_flight, &key, &who, BPF_ANY);
	return 0;
}

/*
 * A request's bytes completed (maybe in parts): added to its submitter as /proc/diskstats adds
 * its sectors. The part that completes what was left of it ends it: a request, and forgotten.
 */
SEC("tp_btf/block_rq_complete")
int BPF_PROG(on_complete, struct request *rq, blk_status_t error, unsigned int nr_bytes)
{
	__u64 key = (__u64)rq;
	struct bio_submitter *who = bpf_map_lookup_elem(&in_flight, &key);
	struct bio_counts *counts;
	__u32 op;

	if (!who)
		return 0; /* started before the counting did, or not counted (a flush) */
	op = who->op;
	if (op >= BIO_OPS)
		return 0;
	counts = bpf_map_lookup_elem(&processes, &who->tgid);
	if (counts)
		__sync_fetch_and_add(&counts->bytes[op], nr_bytes);
	else
		__sync_fetch_and_add(&unattributed_bytes, nr_bytes);
	if (nr_bytes >= rq->__data_len) { /* __data_len: what was left before this part */
		if (counts)
			__sync_fetch_and_add(&counts->requests[op], 1);
		bpf_map_delete_elem(&in_flight, &key);
	}
	return 0;
}
