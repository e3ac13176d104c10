/* cache_events.c: loads cache_events.bpf.c through its generated skeleton, and sums its per-cpu counters. */
#include "collect/cache_events.h"

#include <errno.h>
#include <stdlib.h>

#ifdef IOLENS_BPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include "cache_events.skel.h"

static struct cache_events_bpf *skeleton;

/* libbpf says much on stderr by default; the one message is ours. */
static int quiet(enum libbpf_print_level level, const char *format, va_list args)
{
	(void)level;
	(void)format;
	(void)args;
	return 0;
}

int cache_events_start(const char **why)
{
	int rc;

	if (skeleton)
		return 0;
	libbpf_set_print(quiet);
	skeleton = cache_events_bpf__open_and_load();
	if (!skeleton) {
		rc = -errno;
		*why = rc == -EPERM || rc == -EACCES ? "loading eBPF needs root (CAP_BPF and CAP_PERFMON)"
						     : "the kernel refused the eBPF program (BTF and the filemap tracepoints are needed)";
		return rc;
	}
	rc = cache_events_bpf__attach(skeleton);
	if (rc) {
		cache_events_bpf__destroy(skeleton);
		skeleton = NULL;
		*why = "cannot attach to the filemap tracepoints";
		return rc < 0 ? rc : -EINVAL;
	}
	return 0;
}

int cache_events_read(uint64_t *added, uint64_t *removed)
{
	int ncpu = libbpf_num_possible_cpus(), fd;
	uint64_t *values;

	if (!skeleton)
		return -ENOTCONN;
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
	*why = "this iolens was built without eBPF (libbpf, bpftool and the kernel's BTF at build time)";
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
