/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * odirect.c: loads odirect.bpf.c through its generated skeleton, and hands over the O_DIRECT opens
 * it reports as they come.
 */
#include "collect/odirect.h"
#include "collect/ebpf.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#include "common/util.h"

#ifdef IOLENS_BPF
#include "collect/bpf_dl.h"
#include <unistd.h>

#include "odirect.skel.h"
#include "odirect_compat.skel.h"

#ifndef SYS_openat2
#define SYS_openat2 437 /* the same number on every architecture */
#endif

EBPF_DEFINE_OPEN(odirect)

static struct odirect_bpf *skeleton;
static struct ring_buffer *events;
static odirect_fn callback;
static void *callback_context;

static const char *call_name(unsigned call)
{
	switch (call) {
	case ODIRECT_OPEN: return "open";
	case ODIRECT_OPENAT: return "openat";
	case ODIRECT_OPENAT2: return "openat2";
	case ODIRECT_FCNTL: return "fcntl";
	case ODIRECT_URING: return "io_uring";
	default: return "?";
	}
}

/* The kernel's dev_t is major << 20 | minor; userspace's is makedev's. */
static dev_t user_dev(uint32_t dev)
{
	return makedev(dev >> 20, dev & 0xfffff);
}

static int on_event(void *context, void *data, size_t size)
{
	const struct odirect_event *event = data;
	struct odirect_open open;

	(void)context;
	if (size < sizeof(*event))
		return 0;
	memset(&open, 0, sizeof(open));
	open.ns = event->ns;
	open.pid = (pid_t)event->tgid;
	open.tid = (pid_t)event->tid;
	open.fd = event->fd;
	open.dirfd = event->dirfd;
	open.flags = event->flags;
	open.call = call_name(event->call);
	open.block = event->block;
	open.name_only = event->name_only;
	open.dev = user_dev(event->dev);
	open.ino = event->ino;
	memcpy(open.comm, event->comm, sizeof(open.comm) - 1);
	memcpy(open.path, event->path, sizeof(open.path) - 1);
	callback(&open, callback_context);
	return 0;
}

/*
 * Whether io_uring's opens can be seen here: its io_uring_complete tracepoint passes the request
 * (after the ring: Linux 5.18 and later; before, the user's data, a number), and the request
 * keeps its completion (struct io_cqe) and the open its fixed slot (struct io_open), as the
 * program reads them.
 */
static bool uring_opens_seen(void)
{
	struct btf *vmlinux = btf__load_vmlinux_btf();
	bool seen = vmlinux && ebpf_tracepoint_arg_pointer(vmlinux, "io_uring_complete", 1) &&
		    btf__find_by_name_kind(vmlinux, "io_cqe", BTF_KIND_STRUCT) >= 0 &&
		    btf__find_by_name_kind(vmlinux, "io_open", BTF_KIND_STRUCT) >= 0 &&
		    btf__find_by_name_kind(vmlinux, "io_kiocb", BTF_KIND_STRUCT) >= 0;

	btf__free(vmlinux);
	return seen;
}

int odirect_start(odirect_fn fn, void *context, const char **why)
{
	int rc;

	if (skeleton) { /* already watching: the opens go to fn from now on */
		callback = fn;
		callback_context = context;
		return 0;
	}
	rc = ebpf_init(why);
	if (rc)
		return rc;
	skeleton = odirect_open(ebpf_compat(NULL));
	if (!skeleton)
		return ebpf_failed(NULL, "open", -EINVAL, why);
	/* This architecture's numbers, as this program was built for it. */
#ifdef SYS_open
	skeleton->rodata->nr_open = SYS_open;
#endif
	skeleton->rodata->nr_openat = SYS_openat;
	skeleton->rodata->nr_openat2 = SYS_openat2;
	skeleton->rodata->nr_fcntl = SYS_fcntl;
	skeleton->rodata->o_direct = O_DIRECT;
	skeleton->rodata->f_setfl = F_SETFL;
	skeleton->rodata->self_tgid = (__u32)getpid();
	bpf_program__set_autoload(skeleton->progs.on_uring_complete, uring_opens_seen());
	rc = ebpf_load_attach(skeleton->skeleton, why);
	if (!rc) {
		events = ring_buffer__new(bpf_map__fd(skeleton->maps.events), on_event, NULL, NULL);
		if (!events)
			rc = ebpf_failed(skeleton->obj, "ring buffer", -ENOMEM, why);
	}
	if (rc) {
		odirect_stop();
		return rc;
	}
	callback = fn;
	callback_context = context;
	return 0;
}

void odirect_wait(uint64_t deadline_ns, volatile sig_atomic_t *stop)
{
	uint64_t now;

	if (!events) {
		sleep_until_ns(deadline_ns, stop);
		return;
	}
	while (!(stop && *stop) && (now = monotonic_ns()) < deadline_ns) {
		uint64_t left_ms = (deadline_ns - now + 999999) / 1000000;

		/* -EINTR on a signal: the loop looks at stop again. One wake-up to the deadline. */
		ring_buffer__poll(events, left_ms > INT_MAX ? INT_MAX : (int)left_ms);
	}
}

void odirect_drain(void)
{
	if (events)
		ring_buffer__consume(events);
}

uint64_t odirect_opens(pid_t pid, dev_t dev, uint64_t ino)
{
	struct odirect_key key = { .tgid = (__u32)pid, .dev = major(dev) << 20 | minor(dev), .ino = ino };
	__u64 count = 0;

	if (!skeleton || bpf_map_lookup_elem(bpf_map__fd(skeleton->maps.opens), &key, &count) != 0)
		return 0;
	return count;
}

uint64_t odirect_lost(void)
{
	return skeleton && skeleton->bss ? skeleton->bss->lost : 0;
}

void odirect_forget(void)
{
	struct odirect_key key;
	int fd;

	if (!skeleton)
		return;
	fd = bpf_map__fd(skeleton->maps.opens);
	/* The first key, deleted, until none is left (a bound: opens made meanwhile could go on). */
	for (unsigned i = 0; i < 2 * ODIRECT_MAX_FILES && bpf_map_get_next_key(fd, NULL, &key) == 0; i++)
		if (bpf_map_delete_elem(fd, &key) != 0)
			break;
}

void odirect_stop(void)
{
	if (events) /* libbpf may not be loaded when nothing was started */
		ring_buffer__free(events);
	events = NULL;
	if (skeleton)
		odirect_bpf__destroy(skeleton);
	skeleton = NULL;
	callback = NULL;
}

#else /* built without eBPF */

int odirect_start(odirect_fn fn, void *context, const char **why)
{
	(void)fn;
	(void)context;
	*why = ebpf_why(NULL, -ENOSYS, "build");
	return -ENOSYS;
}

void odirect_wait(uint64_t deadline_ns, volatile sig_atomic_t *stop)
{
	sleep_until_ns(deadline_ns, stop);
}

void odirect_drain(void)
{
}

uint64_t odirect_opens(pid_t pid, dev_t dev, uint64_t ino)
{
	(void)pid;
	(void)dev;
	(void)ino;
	return 0;
}

uint64_t odirect_lost(void)
{
	return 0;
}

void odirect_forget(void)
{
}

void odirect_stop(void)
{
}

#endif
