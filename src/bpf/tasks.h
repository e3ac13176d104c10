/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tasks.h: what tasks.bpf.c's iterators write, read by collect/task_iter.c. */
#ifndef IOLENS_BPF_TASKS_H
#define IOLENS_BPF_TASKS_H

struct task_row {
	__u32 tgid, tid, ppid; /* ppid: the thread group's real parent, which a reaped child's counts go to */
	__u32 state;           /* task->__state (state before Linux 5.14) */
	__u64 start_ns;        /* the thread group leader's start_boottime */
	__u64 rchar, read_bytes, write_bytes; /* the thread's ioac; the leader's row adds the group's signal->ioac */
	__u32 exit_state;      /* task->exit_state: a zombie's or a dead task's */
	__u8 io_known;         /* the kernel keeps them (CONFIG_TASK_XACCT, CONFIG_TASK_IO_ACCOUNTING) */
	__u8 pad[3];
	char comm[16];         /* the thread's */
	char leader_comm[16];  /* its thread group leader's: /proc/PID/stat's */
};

/* A process that ended (its last thread's exit), as exited writes it: its /proc/PID/io as it ended. */
struct exit_row {
	__u32 tgid, ppid;      /* ppid: its real parent as it ended, which its counts go to when it reaps it */
	__u64 start_ns;        /* its leader's start_boottime */
	__u64 rchar, read_bytes, write_bytes;
	char comm[16];         /* its leader's */
	__u32 autoreaped;      /* its parent ignores SIGCHLD (or SA_NOCLDWAIT): no one takes its counts */
	__u32 unused;
};

/* A file a process has open with O_DIRECT (a regular file or a block device), as fds_direct writes it. */
struct direct_fd_row {
	__u32 tgid;
	__s32 fd;
};

#endif
