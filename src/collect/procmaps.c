/* SPDX-License-Identifier: GPL-2.0-or-later */
/* procmaps.c: parses /proc/PID/maps and smaps lines, and finds the processes that map a file. */
#include "collect/procmaps.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "collect/sysroot.h"
#include "common/util.h"

/* Hex digits up to the first character that is not one; false when there are none or too many. */
static bool parse_hex(const char **cursor, uint64_t *value)
{
	const char *p = *cursor;
	uint64_t v = 0;
	int digits = 0;

	for (; isxdigit((unsigned char)*p); p++, digits++) {
		if (digits == 16)
			return false;
		v = v * 16 + (uint64_t)(isdigit((unsigned char)*p) ? *p - '0' : (*p | 0x20) - 'a' + 10);
	}
	*cursor = p;
	*value = v;
	return digits > 0;
}

static bool expect(const char **cursor, char c)
{
	if (**cursor != c)
		return false;
	(*cursor)++;
	return true;
}

static void skip_spaces(const char **cursor)
{
	while (**cursor == ' ' || **cursor == '\t')
		(*cursor)++;
}

/* "start-end perms offset major:minor inode [path]", as show_map_vma prints it. */
bool procmaps_parse_line(const char *line, struct procmaps_entry *out)
{
	const char *p = line;
	uint64_t major, minor, inode = 0;
	int digits = 0;

	if (!parse_hex(&p, &out->start) || !expect(&p, '-') || !parse_hex(&p, &out->end) || !expect(&p, ' '))
		return false;
	for (int i = 0; i < 4; i++, p++) {
		if (!*p || *p == ' ')
			return false;
		out->perms[i] = *p;
	}
	out->perms[4] = '\0';
	if (!expect(&p, ' ') || !parse_hex(&p, &out->offset) || !expect(&p, ' '))
		return false;
	if (!parse_hex(&p, &major) || !expect(&p, ':') || !parse_hex(&p, &minor) || !expect(&p, ' '))
		return false;
	if (major > 0xfff || minor > 0xfffff)
		return false;
	for (; isdigit((unsigned char)*p); p++, digits++) {
		if (digits == 20 || inode > (UINT64_MAX - 9) / 10)
			return false;
		inode = inode * 10 + (uint64_t)(*p - '0');
	}
	if (!digits || (*p && *p != ' ' && *p != '\n'))
		return false;
	skip_spaces(&p);
	out->major = (unsigned)major;
	out->minor = (unsigned)minor;
	out->inode = inode;
	out->path = p;
	return true;
}

static int compare_mapped(const void *a, const void *b)
{
	const struct mapped_file *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

static void load_process(pid_t pid, struct mapped_files *out, size_t *capacity)
{
	char path[4200], *line = NULL;
	size_t line_capacity = 0;
	struct procmaps_entry entry;
	FILE *maps = NULL;

	if (sysroot_path(path, sizeof(path), "/proc/%d/maps", (int)pid))
		maps = fopen(path, "re");
	if (!maps) {
		out->unreadable += errno == EACCES || errno == EPERM;
		return;
	}
	/* Another user's maps opens, then reading it fails with EACCES. */
	errno = 0;
	while (getline(&line, &line_capacity, maps) > 0) {
		if (!procmaps_parse_line(line, &entry) || !entry.inode)
			continue;
		struct mapped_file item = { makedev(entry.major, entry.minor), (ino_t)entry.inode, pid };
		/* One process maps a file in several pieces; keep one of them. */
		if (out->count && !compare_mapped(&out->items[out->count - 1], &item))
			continue;
		if (out->count == *capacity) {
			*capacity = *capacity ? *capacity * 2 : 1024;
			out->items = xrealloc(out->items, *capacity * sizeof(*out->items));
		}
		out->items[out->count++] = item;
	}
	out->unreadable += ferror(maps) && (errno == EACCES || errno == EPERM);
	free(line);
	fclose(maps);
}

int mapped_files_load(struct mapped_files *out)
{
	size_t capacity = 0;
	struct proc_pids pids;
	pid_t pid;
	int rc;

	*out = (struct mapped_files){0};
	if ((rc = proc_pids_open(&pids, 0)) != 0)
		return rc;
	while ((pid = proc_pids_next(&pids)))
		load_process(pid, out, &capacity);
	proc_pids_close(&pids);
	if (out->count)
		qsort(out->items, out->count, sizeof(*out->items), compare_mapped);
	return 0;
}

size_t mapped_files_find(const struct mapped_files *files, dev_t dev, ino_t ino, pid_t *pids, size_t max)
{
	struct mapped_file key = { dev, ino, 0 };
	size_t low = 0, high = files->count, found = 0;

	/* The first item not below (dev, ino, 0). */
	while (low < high) {
		size_t mid = low + (high - low) / 2;
		if (compare_mapped(&files->items[mid], &key) < 0)
			low = mid + 1;
		else
			high = mid;
	}
	for (size_t i = low; i < files->count && files->items[i].dev == dev && files->items[i].ino == ino; i++) {
		if (found && files->items[i].pid == files->items[i - 1].pid)
			continue;
		if (found < max)
			pids[found] = files->items[i].pid;
		found++;
	}
	return found;
}

void mapped_files_free(struct mapped_files *files)
{
	free(files->items);
	*files = (struct mapped_files){0};
}

bool procmaps_maps_locked(pid_t pid, dev_t dev, ino_t ino)
{
	char path[4200], *line = NULL;
	size_t line_capacity = 0;
	struct procmaps_entry entry;
	bool in_file = false, locked = false;
	FILE *smaps = NULL;

	if (sysroot_path(path, sizeof(path), "/proc/%d/smaps", (int)pid))
		smaps = fopen(path, "re");
	if (!smaps)
		return false;
	while (!locked && getline(&line, &line_capacity, smaps) > 0) {
		if (procmaps_parse_line(line, &entry)) {
			in_file = entry.inode == ino && makedev(entry.major, entry.minor) == dev;
			continue;
		}
		/* "VmFlags: rd ex mr mw me lo ..." closes each mapping's block; "lo" is VM_LOCKED. */
		if (in_file && !strncmp(line, "VmFlags:", 8)) {
			for (char *flag = line + 8; (flag = strstr(flag, " lo")); flag += 3)
				if (flag[3] == ' ' || flag[3] == '\n' || flag[3] == '\0')
					locked = true;
		}
	}
	free(line);
	fclose(smaps);
	return locked;
}
