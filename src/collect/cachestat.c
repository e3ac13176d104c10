/* cachestat.c: loads cachestat.bpf.c through its skeleton, and reads its totals, processes and files. */
#include "collect/cachestat.h"
#include "collect/ebpf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "common/util.h"

uint64_t cachestat_hits(const struct cache_counters *c)
{
	return c->hits;
}

void cachestat_delta(const struct cache_counters *a, const struct cache_counters *b, struct cache_counters *out)
{
#define D(f) out->f = b->f >= a->f ? b->f - a->f : 0
	D(reads);
	D(maps);
	D(misses);
	D(hits);
	D(write_misses);
	D(dirties);
	D(evictions);
	D(dropped);
#undef D
}

#ifdef IOLENS_BPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <unistd.h>

#include "cachestat.skel.h"

static struct cachestat_bpf *skeleton;
static struct bpf_link *flush_link;

/* Every thread's counts so far into the process and file tables: the flush iterator, run once. */
static void flush_threads(void)
{
	char buffer[64];
	int fd;

	if (!flush_link)
		return;
	fd = bpf_iter_create(bpf_link__fd(flush_link));
	if (fd < 0)
		return;
	while (read(fd, buffer, sizeof(buffer)) > 0)
		;
	close(fd);
}

int cachestat_start(const struct cachestat_options *options, const char **why)
{
	const char *step;
	int rc;

	if (skeleton)
		return 0;
	ebpf_quiet();
	skeleton = cachestat_bpf__open();
	if (!skeleton) {
		rc = errno ? -errno : -EINVAL;
		*why = ebpf_why(NULL, rc, "open");
		return rc;
	}
	skeleton->rodata->per_process = options->per_process;
	skeleton->rodata->per_file = options->per_file;
	skeleton->rodata->only_tgid = (__u32)options->only_pid;
	skeleton->rodata->nr_cpus = (__u32)(libbpf_num_possible_cpus() > 0 ? libbpf_num_possible_cpus() : 1);
	skeleton->rodata->page_shift = (__u32)__builtin_ctzll(page_size());
	/* The flush iterator is run by the reader, not attached to an event. */
	bpf_program__set_autoattach(skeleton->progs.flush, false);
	step = "load";
	rc = cachestat_bpf__load(skeleton);
	if (!rc) {
		step = "attach";
		rc = cachestat_bpf__attach(skeleton);
		if (!rc && (options->per_process || options->per_file)) {
			flush_link = bpf_program__attach_iter(skeleton->progs.flush, NULL);
			rc = flush_link ? 0 : -errno;
		}
	}
	if (rc) {
		rc = rc < 0 ? rc : -EINVAL;
		*why = ebpf_why(skeleton->obj, rc, step);
		bpf_link__destroy(flush_link);
		flush_link = NULL;
		cachestat_bpf__destroy(skeleton);
		skeleton = NULL;
		return rc;
	}
	return 0;
}

int cachestat_totals(struct cache_counters *out)
{
	int ncpu = libbpf_num_possible_cpus();
	struct cache_counters *values;
	__u32 key = 0;

	if (!skeleton)
		return -ENOTCONN;
	if (ncpu <= 0)
		return -EINVAL;
	values = xcalloc((size_t)ncpu, sizeof(*values));
	if (bpf_map_lookup_elem(bpf_map__fd(skeleton->maps.totals), &key, values) != 0) {
		int rc = -errno;

		free(values);
		return rc;
	}
	memset(out, 0, sizeof(*out));
	for (int cpu = 0; cpu < ncpu; cpu++) {
		out->reads += values[cpu].reads;
		out->maps += values[cpu].maps;
		out->misses += values[cpu].misses;
		out->hits += values[cpu].hits;
		out->write_misses += values[cpu].write_misses;
		out->dirties += values[cpu].dirties;
		out->evictions += values[cpu].evictions;
		out->dropped += values[cpu].dropped;
	}
	free(values);
	return 0;
}

/*
 * Every key first, then each taken with lookup-and-delete: what arrives meanwhile for a key
 * already taken starts a new entry, counted next time, never lost.
 */
static int take_all(int fd, size_t key_size, size_t value_size, void **keys_out, void **values_out, size_t *count)
{
	size_t capacity = 256, n = 0, taken = 0;
	char *keys = xcalloc(capacity, key_size), *values;
	void *previous = NULL;

	while (bpf_map_get_next_key(fd, previous, keys + n * key_size) == 0) {
		previous = keys + n * key_size;
		if (++n == capacity) {
			capacity *= 2;
			keys = xrealloc(keys, capacity * key_size);
			previous = keys + (n - 1) * key_size;
		}
	}
	values = xcalloc(n ? n : 1, value_size);
	for (size_t i = 0; i < n; i++) {
		if (bpf_map_lookup_and_delete_elem(fd, keys + i * key_size, values + taken * value_size) == 0) {
			if (taken != i)
				memcpy(keys + taken * key_size, keys + i * key_size, key_size);
			taken++;
		}
	}
	*keys_out = keys;
	*values_out = values;
	*count = taken;
	return 0;
}

int cachestat_take_procs(struct cachestat_proc **out, size_t *count)
{
	__u32 *pids;
	struct cache_proc *values;
	size_t n;

	if (!skeleton)
		return -ENOTCONN;
	flush_threads();
	take_all(bpf_map__fd(skeleton->maps.procs), sizeof(*pids), sizeof(*values), (void **)&pids, (void **)&values, &n);
	*out = xcalloc(n ? n : 1, sizeof(**out));
	for (size_t i = 0; i < n; i++) {
		(*out)[i].pid = pids[i];
		(*out)[i].uid = values[i].uid;
		(*out)[i].cgroup = values[i].cgroup;
		memcpy((*out)[i].comm, values[i].comm, sizeof((*out)[i].comm));
		(*out)[i].comm[sizeof((*out)[i].comm) - 1] = '\0';
		(*out)[i].counters = values[i].counters;
	}
	*count = n;
	free(pids);
	free(values);
	return 0;
}

int cachestat_take_files(struct cachestat_file **out, size_t *count)
{
	struct cache_file_key *keys;
	struct cache_counters *values;
	size_t n;

	if (!skeleton)
		return -ENOTCONN;
	flush_threads();
	take_all(bpf_map__fd(skeleton->maps.files), sizeof(*keys), sizeof(*values), (void **)&keys, (void **)&values, &n);
	*out = xcalloc(n ? n : 1, sizeof(**out));
	for (size_t i = 0; i < n; i++) {
		/* The kernel's dev_t is major << 20 | minor; userspace's is makedev's. */
		(*out)[i].dev = makedev(keys[i].dev >> 20, keys[i].dev & 0xfffff);
		(*out)[i].ino = keys[i].ino;
		(*out)[i].counters = values[i];
	}
	*count = n;
	free(keys);
	free(values);
	return 0;
}

void cachestat_stop(void)
{
	bpf_link__destroy(flush_link);
	flush_link = NULL;
	if (skeleton)
		cachestat_bpf__destroy(skeleton);
	skeleton = NULL;
}

#else /* built without eBPF */

int cachestat_start(const struct cachestat_options *options, const char **why)
{
	(void)options;
	*why = ebpf_why(NULL, -ENOSYS, "build");
	return -ENOSYS;
}

int cachestat_totals(struct cache_counters *out)
{
	(void)out;
	return -ENOSYS;
}

int cachestat_take_procs(struct cachestat_proc **out, size_t *count)
{
	*out = NULL;
	*count = 0;
	return -ENOSYS;
}

int cachestat_take_files(struct cachestat_file **out, size_t *count)
{
	*out = NULL;
	*count = 0;
	return -ENOSYS;
}

void cachestat_stop(void)
{
}

#endif
