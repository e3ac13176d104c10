/* SPDX-License-Identifier: GPL-2.0-or-later */
/* task_iter.c: loads tasks.bpf.c's skeleton, and reads every thread from one run of its iterator. */
#include "collect/task_iter.h"
#include "collect/ebpf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect/sysroot.h"
#include "common/util.h"

#ifdef IOLENS_BPF
#include "collect/bpf_dl.h"
#include "collect/proc_io_rounds.h"

#include "bpf/tasks.h"
#include "blocked.skel.h"
#include "tasks.skel.h"

#include <linux/bpf.h>
#include <sys/syscall.h>

/* The kernel's task states, as fs/proc/array.c reports them (__task_state_index). */
#define TASK_REPORT_MASK 0x7f          /* running to parked, with the exit states */
#define TASK_IDLE_STATE 0x402          /* uninterruptible and no load: /proc says I */
#define TASK_RTLOCK_WAIT_STATE 0x1000  /* a PREEMPT_RT sleeping lock: /proc says D */

static struct tasks_bpf *skeleton;
static struct blocked_bpf *blocked; /* NULL when it did not load: the walk is never skipped */
static struct bpf_link *iter_link, *fds_link;
static struct ring_buffer *exits;
/* The ends drained from the ring buffer, for the run that takes them (handed over to it). */
static struct proc_io_sample *ended;
static size_t nended, ended_room;
static uint64_t tick_ns;

static int on_exit_row(void *context, void *data, size_t size)
{
	const struct exit_row *r = data;
	struct proc_io_sample *p;

	(void)context;
	if (size < sizeof(*r) || (pid_t)r->tgid == getpid())
		return 0;
	if (nended == ended_room)
		ended = xrealloc(ended, (ended_room = ended_room ? 2 * ended_room : 64) * sizeof(*ended));
	p = &ended[nended++];
	*p = (struct proc_io_sample){ .pid = (pid_t)r->tgid,
				      .ppid = (pid_t)r->ppid,
				      .start_time = r->start_ns / tick_ns,
				      .io = { .rchar = r->rchar,
					      .read_bytes = r->read_bytes,
					      .write_bytes = r->write_bytes },
				      .reap = r->autoreaped ? PROC_REAP_AUTO : PROC_REAP_PARENT };
	memcpy(p->comm, r->comm, sizeof(p->comm) - 1);
	return 0;
}

/*
 * A sysfs list of CPUs or nodes ("0-3", "0,2-5", "0"): the highest number + 1 in *end (NULL: not
 * wanted), as the kernel sizes its per-CPU or per-node arrays (nr_cpu_ids, nr_node_ids), and with
 * mask (words of 64 bits), which it lists (those past it left out); false when it cannot be read
 * or lists none.
 */
static bool read_id_list(const char *path, unsigned *end, uint64_t *mask, size_t words)
{
	char text[1024], *p = text, *next;
	ssize_t got = read_small_at(AT_FDCWD, path, text, sizeof(text));
	unsigned highest = 0;
	uint64_t bits[1024 / 64] = { 0 };

	if (got <= 0)
		return false;
	text[strcspn(text, "\n")] = '\0';
	while (*p) {
		long first = strtol(p, &next, 10), last = first;

		if (next == p || first < 0 || first >= 65536)
			return false;
		if (*next == '-' && ((last = strtol(p = next + 1, &next, 10)) < first || last >= 65536 || next == p))
			return false;
		if (*next && *next != ',')
			return false;
		highest = (unsigned)last + 1;
		for (long id = first; id <= last && id < 1024; id++)
			bits[id / 64] |= 1ull << (id % 64);
		p = *next ? next + 1 : next;
	}
	if (!highest)
		return false;
	if (end)
		*end = highest;
	if (mask)
		memcpy(mask, bits, (words < 1024 / 64 ? words : 1024 / 64) * sizeof(*mask));
	return true;
}

#define NODES_EVERY_NS 60000000000ull /* the nodes with memory looked at again (hot-added memory) */
static uint64_t nodes_read_ns;

/* The look's nodes with memory, as sysfs lists them now (no NUMA: its one node, 0). */
static void look_nodes(void)
{
	uint64_t *mask = (uint64_t *)blocked->bss->memory_nodes;
	size_t words = sizeof(blocked->bss->memory_nodes) / sizeof(*mask);

	if (!read_id_list("/sys/devices/system/node/has_memory", NULL, mask, words)) {
		memset(mask, 0, words * sizeof(*mask));
		mask[0] = 1;
	}
	nodes_read_ns = monotonic_ns();
}

/* The look's program loaded, with the CPUs and nodes it reads: NULL when it cannot be. */
static struct blocked_bpf *look_load(void)
{
	unsigned cpus, nodes = 1;
	struct blocked_bpf *look;
	struct task_iter_look first;
	const char *not_counted;

	if (!read_id_list("/sys/devices/system/cpu/possible", &cpus, NULL, 0) || !(look = blocked_bpf__open()))
		return NULL;
	/* (a kernel without NUMA has no node directory: its one node) */
	if (!read_id_list("/sys/devices/system/node/possible", &nodes, NULL, 0))
		nodes = 1;
	look->rodata->cpus = cpus;
	look->rodata->nodes = nodes;
	bpf_program__set_autoattach(look->progs.count_blocked, false); /* run by the reader */
	if (ebpf_load_attach(look->skeleton, &not_counted) != 0) {
		blocked_bpf__destroy(look);
		return NULL;
	}
	blocked = look;
	look_nodes();
	if (task_iter_look(&first) != 0 || (first.blocked < 0 && first.dirty < 0)) {
		blocked_bpf__destroy(look);
		blocked = NULL;
	}
	return blocked;
}

int task_iter_start(const char **why)
{
	int rc;

	if (skeleton)
		return 0;
	rc = ebpf_init(why);
	if (rc)
		return rc;
	skeleton = tasks_bpf__open();
	if (!skeleton)
		return ebpf_failed(NULL, "open", -EINVAL, why);
	skeleton->rodata->o_direct = O_DIRECT;
	bpf_program__set_autoattach(skeleton->progs.rows, false); /* run by the reader */
	bpf_program__set_autoattach(skeleton->progs.fds_direct, false);
	rc = ebpf_load_attach(skeleton->skeleton, why);
	if (!rc && (!(iter_link = bpf_program__attach_iter(skeleton->progs.rows, NULL)) ||
		    !(fds_link = bpf_program__attach_iter(skeleton->progs.fds_direct, NULL)) ||
		    !(exits = ring_buffer__new(bpf_map__fd(skeleton->maps.exits), on_exit_row, NULL, NULL))))
		rc = ebpf_failed(skeleton->obj, "attach", -ENOMEM, why);
	if (!rc) {
		long hz = sysconf(_SC_CLK_TCK);

		tick_ns = hz > 0 ? 1000000000ull / (uint64_t)hz : 10000000ull;
		/* Optional: a kernel without the runqueues or nodes in its BTF walks or reads /proc instead. */
		look_load();
	}
	if (rc)
		task_iter_stop();
	return rc;
}

/* The letter /proc/PID/stat shows for a task's state and exit state (__task_state_index). */
static char state_letter(uint32_t state, uint32_t exit_state)
{
	static const char letters[] = "RSDTtXZPI"; /* by the highest bit reported, none: R */
	uint32_t reported = (state | exit_state) & TASK_REPORT_MASK;
	unsigned index = 0;

	if ((state & TASK_IDLE_STATE) == TASK_IDLE_STATE)
		return 'I';
	if (state & TASK_RTLOCK_WAIT_STATE)
		return 'D';
	while (reported >> index)
		index++;
	return letters[index];
}

static int by_group(const void *a_, const void *b_)
{
	const struct task_row *a = a_, *b = b_;

	if (a->tgid != b->tgid)
		return (a->tgid > b->tgid) - (a->tgid < b->tgid);
	return (a->tid > b->tid) - (a->tid < b->tid);
}

/* The rows as threads and, summed by thread group, processes (rows sorted here). */
static void take_rows(struct task_iter *out, struct task_row *rows, size_t n)
{
	pid_t self = getpid();

	/* The iterator goes by thread id: a group's threads together, from their leader on. */
	qsort(rows, n, sizeof(*rows), by_group);

	out->threads = xcalloc(n ? n : 1, sizeof(*out->threads));
	out->procs = xcalloc(n ? n : 1, sizeof(*out->procs));
	for (size_t i = 0; i < n; i++) {
		const struct task_row *r = &rows[i];
		struct task_iter_thread *t = &out->threads[out->nthreads++];
		struct proc_io_sample *p = out->nprocs ? &out->procs[out->nprocs - 1] : NULL;

		t->pid = (pid_t)r->tgid;
		t->task = (struct proc_task){ .pid = (int)r->tid,
					      .state = state_letter(r->state, r->exit_state),
					      .ppid = (int)r->ppid,
					      .start_time = r->start_ns / tick_ns,
					      .vsize = PROCFS_UNKNOWN,
					      .rss = PROCFS_UNKNOWN,
					      .blkio_ticks = PROCFS_UNKNOWN };
		memcpy(t->task.comm, r->comm, sizeof(t->task.comm) - 1);
		if (!r->io_known || t->pid == self)
			continue;
		if (!p || p->pid != t->pid) {
			p = &out->procs[out->nprocs++];
			*p = (struct proc_io_sample){ .pid = t->pid, .ppid = (pid_t)r->ppid,
						      .start_time = t->task.start_time };
			memcpy(p->comm, r->leader_comm, sizeof(p->comm) - 1);
		}
		p->io.rchar += r->rchar;
		p->io.read_bytes += r->read_bytes;
		p->io.write_bytes += r->write_bytes;
	}
}

/* One run of an iterator: its whole output in *out (to free), *used bytes of it; 0 or -errno. */
static int run_iterator(struct bpf_link *link, void **out, size_t *used)
{
	size_t size = 0;
	ssize_t got;
	int fd, rc = 0;

	*out = NULL;
	*used = 0;
	if (!link)
		return -ENOTCONN;
	if ((fd = bpf_iter_create(bpf_link__fd(link))) < 0)
		return -errno;
	do { /* whole rows, however read() cuts them */
		if (size - *used < 8192)
			*out = xrealloc(*out, (size = size ? 2 * size : 32768));
		got = read(fd, (char *)*out + *used, size - *used);
		/* EAGAIN: a million objects went by with nothing written (the kernel's bound a read) */
		if (got < 0 && errno != EINTR && errno != EAGAIN)
			rc = -errno;
		else if (got > 0)
			*used += (size_t)got;
	} while (!rc && got != 0);
	close(fd);
	/* Ids of another pid namespace than this process's are not /proc's. */
	if (!rc && skeleton->bss->reader_tgid != (uint32_t)getpid())
		rc = -EXDEV;
	return rc;
}

/* The processes that ended since the last drain, by pid, with whether the ring buffer lost some. */
static void take_exits(struct task_iter *out)
{
	uint64_t lost = __atomic_load_n(&skeleton->bss->exits_lost, __ATOMIC_RELAXED);
	static uint64_t lost_seen;

	if (ring_buffer__consume(exits) < 0)
		lost++; /* (not said: the rounds go on as without the ends) */
	out->exits = ended; /* handed over: the next drain begins another */
	out->nexits = proc_io_ends_sort(ended, nended);
	ended = NULL;
	nended = ended_room = 0;
	out->exits_lost = lost != lost_seen;
	lost_seen = lost;
}

static int read_rows(struct task_iter *out, bool only_blocked)
{
	void *rows;
	size_t used;
	int rc;

	*out = (struct task_iter){0};
	if (!skeleton)
		return -ENOTCONN;
	skeleton->bss->only_blocked = only_blocked;
	rc = run_iterator(iter_link, &rows, &used);
	skeleton->bss->only_blocked = 0;
	if (!rc) {
		take_rows(out, rows, used / sizeof(struct task_row));
		take_exits(out); /* after the rows: an end since is one of a process in them, kept for the next */
	}
	free(rows);
	return rc;
}

int task_iter_read(struct task_iter *out)
{
	return read_rows(out, false);
}

int task_iter_read_blocked(struct task_iter *out)
{
	return read_rows(out, true);
}

static int by_pid_fd(const void *a_, const void *b_)
{
	const struct task_iter_fd *a = a_, *b = b_;

	if (a->pid != b->pid)
		return (a->pid > b->pid) - (a->pid < b->pid);
	return (a->fd > b->fd) - (a->fd < b->fd);
}

int task_iter_direct_fds(struct task_iter_fd **out, size_t *n)
{
	struct direct_fd_row *rows;
	size_t used;
	int rc = run_iterator(fds_link, (void **)&rows, &used);

	*out = NULL;
	*n = 0;
	if (!rc) {
		*n = used / sizeof(*rows);
		*out = xcalloc(*n ? *n : 1, sizeof(**out));
		for (size_t i = 0; i < *n; i++)
			(*out)[i] = (struct task_iter_fd){ (pid_t)rows[i].tgid, rows[i].fd };
		/* By process (a thread with a descriptor table of its own comes apart), each fd once. */
		size_t kept = 0;

		qsort(*out, *n, sizeof(**out), by_pid_fd);
		for (size_t i = 0; i < *n; i++)
			if (!kept || by_pid_fd(&(*out)[kept - 1], &(*out)[i]))
				(*out)[kept++] = (*out)[i];
		*n = kept;
	}
	free(rows);
	return rc;
}

int task_iter_look(struct task_iter_look *out)
{
	union bpf_attr attr;

	*out = (struct task_iter_look){ .blocked = -ENOSYS, .dirty = -1, .writeback = -1 };
	if (!blocked)
		return -ENOSYS;
	if (monotonic_ns() - nodes_read_ns >= NODES_EVERY_NS)
		look_nodes();
	memset(&attr, 0, sizeof(attr));
	attr.test.prog_fd = (uint32_t)bpf_program__fd(blocked->progs.count_blocked);
	if (syscall(SYS_bpf, BPF_PROG_TEST_RUN, &attr, sizeof(attr)) != 0)
		return -errno;
	/* 2: no task groups in this kernel; 1: a runqueue could not be read */
	if (attr.test.retval != 0)
		out->blocked = attr.test.retval == 2 ? -ENOSYS : -EFAULT;
	else
		out->blocked = blocked->bss->blocked > 0 ? (long)blocked->bss->blocked : 0;
	if (blocked->bss->dirty >= 0 && blocked->bss->writeback >= 0) {
		out->dirty = blocked->bss->dirty;
		out->writeback = blocked->bss->writeback;
	}
	return 0;
}

long task_iter_blocked(void)
{
	struct task_iter_look look;
	int rc = task_iter_look(&look);

	return rc ? rc : look.blocked;
}

void task_iter_stop(void)
{
	if (blocked)
		blocked_bpf__destroy(blocked);
	blocked = NULL;
	if (exits)
		ring_buffer__free(exits);
	exits = NULL;
	free(ended);
	ended = NULL;
	nended = ended_room = 0;
	if (iter_link) /* libbpf may not be loaded when nothing was started */
		bpf_link__destroy(iter_link);
	if (fds_link)
		bpf_link__destroy(fds_link);
	iter_link = fds_link = NULL;
	if (skeleton)
		tasks_bpf__destroy(skeleton);
	skeleton = NULL;
}

#else /* built without eBPF */

int task_iter_start(const char **why)
{
	*why = ebpf_why(NULL, -ENOSYS, "build");
	return -ENOSYS;
}

int task_iter_read(struct task_iter *out)
{
	*out = (struct task_iter){0};
	return -ENOSYS;
}

int task_iter_read_blocked(struct task_iter *out)
{
	return task_iter_read(out);
}

int task_iter_direct_fds(struct task_iter_fd **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	return -ENOSYS;
}

int task_iter_look(struct task_iter_look *out)
{
	*out = (struct task_iter_look){ .blocked = -ENOSYS, .dirty = -1, .writeback = -1 };
	return -ENOSYS;
}

long task_iter_blocked(void)
{
	return -ENOSYS;
}

void task_iter_stop(void)
{
}

#endif

void task_iter_free(struct task_iter *it)
{
	free(it->threads);
	free(it->procs);
	free(it->exits);
	*it = (struct task_iter){0};
}
