/* SPDX-License-Identifier: GPL-2.0-or-later */
/* odirect.c: rule odirect: a process doing its I/O with O_DIRECT, bypassing the page cache. */
#include <fcntl.h>
#include <string.h>

#include "common/util.h"
#include "doctor/judge.h"
#include "doctor/rules.h"

/* What eBPF counted of p's block requests over the window (null without it), and whether it is all. */
static void bio_fields(struct doctor_fields *data, const struct doctor_snapshot *s, const struct snap_direct_process *p)
{
	field_count_if(data, "read_requests", p->bio_read_requests, p->bio_known);
	field_count_if(data, "read_bytes", p->bio_read_bytes, p->bio_known);
	field_count_if(data, "write_requests", p->bio_write_requests, p->bio_known);
	field_count_if(data, "write_bytes", p->bio_write_bytes, p->bio_known);
	field_count_if(data, "read_bytes_unended", p->bio_read_unended_bytes, p->bio_known);
	field_count_if(data, "write_bytes_unended", p->bio_write_unended_bytes, p->bio_known);
	field_count_if(data, "unattributed_bytes", s->bio_unattributed_bytes, p->bio_known);
	/* read_bytes and write_bytes whole: no byte of the window unaccounted for (an unended flush has none) */
	if (p->bio_known)
		field_bool(data, "bytes_exact",
			   !p->bio_read_unended_bytes && !p->bio_write_unended_bytes && !s->bio_unattributed_bytes);
	else
		field_null(data, "bytes_exact");
}

static void judge(const struct doctor_snapshot *s, const struct doctor_config *config, struct doctor_findings *out)
{
	for (size_t i = 0; i < s->ndirect; i++) {
		const struct snap_direct_process *p = &s->direct[i];
		double read_rate = 0, write_rate = 0;
		/*
		 * eBPF's count of its requests, over the whole window: a process that lived a few
		 * ms is no faster for it
		 */
		double window = s->disk_seconds > 0 ? s->disk_seconds : s->seconds;
		bool by_requests = p->bio_known && window > 0;
		double rate_seconds = by_requests ? window : p->rate_seconds;
		bool rates = by_requests || (p->io_known && p->rate_seconds > 0);
		uint64_t cached = 0, pages = 0, opens = 0;
		bool cache_known = false;
		char read_text[16], write_text[16];
		const struct snap_direct_file *file0;
		struct doctor_fields *files;
		struct doctor_finding *f;
		char in[600];
		size_t used;

		if (!p->nfiles)
			continue;
		file0 = &s->direct_files[p->files[0]];
		for (unsigned k = 0; k < p->nfiles; k++) {
			const struct snap_direct_file *file = &s->direct_files[p->files[k]];

			if (file->cache_known) {
				cache_known = true;
				cached += file->cached_pages;
				pages += file->file_pages;
			}
			opens += p->opens[k];
		}
		if (rates) {
			read_rate = (double)(by_requests ? p->bio_read_bytes : p->read_bytes) / rate_seconds;
			write_rate = (double)(by_requests ? p->bio_write_bytes : p->write_bytes) / rate_seconds;
		}
		/*
		 * Bypassing the cache matters when it reads: reads that the cache could serve. A few
		 * KiB now and then (multipathd's path checker), or writes (a database flushing its own
		 * buffers, on purpose), are a note.
		 */
		f = doctor_finding_add(
		    out, read_rate >= config->threshold[TH_ODIRECT_READ] ? DOCTOR_WARNING : DOCTOR_INFO, "odirect",
		    "O_DIRECT bypasses the page cache: every read goes to the disk, even of data read a "
		    "moment ago; the cache could serve repeated reads from memory (a file read again: 1.4 s "
		    "from the disk against 0.017 s from the cache)");
		doctor_text(f->what, sizeof(f->what), "process %d (%s)%s does its I/O with O_DIRECT on %s%s",
			    (int)p->pid, p->comm, snap_in_container(s, p->pid, p->comm, in, sizeof(in)), file0->path,
			    p->nfiles > 1 ? " and more" : "");
		if (!strcmp(p->seen_by, "fdinfo"))
			used = (size_t)snprintf(
			    f->numbers, sizeof(f->numbers),
			    "/proc/%d/fdinfo/%d says \"flags: 0%o\": O_DIRECT (0%o) is set, on %u file%s", (int)p->pid,
			    p->first_fd, p->first_flags, (unsigned)O_DIRECT, p->nfiles, p->nfiles > 1 ? "s" : "");
		else
			used =
			    (size_t)snprintf(f->numbers, sizeof(f->numbers),
					     "%s with O_DIRECT (0%o) gave it fd %d %.1f s into the window, %llu time%s "
					     "(eBPF, %s); the file's flags 0%o; on %u file%s",
					     p->call[0] ? p->call : "?", (unsigned)O_DIRECT, p->first_fd,
					     p->first_seen_seconds, (unsigned long long)opens, opens == 1 ? "" : "s",
					     strcmp(p->call, "io_uring") ? "raw_syscalls" : "io_uring_complete",
					     p->first_flags, p->nfiles, p->nfiles > 1 ? "s" : "");
		if (by_requests && used < sizeof(f->numbers))
			used += (size_t)snprintf(
			    f->numbers + used, sizeof(f->numbers) - used,
			    "; its block requests (eBPF): %llu read%s, %llu write%s, %s/s read, %s/s "
			    "written over the window's %.1f s",
			    (unsigned long long)p->bio_read_requests, p->bio_read_requests == 1 ? "" : "s",
			    (unsigned long long)p->bio_write_requests, p->bio_write_requests == 1 ? "" : "s",
			    human_size((uint64_t)read_rate, read_text, sizeof(read_text)),
			    human_size((uint64_t)write_rate, write_text, sizeof(write_text)), rate_seconds);
		else if (rates && used < sizeof(f->numbers))
			used += (size_t)snprintf(
			    f->numbers + used, sizeof(f->numbers) - used,
			    "; from storage %s/s read, %s/s written over the %.1f s since it was first "
			    "seen (/proc/%d/io)",
			    human_size((uint64_t)read_rate, read_text, sizeof(read_text)),
			    human_size((uint64_t)write_rate, write_text, sizeof(write_text)), p->rate_seconds,
			    (int)p->pid);
		if (by_requests && (p->bio_read_unended_requests || p->bio_write_unended_requests) &&
		    used < sizeof(f->numbers))
			used += (size_t)snprintf(
			    f->numbers + used, sizeof(f->numbers) - used,
			    "; at least: %llu more request%s (%llu bytes) not seen ending by the window's "
			    "end (%s)",
			    (unsigned long long)(p->bio_read_unended_requests + p->bio_write_unended_requests),
			    p->bio_read_unended_requests + p->bio_write_unended_requests == 1 ? "" : "s",
			    (unsigned long long)(p->bio_read_unended_bytes + p->bio_write_unended_bytes),
			    p->ended ? "ended with no eBPF program run at their completion"
				     : "in flight, or ended with no eBPF program run at their completion");
		if (by_requests && s->bio_unattributed_bytes && used < sizeof(f->numbers))
			used += (size_t)snprintf(f->numbers + used, sizeof(f->numbers) - used,
						 "; %llu bytes of the window's block I/O were charged to no process",
						 (unsigned long long)s->bio_unattributed_bytes);
		if (cache_known && used < sizeof(f->numbers))
			used += (size_t)snprintf(f->numbers + used, sizeof(f->numbers) - used,
						 "; the page cache holds %llu of its %llu pages",
						 (unsigned long long)cached, (unsigned long long)pages);
		if (p->ended && used < sizeof(f->numbers))
			snprintf(f->numbers + used, sizeof(f->numbers) - used, "; it ended before the window did");
		if (!p->ended) {
			doctor_text(f->more, sizeof(f->more),
				    "iolens cachetop -p %d " DOCTOR_MORE_SAMPLES "; iolens pcstat --pid %d",
				    (int)p->pid, (int)p->pid);
		} else { /* gone: its files, those named by a path */
			size_t at =
			    (size_t)snprintf(f->more, sizeof(f->more), "iolens cachetop --files " DOCTOR_MORE_SAMPLES);
			bool pcstat = false;

			for (unsigned k = 0; k < p->nfiles && at < sizeof(f->more); k++) {
				const char *path = s->direct_files[p->files[k]].path;
				char word[600];

				if (path[0] != '/')
					continue;
				doctor_shell_word(path, word, sizeof(word));
				if (at + strlen(word) + 16 >= sizeof(f->more))
					break;
				at += (size_t)snprintf(f->more + at, sizeof(f->more) - at, "%s %s",
						       pcstat ? "" : "; iolens pcstat", word);
				pcstat = true;
			}
		}
		field_int(&f->data, "pid", p->pid);
		field_text(&f->data, "comm", p->comm);
		field_container(&f->data, s, p->pid, p->comm);
		files = field_list(&f->data, "files");
		for (unsigned k = 0; k < p->nfiles; k++)
			field_text(files, NULL, s->direct_files[p->files[k]].path);
		field_real_if(&f->data, "read_bytes_per_s", read_rate, rates);
		field_real_if(&f->data, "write_bytes_per_s", write_rate, rates);
		field_real_if(&f->data, "rate_seconds", rate_seconds, rates);
		field_text(&f->data, "rates_from", !rates ? NULL : by_requests ? "ebpf" : "procfs");
		bio_fields(&f->data, s, p);
		field_int_if(&f->data, "fd", p->first_fd, p->first_fd >= 0);
		field_int(&f->data, "flags", (int)p->first_flags);
		field_count_if(&f->data, "cached_pages", cached, cache_known);
		field_count_if(&f->data, "file_pages", pages, cache_known);
		field_text(&f->data, "seen_by", p->seen_by);
		field_text(&f->data, "call", p->call[0] ? p->call : NULL);
		field_count_if(&f->data, "opens", opens, s->odirect_ebpf);
		field_real(&f->data, "first_seen_seconds", p->first_seen_seconds);
		field_bool(&f->data, "ended", p->ended);
	}
}

const struct doctor_rule rule_odirect = {
	.name = "odirect",
	.list_rank = 10, /* its place in --help-all and RULES */
	.judge_rank = 10, /* its findings' place among those of one severity */
	.help = "a process doing its I/O with O_DIRECT: each open seen as it happens\n"
		"(eBPF), else fdinfo flags at every sample; its rates and what the\n"
		"page cache holds of its files (warning when it read 1 MiB/s)",
	.man = /* iolens-doctor(1), RULES: the paragraph after its name (roff) */
		"A process that does its I/O on a regular file or block device with\n"
		".BR O_DIRECT :\n"
		"it bypasses the page cache, and every read goes to the disk, even of data\n"
		"read a moment ago.\n"
		"A service that opens its file, reads it in milliseconds, closes it and\n"
		"sleeps a second is missed by a look at the open files now and then.\n"
		"So the doctor sees the opens as they happen, with eBPF on the raw system\n"
		"call tracepoints\n"
		".RB ( tp_btf/sys_enter \" and \" sys_exit ,\n"
		"which need no tracefs): every\n"
		".BR open ,\n"
		".B openat\n"
		"and\n"
		".B openat2\n"
		"that asks for\n"
		".B O_DIRECT\n"
		"and succeeds, and every\n"
		".B fcntl(F_SETFL)\n"
		"that sets it, by any process, however briefly the file stays open, and\n"
		"every open of io_uring\n"
		".RB ( IORING_OP_OPENAT \" and \" OPENAT2 ,\n"
		"which make no system call: seen as they complete, at the\n"
		".B io_uring_complete\n"
		"tracepoint, where it passes the request: not on 5.10; one into a fixed\n"
		"file slot has no descriptor and is not seen); each\n"
		"process and file is reported once, its later opens counted.\n"
		"While these tracepoints are on (the doctor's run only), every system call\n"
		"of every process takes a little longer: a program that does little but\n"
		"system calls runs measurably slower meanwhile;\n"
		".B \\-\\-disable odirect\n"
		"turns them off.\n"
		"When the window begins it also reads every process's\n"
		".IR /proc/PID/fdinfo/N ,\n"
		"for the files already open with\n"
		".B O_DIRECT\n"
		"(the flag 040000 on x86, in the\n"
		".B flags\n"
		"line); as root with eBPF, a task\\-file iterator lists in one read the\n"
		"descriptors whose file has that flag, and only their\n"
		".I fdinfo\n"
		"is read.\n"
		"Without eBPF (not root, no BTF) it reads them at every sample instead, and\n"
		"says on standard error that a file open only between two samples is\n"
		"missed.\n"
		"Both are merged by pid and command (a pid reused by another command is\n"
		"another process); this process and its probes are left out.\n"
		"The finding names the process and its files (up to four: the path its\n"
		"descriptor names while it is open, else the path it passed, joined to its\n"
		"working directory while it lives; after an\n"
		".B fcntl\n"
		"or an open of io_uring\n"
		"whose descriptor is closed before the doctor looks, the file's name, inode\n"
		"and device), quotes the fdinfo flags of the first, or the call that\n"
		"gave it\n"
		".BR O_DIRECT ,\n"
		"the descriptor, when and how many times; its reads and\n"
		"writes from storage per second from the sample before it was first seen to\n"
		"the end, or to its last sample for one that ended\n"
		".RI ( /proc/PID/io ,\n"
		".B read_bytes\n"
		"and\n"
		".BR write_bytes ;\n"
		"a child it reaped counted once, as DESCRIPTION says),\n"
		"and how many of its files' pages the page cache holds when each is first\n"
		"found (each file probed once)\n"
		".RB ( cachestat (2),\n"
		"as\n"
		".BR \\%iolens\\-pcstat (1)\n"
		"counts them): what cached reads could serve from memory.\n"
		"Severity\n"
		".B warning\n"
		"when the process read 1\\~MiB/s or more from storage in that time (reads\n"
		"the cache could serve);\n"
		".B info\n"
		"when it read less (a path checker's few KiB now and then), only wrote (a\n"
		"database flushing its own buffers does so on purpose), or the rates are not\n"
		"known (0 seconds, or the process could not be read, or it ended before a\n"
		"second look).\n"
		"A process that ended in the window is still reported, with what is known\n"
		"of it: pid, command, files, flags.\n",
	.thresholds = { TH_ODIRECT_READ, -1 },
	.judge = judge,
};
