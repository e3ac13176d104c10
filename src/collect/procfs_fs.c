/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * procfs_fs.c: swap areas (/proc/swaps), open files and inodes (/proc/sys/fs), file locks
 * (/proc/locks), SysV IPC objects, mount devices (/proc/self/mountinfo).
 */
#include "collect/procfs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "collect/procfs_internal.h"
#include "common/util.h"

/* ---- /proc/swaps ------------------------------------------------------------------- */

/* "NAME TYPE SIZE USED PRIORITY": the name escaped by the kernel (" \t\n\\" as octal), sizes in KiB. */
static int swaps_line(struct span line, struct swap_area *area)
{
	struct span name, type, size, used, priority, extra;
	uint64_t size_kib, used_kib;

	if (!procfs_next_word(&line, &name) || !procfs_next_word(&line, &type) || !procfs_next_word(&line, &size) ||
	    !procfs_next_word(&line, &used) || !procfs_next_word(&line, &priority) || procfs_next_word(&line, &extra))
		return -EINVAL;
	if (span_length(type) >= sizeof(area->type) || !procfs_parse_u64(size, 10, &size_kib) ||
	    !procfs_parse_u64(used, 10, &used_kib) || size_kib > UINT64_MAX / 1024 || used_kib > UINT64_MAX / 1024 ||
	    !procfs_parse_int(priority, &area->priority))
		return -EINVAL;
	procfs_copy_name(area->name, sizeof(area->name), name);
	procfs_copy_name(area->type, sizeof(area->type), type);
	area->size = size_kib * 1024;
	area->used = used_kib * 1024;
	return 0;
}

int swaps_parse(const char *text, size_t len, struct swaps *out)
{
	const char *cursor = text, *end = text + len;
	unsigned capacity = 0;
	struct span line, word;

	*out = (struct swaps){0};
	/* The header comes even with no swap: without it this is not the file (or not all of it). */
	if (!procfs_next_line(&cursor, end, &line) || !procfs_next_word(&line, &word) || !span_equals(word, "Filename"))
		return -EINVAL;
	while (procfs_next_line(&cursor, end, &line)) {
		if (span_length(procfs_trim(line)) == 0)
			continue;
		if (out->count == capacity) {
			capacity = capacity ? capacity * 2 : 4;
			out->area = xrealloc(out->area, capacity * sizeof(*out->area));
		}
		if (swaps_line(line, &out->area[out->count]) != 0) {
			swaps_free(out);
			return -EINVAL;
		}
		out->count++;
	}
	return 0;
}

int swaps_read(struct swaps *out)
{
	static struct sysroot_file file = SYSROOT_FILE("/proc/swaps");
	const char *text;
	size_t len;
	int rc = procfs_read_hot(&file, &text, &len);

	if (rc != 0) {
		*out = (struct swaps){0};
		return rc;
	}
	return swaps_parse(text, len, out);
}

void swaps_free(struct swaps *swaps)
{
	free(swaps->area);
	swaps->area = NULL;
	swaps->count = 0;
}

/* ---- /proc/sys/fs ------------------------------------------------------------------ */

int procfs_parse_numbers(const char *text, size_t len, uint64_t *values, unsigned max)
{
	const char *cursor = text, *end = text + len;
	struct span line, word;
	unsigned count = 0;

	while (count < max && procfs_next_line(&cursor, end, &line))
		while (count < max && procfs_next_word(&line, &word)) {
			if (!procfs_parse_u64(word, 10, &values[count]))
				return -EINVAL;
			count++;
		}
	return (int)count;
}

/* At least `count` numbers from the file into values; 0, -errno or -EINVAL. */
static int read_numbers(struct sysroot_file *file, uint64_t *values, unsigned count)
{
	const char *text;
	size_t len;
	int rc = procfs_read_hot(file, &text, &len);

	if (rc != 0)
		return rc;
	rc = procfs_parse_numbers(text, len, values, count);
	return rc == (int)count ? 0 : -EINVAL;
}

/* Keeps the first error; a missing file (a kernel without AIO or SysV IPC) is none. */
static void note_error(int *first, int rc)
{
	if (rc != 0 && rc != -ENOENT && *first == 0)
		*first = rc;
}

int fsstat_read(struct fsstat *out)
{
	static struct sysroot_file file_nr = SYSROOT_FILE("/proc/sys/fs/file-nr");
	static struct sysroot_file inode_nr = SYSROOT_FILE("/proc/sys/fs/inode-nr");
	static struct sysroot_file aio_nr = SYSROOT_FILE("/proc/sys/fs/aio-nr");
	static struct sysroot_file aio_max_nr = SYSROOT_FILE("/proc/sys/fs/aio-max-nr");
	uint64_t pair[2];
	int first_error = 0, rc;

	out->files_open = out->inodes_used = out->aio_nr = out->aio_max_nr = PROCFS_UNKNOWN;
	/* "allocated free max": free has stayed 0 since 2.6, but subtracting it is what it means. */
	rc = read_numbers(&file_nr, pair, 2);
	if (rc == 0)
		out->files_open = pair[0] > pair[1] ? pair[0] - pair[1] : 0;
	note_error(&first_error, rc);
	/* "inodes unused": per-cpu sums read at different moments, so unused may pass the total. */
	rc = read_numbers(&inode_nr, pair, 2);
	if (rc == 0)
		out->inodes_used = pair[0] > pair[1] ? pair[0] - pair[1] : 0;
	note_error(&first_error, rc);
	/* A number that could not be read is left unknown: parsing writes only what it got. */
	note_error(&first_error, read_numbers(&aio_nr, &out->aio_nr, 1));
	note_error(&first_error, read_numbers(&aio_max_nr, &out->aio_max_nr, 1));
	return first_error;
}

/* ---- /proc/locks ------------------------------------------------------------------- */

/*
 * "ID: KIND MODE ACCESS PID DEV:INODE START END", and "ID: -> KIND ..." for a waiter
 * blocked behind lock ID (deeper waiters are indented further). KIND is POSIX, OFDLCK
 * or ACCESS (all fcntl locks), FLOCK, LEASE or DELEG (an NFS delegation is a lease).
 */
static int locks_line(struct span line, struct locks *count)
{
	struct span id, kind, mode, access;
	uint64_t number;

	if (!procfs_next_word(&line, &id))
		return 0;
	if (id.end[-1] != ':' || !procfs_parse_u64((struct span){id.start, id.end - 1}, 10, &number) ||
	    !procfs_next_word(&line, &kind))
		return -EINVAL;
	if (span_equals(kind, "->")) {
		if (!procfs_next_word(&line, &kind))
			return -EINVAL;
		count->blocked++;
		return 0;
	}
	if (!procfs_next_word(&line, &mode) || !procfs_next_word(&line, &access))
		return -EINVAL;
	if (span_equals(kind, "POSIX") || span_equals(kind, "OFDLCK") || span_equals(kind, "ACCESS"))
		count->posix++;
	else if (span_equals(kind, "FLOCK"))
		count->flock++;
	else if (span_equals(kind, "LEASE") || span_equals(kind, "DELEG"))
		count->lease++;
	/* "RW" was a LOCK_MAND flock of Samba's until 5.16. */
	if (span_equals(access, "READ") || span_equals(access, "RW"))
		count->read++;
	if (span_equals(access, "WRITE") || span_equals(access, "RW"))
		count->write++;
	return 0;
}

int locks_parse(const char *text, size_t len, struct locks *out)
{
	const char *cursor = text, *end = text + len;
	struct span line;

	*out = (struct locks){0};
	while (procfs_next_line(&cursor, end, &line))
		if (locks_line(line, out) != 0) {
			*out = (struct locks){0};
			return -EINVAL;
		}
	return 0;
}

int locks_read(struct locks *out)
{
	static struct sysroot_file file = SYSROOT_FILE("/proc/locks");
	const char *text;
	size_t len;
	int rc = procfs_read_hot(&file, &text, &len);

	if (rc != 0) {
		*out = (struct locks){0};
		return rc;
	}
	return locks_parse(text, len, out);
}

/* ---- /proc/sysvipc ----------------------------------------------------------------- */

uint64_t ipc_count_lines(const char *text, size_t len)
{
	const char *cursor = text, *end = text + len;
	struct span line;
	uint64_t count = 0;

	if (!procfs_next_line(&cursor, end, &line))
		return 0;
	while (procfs_next_line(&cursor, end, &line))
		if (span_length(procfs_trim(line)) > 0)
			count++;
	return count;
}

int ipc_read(struct ipc *out)
{
	static struct sysroot_file files[] = {
		SYSROOT_FILE("/proc/sysvipc/msg"),
		SYSROOT_FILE("/proc/sysvipc/sem"),
		SYSROOT_FILE("/proc/sysvipc/shm"),
	};
	uint64_t *counts[] = {&out->msg_queues, &out->sem_arrays, &out->shm_segments};
	const char *text;
	size_t len;
	int first_error = 0;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		int rc = procfs_read_hot(&files[i], &text, &len);

		*counts[i] = rc == 0 ? ipc_count_lines(text, len) : PROCFS_UNKNOWN;
		note_error(&first_error, rc);
	}
	return first_error;
}

/* ---- /proc/self/mountinfo ----------------------------------------------------------- */

/* "ID PARENT MAJOR:MINOR ROOT MOUNTPOINT OPTIONS ...": the kernel escapes " \t\n\\" in paths as octal. */
static int mountinfo_line(struct span line, struct mount_device *mount)
{
	static const char none[] = "";
	struct span id, parent, device, root, dir, minor, word, type = { none, none };
	uint64_t major_value, minor_value;
	const char *colon;
	char *out;

	if (!procfs_next_word(&line, &id) || !procfs_next_word(&line, &parent) || !procfs_next_word(&line, &device) ||
	    !procfs_next_word(&line, &root) || !procfs_next_word(&line, &dir))
		return -EINVAL;
	colon = memchr(device.start, ':', span_length(device));
	if (!colon)
		return -EINVAL;
	minor = (struct span){ colon + 1, device.end };
	if (!procfs_parse_u64((struct span){ device.start, colon }, 10, &major_value) ||
	    !procfs_parse_u64(minor, 10, &minor_value) || major_value > UINT32_MAX || minor_value > UINT32_MAX)
		return -EINVAL;
	mount->major = (unsigned)major_value;
	mount->minor = (unsigned)minor_value;
	mount->dir = out = xcalloc(span_length(dir) + 1, 1);
	for (const char *p = dir.start; p < dir.end; p++) {
		if (*p == '\\' && dir.end - p >= 4 && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' &&
		    p[3] >= '0' && p[3] <= '7') {
			*out++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
			p += 3;
		} else {
			*out++ = *p;
		}
	}
	*out = '\0';
	/* Its options and optional fields, up to the separator; then the filesystem's type. */
	while (procfs_next_word(&line, &word))
		if (span_length(word) == 1 && *word.start == '-') {
			if (!procfs_next_word(&line, &type))
				type = (struct span){ none, none };
			break;
		}
	mount->type = xcalloc(span_length(type) + 1, 1);
	memcpy(mount->type, type.start, span_length(type));
	/* Then the source, and the superblock's options. */
	mount->project_quota = procfs_next_word(&line, &word) && procfs_next_word(&line, &word) &&
			       span_lists(word, "prjquota");
	return 0;
}

int mountinfo_parse(const char *text, size_t len, struct mountinfo *out)
{
	const char *cursor = text, *end = text + len;
	struct span line;

	*out = (struct mountinfo){0};
	while (procfs_next_line(&cursor, end, &line)) {
		struct mount_device mount;

		if (!span_length(procfs_trim(line)))
			continue;
		if (mountinfo_line(line, &mount) != 0) {
			mountinfo_free(out);
			return -EINVAL;
		}
		out->mount = xrealloc(out->mount, (out->count + 1) * sizeof(*out->mount));
		out->mount[out->count++] = mount;
	}
	return 0;
}

int mountinfo_read(struct mountinfo *out)
{
	struct sysroot_file file = SYSROOT_FILE("/proc/self/mountinfo");
	const char *text;
	size_t len;
	int rc = sysroot_file_read(&file, &text, &len);

	*out = (struct mountinfo){0};
	if (rc == 0)
		rc = mountinfo_parse(text, len, out);
	sysroot_file_close(&file);
	return rc;
}

void mountinfo_free(struct mountinfo *mounts)
{
	for (size_t i = 0; i < mounts->count; i++) {
		free(mounts->mount[i].dir);
		free(mounts->mount[i].type);
	}
	free(mounts->mount);
	*mounts = (struct mountinfo){0};
}

const struct mount_device *mountinfo_find(const struct mountinfo *mounts, const char *dir)
{
	for (size_t i = mounts->count; i-- > 0;)
		if (!strcmp(mounts->mount[i].dir, dir))
			return &mounts->mount[i];
	return NULL;
}

bool mountinfo_device(const struct mountinfo *mounts, const char *dir, unsigned *major, unsigned *minor)
{
	const struct mount_device *m = mountinfo_find(mounts, dir);

	if (!m)
		return false;
	*major = m->major;
	*minor = m->minor;
	return true;
}
