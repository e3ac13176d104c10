/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * blocked.bpf.c: how many threads sleep uninterruptibly (D) right now, the sum of every CPU's
 * runqueue nr_uninterruptible (what the load average counts them by), and the pages dirty and
 * under writeback (/proc/vmstat's nr_dirty and nr_writeback), for the reader that runs it
 * (BPF_PROG_TEST_RUN): a look that costs a system call, where a walk of every thread costs one
 * a thread and /proc/vmstat some two hundred counters printed and parsed. Idle kernel threads
 * (TASK_NOLOAD, /proc's I) are not counted, as they are not D.
 *
 * The runqueues are reached through the reader's task group, which has a CFS runqueue on every
 * possible CPU, each pointing to its CPU's runqueue (CONFIG_FAIR_GROUP_SCHED): the runqueues
 * variable itself has no address a program can take where kallsyms lists no data
 * (CONFIG_KALLSYMS_ALL off).
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

#define CPUS_MAX 8192
#define NODES_MAX 1024 /* MAX_NUMNODES of NODES_SHIFT 10 */
#define DEPTH_MAX 64   /* cgroups above the reader's */

const volatile __u32 cpus = 0;   /* the highest possible CPU's number + 1 (nr_cpu_ids), set by the reader */
const volatile __u32 nodes = 0;  /* ... possible NUMA node's (nr_node_ids) */
__u64 memory_nodes[NODES_MAX / 64]; /* the nodes with memory, a bit each, kept by the reader: each must be found */
__s64 blocked;                   /* the last run's sum */
__s64 dirty, writeback;          /* ... pages (-1: not known) */

/*
 * The pages dirty and under writeback, every node's (pglist_data's vm_stat, whose sum is what
 * /proc/vmstat prints). The nodes are reached through the root memory cgroup's per-node LRU
 * lists, each pointing to its node once a page of the node has been on it: a node with memory
 * not found so (one just added, say) leaves the counts unknown. A node without memory has none.
 */
static void count_pages(struct task_struct *task)
{
	struct cgroup_subsys_state *css, *parent;
	__s64 sums[2] = { 0, 0 };
	int id, items[2];
	__u32 summed = 0;
	void *memcg;

	if (!bpf_core_enum_value_exists(enum cgroup_subsys_id, memory_cgrp_id) ||
	    !bpf_core_field_exists(struct lruvec, pgdat) ||
	    !bpf_core_enum_value_exists(enum node_stat_item, NR_FILE_DIRTY))
		return;
	id = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
	items[0] = bpf_core_enum_value(enum node_stat_item, NR_FILE_DIRTY);
	items[1] = bpf_core_enum_value(enum node_stat_item, NR_WRITEBACK);
	css = BPF_CORE_READ(task, cgroups, subsys[id]);
	for (int depth = 0; css && depth < DEPTH_MAX; depth++) {
		if (!(parent = BPF_CORE_READ(css, parent)))
			break;
		css = parent;
	}
	if (!css)
		return;
	memcg = (void *)css - bpf_core_field_offset(struct mem_cgroup, css);
	for (__u32 node = 0; node < nodes && node < NODES_MAX; node++) {
		struct mem_cgroup_per_node *per_node = NULL;
		struct pglist_data *pgdat;
		void *stats;

		if (!(memory_nodes[(node / 64) % (NODES_MAX / 64)] & (1ull << (node % 64))))
			continue;
		if (bpf_probe_read_kernel(&per_node, sizeof(per_node),
					  memcg + bpf_core_field_offset(struct mem_cgroup, nodeinfo) +
						  node * sizeof(per_node)) != 0)
			return;
		if (!per_node || !(pgdat = BPF_CORE_READ(per_node, lruvec.pgdat)))
			return;
		stats = (void *)pgdat + bpf_core_field_offset(struct pglist_data, vm_stat);
		for (int i = 0; i < 2; i++) {
			__s64 value = 0;

			if (bpf_probe_read_kernel(&value, sizeof(value), stats + items[i] * sizeof(value)) != 0)
				return;
			sums[i] += value;
		}
		summed++;
	}
	if (!summed)
		return;
	/* (a count read while per-CPU deltas are folded in may be a moment below 0: 0, as /proc says) */
	dirty = sums[0] > 0 ? sums[0] : 0;
	writeback = sums[1] > 0 ? sums[1] : 0;
}

SEC("raw_tp")
int count_blocked(void *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct cfs_rq **per_cpu;
	__u64 sum = 0; /* modulo 2^64 (2^32 for a 4-byte count): one CPU's may be far below 0, another's above */

	dirty = writeback = -1;
	count_pages(task);
	if (!bpf_core_field_exists(task->sched_task_group) || !bpf_core_field_exists(struct cfs_rq, rq))
		return 2;
	per_cpu = BPF_CORE_READ(task, sched_task_group, cfs_rq);
	if (!per_cpu)
		return 1;
	for (__u32 cpu = 0; cpu < cpus && cpu < CPUS_MAX; cpu++) {
		struct cfs_rq *cfs = NULL;
		struct rq *rq;
		__u64 value = 0;

		if (bpf_probe_read_kernel(&cfs, sizeof(cfs), &per_cpu[cpu]) != 0)
			return 1;
		if (!cfs)
			continue; /* not a possible CPU: a hole in their numbers */
		rq = BPF_CORE_READ(cfs, rq);
		/* its size as this kernel has it (unsigned long; an int in others) */
		if (!rq || bpf_probe_read_kernel(&value, bpf_core_field_size(rq->nr_uninterruptible),
						 &rq->nr_uninterruptible) != 0)
			return 1;
		sum += value;
	}
	/* the total, signed once: what the kernel's nr_uninterruptible() sums the same way */
	blocked = bpf_core_field_size(((struct rq *)0)->nr_uninterruptible) == 4 ? (__s64)(__s32)sum : (__s64)sum;
	return 0;
}
