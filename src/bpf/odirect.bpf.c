/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * odirect.bpf.c: files opened with O_DIRECT (open, openat, openat2, io_uring's openat) or given it
 * by fcntl(F_SETFL), as it happens, from the raw syscall and io_uring tracepoints.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "compat.h"
#include "odirect.h"

char LICENSE[] SEC("license") = "GPL";

/*
 * Set before loading, from the collector's own headers: the system call numbers and the
 * O_DIRECT bit differ between architectures (arm64's O_DIRECT is x86's O_DIRECTORY). -1: no
 * such call here (arm64 has no open).
 */
const volatile __s64 nr_open = -1, nr_openat = -1, nr_openat2 = -1, nr_fcntl = -1;
const volatile __u64 o_direct = 040000;
const volatile __u64 f_setfl = 4;
const volatile __u32 self_tgid = 0; /* the collector's process: not reported */

#define AT_FDCWD_VALUE -100
#define MODE_TYPE 0170000
#define MODE_REGULAR 0100000
#define MODE_BLOCK 0060000

/* A call with O_DIRECT under way: what its enter saw, for its exit (the thread's own, freed with it). */
struct call_state {
	__u64 path;   /* the user's pointer to the path */
	__s32 fd, dirfd;
	__u32 call;   /* enum odirect_call; ODIRECT_NONE between calls */
};

THREAD_STORAGE(calls, struct call_state);

/* How many O_DIRECT opens of each file each process made; the first one is an event. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, ODIRECT_MAX_FILES);
	__type(key, struct odirect_key);
	__type(value, __u64);
} opens SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

__u64 lost; /* first opens the ring buffer had no room for */

/*
 * tp_btf: attached by BTF id, no tracefs needed. Every system call passes here: anything but
 * the four calls returns at the first comparison.
 */
SEC("tp_btf/sys_enter")
int BPF_PROG(on_enter, struct pt_regs *regs, long id)
{
	struct call_state *state;
	__u64 flags = 0, path = 0;
	__s32 fd = -1, dirfd = AT_FDCWD_VALUE;
	__u32 call;

	if (id == nr_openat) {
		call = ODIRECT_OPENAT;
		dirfd = (__s32)PT_REGS_PARM1_CORE_SYSCALL(regs);
		path = PT_REGS_PARM2_CORE_SYSCALL(regs);
		flags = PT_REGS_PARM3_CORE_SYSCALL(regs);
	} else if (id == nr_open) {
		call = ODIRECT_OPEN;
		path = PT_REGS_PARM1_CORE_SYSCALL(regs);
		flags = PT_REGS_PARM2_CORE_SYSCALL(regs);
	} else if (id == nr_openat2) {
		struct open_how *how = (struct open_how *)PT_REGS_PARM3_CORE_SYSCALL(regs);

		call = ODIRECT_OPENAT2;
		dirfd = (__s32)PT_REGS_PARM1_CORE_SYSCALL(regs);
		path = PT_REGS_PARM2_CORE_SYSCALL(regs);
		if (bpf_probe_read_user(&flags, sizeof(flags), &how->flags) != 0)
			return 0;
	} else if (id == nr_fcntl) {
		if (PT_REGS_PARM2_CORE_SYSCALL(regs) != f_setfl)
			return 0;
		call = ODIRECT_FCNTL;
		fd = (__s32)PT_REGS_PARM1_CORE_SYSCALL(regs);
		flags = PT_REGS_PARM3_CORE_SYSCALL(regs);
	} else {
		return 0;
	}
	if (!(flags & o_direct) || bpf_get_current_pid_tgid() >> 32 == self_tgid)
		return 0;
	state = thread_storage(&calls, &calls_empty, true);
	if (!state)
		return 0;
	state->path = path;
	state->fd = fd;
	state->dirfd = dirfd;
	state->call = call;
	return 0;
}

/* The file open at descriptor fd of the current process, or NULL. */
static __always_inline struct file *file_at(__s32 fd)
{
	struct task_struct *task = current_task();
	struct fdtable *table = BPF_CORE_READ(task, files, fdt);
	struct file **files;
	struct file *file = NULL;

	if (!table || fd < 0 || (__u32)fd >= BPF_CORE_READ(table, max_fds))
		return NULL;
	files = BPF_CORE_READ(table, fd);
	bpf_probe_read_kernel(&file, sizeof(file), &files[fd]);
	return file;
}

/* The system call a thread returns from, where pt_regs keeps it; -1 elsewhere (then the thread's state tells). */
static __always_inline long syscall_of(struct pt_regs *regs)
{
#if defined(__TARGET_ARCH_x86)
	return regs->orig_ax;
#elif defined(__TARGET_ARCH_arm64)
	return regs->syscallno;
#else
	return -1;
#endif
}

/*
 * The file now open at fd, when it has O_DIRECT: counted, and reported at its first open by this
 * process. path: the user's pointer to the path it passed; name_only: none, the file's own name.
 */
static __always_inline int report_open(__s32 fd, __u32 call, __s32 dirfd, __u64 path, bool name_only)
{
	struct odirect_key key = {};
	struct odirect_event *event;
	struct inode *inode;
	struct file *file;
	__u64 *count, one = 1;
	__u32 flags, mode;

	file = file_at(fd);
	if (!file)
		return 0;
	flags = BPF_CORE_READ(file, f_flags);
	inode = BPF_CORE_READ(file, f_inode);
	mode = BPF_CORE_READ(inode, i_mode) & MODE_TYPE;
	/* A filesystem may refuse O_DIRECT quietly; directories, pipes and sockets have no cache to bypass. */
	if (!(flags & o_direct) || !inode || (mode != MODE_REGULAR && mode != MODE_BLOCK))
		return 0;
	key.tgid = bpf_get_current_pid_tgid() >> 32;
	if (mode == MODE_BLOCK) {
		key.dev = BPF_CORE_READ(inode, i_rdev);
	} else {
		key.dev = BPF_CORE_READ(inode, i_sb, s_dev);
		key.ino = BPF_CORE_READ(inode, i_ino);
	}
	count = bpf_map_lookup_elem(&opens, &key);
	if (count) {
		__sync_fetch_and_add(count, 1);
		return 0;
	}
	if (bpf_map_update_elem(&opens, &key, &one, BPF_NOEXIST) != 0)
		return 0; /* another thread's first open, a moment ago */
	event = bpf_ringbuf_reserve(&events, sizeof(*event), 0);
	if (!event) {
		__sync_fetch_and_add(&lost, 1);
		return 0;
	}
	event->ns = bpf_ktime_get_ns();
	event->tgid = key.tgid;
	event->tid = (__u32)bpf_get_current_pid_tgid();
	event->dev = key.dev;
	event->ino = key.ino;
	event->flags = flags;
	event->fd = fd;
	event->dirfd = dirfd;
	event->call = call;
	event->block = mode == MODE_BLOCK;
	/* the process's name (an io_uring worker's own is iou-wrk-PID) */
	BPF_CORE_READ_STR_INTO(&event->comm, current_task(), group_leader, comm);
	event->path[0] = '\0';
	event->name_only = name_only;
	if (name_only) /* the file's name at least, for when its descriptor is closed before it is looked at */
		bpf_probe_read_kernel_str(event->path, sizeof(event->path),
					  BPF_CORE_READ(file, f_path.dentry, d_name.name));
	else if (bpf_probe_read_user_str(event->path, sizeof(event->path), (void *)path) < 0)
		event->path[0] = '\0';
	bpf_ringbuf_submit(event, 0);
	return 0;
}

/* The calls that asked for O_DIRECT, once they succeeded: the file as it is open now. */
SEC("tp_btf/sys_exit")
int BPF_PROG(on_exit, struct pt_regs *regs, long ret)
{
	long id = syscall_of(regs);
	struct call_state *state, call_state;
	__u32 call;
	__s32 fd;

	/* Every system call returns through here: the others go at once, without a look at the thread. */
	if (id != -1 && id != nr_openat && id != nr_open && id != nr_openat2 && id != nr_fcntl)
		return 0;
	state = thread_storage(&calls, &calls_empty, false);
	if (!state || state->call == ODIRECT_NONE)
		return 0;
	call_state = *state;
	call = state->call;
	state->call = ODIRECT_NONE;
	thread_storage_done(&calls, (__u32)bpf_get_current_pid_tgid());
	state = &call_state;
	if (ret < 0)
		return 0;
	fd = call == ODIRECT_FCNTL ? state->fd : (__s32)ret;
	return report_open(fd, call, state->dirfd, state->path, call == ODIRECT_FCNTL);
}

/*
 * io_uring's opens (IORING_OP_OPENAT, OPENAT2) make no system call of their own: seen as they
 * complete, in the submitter or in one of its io_uring workers (threads of its process, sharing
 * its descriptors), the file at the descriptor they return. Attached where the tracepoint passes
 * the request (Linux 5.18 and later: odirect.c looks at the BTF first); an open into a fixed
 * file slot has no descriptor and is not seen.
 */
SEC("tp_btf/io_uring_complete")
int BPF_PROG(on_uring_complete, void *ring, void *request)
{
	struct io_kiocb *req = request;
	struct io_open *open = request; /* io_kiocb_to_cmd: the request's command at its start */
	__u8 opcode = BPF_CORE_READ(req, opcode);
	__s32 res;

	if (opcode != IORING_OP_OPENAT && opcode != IORING_OP_OPENAT2)
		return 0;
	res = BPF_CORE_READ(req, cqe.res);
	if (res < 0 || BPF_CORE_READ(open, file_slot) || bpf_get_current_pid_tgid() >> 32 == self_tgid)
		return 0;
	return report_open(res, ODIRECT_URING, AT_FDCWD_VALUE, 0, true);
}
