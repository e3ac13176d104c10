/* SPDX-License-Identifier: GPL-2.0-or-later */
/* memcg.c: a process's memory cgroup (cgroup v2, or v1's memory controller): its limit, what it uses, its refaults. */
#include "collect/memcg.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "collect/mounts.h"
#include "collect/sysroot.h"

/* The next line of text[*at..len): its start and length, without the newline; false at the end. */
static bool next_line(const char *text, size_t len, size_t *at, const char **line, size_t *line_len)
{
	const char *end;

	if (*at >= len)
		return false;
	*line = text + *at;
	end = memchr(*line, '\n', len - *at);
	*line_len = end ? (size_t)(end - *line) : len - *at;
	*at += *line_len + 1;
	return true;
}

static bool copy_field(const char *from, size_t n, char *to, size_t size)
{
	if (n >= size || memchr(from, '\0', n))
		return false;
	memcpy(to, from, n);
	to[n] = '\0';
	return true;
}

int memcg_cgroup_parse(const char *text, size_t len, char *v2, size_t v2_size, char *v1_memory, size_t v1_size)
{
	const char *line;
	size_t at = 0, line_len;
	bool any = false;

	if (v2_size)
		v2[0] = '\0';
	if (v1_size)
		v1_memory[0] = '\0';
	/* "hierarchy-ID:controller-list:cgroup-path", the path to the end of the line. */
	while (next_line(text, len, &at, &line, &line_len)) {
		const char *first = memchr(line, ':', line_len), *second;
		size_t controllers_len;

		if (!first || !(second = memchr(first + 1, ':', line_len - (size_t)(first + 1 - line))) ||
		    second + 1 >= line + line_len || second[1] != '/')
			continue;
		any = true;
		controllers_len = (size_t)(second - first - 1);
		if (first == line + 1 && line[0] == '0' && controllers_len == 0) {
			copy_field(second + 1, line_len - (size_t)(second + 1 - line), v2, v2_size);
			continue;
		}
		for (const char *c = first + 1; c < second;) {
			const char *comma = memchr(c, ',', (size_t)(second - c)), *end = comma ? comma : second;

			if (end - c == 6 && !memcmp(c, "memory", 6))
				copy_field(second + 1, line_len - (size_t)(second + 1 - line), v1_memory, v1_size);
			c = end + 1;
		}
	}
	return any ? 0 : -EINVAL;
}

static int parse_number(const char *text, size_t len, uint64_t *out)
{
	uint64_t value = 0;

	if (!len)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (text[i] < '0' || text[i] > '9' || value > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		value = value * 10 + (uint64_t)(text[i] - '0');
	}
	*out = value;
	return 0;
}

int memcg_stat_value(const char *text, size_t len, const char *key, uint64_t *out)
{
	size_t key_len = strlen(key), at = 0, line_len;
	const char *line;

	while (next_line(text, len, &at, &line, &line_len)) {
		if (line_len > key_len && !memcmp(line, key, key_len) && line[key_len] == ' ')
			return parse_number(line + key_len + 1, line_len - key_len - 1, out);
	}
	return -ENOENT;
}

int memcg_limit_parse(const char *text, size_t len, uint64_t *out)
{
	while (len && (text[len - 1] == '\n' || text[len - 1] == ' '))
		len--;
	if (len == 3 && !memcmp(text, "max", 3)) {
		*out = MEMCG_UNLIMITED;
		return 0;
	}
	if (parse_number(text, len, out) != 0)
		return -EINVAL;
	if (*out >= (1ull << 62)) /* v1 says "no limit" with PAGE_COUNTER_MAX pages in bytes */
		*out = MEMCG_UNLIMITED;
	return 0;
}

/* The mount point of the first mount of this type (and, for v1, with this option). */
static void find_mount(const char *type, const char *option, char *out, size_t size)
{
	struct mounts mounts;

	out[0] = '\0';
	if (mounts_read(&mounts) != 0)
		return;
	for (size_t i = 0; i < mounts.count; i++)
		if (!strcmp(mounts.list[i].type, type) && (!option || mount_option(&mounts.list[i], option))) {
			snprintf(out, size, "%s", mounts.list[i].dir);
			break;
		}
	mounts_free(&mounts);
}

static char v2_mount[512];
static bool v2_mounted;

const char *memcg_v2_mount(void)
{
	if (!v2_mount[0]) {
		find_mount("cgroup2", NULL, v2_mount, sizeof(v2_mount));
		v2_mounted = v2_mount[0] != '\0';
		if (!v2_mounted)
			snprintf(v2_mount, sizeof(v2_mount), "/sys/fs/cgroup");
	}
	return v2_mount;
}

bool memcg_v2_mounted(void)
{
	memcg_v2_mount();
	return v2_mounted;
}

const char *memcg_v1_memory_mount(void)
{
	static char mount[512];
	static bool looked;

	if (!looked) {
		find_mount("cgroup", "memory", mount, sizeof(mount));
		looked = true;
	}
	return mount;
}

bool cgroup_v1_mount(const char *controllers, char *out, size_t size)
{
	char first[64];
	size_t n = strcspn(controllers, ",");

	if (!n || n >= sizeof(first))
		return false;
	memcpy(first, controllers, n);
	first[n] = '\0';
	find_mount("cgroup", first, out, size);
	return out[0] != '\0';
}

/* A whole small file of the cgroup's directory. */
static int read_cgroup_file(const char *dir, const char *name, struct sysroot_file *file, const char **text,
			    size_t *len)
{
	char path[1200];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	file->path = path;
	file->fd = -1;
	return sysroot_file_read(file, text, len);
}

/* The files of the cgroup at path (as /proc/PID/cgroup names it) of version 1 or 2. */
static void memcg_read(int version, const char *path, struct memcg *out)
{
	struct sysroot_file file = SYSROOT_FILE(NULL);
	const char *text;
	char dir[1100];
	size_t len;
	uint64_t value;

	out->version = version;
	snprintf(out->path, sizeof(out->path), "%s", path);
	snprintf(dir, sizeof(dir), "%s%s", version == 1 ? memcg_v1_memory_mount() : memcg_v2_mount(), path);
	if (read_cgroup_file(dir, version == 2 ? "memory.max" : "memory.limit_in_bytes", &file, &text, &len) == 0)
		memcg_limit_parse(text, len, &out->max);
	sysroot_file_close(&file);
	if (read_cgroup_file(dir, version == 2 ? "memory.current" : "memory.usage_in_bytes", &file, &text, &len) == 0 &&
	    memcg_limit_parse(text, len, &value) == 0)
		out->current = value;
	sysroot_file_close(&file);
	if (read_cgroup_file(dir, "memory.stat", &file, &text, &len) == 0)
		memcg_stat_value(text, len, "workingset_refault_file", &out->refaults);
	sysroot_file_close(&file);
	if (version == 2 && read_cgroup_file(dir, "memory.events", &file, &text, &len) == 0 &&
	    memcg_stat_value(text, len, "max", &value) == 0)
		out->events_max = value;
	sysroot_file_close(&file);
	/* The root cgroup has no limit file: a process there is limited by the machine only. */
}

static void memcg_clear(struct memcg *out)
{
	memset(out, 0, sizeof(*out));
	out->max = MEMCG_UNLIMITED;
	out->events_max = UINT64_MAX;
}

int memcg_of_pid(pid_t pid, struct memcg *out)
{
	struct sysroot_file file = SYSROOT_FILE(NULL);
	char proc_path[64], v2[512], v1[512];
	const char *text;
	size_t len;
	int rc;

	memcg_clear(out);
	snprintf(proc_path, sizeof(proc_path), "/proc/%d/cgroup", (int)pid);
	file.path = proc_path;
	rc = sysroot_file_read(&file, &text, &len);
	if (rc == 0)
		rc = memcg_cgroup_parse(text, len, v2, sizeof(v2), v1, sizeof(v1));
	sysroot_file_close(&file);
	if (rc != 0)
		return rc;
	/* v1's memory controller where it is mounted, else v2's (where memory.max says it is enabled). */
	if (v1[0] && memcg_v1_memory_mount()[0])
		memcg_read(1, v1, out);
	else if (v2[0])
		memcg_read(2, v2, out);
	else
		return -ENOENT;
	return 0;
}

/* The directory under dir whose inode number is id, depth levels down at most: true, with its path after root. */
static bool find_by_inode(const char *root, const char *dir, uint64_t id, int depth, char *out, size_t len)
{
	size_t root_length = strlen(root);
	const char *sysroot = strcmp(sysroot_get(), "/") ? sysroot_get() : "";
	char full[4600];
	struct dirent *entry;
	struct stat st;
	bool found = false;
	DIR *d;

	snprintf(full, sizeof(full), "%s%s", sysroot, dir);
	if (stat(full, &st) == 0 && st.st_ino == id) {
		snprintf(out, len, "%s", dir[root_length] ? dir + root_length : "/");
		return true;
	}
	if (depth <= 0 || !(d = opendir(full)))
		return false;
	while (!found && (entry = readdir(d))) {
		char child[4096];

		if (entry->d_type != DT_DIR || entry->d_name[0] == '.')
			continue;
		snprintf(child, sizeof(child), "%s/%s", dir, entry->d_name);
		found = find_by_inode(root, child, id, depth - 1, out, len);
	}
	closedir(d);
	return found;
}

/*
 * Paths found, kept: a look walks the cgroup tree (hundreds of directories on a busy machine, and
 * doctor's recorder looks every window), while an id is its cgroup's for as long as that lives.
 * A kept path is given while the directory there still has the id for inode number.
 */
#define PATHS_KEPT 64
static struct kept_path {
	uint64_t id;
	char mount[256], path[1024];
} kept_paths[PATHS_KEPT];
static unsigned paths_next;
static pthread_mutex_t paths_lock = PTHREAD_MUTEX_INITIALIZER;

static bool kept_path(const char *mount, uint64_t id, char *out, size_t len)
{
	const char *sysroot = strcmp(sysroot_get(), "/") ? sysroot_get() : "";
	char full[1400];
	bool found = false;
	struct stat st;

	pthread_mutex_lock(&paths_lock);
	for (unsigned i = 0; i < PATHS_KEPT && !found; i++) {
		const struct kept_path *k = &kept_paths[i];

		if (k->id != id || strcmp(k->mount, mount))
			continue;
		snprintf(full, sizeof(full), "%s%s%s", sysroot, mount, strcmp(k->path, "/") ? k->path : "");
		found = stat(full, &st) == 0 && st.st_ino == id && strlen(k->path) < len;
		if (found)
			snprintf(out, len, "%s", k->path);
	}
	pthread_mutex_unlock(&paths_lock);
	return found;
}

static void keep_path(const char *mount, uint64_t id, const char *path)
{
	struct kept_path *k;

	if (strlen(mount) >= sizeof(k->mount) || strlen(path) >= sizeof(k->path))
		return;
	pthread_mutex_lock(&paths_lock);
	k = &kept_paths[paths_next++ % PATHS_KEPT];
	k->id = id;
	snprintf(k->mount, sizeof(k->mount), "%s", mount);
	snprintf(k->path, sizeof(k->path), "%s", path);
	pthread_mutex_unlock(&paths_lock);
}

bool memcg_path_of_id(const char *mount, uint64_t id, char *out, size_t len)
{
	if (!mount[0])
		return false;
	if (kept_path(mount, id, out, len))
		return true;
	if (!find_by_inode(mount, mount, id, 8, out, len))
		return false;
	if (strlen(out) + 1 < len) /* (not cut short) */
		keep_path(mount, id, out);
	return true;
}

int memcg_of_id(uint64_t id, struct memcg *out)
{
	char path[512];

	memcg_clear(out);
	if (!id)
		return -ENOENT;
	if (memcg_v1_memory_mount()[0] && memcg_path_of_id(memcg_v1_memory_mount(), id, path, sizeof(path)))
		memcg_read(1, path, out);
	else if (memcg_path_of_id(memcg_v2_mount(), id, path, sizeof(path)))
		memcg_read(2, path, out);
	else
		return -ENOENT;
	return 0;
}

bool memcg_at_limit(const struct memcg *cgroup)
{
	return cgroup->max != MEMCG_UNLIMITED && cgroup->max && cgroup->current >= cgroup->max / 10 * 9;
}
