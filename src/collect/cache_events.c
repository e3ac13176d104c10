/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cache_events.c: loads cache_events.bpf.c through its generated skeleton, and sums its per-cpu counters. */
#include "collect/cache_events.h"
#include "collect/ebpf.h"

#include <errno.h>
#include <stdlib.h>

#ifdef IOLENS_BPF
#include "collect/bpf_dl.h"
#include <unistd.h>

#include "cache_events.skel.h"

static struct cache_events_bpf *skeleton;

int cache_events_start(const char **why)
{
	int rc;

	if (skeleton)
		return 0;
	rc = ebpf_init(why);
	if (rc)
		return rc;
	skeleton = cache_events_bpf__open();
	if (!skeleton)
		return ebpf_failed(NULL, "open", -EINVAL, why);
	rc = ebpf_load_attach(skeleton->skeleton, why);
	if (rc) {
		cache_events_bpf__destroy(skeleton);
		skeleton = NULL;
		return rc;
	}
	return 0;
}

int cache_events_read(uint64_t *added, uint64_t *removed)
{
	uint64_t *values;
	int ncpu, fd;

	if (!skeleton)
		return -ENOTCONN;
	ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0)
		return -EINVAL;
	values = calloc((size_t)ncpu, sizeof(*values));
	if (!values)
		return -ENOMEM;
	fd = bpf_map__fd(skeleton->maps.counts);
	*added = *removed = 0;
	for (__u32 key = 0; key < 2; key++) {
		if (bpf_map_lookup_elem(fd, &key, values) != 0) {
			int rc = -errno;
			free(values);
			return rc;
		}
		for (int cpu = 0; cpu < ncpu; cpu++)
			*(key ? removed : added) += values[cpu];
	}
	free(values);
	return 0;
}

void cache_events_stop(void)
{
	if (skeleton)
		cache_events_bpf__destroy(skeleton);
	skeleton = NULL;
}

#else /* built without eBPF */

int cache_events_start(const char **why)
{
	*why = ebpf_why(NULL, -ENOSYS, "build");
	return -ENOSYS;
}

int cache_events_read(uint64_t *added, uint64_t *removed)
{
	(void)added;
	(void)removed;
	return -ENOSYS;
}

void cache_events_stop(void)
{
}

#endif
