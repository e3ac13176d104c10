/* SPDX-License-Identifier: GPL-2.0-or-later */
/* judge.c: what more than one rule reads off a snapshot, computed from it alone, and the findings two rules share. */
#include "doctor/judge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/memcg.h"
#include "collect/procfs.h"
#include "common/util.h"
#include "model/disk.h"
#include "model/filesystem.h"
#include "model/pressure.h"

double snap_psi_share(const struct snap_psi *psi, double seconds)
{
	if (!psi->known || seconds <= 0 || psi->end_us < psi->start_us)
		return -1;
	return psi_share(psi->start_us, psi->end_us, seconds);
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
		if (s->containers[i].pid == pid &&
		    (!comm || !s->containers[i].comm[0] || !strcmp(s->containers[i].comm, comm)))
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

void judge_mount_use(const struct doctor_snapshot *s, const struct doctor_config *config, bool inodes,
		     struct doctor_findings *out)
{
	for (size_t i = 0; i < s->nmounts; i++) {
		const struct snap_mount *m = &s->mounts[i];
		uint64_t total = inodes ? m->files : m->blocks;
		uint64_t free_all = inodes ? m->ffree : m->bfree;
		uint64_t available = inodes ? m->favail : m->bavail;
		double used = df_use_percent(total, free_all, available);
		char free_text[16], total_text[16], word[600];
		struct doctor_finding *f;

		if (m->state != MOUNT_OK || m->duplicate || !m->blocks || !total ||
		    used < config->threshold[TH_FULL_WARNING])
			continue;
		f = doctor_finding_add(out,
				       used >= config->threshold[TH_FULL_CRITICAL] ? DOCTOR_CRITICAL : DOCTOR_WARNING,
				       inodes ? "inodes" : "full",
				       inodes ? "with no inode left, no file can be created, however much space is free"
					      : "writes fail with ENOSPC when it fills, and ext4 and others slow down "
						"well before, as free extents get scarce");
		doctor_text(f->what, sizeof(f->what), "%s (%s on %s) is %s", m->dir, m->type, m->source,
			    inodes ? "nearly out of inodes" : "nearly full");
		if (inodes)
			doctor_text(f->numbers, sizeof(f->numbers),
				    "%.1f %% of inodes used: %llu free of %llu (statvfs)", used,
				    (unsigned long long)available, (unsigned long long)total);
		else
			doctor_text(f->numbers, sizeof(f->numbers),
				    "%.1f %% used: %s free of %s (statvfs, as df counts)", used,
				    human_size(available * m->frsize, free_text, sizeof(free_text)),
				    human_size(total * m->frsize, total_text, sizeof(total_text)));
		doctor_text(f->more, sizeof(f->more), "df %s%s", inodes ? "-i " : "-h ",
			    doctor_shell_word(m->dir, word, sizeof(word)));
		field_text(&f->data, "mount", m->dir);
		field_text(&f->data, "type", m->type);
		field_text(&f->data, "source", m->source);
		field_real(&f->data, "used_percent", used);
		field_count(&f->data, inodes ? "inodes_free" : "bytes_free",
			    inodes ? available : available * m->frsize);
		field_count(&f->data, inodes ? "inodes_total" : "bytes_total", inodes ? total : total * m->frsize);
	}
}

static double mean_ms(uint64_t service_ns, uint64_t completions)
{
	return completions ? (double)service_ns / (double)completions / 1e6 : 0;
}

struct vtrace_op_window vtrace_op_window(const struct snap_vtrace_op *op)
{
	struct vtrace_op_window w;

	w.done = op->completions > op->completions_before ? op->completions - op->completions_before : 0;
	w.window_ms = mean_ms(op->service_ns - op->service_ns_before, w.done);
	w.before_ms = mean_ms(op->service_ns_before, op->completions_before);
	return w;
}

const char *vtrace_whose(const struct doctor_snapshot *s, const struct snap_vtrace *server, char *buf, size_t size)
{
	char number[16], in[600];

	snprintf(number, sizeof(number), "%u", (unsigned)server->uid);
	snap_in_container(s, server->pid, NULL, in, sizeof(in));
	if (!server->uid_known)
		snprintf(buf, size, "(pid %d)%s", (int)server->pid, in);
	else if (!server->user[0] || !strcmp(server->user, number)) /* a user without a name */
		snprintf(buf, size, "(pid %d) of user %u%s", (int)server->pid, (unsigned)server->uid, in);
	else
		snprintf(buf, size, "(pid %d) of user %s (uid %u)%s", (int)server->pid, server->user,
			 (unsigned)server->uid, in);
	return buf;
}

void vtrace_finding_data(const struct doctor_snapshot *s, struct doctor_finding *f, const struct snap_vtrace *server,
			 const struct snap_vtrace_op *op, const struct vtrace_op_window *w)
{
	char word[600];

	doctor_text(f->more, sizeof(f->more), "iolens vstat %s " DOCTOR_MORE_SAMPLES,
		    doctor_shell_word(server->segment, word, sizeof(word)));
	field_text(&f->data, "service", server->service);
	field_int(&f->data, "pid", (int)server->pid);
	field_count_if(&f->data, "uid", server->uid, server->uid_known);
	field_text(&f->data, "user", server->uid_known ? server->user : NULL);
	field_container(&f->data, s, server->pid, NULL);
	field_text(&f->data, "segment", server->segment);
	field_text(&f->data, "op", op->name);
	field_count(&f->data, "in_flight", op->begins - op->completions);
	field_real(&f->data, "oldest_seconds", (double)op->oldest_age_ns / 1e9);
	field_count(&f->data, "completions", w->done);
	field_real(&f->data, "mean_ms", w->window_ms);
	field_real(&f->data, "mean_ms_before", w->before_ms);
}
