/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tasks.bpf.c: every thread's state and I/O counters, written by a task iterator that the reader
 * runs: what /proc/PID/task/TID/stat and /proc/PID/io say, in one read() instead of a file a thread;
 * and the files processes have open with O_DIRECT, instead of every /proc/PID/fdinfo/FD.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "tasks.h"

char LICENSE[] SEC("license") = "GPL";

/* O_DIRECT on this architecture, as the reader was built for it. */
const volatile __u32 o_direct = 0;
#define MODE_TYPE 0170000
#define MODE_REGULAR 0100000
#define MODE_BLOCK 0060000

/* The processes that ended, with their counts as they ended (exited). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} exits SEC(".maps");

__u64 exits_lost; /* ends the ring buffer had no room for, or of processes with too many threads */

/* The reader's thread group in the kernel's pid numbers: the rows' ids are /proc's only when it is getpid(). */
__u32 reader_tgid;

/*
 * Set by the reader for a run: rows only of threads in uninterruptible sleep (D, and idle I), or
 * waiting for an rtlock (PREEMPT_RT's sleeping spinlocks, which /proc shows as D too).
 */
__u32 only_blocked;

#define TASK_BLOCKED_BITS (0x2 | 0x1000) /* TASK_UNINTERRUPTIBLE, TASK_RTLOCK_WAIT */
#define SIGCHLD_NR 17           /* x86, arm64, riscv, powerpc, s390 (the generic numbers) */
#define SA_NOCLDWAIT_FLAG 2     /* the same */

/* Before Linux 5.14 a task's state was `state`. */
struct task_struct___state {
	long state;
} __attribute__((preserve_access_index));

/*
 * The iterator's task is a BTF pointer: its fields, and those of the tasks and signal it points
 * to, are read by plain loads (each a faulting load the verifier allows), not a helper call each.
 */
SEC("iter/task")
int rows(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task, *leader;
	struct task_row row = {};

	reader_tgid = bpf_get_current_pid_tgid() >> 32; /* run at the end too, with no task */
	if (!task)
		return 0;
	leader = task->group_leader;
	row.tgid = task->tgid;
	row.tid = task->pid;
	row.ppid = task->real_parent->tgid;
	if (bpf_core_field_exists(task->__state))
		row.state = task->__state;
	else
		row.state = ((struct task_struct___state *)task)->state;
	row.exit_state = task->exit_state;
	if (only_blocked && !(row.state & TASK_BLOCKED_BITS))
		return 0;
	row.start_ns = leader->start_boottime;
	/* The kernel's I/O accounting (CONFIG_TASK_XACCT and CONFIG_TASK_IO_ACCOUNTING), as /proc/PID/io sums it. */
	if (bpf_core_field_exists(task->ioac) && bpf_core_field_exists(task->ioac.read_bytes)) {
		row.io_known = 1;
		row.rchar = task->ioac.rchar;
		row.read_bytes = task->ioac.read_bytes;
		row.write_bytes = task->ioac.write_bytes;
		if (task == leader) { /* the group's threads that ended, and its reaped children */
			row.rchar += task->signal->ioac.rchar;
			row.read_bytes += task->signal->ioac.read_bytes;
			row.write_bytes += task->signal->ioac.write_bytes;
		}
	}
	BPF_CORE_READ_STR_INTO(&row.comm, task, comm);
	if (task == leader)
		__builtin_memcpy(row.leader_comm, row.comm, sizeof(row.comm));
	else
		BPF_CORE_READ_STR_INTO(&row.leader_comm, leader, comm);
	bpf_seq_write(ctx->meta->seq, &row, sizeof(row));
	return 0;
}

/*
 * The most threads a process's end adds up (each costs the verifier a pass at load); one with
 * more is counted as an end lost, which the reader takes to mean rounds at every sample.
 */
#define END_THREADS_MAX 256

/*
 * A process ends: its last thread's exit (the group's live count at 0). Its counts as
 * /proc/PID/io says them: the group's signal counts (its released threads', its reaped
 * children's) and those of every thread still on its list, as do_io_accounting adds them. A
 * thread that exited a moment before is on the list until it is released, when its counts go
 * to the signal's: in one place or the other (both under the siglock, which this does not take:
 * a release at the same instant may be missed or counted twice, as a read of /proc/PID/io
 * unlocked would).
 */
SEC("tp_btf/sched_process_exit")
int BPF_PROG(exited, struct task_struct *task)
{
	struct task_struct *leader = task->group_leader;
	struct signal_struct *signal = task->signal;
	struct list_head *head = &signal->thread_head, *node;
	unsigned long offset = bpf_core_field_offset(struct task_struct, thread_node);
	struct exit_row *row;
	int n;

	if (!bpf_core_field_exists(task->ioac) || !bpf_core_field_exists(task->ioac.read_bytes) ||
	    signal->live.counter != 0)
		return 0;
	row = bpf_ringbuf_reserve(&exits, sizeof(*row), 0);
	if (!row) {
		__sync_fetch_and_add(&exits_lost, 1);
		return 0;
	}
	row->tgid = task->tgid;
	row->ppid = task->real_parent->tgid;
	row->start_ns = leader->start_boottime;
	row->rchar = signal->ioac.rchar;
	row->read_bytes = signal->ioac.read_bytes;
	row->write_bytes = signal->ioac.write_bytes;
	node = BPF_CORE_READ(head, next);
	for (n = 0; n < END_THREADS_MAX && node && node != head; n++) {
		struct task_struct *t = (struct task_struct *)((char *)node - offset);

		row->rchar += BPF_CORE_READ(t, ioac.rchar);
		row->read_bytes += BPF_CORE_READ(t, ioac.read_bytes);
		row->write_bytes += BPF_CORE_READ(t, ioac.write_bytes);
		node = BPF_CORE_READ(node, next);
	}
	if (node != head) { /* too many threads (or a list read in flux): the rounds count it */
		bpf_ringbuf_discard(row, 0);
		__sync_fetch_and_add(&exits_lost, 1);
		return 0;
	}
	BPF_CORE_READ_STR_INTO(&row->comm, leader, comm);
	/* As exit_notify will judge it (do_notify_parent), the parent's handler being read now. */
	{
		struct sighand_struct *hand = BPF_CORE_READ(task, real_parent, sighand);
		struct k_sigaction *chld = hand ? &hand->action[SIGCHLD_NR - 1] : NULL;

		row->autoreaped = chld && ((unsigned long)BPF_CORE_READ(chld, sa.sa_handler) == 1 /* SIG_IGN */ ||
					   (BPF_CORE_READ(chld, sa.sa_flags) & SA_NOCLDWAIT_FLAG));
		row->unused = 0;
	}
	bpf_ringbuf_submit(row, 0);
	return 0;
}

/* Each file open with O_DIRECT, regular or a block device (what fdinfo's flags and the fd's type say). */
SEC("iter/task_file")
int fds_direct(struct bpf_iter__task_file *ctx)
{
	struct file *file = ctx->file;
	struct task_struct *task = ctx->task;
	struct direct_fd_row row;
	unsigned mode;

	reader_tgid = bpf_get_current_pid_tgid() >> 32;
	if (!file || !task || !(BPF_CORE_READ(file, f_flags) & o_direct))
		return 0;
	mode = BPF_CORE_READ(file, f_inode, i_mode) & MODE_TYPE;
	if (mode != MODE_REGULAR && mode != MODE_BLOCK)
		return 0;
	row.tgid = BPF_CORE_READ(task, tgid);
	row.fd = (__s32)ctx->fd;
	bpf_seq_write(ctx->meta->seq, &row, sizeof(row));
	return 0;
}
