/* SPDX-License-Identifier: GPL-2.0-or-later */
/* judge.c: what more than one rule reads off a snapshot, computed from it alone. */
#include "doctor/judge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/memcg.h"
#include "collect/procfs.h"
#include "common/util.h"

double snap_psi_share(const struct snap_psi *psi, double seconds)
{
	if (!psi->known || seconds <= 0 || psi->end_us < psi->start_us)
		return -1;
	return 100.0 * (double)(psi->end_us - psi->start_us) / (seconds * 1e6);
}

bool snap_disk_saturated(const struct doctor_snapshot *s)
{
	for (size_t i = 0; i < s->ndisks && s->seconds > 0 && s->disk_seconds > 0; i++) {
		struct disk_ext x;

		disk_ext_compute(&s->disks[i].start, &s->disks[i].end, s->disk_seconds, &x);
		if (x.util >= DISK_SATURATED_UTIL)
			return true;
	}
	return false;
}

#define MEMORY_PSI_SHORT 10.0 /* percent of the window: a reader whose pages are evicted now and then stalls 1-7 % */

struct memory_signs snap_memory_signs(const struct doctor_snapshot *s)
{
	struct memory_signs m = { .psi_some = snap_psi_share(&s->memory_some, s->seconds) };

	m.low_available = s->mem_known && s->mem_total && s->mem_available < s->mem_total / 10;
	m.short_now = m.low_available || m.psi_some >= MEMORY_PSI_SHORT;
	return m;
}

struct refault_window snap_refault_window(const struct doctor_snapshot *s)
{
	uint64_t page = s->page_size;
	struct refault_window r = {0};

	if (s->seconds <= 0 || !s->vm_known || s->refault_file[0] == PROCFS_UNKNOWN ||
	    s->refault_file[1] < s->refault_file[0])
		return r;
	r.refaults = s->refault_file[1] - s->refault_file[0];
	r.read_pages = s->pgpgin[1] >= s->pgpgin[0] ? (s->pgpgin[1] - s->pgpgin[0]) * 1024 / page : 0;
	r.rate = (double)(r.refaults * page) / s->seconds;
	/* Of what was read from disks, the share that had been cached a moment ago. */
	r.share = r.read_pages ? 100.0 * (double)r.refaults / (double)r.read_pages : 100.0;
	r.high = r.rate >= MiB && r.share >= 25;
	return r;
}

static const struct snap_memcg *memcg_by_pid(const struct doctor_snapshot *s, pid_t pid)
{
	for (size_t i = 0; i < s->nmemcgs && pid; i++)
		if (s->memcgs[i].pid == pid)
			return &s->memcgs[i];
	return NULL;
}

/* A reader's memory cgroup as capture found it: by eBPF's id first, else by one of its pids. */
const struct snap_memcg *snap_reader_memcg(const struct doctor_snapshot *s, const struct miss_row *r)
{
	const struct snap_memcg *m;

	for (size_t i = 0; i < s->nmemcgs && r->memcg; i++)
		if (!s->memcgs[i].pid && s->memcgs[i].id == r->memcg)
			return &s->memcgs[i];
	for (unsigned i = 0; i < r->processes && i < 5; i++)
		if ((m = memcg_by_pid(s, r->pids[i])))
			return m;
	return memcg_by_pid(s, r->newest);
}

bool snap_readers_at_limit(const struct doctor_snapshot *s)
{
	struct miss_row *rows;
	size_t nrows = snap_miss_readers(s, &rows), reported = 0;
	bool at_limit = false;

	for (size_t i = 0; i < nrows && reported < 5; i++) {
		const struct snap_memcg *m;

		if (!snap_miss_matters(s, &rows[i]))
			continue;
		reported++;
		if ((m = snap_reader_memcg(s, &rows[i])) && m->at_limit)
			at_limit = true;
	}
	free(rows);
	return at_limit;
}

const struct snap_container *snap_container_of(const struct doctor_snapshot *s, pid_t pid, const char *comm)
{
	for (size_t i = 0; i < s->ncontainers; i++)
		if (s->containers[i].pid == pid && (!comm || !s->containers[i].comm[0] || !strcmp(s->containers[i].comm, comm)))
			return &s->containers[i];
	return NULL;
}

const char *snap_in_container(const struct doctor_snapshot *s, pid_t pid, const char *comm, char *buf, size_t size)
{
	const struct snap_container *c = snap_container_of(s, pid, comm);

	snprintf(buf, size, "%s%s", c ? " in container " : "", c ? c->label : "");
	return buf;
}

void field_container(struct doctor_fields *f, const struct doctor_snapshot *s, pid_t pid, const char *comm)
{
	const struct snap_container *c = snap_container_of(s, pid, comm);
	struct doctor_fields *o;

	if (!c) {
		field_null(f, "container");
		return;
	}
	o = field_object(f, "container");
	field_text(o, "label", c->label);
	field_text(o, "runtime", c->runtime);
	field_text(o, "id", c->id[0] ? c->id : NULL);
	field_text(o, "name", c->name[0] ? c->name : NULL);
	field_text(o, "pod", c->pod[0] ? c->pod : NULL);
	field_text(o, "namespace", c->namespace_[0] ? c->namespace_ : NULL);
	field_count(o, "uid", c->uid);
}
