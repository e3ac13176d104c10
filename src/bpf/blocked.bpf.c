/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * blocked.bpf.c: how many threads sleep uninterruptibly (D) right now, the sum of every CPU's
 * runqueue nr_uninterruptible (what the load average counts them by), for the reader that runs
 * it (BPF_PROG_TEST_RUN): a look that costs a system call, where a walk of every thread costs
 * one a thread. Idle kernel threads (TASK_NOLOAD, /proc's I) are not counted, as they are not D.
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

const volatile __u32 cpus = 0; /* the highest possible CPU's number + 1 (nr_cpu_ids), set by the reader */
__s64 blocked;                 /* the last run's sum */

SEC("raw_tp")
int count_blocked(void *ctx)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct cfs_rq **per_cpu;
	__u64 sum = 0; /* modulo 2^64 (2^32 for a 4-byte count): one CPU's may be far below 0, another's above */

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
