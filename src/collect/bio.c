/* bio.c: loads bio.bpf.c through its generated skeleton, and reads its counts of block I/O per process and its latency histograms per disk. */
#include "collect/bio.h"
#include "collect/ebpf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <vtrace.h>

/* The eBPF program's buckets are libvtrace's: its functions read them. */
_Static_assert(LOG_LINEAR_BUCKETS == VTRACE_HISTOGRAM_BUCKETS, "histogram.h and vtrace.h disagree");
_Static_assert(sizeof(struct bio_histogram) == LOG_LINEAR_BUCKETS * sizeof(__u64), "bio_histogram's size");

const struct bio_process *bio_table_find(const struct bio_table *table, const struct bio_process *like)
{
	unsigned low = 0, high = table->count;

	while (low < high) {
		unsigned middle = low + (high - low) / 2;
		const struct bio_process *p = &table->process[middle];

		if (p->pid == like->pid)
			return p->since_ns == like->since_ns ? p : NULL;
		if (p->pid < like->pid)
			low = middle + 1;
		else
			high = middle;
	}
	return NULL;
}

void bio_table_free(struct bio_table *table)
{
	free(table->process);
	memset(table, 0, sizeof(*table));
}

const struct bio_disk *bio_disks_find(const struct bio_disks *disks, unsigned major, unsigned minor)
{
	for (unsigned i = 0; i < disks->count; i++)
		if (disks->disk[i].major == major && disks->disk[i].minor == minor)
			return &disks->disk[i];
	return NULL;
}

void bio_disks_free(struct bio_disks *disks)
{
	free(disks->disk);
	memset(disks, 0, sizeof(*disks));
}

uint64_t bio_histogram_count(const uint64_t *histogram)
{
	uint64_t total = 0;

	for (unsigned b = 0; b < LOG_LINEAR_BUCKETS; b++)
		total += histogram[b];
	return total;
}

#ifdef IOLENS_BPF
#include "collect/bpf_dl.h"

#include "bio.skel.h"

static struct bio_bpf *skeleton;
static __u32 *keys;
static struct bio_counts *values;

int bio_start(const char **why)
{
	const char *step;
	int rc;

	if (skeleton)
		return 0;
	keys = calloc(BIO_MAX_PROCESSES, sizeof(*keys));
	values = calloc(BIO_MAX_PROCESSES, sizeof(*values));
	if (!keys || !values) {
		bio_stop();
		*why = "out of memory";
		return -ENOMEM;
	}
	rc = ebpf_init(why);
	if (rc) {
		bio_stop();
		return rc;
	}
	skeleton = bio_bpf__open();
	if (!skeleton) {
		rc = errno ? -errno : -EINVAL;
		*why = ebpf_why(NULL, rc, "open");
		bio_stop();
		return rc;
	}
	step = "load";
	rc = bio_bpf__load(skeleton);
	if (!rc) {
		step = "attach";
		rc = bio_bpf__attach(skeleton);
	}
	if (rc) {
		rc = rc < 0 ? rc : -EINVAL;
		*why = ebpf_why(skeleton->obj, rc, step);
		bio_stop();
		return rc;
	}
	return 0;
}

static int by_pid(const void *a, const void *b)
{
	const struct bio_process *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

int bio_read(struct bio_table *out)
{
	__u32 token, total = 0;
	void *from = NULL;
	int fd;

	memset(out, 0, sizeof(*out));
	if (!skeleton)
		return -ENOTCONN;
	fd = bpf_map__fd(skeleton->maps.processes);
	/* In batches, a few system calls for the whole map; a full buffer ends it (the map holds no more). */
	while (total < BIO_MAX_PROCESSES) {
		__u32 count = BIO_MAX_PROCESSES - total;
		int rc = bpf_map_lookup_batch(fd, from, &token, keys + total, values + total, &count, NULL);

		if (rc && errno != ENOENT)
			return -errno;
		total += count;
		if (rc)
			break; /* ENOENT: the last batch */
		from = &token;
	}
	out->process = calloc(total ? total : 1, sizeof(*out->process));
	if (!out->process)
		return -ENOMEM;
	for (__u32 i = 0; i < total; i++) {
		struct bio_process *p = &out->process[i];

		p->pid = (pid_t)keys[i];
		p->start_ns = values[i].start_ns;
		p->since_ns = values[i].since_ns;
		memcpy(p->name, values[i].comm, sizeof(p->name) - 1);
		p->name[sizeof(p->name) - 1] = '\0';
		memcpy(p->bytes, values[i].bytes, sizeof(p->bytes));
		memcpy(p->requests, values[i].requests, sizeof(p->requests));
	}
	qsort(out->process, total, sizeof(*out->process), by_pid);
	/* A process moved by the LRU while the batches went through it may come twice: kept once. */
	for (__u32 i = 0; i < total; i++)
		if (!out->count || out->process[out->count - 1].pid != out->process[i].pid)
			out->process[out->count++] = out->process[i];
	out->unattributed_bytes = skeleton->bss ? skeleton->bss->unattributed_bytes : 0;
	return 0;
}

int bio_read_disks(struct bio_disks *out)
{
	__u64 key, *from = NULL, disk_keys[BIO_MAX_DISKS];
	__u32 slots[BIO_MAX_DISKS];
	unsigned found = 0;
	int disks_fd, latency_fd, sum_fd;

	memset(out, 0, sizeof(*out));
	if (!skeleton)
		return -ENOTCONN;
	disks_fd = bpf_map__fd(skeleton->maps.disks);
	latency_fd = bpf_map__fd(skeleton->maps.latency);
	sum_fd = bpf_map__fd(skeleton->maps.latency_sum);
	/* The disks map only grows (disks are never forgotten): walking it by keys sees each once. */
	while (found < BIO_MAX_DISKS && bpf_map_get_next_key(disks_fd, from, &key) == 0) {
		from = &key;
		if (bpf_map_lookup_elem(disks_fd, &key, &slots[found]) == 0 && slots[found] < BIO_MAX_DISKS)
			disk_keys[found++] = key;
	}
	/* 220 KiB a disk: as many as there are, not BIO_MAX_DISKS. */
	out->disk = calloc(found ? found : 1, sizeof(*out->disk));
	if (!out->disk)
		return -ENOMEM;
	for (; out->count < found; out->count++) {
		struct bio_disk *disk = &out->disk[out->count];

		disk->major = (unsigned)(disk_keys[out->count] >> 32);
		disk->minor = (unsigned)disk_keys[out->count];
		for (__u32 kind = 0; kind < BIO_LAT_KINDS; kind++)
			for (__u32 op = 0; op < BIO_LAT_OPS; op++) {
				__u32 index = BIO_LATENCY_INDEX(slots[out->count], kind, op);
				if (bpf_map_lookup_elem(latency_fd, &index, disk->histogram[kind][op]) != 0 ||
				    bpf_map_lookup_elem(sum_fd, &index, &disk->sum_ns[kind][op]) != 0) {
					int rc = -errno;
					bio_disks_free(out);
					return rc;
				}
			}
	}
	out->not_kept = skeleton->bss ? skeleton->bss->disks_not_kept : 0;
	return 0;
}

void bio_stop(void)
{
	if (skeleton)
		bio_bpf__destroy(skeleton);
	skeleton = NULL;
	free(keys);
	free(values);
	keys = NULL;
	values = NULL;
}

#else /* built without eBPF */

int bio_start(const char **why)
{
	*why = ebpf_why(NULL, -ENOSYS, "build");
	return -ENOSYS;
}

int bio_read(struct bio_table *out)
{
	memset(out, 0, sizeof(*out));
	return -ENOSYS;
}

int bio_read_disks(struct bio_disks *out)
{
	memset(out, 0, sizeof(*out));
	return -ENOSYS;
}

void bio_stop(void)
{
}

#endif
