/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * snapshot.c: a doctor snapshot as text and back (doctor --record, --replay): a line per value,
 * parsed span by span, every field checked.
 */
#include "doctor/snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/container.h"
#include "collect/span.h"
#include "common/util.h"

#define SNAPSHOT_MAGIC "iolens-doctor-snapshot"
#define PACKED_WHOLE 9007199254740992.0 /* 2^53: whole numbers up to it are doubles exactly */
#define PACKED_MAGIC "\0iolens-doctor-packed" /* (a NUL first: no text snapshot starts so) */
#define SNAPSHOT_VERSION 2 /* 2: bio_proc's reads and writes apart, cache_proc's cgroup, cgroup lines */
#define SNAPSHOT_MAX_BYTES (64u << 20)
#define SNAPSHOT_MAX_REAL 1e13
#define SNAPSHOT_MAX_ITEMS 100000 /* of each kind: more is no snapshot doctor wrote */

/* ---- The fields, declared once ------------------------------------------------------------------ */

/*
 * Every line of a snapshot is a record of this table: its key, then its fields in order, each a
 * (name, type, offset) row. The writer, the parser and doctor_snapshot_free are derived from it;
 * the order of `records` is the order lines are written in. To add a field: a member in
 * snapshot.h, a row here (at the end of its line, with .since the format version that added it),
 * and its capture in capture.c.
 */
enum field_type {
	F_U64,      /* uint64_t, "%llu"; .max when not 0 */
	F_U32,      /* unsigned or uint32_t, "%u"; at most .max (UINT32_MAX when 0) */
	F_FLAG,     /* bool, 0 or 1 */
	F_INT,      /* int, "%d", signed */
	F_SMALL,    /* int or enum, "%d", from 0 to .max */
	F_PID,      /* pid_t, "%d", from 0 */
	F_REAL,     /* double, 17 digits; written -1 when not finite */
	F_TEXT,     /* char[.size], escaped (put_text) */
	F_SIZE,     /* size_t, "%zu", at most .max */
	F_REPEAT,   /* unsigned count ("%u", at most .max), then .sub's fields that many times */
	F_OPTIONAL, /* the rest of the line: written when the bool at .offset is true (always when
		     * NO_FLAG), read when the line has more fields (then that bool set) */
};

#define NO_FLAG ((size_t)-1)

struct parser;

struct field {
	const char *name; /* as messages name it */
	enum field_type type;
	size_t offset;    /* in the item (for .sub's rows: of the first element) */
	size_t size;      /* the member's (for .sub's rows: one element's, the step between them) */
	uint64_t max;
	const struct field *sub;
	unsigned since;   /* the format version that added it (0: the first) */
	/* Checked (or made what it means) right after it is read, the item it is in at hand. */
	void (*check)(struct parser *p, void *item);
};

/* Rows; the size of the member must be the type's (a compile error else). */
#define SIZED(st, mb, n) (sizeof(((st *)0)->mb) + 0 * sizeof(char[sizeof(((st *)0)->mb) == (n) ? 1 : -1]))
#define ROW(nm, ty, st, mb, n, ...) \
	{ .name = nm, .type = ty, .offset = offsetof(st, mb), .size = SIZED(st, mb, n), __VA_ARGS__ }
#define U64(nm, st, mb, ...) ROW(nm, F_U64, st, mb, 8, __VA_ARGS__)
#define U32(nm, st, mb, ...) ROW(nm, F_U32, st, mb, 4, __VA_ARGS__)
#define FLAG(nm, st, mb, ...) ROW(nm, F_FLAG, st, mb, sizeof(bool), __VA_ARGS__)
#define INT(nm, st, mb, ...) ROW(nm, F_INT, st, mb, sizeof(int), __VA_ARGS__)
#define SMALL(nm, st, mb, mx, ...) ROW(nm, F_SMALL, st, mb, sizeof(int), .max = (mx), __VA_ARGS__)
#define PID(nm, st, mb, ...) ROW(nm, F_PID, st, mb, sizeof(pid_t), __VA_ARGS__)
#define REAL(nm, st, mb, ...) ROW(nm, F_REAL, st, mb, sizeof(double), __VA_ARGS__)
#define TEXT(nm, st, mb, ...) \
	{ .name = nm, .type = F_TEXT, .offset = offsetof(st, mb), .size = sizeof(((st *)0)->mb), __VA_ARGS__ }
#define SIZE(nm, st, mb, mx, ...) ROW(nm, F_SIZE, st, mb, sizeof(size_t), .max = (mx), __VA_ARGS__)
#define REPEAT(nm, st, mb, mx, rows) ROW(nm, F_REPEAT, st, mb, sizeof(unsigned), .max = (mx), .sub = (rows))
#define OPTIONAL(st, mb) { .name = "(more)", .type = F_OPTIONAL, .offset = offsetof(st, mb), .size = sizeof(bool) }
#define OPTIONAL_ALWAYS { .name = "(more)", .type = F_OPTIONAL, .offset = NO_FLAG }
#define OPTIONAL_SINCE(st, mb, v) \
	{ .name = "(more)", .type = F_OPTIONAL, .offset = offsetof(st, mb), .size = sizeof(bool), .since = (v) }
#define END { .name = NULL }

/* A word after the key choosing the member its fields go to (psi io_some, disk_sample mid, ...). */
struct choice {
	const char *name;
	size_t offset;
	size_t when; /* written only when the bool there is true; NO_FLAG: always */
};

enum when { W_ALWAYS, W_FLAG, W_SET };

struct record {
	const char *key;
	const struct field *fields;
	/* An array: one item a line, at .array (a pointer) with its count at .count (size_t, or
	 * unsigned with .count_unsigned) in the parent; the item .item_size bytes. */
	bool array, count_unsigned;
	size_t array_offset, count_offset, item_size;
	const struct choice *choices; /* with the word's name for messages */
	const char *which;
	/* W_FLAG: written when the bool at .when_offset in the parent is true; reading it sets it.
	 * W_SET: written when its first field is not 0 or "". */
	enum when when;
	size_t when_offset;
	const struct record *children; /* lines about the last item of this array, after it */
};

#define ARRAY(st, mb) .array = true, .array_offset = offsetof(st, mb), .count_offset = offsetof(st, n##mb), \
	.item_size = sizeof(*((st *)0)->mb)
#define CHOICES(w, list) .choices = (list), .which = (w)
#define NO_RECORD { .key = NULL }

typedef struct doctor_snapshot snap;

/* Checks of single fields, in the parser's words. */
static void check_seconds(struct parser *p, void *item);
static void check_page_size(struct parser *p, void *item);
static void check_cache_mechanism(struct parser *p, void *item);
static void check_seen_by(struct parser *p, void *item);
static void copy_disk_names(struct parser *p, void *item);
static void check_latencies(struct parser *p, void *item);
static void capacity_unknown(struct parser *p, void *item);
static void check_bio_mechanism(struct parser *p, void *item);
static void check_bio_proc_latencies(struct parser *p, void *item);
static void check_bio_proc_reads(struct parser *p, void *item);
static void check_bio_proc_ops(struct parser *p, void *item);
static void check_swaps_zram(struct parser *p, void *item);
static void check_runtime(struct parser *p, void *item);
static void check_container_id(struct parser *p, void *item);

static const struct field f_seconds[] = { REAL("seconds", snap, seconds, .check = check_seconds), END };
static const struct field f_page_size[] = { U64("page_size", snap, page_size, .check = check_page_size), END };
static const struct field f_samples[] = { U32("samples", snap, samples), END };
static const struct field f_walks[] = { U32("walks", snap, walks), END };
static const struct field f_odirect_ebpf[] = { FLAG("odirect_ebpf", snap, odirect_ebpf), END };
static const struct field f_exits_ebpf[] = { FLAG("exits_ebpf", snap, exits_ebpf), END };
static const struct field f_cache_ebpf[] = { FLAG("cache_ebpf", snap, cache_ebpf), END };
static const struct field f_cache_files_known[] = { FLAG("cache_files_known", snap, cache_files_known), END };
static const struct field f_cache_mechanism[] = {
	TEXT("cache_mechanism", snap, cache_mechanism, .check = check_cache_mechanism), END
};

static const struct field f_direct_file[] = {
	U32("major", struct snap_direct_file, major), U32("minor", struct snap_direct_file, minor),
	U64("ino", struct snap_direct_file, ino), FLAG("block", struct snap_direct_file, block),
	FLAG("cache_known", struct snap_direct_file, cache_known),
	U64("cached_pages", struct snap_direct_file, cached_pages),
	U64("file_pages", struct snap_direct_file, file_pages),
	TEXT("path", struct snap_direct_file, path), END
};

static const struct field f_direct_files[] = {
	SIZE("file", struct snap_direct_process, files[0], SNAPSHOT_MAX_ITEMS),
	U64("opens", struct snap_direct_process, opens[0]), END
};

static const struct field f_direct[] = {
	PID("pid", struct snap_direct_process, pid), TEXT("comm", struct snap_direct_process, comm),
	INT("fd", struct snap_direct_process, first_fd), U32("flags", struct snap_direct_process, first_flags),
	TEXT("seen_by", struct snap_direct_process, seen_by, .check = check_seen_by),
	TEXT("call", struct snap_direct_process, call),
	REAL("first_seen_seconds", struct snap_direct_process, first_seen_seconds),
	FLAG("io_known", struct snap_direct_process, io_known),
	U64("read_bytes", struct snap_direct_process, read_bytes),
	U64("write_bytes", struct snap_direct_process, write_bytes),
	REAL("rate_seconds", struct snap_direct_process, rate_seconds),
	FLAG("ended", struct snap_direct_process, ended),
	REPEAT("files", struct snap_direct_process, nfiles, SNAP_DIRECT_FILES, f_direct_files),
	/* its block requests: absent from snapshots recorded before they were counted */
	OPTIONAL(struct snap_direct_process, bio_known),
	U64("bio_read_requests", struct snap_direct_process, bio_read_requests),
	U64("bio_read_bytes", struct snap_direct_process, bio_read_bytes),
	U64("bio_write_requests", struct snap_direct_process, bio_write_requests),
	U64("bio_write_bytes", struct snap_direct_process, bio_write_bytes),
	OPTIONAL_ALWAYS, /* not seen ending: absent before they were counted */
	U64("bio_read_unended_requests", struct snap_direct_process, bio_read_unended_requests),
	U64("bio_read_unended_bytes", struct snap_direct_process, bio_read_unended_bytes),
	U64("bio_write_unended_requests", struct snap_direct_process, bio_write_unended_requests),
	U64("bio_write_unended_bytes", struct snap_direct_process, bio_write_unended_bytes), END
};

static const struct field f_disk_seconds[] = {
	REAL("disk_seconds", snap, disk_seconds), REAL("disk_mid_seconds", snap, disk_mid_seconds), END
};

/* (a sample's name and numbers are the disk line's, copied to each sample by it) */
static const struct field f_disk[] = {
	TEXT("name", struct snap_disk, end.name), U32("major", struct snap_disk, end.major),
	U32("minor", struct snap_disk, end.minor),
	FLAG("mid_known", struct snap_disk, mid_known, .check = copy_disk_names),
	END
};

static const struct field f_disk_sample[] = {
	U32("nfields", struct disk_stats, nfields, .max = 64), U64("rd_ios", struct disk_stats, rd_ios),
	U64("rd_merges", struct disk_stats, rd_merges), U64("rd_sectors", struct disk_stats, rd_sectors),
	U64("rd_ticks", struct disk_stats, rd_ticks), U64("wr_ios", struct disk_stats, wr_ios),
	U64("wr_merges", struct disk_stats, wr_merges), U64("wr_sectors", struct disk_stats, wr_sectors),
	U64("wr_ticks", struct disk_stats, wr_ticks), U64("in_flight", struct disk_stats, in_flight),
	U64("io_ticks", struct disk_stats, io_ticks), U64("time_in_queue", struct disk_stats, time_in_queue),
	U64("dc_ios", struct disk_stats, dc_ios), U64("dc_merges", struct disk_stats, dc_merges),
	U64("dc_sectors", struct disk_stats, dc_sectors), U64("dc_ticks", struct disk_stats, dc_ticks),
	U64("fl_ios", struct disk_stats, fl_ios), U64("fl_ticks", struct disk_stats, fl_ticks), END
};

static const struct choice c_disk_sample[] = {
	{ "start", offsetof(struct snap_disk, start), NO_FLAG },
	{ "mid", offsetof(struct snap_disk, mid), offsetof(struct snap_disk, mid_known) },
	{ "end", offsetof(struct snap_disk, end), NO_FLAG }, { NULL, 0, 0 }
};

static const struct field f_disk_latency[] = {
	U64("count", struct snap_latency, count), REAL("p50_ns", struct snap_latency, p50_ns),
	REAL("p99_ns", struct snap_latency, p99_ns), REAL("device_p50_ns", struct snap_latency, device_p50_ns),
	REAL("device_p99_ns", struct snap_latency, device_p99_ns),
	REAL("queue_p50_ns", struct snap_latency, queue_p50_ns),
	REAL("queue_p99_ns", struct snap_latency, queue_p99_ns, .check = check_latencies), END
};

static const struct choice c_disk_latency[] = {
	{ "window", offsetof(struct snap_disk, latency), NO_FLAG },
	{ "first", offsetof(struct snap_disk, first), offsetof(struct snap_disk, mid_known) },
	{ "second", offsetof(struct snap_disk, second), offsetof(struct snap_disk, mid_known) }, { NULL, 0, 0 }
};

/* -1: unknown, as written */
static const struct field f_disk_capacity[] = {
	REAL("capacity_qd1_read_ns", struct snap_disk, capacity_qd1_read_ns, .check = capacity_unknown),
	REAL("capacity_qd1_write_ns", struct snap_disk, capacity_qd1_write_ns, .check = capacity_unknown),
	REAL("capacity_pct", struct snap_disk, capacity_pct, .check = capacity_unknown), END
};

static const struct record r_disk[] = {
	{ .key = "disk_sample", .fields = f_disk_sample, CHOICES("which sample", c_disk_sample) },
	{ .key = "disk_latency", .fields = f_disk_latency, CHOICES("which span", c_disk_latency), .when = W_FLAG,
	  .when_offset = offsetof(struct snap_disk, latency_known) },
	{ .key = "disk_capacity", .fields = f_disk_capacity, .when = W_FLAG,
	  .when_offset = offsetof(struct snap_disk, capacity_known) },
	NO_RECORD
};

static const struct field f_bio_known[] = { FLAG("bio_known", snap, bio_known), END };
static const struct field f_bio_unattributed[] = { U64("bio_unattributed_bytes", snap, bio_unattributed_bytes), END };
static const struct field f_bio_mechanism[] = {
	TEXT("bio_mechanism", snap, bio_mechanism, .check = check_bio_mechanism), END
};

static const struct field f_bio_proc[] = {
	PID("pid", struct snap_bio_proc, pid), TEXT("comm", struct snap_bio_proc, comm),
	FLAG("kernel", struct snap_bio_proc, kernel), U64("requests", struct snap_bio_proc, requests),
	U64("bytes", struct snap_bio_proc, bytes), U32("disk_major", struct snap_bio_proc, disk_major),
	U32("disk_minor", struct snap_bio_proc, disk_minor), FLAG("several_disks", struct snap_bio_proc, several_disks),
	REAL("p50_ns", struct snap_bio_proc, p50_ns),
	REAL("p99_ns", struct snap_bio_proc, p99_ns, .check = check_bio_proc_latencies),
	OPTIONAL(struct snap_bio_proc, ops_known), /* reads apart: absent from snapshots recorded before */
	U64("read_requests", struct snap_bio_proc, read_requests),
	U64("read_bytes", struct snap_bio_proc, read_bytes, .check = check_bio_proc_reads),
	OPTIONAL_SINCE(struct snap_bio_proc, op_figures_known, 2), /* each op's figures: version 2 */
	U64("write_requests", struct snap_bio_proc, write_requests, .since = 2),
	U64("write_bytes", struct snap_bio_proc, write_bytes, .since = 2),
#define BIO_OP(nm, k, mb) REAL(nm, struct snap_bio_proc, op[k].mb, .since = 2)
	BIO_OP("read_avg_ns", 0, avg_ns), BIO_OP("read_p50_ns", 0, p50_ns), BIO_OP("read_p99_ns", 0, p99_ns),
	BIO_OP("read_max_ns", 0, max_ns), BIO_OP("write_avg_ns", 1, avg_ns), BIO_OP("write_p50_ns", 1, p50_ns),
	BIO_OP("write_p99_ns", 1, p99_ns),
	REAL("write_max_ns", struct snap_bio_proc, op[1].max_ns, .since = 2, .check = check_bio_proc_ops), END
#undef BIO_OP
};

static const struct field f_psi[] = {
	FLAG("known", struct snap_psi, known), U64("start_us", struct snap_psi, start_us),
	U64("end_us", struct snap_psi, end_us), END
};

static const struct choice c_psi[] = {
	{ "io_some", offsetof(snap, io_some), NO_FLAG }, { "io_full", offsetof(snap, io_full), NO_FLAG },
	{ "memory_some", offsetof(snap, memory_some), NO_FLAG }, { NULL, 0, 0 }
};

static const struct field f_rate[] = {
	PID("pid", struct snap_io_rate, pid), TEXT("comm", struct snap_io_rate, comm),
	REAL("read_rate", struct snap_io_rate, read_rate), REAL("write_rate", struct snap_io_rate, write_rate),
	REAL("rchar_rate", struct snap_io_rate, rchar_rate), END
};

/* at the start, then at the end */
static const struct field f_vm[] = {
	FLAG("known", snap, vm_known),
	U64("pswpin", snap, pswpin[0]), U64("pswpout", snap, pswpout[0]), U64("pgpgin", snap, pgpgin[0]),
	U64("pgpgout", snap, pgpgout[0]), U64("workingset_refault_file", snap, refault_file[0]),
	U64("pswpin", snap, pswpin[1]), U64("pswpout", snap, pswpout[1]), U64("pgpgin", snap, pgpgin[1]),
	U64("pgpgout", snap, pgpgout[1]), U64("workingset_refault_file", snap, refault_file[1]), END
};

static const struct field f_mem[] = {
	FLAG("known", snap, mem_known), U64("mem_total", snap, mem_total), U64("mem_available", snap, mem_available),
	U64("cached", snap, cached), END
};

static const struct field f_swaps[] = {
	U32("swaps", snap, swaps), U32("on zram", snap, swaps_zram, .check = check_swaps_zram), END
};

static const struct field f_dirty[] = {
	U64("dirty_peak", snap, dirty_peak), U64("writeback_peak", snap, writeback_peak),
	U64("dirty_thresh", snap, dirty_thresh), U64("dirty_bg_thresh", snap, dirty_bg_thresh),
	U32("writeback_samples", snap, writeback_samples), END
};

static const struct field f_task[] = {
	PID("pid", struct snap_task, pid), PID("tid", struct snap_task, tid), TEXT("comm", struct snap_task, comm),
	TEXT("wchan", struct snap_task, wchan), U32("first", struct snap_task, first),
	U32("last", struct snap_task, last),
	U32("samples", struct snap_task, samples), U64("stuck_ns", struct snap_task, stuck_ns),
	FLAG("switches_known", struct snap_task, switches_known),
	U64("switches_first", struct snap_task, switches_first),
	U64("switches_last", struct snap_task, switches_last), U32("throttled", struct snap_task, throttled), END
};

static const struct field f_probe[] = { { .name = "pid", .type = F_PID, .offset = 0, .size = sizeof(pid_t) }, END };

static const struct field f_vtrace[] = {
	PID("pid", struct snap_vtrace, pid), TEXT("service", struct snap_vtrace, service),
	TEXT("segment", struct snap_vtrace, segment),
	OPTIONAL(struct snap_vtrace, uid_known), /* whose: absent from snapshots recorded before it was said */
	U32("uid", struct snap_vtrace, uid, .max = UINT32_MAX - 1), TEXT("user", struct snap_vtrace, user), END
};

static const struct field f_op[] = {
	TEXT("name", struct snap_vtrace_op, name), FLAG("impossible", struct snap_vtrace_op, impossible),
	U64("begins", struct snap_vtrace_op, begins), U64("completions", struct snap_vtrace_op, completions),
	U64("service_ns", struct snap_vtrace_op, service_ns),
	U64("oldest_age_ns", struct snap_vtrace_op, oldest_age_ns),
	U64("completions_before", struct snap_vtrace_op, completions_before),
	U64("service_ns_before", struct snap_vtrace_op, service_ns_before), END
};

static const struct record r_vtrace[] = {
	{ .key = "op", .fields = f_op, ARRAY(struct snap_vtrace, ops), .count_unsigned = true },
	NO_RECORD
};

static const struct field f_cache_proc[] = {
	PID("pid", struct snap_cache_proc, pid), TEXT("comm", struct snap_cache_proc, comm),
	U64("memcg", struct snap_cache_proc, memcg), U64("accesses", struct snap_cache_proc, accesses),
	U64("misses", struct snap_cache_proc, misses), U64("refaults", struct snap_cache_proc, refaults),
	OPTIONAL_SINCE(struct snap_cache_proc, cgroup_known, 2), /* its cgroup: version 2 */
	U64("cgroup", struct snap_cache_proc, cgroup, .since = 2), END
};

static const struct field f_cgroup[] = {
	U64("id", struct snap_cgroup, id), TEXT("path", struct snap_cgroup, path), END
};

static const struct field f_cache_file[] = {
	U32("major", struct snap_cache_file, major), U32("minor", struct snap_cache_file, minor),
	U64("ino", struct snap_cache_file, ino), U64("accesses", struct snap_cache_file, accesses),
	U64("misses", struct snap_cache_file, misses), U64("refaults", struct snap_cache_file, refaults),
	TEXT("name", struct snap_cache_file, name), END
};

static const struct field f_memcg[] = {
	PID("pid", struct snap_memcg, pid), U64("id", struct snap_memcg, id), TEXT("path", struct snap_memcg, path),
	SMALL("version", struct snap_memcg, version, 2), U64("max", struct snap_memcg, max),
	U64("current", struct snap_memcg, current), U64("refaults", struct snap_memcg, refaults),
	FLAG("at_limit", struct snap_memcg, at_limit), END
};

static const struct field f_container[] = {
	PID("pid", struct snap_container, pid), TEXT("comm", struct snap_container, comm),
	TEXT("runtime", struct snap_container, runtime, .check = check_runtime),
	TEXT("id", struct snap_container, id, .check = check_container_id), TEXT("name", struct snap_container, name),
	TEXT("pod", struct snap_container, pod), TEXT("namespace", struct snap_container, namespace_),
	U32("uid", struct snap_container, uid, .max = UINT32_MAX - 1), TEXT("label", struct snap_container, label), END
};

static const struct field f_mount[] = {
	TEXT("dir", struct snap_mount, dir), TEXT("type", struct snap_mount, type),
	TEXT("source", struct snap_mount, source),
	SMALL("state", struct snap_mount, state, MOUNT_FAILED), FLAG("duplicate", struct snap_mount, duplicate),
	U64("blocks", struct snap_mount, blocks), U64("bfree", struct snap_mount, bfree),
	U64("bavail", struct snap_mount, bavail), U64("files", struct snap_mount, files),
	U64("ffree", struct snap_mount, ffree), U64("favail", struct snap_mount, favail),
	U64("frsize", struct snap_mount, frsize), FLAG("held", struct snap_mount, held),
	PID("probe_pid", struct snap_mount, probe_pid), REAL("probe_seconds", struct snap_mount, probe_seconds),
	REAL("probe_started", struct snap_mount, probe_started), TEXT("probe_asks", struct snap_mount, probe_asks), END
};

/* The lines of a snapshot, in the order they are written. */
static const struct record records[] = {
	{ .key = "seconds", .fields = f_seconds },
	{ .key = "page_size", .fields = f_page_size },
	{ .key = "samples", .fields = f_samples },
	{ .key = "walks", .fields = f_walks },
	{ .key = "odirect_ebpf", .fields = f_odirect_ebpf },
	{ .key = "exits_ebpf", .fields = f_exits_ebpf },
	{ .key = "cache_ebpf", .fields = f_cache_ebpf },
	{ .key = "cache_files_known", .fields = f_cache_files_known },
	{ .key = "cache_mechanism", .fields = f_cache_mechanism, .when = W_SET },
	{ .key = "direct_file", .fields = f_direct_file, ARRAY(snap, direct_files) },
	{ .key = "direct", .fields = f_direct, ARRAY(snap, direct) },
	{ .key = "disk_seconds", .fields = f_disk_seconds },
	{ .key = "disk", .fields = f_disk, ARRAY(snap, disks), .children = r_disk },
	{ .key = "bio_known", .fields = f_bio_known },
	{ .key = "bio_unattributed_bytes", .fields = f_bio_unattributed, .when = W_SET },
	{ .key = "bio_mechanism", .fields = f_bio_mechanism, .when = W_SET },
	{ .key = "bio_proc", .fields = f_bio_proc, ARRAY(snap, bio_procs) },
	{ .key = "psi", .fields = f_psi, CHOICES("which", c_psi) },
	{ .key = "rate", .fields = f_rate, ARRAY(snap, rates) },
	{ .key = "vm", .fields = f_vm },
	{ .key = "mem", .fields = f_mem },
	{ .key = "swaps", .fields = f_swaps },
	{ .key = "dirty", .fields = f_dirty },
	{ .key = "task", .fields = f_task, ARRAY(snap, tasks) },
	{ .key = "probe", .fields = f_probe, ARRAY(snap, probes) },
	{ .key = "vtrace", .fields = f_vtrace, ARRAY(snap, vtrace), .children = r_vtrace },
	{ .key = "cache_proc", .fields = f_cache_proc, ARRAY(snap, cache_procs) },
	{ .key = "cache_file", .fields = f_cache_file, ARRAY(snap, cache_files) },
	{ .key = "memcg", .fields = f_memcg, ARRAY(snap, memcgs) },
	{ .key = "cgroup", .fields = f_cgroup, ARRAY(snap, cgroups) },
	{ .key = "container", .fields = f_container, ARRAY(snap, containers) },
	{ .key = "mount", .fields = f_mount, ARRAY(snap, mounts) },
	NO_RECORD
};

/* ---- Freeing ------------------------------------------------------------------------------ */

static size_t item_count(const struct record *r, const char *parent)
{
	return r->count_unsigned ? *(const unsigned *)(parent + r->count_offset)
				 : *(const size_t *)(parent + r->count_offset);
}

static void free_arrays(const struct record *table, char *parent)
{
	for (const struct record *r = table; r->key; r++) {
		char **array = (char **)(parent + r->array_offset);

		if (!r->array)
			continue;
		if (r->children)
			for (size_t i = 0; i < item_count(r, parent); i++)
				free_arrays(r->children, *array + i * r->item_size);
		free(*array);
		*array = NULL;
	}
}

void doctor_snapshot_free(struct doctor_snapshot *s)
{
	free_arrays(records, (char *)s);
	*s = (struct doctor_snapshot){0};
}

/* ---- Writing ------------------------------------------------------------------------------ */

/*
 * Where a snapshot is written: as text (doctor --record), or packed (the flight recorder's frames,
 * doctor_snapshot_pack): the same lines, each its record's number (record_number), the choice's
 * index, then its fields, whole numbers as LEB128 (signed ones zigzagged), reals as 1 + the whole
 * number they are (most: nanoseconds, bucket bounds), else 0 and their eight bytes, texts as their
 * length and bytes, an optional rest as a byte 1 (there) or 0.
 */
struct writer {
	FILE *f;
	bool packed;
};

/* A text field: " " then the text with what would split or break the line as \xNN; "-" when empty. */
static void put_text(FILE *f, const char *text)
{
	fputc(' ', f);
	if (!text[0] || !strcmp(text, "-")) {
		fputs(text[0] ? "\\x2d" : "-", f);
		return;
	}
	for (const unsigned char *c = (const unsigned char *)text; *c; c++)
		if (*c <= ' ' || *c >= 0x7f || *c == '\\')
			fprintf(f, "\\x%02x", *c);
		else
			fputc(*c, f);
}

/* A real exactly (17 significant digits read back the same double). */
static void put_real(FILE *f, double value)
{
	fprintf(f, " %.17g", isfinite(value) ? value : -1.0);
}

/* " N", as printf's %llu or %lld writes it, without its parsing of a format (most of a snapshot). */
static void put_integer(FILE *f, unsigned long long magnitude, bool negative)
{
	char digits[24], *p = digits + sizeof(digits);

	*--p = '\0';
	do
		*--p = (char)('0' + magnitude % 10);
	while (magnitude /= 10);
	if (negative)
		*--p = '-';
	*--p = ' ';
	fputs(p, f);
}

static void put_signed(FILE *f, long long value)
{
	put_integer(f, value < 0 ? 0ull - (unsigned long long)value : (unsigned long long)value, value < 0);
}

static void pack_varint(FILE *f, uint64_t value)
{
	unsigned char bytes[10];
	size_t n = 0;

	do {
		bytes[n] = (unsigned char)(value & 0x7f);
		value >>= 7;
		bytes[n++] |= value ? 0x80 : 0;
	} while (value);
	fwrite(bytes, 1, n, f);
}

static void pack_value(FILE *f, const struct field *d, const char *at)
{
	switch (d->type) {
	case F_U64:
		pack_varint(f, *(const uint64_t *)at);
		break;
	case F_U32:
	case F_REPEAT:
		pack_varint(f, *(const unsigned *)at);
		break;
	case F_FLAG:
		pack_varint(f, *(const bool *)at);
		break;
	case F_INT: {
		int64_t v = *(const int *)at;

		pack_varint(f, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63)); /* zigzag: -1 is 1, 1 is 2 */
		break;
	}
	case F_SMALL:
	case F_PID: /* (below 0, as text's "-N": a number too big for the field, refused) */
		pack_varint(f, (uint64_t)(int64_t)*(const int *)at);
		break;
	case F_REAL: {
		double v = isfinite(*(const double *)at) ? *(const double *)at : -1.0;
		unsigned char bytes[8];
		uint64_t bits;

		/* A whole number (most: nanoseconds, bucket bounds) as 1 + it; else 0 and the 8 bytes. */
		if (v >= 0 && v <= PACKED_WHOLE && v == floor(v) && !signbit(v)) {
			pack_varint(f, 1 + (uint64_t)v);
			break;
		}
		pack_varint(f, 0);
		memcpy(&bits, &v, sizeof(bits));
		for (int i = 0; i < 8; i++)
			bytes[i] = (unsigned char)(bits >> (8 * i));
		fwrite(bytes, 1, sizeof(bytes), f);
		break;
	}
	case F_TEXT: {
		size_t len = strnlen(at, d->size - 1);

		pack_varint(f, len);
		fwrite(at, 1, len, f);
		break;
	}
	case F_SIZE:
		pack_varint(f, *(const size_t *)at);
		break;
	case F_OPTIONAL:
		break;
	}
}

static void put_value(const struct writer *w, const struct field *d, const char *at)
{
	if (w->packed) {
		pack_value(w->f, d, at);
		return;
	}
	switch (d->type) {
	case F_U64:
		put_integer(w->f, *(const uint64_t *)at, false);
		break;
	case F_U32:
	case F_REPEAT:
		put_integer(w->f, *(const unsigned *)at, false);
		break;
	case F_FLAG:
		put_signed(w->f, *(const bool *)at);
		break;
	case F_INT:
	case F_SMALL:
		put_signed(w->f, *(const int *)at);
		break;
	case F_PID:
		put_signed(w->f, *(const pid_t *)at);
		break;
	case F_REAL:
		put_real(w->f, *(const double *)at);
		break;
	case F_TEXT:
		put_text(w->f, at);
		break;
	case F_SIZE:
		put_integer(w->f, *(const size_t *)at, false);
		break;
	case F_OPTIONAL:
		break;
	}
}

static void put_fields(const struct writer *w, const struct field *fields, const char *item)
{
	for (const struct field *d = fields; d->name; d++) {
		const char *at = item + d->offset;

		if (d->type == F_OPTIONAL) {
			bool there = d->offset == NO_FLAG || *(const bool *)at;

			if (w->packed)
				fputc(there, w->f);
			if (!there)
				return;
		}
		put_value(w, d, at);
		if (d->type == F_REPEAT)
			for (unsigned k = 0; k < *(const unsigned *)at; k++)
				for (const struct field *e = d->sub; e->name; e++)
					put_value(w, e, item + e->offset + k * e->size);
	}
}

/*
 * A record's number in a packed snapshot: its place in `records`, or for a line about the last item
 * of an array, PACKED_CHILD plus its owner's place times PACKED_CHILDREN plus its own (children
 * have none of their own).
 */
#define PACKED_CHILD 64
#define PACKED_CHILDREN 16

static uint64_t record_number(const struct record *owner, const struct record *r)
{
	const struct record *table = owner ? owner->children : records;
	uint64_t own = (uint64_t)(r - table);

	return owner ? PACKED_CHILD + (uint64_t)(owner - records) * PACKED_CHILDREN + own : own;
}

#define COUNT_OF(table) (sizeof(table) / sizeof((table)[0]) - 1)
_Static_assert(COUNT_OF(records) <= PACKED_CHILD && COUNT_OF(r_disk) <= PACKED_CHILDREN &&
		       COUNT_OF(r_vtrace) <= PACKED_CHILDREN, "packed record numbers: more records than they have");

/* The record a packed number names (record_number's inverse; *owner set for a child), or NULL. */
static const struct record *record_of(uint64_t number, const struct record **owner)
{
	const struct record *r;
	uint64_t own;

	*owner = NULL;
	if (number < PACKED_CHILD)
		return number < COUNT_OF(records) ? &records[number] : NULL;
	own = (number - PACKED_CHILD) % PACKED_CHILDREN;
	number = (number - PACKED_CHILD) / PACKED_CHILDREN;
	if (number >= COUNT_OF(records) || !records[number].children)
		return NULL;
	*owner = &records[number];
	for (r = (*owner)->children; r->key && own; r++, own--)
		;
	return r->key ? r : NULL;
}

static void put_line(const struct writer *w, const struct record *owner, const struct record *r,
		     const struct choice *c, const char *item)
{
	if (w->packed) {
		pack_varint(w->f, record_number(owner, r));
		if (c)
			pack_varint(w->f, (uint64_t)(c - r->choices));
	} else {
		fputs(r->key, w->f);
		if (c)
			fprintf(w->f, " %s", c->name);
	}
	put_fields(w, r->fields, item);
	if (!w->packed)
		fputc('\n', w->f);
}

/* Whether a W_SET record's first field says something. */
static bool is_set(const struct field *d, const char *item)
{
	return d->type == F_TEXT ? item[d->offset] != '\0' : *(const uint64_t *)(item + d->offset) != 0;
}

/* The lines of table (records, or owner's children) about parent. */
static void put_records(const struct writer *w, const struct record *owner, const char *parent)
{
	for (const struct record *r = owner ? owner->children : records; r->key; r++) {
		if ((r->when == W_FLAG && !*(const bool *)(parent + r->when_offset)) ||
		    (r->when == W_SET && !is_set(r->fields, parent)))
			continue;
		if (r->array) {
			const char *items = *(char *const *)(parent + r->array_offset);

			for (size_t i = 0; i < item_count(r, parent); i++) {
				put_line(w, owner, r, NULL, items + i * r->item_size);
				if (r->children)
					put_records(w, r, items + i * r->item_size);
			}
		} else if (r->choices) {
			for (const struct choice *c = r->choices; c->name; c++)
				if (c->when == NO_FLAG || *(const bool *)(parent + c->when))
					put_line(w, owner, r, c, parent + c->offset);
		} else {
			put_line(w, owner, r, NULL, parent);
		}
	}
}

int doctor_snapshot_write(const struct doctor_snapshot *s, FILE *f)
{
	const struct writer w = { .f = f };

	fprintf(f, "%s %d\n", SNAPSHOT_MAGIC, SNAPSHOT_VERSION);
	put_records(&w, NULL, (const char *)s);
	return ferror(f) ? -EIO : 0;
}

int doctor_snapshot_pack(const struct doctor_snapshot *s, FILE *f)
{
	const struct writer w = { .f = f, .packed = true };

	fwrite(PACKED_MAGIC, 1, sizeof(PACKED_MAGIC) - 1, f);
	pack_varint(f, SNAPSHOT_VERSION);
	put_records(&w, NULL, (const char *)s);
	return ferror(f) ? -EIO : 0;
}

/* ---- Parsing ------------------------------------------------------------------------------ */

struct parser {
	struct span line;    /* what is left of the line */
	const unsigned char *at, *end; /* packed: what is left */
	bool packed;
	unsigned number;     /* the line's (packed: the record's) */
	unsigned version;    /* the file's format */
	char *why;
	size_t why_len;
	bool failed;
};

static bool fail(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(struct parser *p, const char *fmt, ...)
{
	char what[256];
	va_list args;

	if (p->failed)
		return false;
	va_start(args, fmt);
	vsnprintf(what, sizeof(what), fmt, args);
	va_end(args);
	snprintf(p->why, p->why_len, "%s %u: %s", p->packed ? "record" : "line", p->number, what);
	p->failed = true;
	return false;
}

static bool next(struct parser *p, struct span *word, const char *what)
{
	if (p->failed)
		return false;
	if (!procfs_next_word(&p->line, word))
		return fail(p, "%s missing", what);
	return true;
}

/* Whether the line has another field (for the fields later versions of a line added at its end). */
static bool more(const struct parser *p)
{
	struct span rest = p->line, word;

	return procfs_next_word(&rest, &word);
}

/* A packed whole number (LEB128, at most 64 bits) into *value: true, or false (said). */
static bool varint(struct parser *p, uint64_t *value, const char *what)
{
	*value = 0;
	if (p->failed)
		return false;
	if (p->at < p->end && *p->at < 0x80) { /* (most: a byte) */
		*value = *p->at++;
		return true;
	}
	for (unsigned shift = 0;; shift += 7) {
		unsigned char byte;

		if (p->at >= p->end)
			return fail(p, "%s missing (cut short)", what);
		byte = *p->at++;
		if (shift == 63 && byte > 1)
			return fail(p, "%s: more than 64 bits", what);
		*value |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80))
			return true;
	}
}

static uint64_t u64(struct parser *p, const char *what)
{
	struct span word;
	uint64_t value = 0;

	if (p->packed)
		return varint(p, &value, what) ? value : 0;
	if (next(p, &word, what) && !procfs_parse_u64(word, 10, &value))
		fail(p, "%s: '%.*s' is not a whole number", what,
		     (int)(span_length(word) > 40 ? 40 : span_length(word)), word.start);
	return value;
}

static uint64_t u64_max(struct parser *p, const char *what, uint64_t max)
{
	uint64_t value = u64(p, what);

	if (!p->failed && value > max)
		fail(p, "%s: %llu is more than %llu", what, (unsigned long long)value, (unsigned long long)max);
	return p->failed ? 0 : value;
}

static bool flag(struct parser *p, const char *what)
{
	return u64_max(p, what, 1) != 0;
}

static int integer(struct parser *p, const char *what)
{
	struct span word;
	int value = 0;

	if (p->packed) {
		uint64_t zigzag;
		int64_t v;

		if (!varint(p, &zigzag, what))
			return 0;
		v = (int64_t)(zigzag >> 1) ^ -(int64_t)(zigzag & 1);
		if (v < INT_MIN || v > INT_MAX)
			fail(p, "%s: not a number", what);
		return p->failed ? 0 : (int)v;
	}
	if (next(p, &word, what) && !procfs_parse_int(word, &value))
		fail(p, "%s: not a number", what);
	return value;
}

static pid_t pid_of(struct parser *p, const char *what)
{
	return (pid_t)u64_max(p, what, 0x7fffffff);
}

static double real(struct parser *p, const char *what)
{
	struct span word;
	char text[64], *end;
	double value;

	if (p->packed) {
		uint64_t bits = 0;

		if (!varint(p, &bits, what))
			return 0;
		if (bits) { /* a whole number */
			if ((double)(bits - 1) <= SNAPSHOT_MAX_REAL)
				return (double)(bits - 1);
			fail(p, "%s: %llu is not a number up to %g", what, (unsigned long long)(bits - 1),
			     SNAPSHOT_MAX_REAL);
			return 0;
		}
		if (p->end - p->at < 8) {
			fail(p, "%s missing (cut short)", what);
			return 0;
		}
		for (int i = 0; i < 8; i++)
			bits |= (uint64_t)p->at[i] << (8 * i);
		p->at += 8;
		memcpy(&value, &bits, sizeof(value));
		/* (as text's: strtod refuses a subnormal, out of range) */
		if (isfinite(value) && fabs(value) <= SNAPSHOT_MAX_REAL && fpclassify(value) != FP_SUBNORMAL)
			return value;
		fail(p, "%s: %g is not a number up to %g", what, value, SNAPSHOT_MAX_REAL);
		return 0;
	}
	if (!next(p, &word, what))
		return 0;
	if (span_length(word) >= sizeof(text)) {
		fail(p, "%s: too long for a number", what);
		return 0;
	}
	memcpy(text, word.start, span_length(word));
	text[span_length(word)] = '\0';
	errno = 0;
	value = strtod(text, &end);
	if (errno || end == text || *end || !isfinite(value)) {
		fail(p, "%s: '%s' is not a number", what, text);
		return 0;
	}
	/* Rates of 10 TB/s, 300,000 years: more is no machine's, and would overflow what is computed from it. */
	if (fabs(value) > SNAPSHOT_MAX_REAL) {
		fail(p, "%s: %s is beyond %g", what, text, SNAPSHOT_MAX_REAL);
		return 0;
	}
	return value;
}

static int hex(char c)
{
	return c >= '0' && c <= '9' ? c - '0'
	    : c >= 'a' && c <= 'f'  ? c - 'a' + 10
	    : c >= 'A' && c <= 'F'  ? c - 'A' + 10
				    : -1;
}

/* A text field into buf (size bytes with its NUL): "-" is empty, \xNN a byte. */
static void word_text(struct parser *p, const char *what, char *buf, size_t size)
{
	struct span word;
	size_t used = 0;

	buf[0] = '\0';
	if (p->packed) {
		uint64_t len;

		if (!varint(p, &len, what))
			return;
		if (len >= size)
			fail(p, "%s: longer than %zu bytes", what, size - 1);
		else if ((uint64_t)(p->end - p->at) < len)
			fail(p, "%s missing (cut short)", what);
		else if (memchr(p->at, '\0', len))
			fail(p, "%s: a NUL byte", what);
		if (p->failed)
			return;
		memcpy(buf, p->at, len);
		buf[len] = '\0';
		p->at += len;
		return;
	}
	if (!next(p, &word, what))
		return;
	if (span_equals(word, "-"))
		return;
	for (const char *c = word.start; c < word.end; c++) {
		char byte = *c;

		if (byte == '\\') {
			int high, low;

			if (word.end - c < 4 || c[1] != 'x' || (high = hex(c[2])) < 0 || (low = hex(c[3])) < 0 ||
			    (high == 0 && low == 0)) {
				fail(p, "%s: a backslash must start \\xNN (not \\x00)", what);
				return;
			}
			byte = (char)(high << 4 | low);
			c += 3;
		}
		if (used + 1 >= size) {
			fail(p, "%s: longer than %zu bytes", what, size - 1);
			return;
		}
		buf[used++] = byte;
	}
	buf[used] = '\0';
}

/* Room for one more item of an array, at most SNAPSHOT_MAX_ITEMS: its place, zeroed, or NULL. */
static void *grow(struct parser *p, void **array, size_t *count, size_t size, const char *what)
{
	char *item;

	if (*count >= SNAPSHOT_MAX_ITEMS) {
		fail(p, "more than %d %s lines", SNAPSHOT_MAX_ITEMS, what);
		return NULL;
	}
	/* Room for twice as many when full (its room is the power of two at or above count): a line
	 * each, a realloc each was quadratic (58,622 cache_file lines: minutes under ASan). */
	if ((*count & (*count - 1)) == 0)
		*array = xrealloc(*array, (*count ? *count * 2 : 1) * size);
	item = (char *)*array + *count * size;
	memset(item, 0, size);
	(*count)++;
	return item;
}

#define GROW(p, array, count, what) grow(p, (void **)&(array), &(count), sizeof(*(array)), what)

static void get_value(struct parser *p, const struct field *d, char *at)
{
	switch (d->type) {
	case F_U64:
		*(uint64_t *)at = d->max ? u64_max(p, d->name, d->max) : u64(p, d->name);
		break;
	case F_U32:
	case F_REPEAT:
		*(unsigned *)at = (unsigned)u64_max(p, d->name, d->max ? d->max : UINT32_MAX);
		break;
	case F_FLAG:
		*(bool *)at = flag(p, d->name);
		break;
	case F_INT:
		*(int *)at = integer(p, d->name);
		break;
	case F_SMALL:
		*(int *)at = (int)u64_max(p, d->name, d->max);
		break;
	case F_PID:
		*(pid_t *)at = pid_of(p, d->name);
		break;
	case F_REAL:
		*(double *)at = real(p, d->name);
		break;
	case F_TEXT:
		word_text(p, d->name, at, d->size);
		break;
	case F_SIZE:
		*(size_t *)at = (size_t)u64_max(p, d->name, d->max);
		break;
	case F_OPTIONAL:
		break;
	}
}

static void get_fields(struct parser *p, const struct field *fields, char *item)
{
	for (const struct field *d = fields; d->name && !p->failed; d++) {
		char *at = item + d->offset;

		if (d->since > p->version)
			continue; /* not in a file of that version: left 0 */
		if (d->type == F_OPTIONAL) {
			if (!(p->packed ? u64_max(p, "the rest's byte", 1) : more(p)))
				return;
			if (d->offset != NO_FLAG)
				*(bool *)at = true;
			continue;
		}
		get_value(p, d, at);
		if (d->type == F_REPEAT)
			for (unsigned k = 0; k < *(unsigned *)at && !p->failed; k++)
				for (const struct field *e = d->sub; e->name; e++)
					get_value(p, e, item + e->offset + k * e->size);
		if (d->check && !p->failed)
			d->check(p, item);
	}
}

/* The member of parent a choice word names, or NULL (said). */
static char *choose(struct parser *p, const struct record *r, char *parent)
{
	char names[160] = "";
	struct span word;

	if (p->packed) {
		uint64_t index = u64(p, r->which);

		for (const struct choice *c = r->choices; c->name && !p->failed; c++)
			if (index-- == 0)
				return parent + c->offset;
		fail(p, "%s: %s: no such choice", r->key, r->which);
		return NULL;
	}
	if (!next(p, &word, r->which))
		return NULL;
	for (const struct choice *c = r->choices; c->name; c++)
		if (span_equals(word, c->name))
			return parent + c->offset;
	for (const struct choice *c = r->choices; c->name; c++)
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
			 c == r->choices ? "" : c[1].name ? ", " : " or ", c->name);
	fail(p, "%s: %s", r->key, names);
	return NULL;
}

static void get_record(struct parser *p, const struct record *r, char *parent)
{
	char *item = parent;

	if (r->array) {
		void **array = (void **)(parent + r->array_offset);

		if (r->count_unsigned) {
			size_t count = *(unsigned *)(parent + r->count_offset);

			item = grow(p, array, &count, r->item_size, r->key);
			*(unsigned *)(parent + r->count_offset) = (unsigned)count;
		} else {
			item = grow(p, array, (size_t *)(parent + r->count_offset), r->item_size, r->key);
		}
	} else if (r->choices) {
		item = choose(p, r, parent);
	}
	if (!item)
		return;
	if (r->when == W_FLAG)
		*(bool *)(parent + r->when_offset) = true;
	get_fields(p, r->fields, item);
}

/* A line of record r, about s, or (a child of owner's) about the last item of owner's array. */
static void get_line(struct parser *p, const struct record *owner, const struct record *r, struct doctor_snapshot *s)
{
	size_t count;

	if (!owner) {
		get_record(p, r, (char *)s);
		return;
	}
	count = item_count(owner, (const char *)s);
	if (!count) {
		fail(p, "%s before any %s line", r->key, owner->key);
		return;
	}
	get_record(p, r, *(char **)((char *)s + owner->array_offset) + (count - 1) * owner->item_size);
}

static void parse_line(struct parser *p, struct span key, struct doctor_snapshot *s)
{
	for (const struct record *r = records; r->key; r++)
		if (span_equals(key, r->key)) {
			get_line(p, NULL, r, s);
			return;
		}
	/* lines about the last item of an array */
	for (const struct record *r = records; r->key; r++)
		for (const struct record *c = r->children; c && c->key; c++)
			if (span_equals(key, c->key)) {
				get_line(p, r, c, s);
				return;
			}
	fail(p, "unknown key '%.*s'", (int)(span_length(key) > 40 ? 40 : span_length(key)), key.start);
}

/* The lines of a packed snapshot (doctor_snapshot_pack), after its magic. */
static void parse_packed(struct parser *p, struct doctor_snapshot *s)
{
	uint64_t version;

	p->number = 1;
	if (!varint(p, &version, "version"))
		return;
	if (version < 2 || version > SNAPSHOT_VERSION) { /* (packed since version 2) */
		fail(p, "version %llu: this doctor reads packed ones from 2 to %d", (unsigned long long)version,
		     SNAPSHOT_VERSION);
		return;
	}
	p->version = (unsigned)version;
	while (!p->failed && p->at < p->end) {
		const struct record *owner, *r;
		uint64_t number;

		p->number++;
		if (!varint(p, &number, "the record's number"))
			break;
		if (!(r = record_of(number, &owner))) {
			fail(p, "no record of that number");
			break;
		}
		get_line(p, owner, r, s);
	}
}

/* ---- Checks of single fields -------------------------------------------------------------- */

static void check_seconds(struct parser *p, void *item)
{
	const snap *s = item;

	if (s->seconds < 0 || s->seconds > 86400)
		fail(p, "seconds: from 0 to 86400");
}

static void check_page_size(struct parser *p, void *item)
{
	const snap *s = item;

	if (s->page_size < 512 || s->page_size > (1u << 24) || (s->page_size & (s->page_size - 1)))
		fail(p, "page_size: a power of two from 512 to 16 MiB");
}

static void check_cache_mechanism(struct parser *p, void *item)
{
	const snap *s = item;

	if (strcmp(s->cache_mechanism, "tracepoints") && strcmp(s->cache_mechanism, "fentry") &&
	    strcmp(s->cache_mechanism, "kprobes"))
		fail(p, "cache_mechanism: tracepoints, fentry or kprobes");
}

static void check_seen_by(struct parser *p, void *item)
{
	const struct snap_direct_process *d = item;

	if (strcmp(d->seen_by, "fdinfo") && strcmp(d->seen_by, "ebpf"))
		fail(p, "seen_by: fdinfo or ebpf");
}

static void copy_disk_names(struct parser *p, void *item)
{
	struct snap_disk *d = item;

	(void)p;
	d->start = d->mid = d->end;
}

static void check_latencies(struct parser *p, void *item)
{
	const struct snap_latency *l = item;

	if (l->p50_ns < 0 || l->p99_ns < 0 || l->device_p50_ns < 0 || l->device_p99_ns < 0 || l->queue_p50_ns < 0 ||
	    l->queue_p99_ns < 0)
		fail(p, "disk_latency: a latency below 0");
}

static void capacity_unknown(struct parser *p, void *item)
{
	struct snap_disk *d = item;

	(void)p;
	if (d->capacity_qd1_read_ns < 0)
		d->capacity_qd1_read_ns = NAN;
	if (d->capacity_qd1_write_ns < 0)
		d->capacity_qd1_write_ns = NAN;
	if (d->capacity_pct < 0)
		d->capacity_pct = NAN;
}

static void check_bio_mechanism(struct parser *p, void *item)
{
	const snap *s = item;

	if (strcmp(s->bio_mechanism, "block_io_start") && strcmp(s->bio_mechanism, "block_getrq"))
		fail(p, "bio_mechanism: block_io_start or block_getrq");
}

static void check_bio_proc_latencies(struct parser *p, void *item)
{
	const struct snap_bio_proc *b = item;

	if (b->p50_ns < 0 || b->p99_ns < 0)
		fail(p, "bio_proc: a latency below 0");
}

static void check_bio_proc_reads(struct parser *p, void *item)
{
	const struct snap_bio_proc *b = item;

	if (b->read_requests > b->requests || b->read_bytes > b->bytes)
		fail(p, "bio_proc: more reads than requests");
}

static void check_bio_proc_ops(struct parser *p, void *item)
{
	const struct snap_bio_proc *b = item;

	/* (as counted while requests end, a percentile may pass the max by a moment: not checked) */
	if (b->write_requests > b->requests - b->read_requests || b->write_bytes > b->bytes - b->read_bytes)
		fail(p, "bio_proc: more reads and writes than requests");
	for (int k = 0; k < 2 && !p->failed; k++)
		if (b->op[k].avg_ns < 0 || b->op[k].p50_ns < 0 || b->op[k].p99_ns < 0 || b->op[k].max_ns < 0)
			fail(p, "bio_proc: a %s latency below 0", k ? "write" : "read");
}

static void check_swaps_zram(struct parser *p, void *item)
{
	const snap *s = item;

	if (s->swaps_zram > s->swaps)
		fail(p, "on zram: %u is more than %u", s->swaps_zram, s->swaps);
}

static void check_runtime(struct parser *p, void *item)
{
	const struct snap_container *c = item;
	bool known = false;

	for (int r = 1; r < CONTAINER_RUNTIMES; r++)
		known |= !strcmp(c->runtime, container_runtime_names[r]);
	if (!known)
		fail(p, "runtime: not one of docker, podman, containerd, cri-o, kubernetes, machine, lxc");
}

static void check_container_id(struct parser *p, void *item)
{
	const struct snap_container *c = item;

	if (c->id[0] && !container_id_valid(c->id, strlen(c->id)))
		fail(p, "id: not 64 hex digits");
}

/* What the lines cannot say alone: indexes in range, the page size there. */
static bool check(const struct doctor_snapshot *s, char *why, size_t why_len)
{
	for (size_t i = 0; i < s->ndirect; i++)
		for (unsigned k = 0; k < s->direct[i].nfiles; k++)
			if (s->direct[i].files[k] >= s->ndirect_files) {
				snprintf(why, why_len, "direct %d: file %zu, but %zu direct_file lines",
					 (int)s->direct[i].pid, s->direct[i].files[k], s->ndirect_files);
				return false;
			}
	if (!s->page_size) {
		snprintf(why, why_len, "no page_size line");
		return false;
	}
	return true;
}

int doctor_snapshot_parse(const char *text, size_t len, struct doctor_snapshot *out, char *why, size_t why_len)
{
	struct parser p = { .why = why, .why_len = why_len };
	const char *cursor = text, *end = text + len;
	struct span line, key;
	bool header = false;

	*out = (struct doctor_snapshot){0};
	if (len >= sizeof(PACKED_MAGIC) - 1 && !memcmp(text, PACKED_MAGIC, sizeof(PACKED_MAGIC) - 1)) {
		p.packed = header = true;
		p.at = (const unsigned char *)text + sizeof(PACKED_MAGIC) - 1;
		p.end = (const unsigned char *)end;
		parse_packed(&p, out);
	}
	while (!p.packed && !p.failed && procfs_next_line(&cursor, end, &line)) {
		p.number++;
		line = procfs_trim(line);
		if (!span_length(line) || line.start[0] == '#')
			continue;
		if (memchr(line.start, '\0', span_length(line))) {
			fail(&p, "a NUL byte");
			break;
		}
		p.line = line;
		procfs_next_word(&p.line, &key);
		if (!header) {
			if (!span_equals(key, SNAPSHOT_MAGIC)) {
				fail(&p, "not a doctor snapshot (the first line is not '%s %d')", SNAPSHOT_MAGIC,
				     SNAPSHOT_VERSION);
				break;
			}
			/* Its format's version: those before it were all named, and version 1 said nothing. */
			p.version = more(&p) ? (unsigned)u64_max(&p, "version", UINT32_MAX) : 1;
			if (!p.failed && (p.version < 1 || p.version > SNAPSHOT_VERSION))
				fail(&p, "version %u: this doctor reads up to version %d", p.version, SNAPSHOT_VERSION);
			header = true;
		} else {
			parse_line(&p, key, out);
		}
		if (!p.failed && procfs_next_word(&p.line, &key))
			fail(&p, "more fields than a %s line has", header ? "snapshot" : "header");
	}
	if (!p.failed && !header) {
		p.number = 1;
		fail(&p, "empty: not a doctor snapshot");
	}
	if (p.failed || !check(out, why, why_len)) {
		doctor_snapshot_free(out);
		return -1;
	}
	return 0;
}

int doctor_snapshot_load(const char *path, struct doctor_snapshot *out, char *why, size_t why_len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	char *text = NULL, message[384];
	size_t len = 0;
	struct stat st;
	int rc = -1;

	*out = (struct doctor_snapshot){0};
	if (fd < 0) {
		snprintf(why, why_len, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, why_len, "%s: not a regular file", path);
		goto cleanup;
	}
	if ((uint64_t)st.st_size > SNAPSHOT_MAX_BYTES) {
		snprintf(why, why_len, "%s: larger than %u MiB: not a doctor snapshot", path, SNAPSHOT_MAX_BYTES >> 20);
		goto cleanup;
	}
	text = xcalloc(1, (size_t)st.st_size + 1);
	while (len < (size_t)st.st_size) {
		ssize_t n = read(fd, text + len, (size_t)st.st_size - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(why, why_len, "%s: %s", path, strerror(errno));
			goto cleanup;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (doctor_snapshot_parse(text, len, out, message, sizeof(message)) != 0) {
		snprintf(why, why_len, "%s: %s", path, message);
		goto cleanup;
	}
	rc = 0;
cleanup:
	free(text);
	close(fd);
	return rc;
}
