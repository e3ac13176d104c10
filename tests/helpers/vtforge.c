/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vtforge.c: makes the vtrace segments a hostile local user could make, for tests of the readers. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "layout.h"
#include "proc.h"

/*
 * vtforge PATH [OPTION]...: writes a segment at PATH (which must not exist; a trailing %p is
 * our pid) by hand, as the calling user, with a header that is consistent with its size:
 *   --service NAME   the service in the header (default: forged)
 *   --ops N          ops (default 4), named OP0, OP1...
 *   --shards N       shards (default 1)
 *   --pid PID        the header's pid and start time are PID's (default: our own)
 *   --odd            every counter snapshot's seq kept odd: a writer forever in the middle of a change
 *   --sparse         the cells never written: holes (each shard's head says it is in use)
 *   --absurd         counters that cannot be: errors above completions, 10^19 in flight
 *   --hang           a request of OP0 in flight since an hour ago
 *   --half           never marked ready
 *   --legacy         without VT_FLAG_LOCKED (a libvtrace before the lock)
 *   --hold           keep it open for writing, with the lock, until stdin closes (prints "ready")
 * Without --sparse, every shard's head says it is in use (so readers read it); without --odd
 * either, every cell is written (zeros), as a writer's touched pages are.
 */
static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void put(int fd, const void *data, size_t size, uint64_t offset)
{
	if (pwrite(fd, data, size, (off_t)offset) != (ssize_t)size)
		die("vtforge: pwrite");
}

int main(int argc, char **argv)
{
	const char *path, *service = "forged";
	unsigned ops = 4, shards = 1;
	int pid = getpid(), odd = 0, sparse = 0, absurd = 0, hang = 0, half = 0, legacy = 0, hold = 0;
	struct vt_header h;
	struct vt_geometry g;
	uint64_t start_time = 0;
	int fd;

	if (argc < 2) {
		fprintf(stderr, "usage: vtforge PATH [--service NAME] [--ops N] [--shards N] [--pid PID] "
				"[--odd] [--sparse] [--absurd] [--hang] [--half] [--legacy] [--hold]\n");
		return 2;
	}
	path = argv[1];
	if (strlen(path) > 2 && !strcmp(path + strlen(path) - 2, "%p")) {
		static char named[4096];
		snprintf(named, sizeof(named), "%.*s%d", (int)strlen(path) - 2, path, (int)getpid());
		path = named;
	}
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--service") && v)
			service = argv[++i];
		else if (!strcmp(a, "--ops") && v)
			ops = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(a, "--shards") && v)
			shards = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(a, "--pid") && v)
			pid = atoi(argv[++i]);
		else if (!strcmp(a, "--odd"))
			odd = 1;
		else if (!strcmp(a, "--sparse"))
			sparse = 1;
		else if (!strcmp(a, "--absurd"))
			absurd = 1;
		else if (!strcmp(a, "--hang"))
			hang = 1;
		else if (!strcmp(a, "--half"))
			half = 1;
		else if (!strcmp(a, "--legacy"))
			legacy = 1;
		else if (!strcmp(a, "--hold"))
			hold = 1;
		else {
			fprintf(stderr, "vtforge: bad argument %s\n", a);
			return 2;
		}
	}
	if (!ops || !shards || ops > 100000 || shards > VT_MAX_SHARDS) {
		fprintf(stderr, "vtforge: bad ops or shards\n");
		return 2;
	}
	vtrace_proc_start_time("/proc", pid, &start_time);
	g = vt_geometry(ops, shards);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		die("vtforge: open");
	if (fchmod(fd, 0644) != 0 || ftruncate(fd, (off_t)g.segment_size) != 0)
		die("vtforge: size");
	if (hold && fcntl(fd, F_OFD_SETLK, &(struct flock){ .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_len = 1 }) != 0)
		die("vtforge: lock");

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, VT_MAGIC, sizeof(h.magic));
	h.version = VT_VERSION;
	h.header_size = sizeof(h);
	h.segment_size = g.segment_size;
	h.pid = pid;
	h.flags = legacy ? 0 : VT_FLAG_LOCKED;
	h.start_time = start_time;
	h.created_ns = h.heartbeat_ns = now_ns();
	h.clock_id = CLOCK_MONOTONIC;
	h.op_count = ops;
	h.shard_count = shards;
	h.slots = VT_SLOTS;
	h.histogram_buckets = VTRACE_HISTOGRAM_BUCKETS;
	h.tick_shift = VT_TICK_SHIFT;
	h.ops_offset = g.ops_offset;
	h.shared_offset = g.shared_offset;
	h.shards_offset = g.shards_offset;
	h.op_record_size = sizeof(struct vt_op_record);
	h.op_stats_size = sizeof(struct vt_op_stats);
	h.shard_size = g.shard_size;
	h.shards_used = 1;
	h.shard_claimed[0] = 1;
	snprintf(h.service, sizeof(h.service), "%s", service);
	for (unsigned i = 0; i < ops; i++) {
		struct vt_op_record r = { .number = -1 };
		snprintf(r.name, sizeof(r.name), "OP%u", i);
		put(fd, &r, sizeof(r), g.ops_offset + (uint64_t)i * sizeof(r));
	}
	for (unsigned s = 0; s <= shards; s++) {
		uint64_t shard = g.shards_offset + (uint64_t)s * g.shard_size;
		struct vt_shard_head head = { .begins = 1, .completions = 1, .owner = pid }; /* in use: read */
		put(fd, &head, sizeof(head), shard);
		for (unsigned i = 0; i < ops && !sparse; i++) {
			static struct vt_op_stats cell;
			uint64_t at = shard + vt_align(sizeof(head)) + (uint64_t)i * sizeof(cell);
			cell.seq = odd;
			if (odd) /* just the seq: the rest stays a hole */
				put(fd, &cell.seq, sizeof(cell.seq), at);
			else
				put(fd, &cell, sizeof(cell), at);
		}
	}
	if (absurd || hang) {
		uint64_t at = g.shards_offset + vt_align(sizeof(struct vt_shard_head));
		struct vt_shard_head head = { .begins = 1, .completions = 1, .owner = pid };
		struct vt_op_stats cell = { 0 };

		put(fd, &head, sizeof(head), g.shards_offset);
		if (absurd) {
			cell.begins = 10000000000000000000ull;
			cell.completions = 1;
			cell.errors = UINT64_MAX;
		}
		if (hang) {
			cell.begins++;
			cell.slot[0] = (now_ns() - 3600ull * 1000000000ull) | 1;
		}
		put(fd, &cell, sizeof(cell), at);
	}
	h.ready = !half;
	put(fd, &h, sizeof(h), 0);
	if (hold) {
		char buf[64];
		printf("ready %s\n", path);
		fflush(stdout);
		while (read(0, buf, sizeof(buf)) > 0)
			;
	}
	close(fd);
	return 0;
}
