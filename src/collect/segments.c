/* segments.c: finds libvtrace segments, opens them through libvtrace's reader, keeps two samples of each. */
#include "collect/segments.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "collect/fdinfo.h"
#include "common/util.h"

const char *vtrace_directory(void)
{
	const char *dir = getenv("VTRACE_DIR");

	return dir && *dir ? dir : "/dev/shm";
}

static void problem(segment_problem_fn report, void *context, const char *path, int error, const char *why)
{
	struct segment_problem p = { path, error, why };

	if (report)
		report(&p, context);
}

struct segment *segment_open(const char *path, bool follow, const char *procfs, segment_problem_fn report,
			     void *context)
{
	struct segment *segment;
	struct vtrace_reader *reader;
	const char *why = NULL;
	struct stat st;
	size_t count;
	int rc;

	rc = vtrace_reader_open(path, follow ? 0 : VTRACE_READ_NOFOLLOW, &reader, &why);
	if (rc) {
		problem(report, context, path, rc, why);
		return NULL;
	}
	segment = xcalloc(1, sizeof(*segment));
	if (stat(path, &st) == 0) {
		segment->dev = st.st_dev;
		segment->ino = st.st_ino;
	}
	segment->path = xstrdup(path);
	segment->reader = reader;
	segment->info = vtrace_reader_info(reader);
	count = segment->info->op_count + 1;
	segment->previous = xcalloc(count, sizeof(*segment->previous));
	segment->current = xcalloc(count, sizeof(*segment->current));
	segment_check_alive(segment, procfs);
	return segment;
}

/*
 * Whether some process has the file open for writing, as its writer keeps it (readers,
 * vstat among them, open it read-only): a stat of each descriptor, and its fdinfo flags.
 */
static bool held_by_writer(const char *procfs, dev_t dev, ino_t ino)
{
	DIR *proc = opendir(procfs), *fds;
	struct dirent *p, *f;
	char path[1024];
	bool held = false;

	if (!proc)
		return false;
	while (!held && (p = readdir(proc))) {
		if (p->d_name[0] < '0' || p->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "%s/%s/fd", procfs, p->d_name);
		fds = opendir(path);
		if (!fds)
			continue;
		while (!held && (f = readdir(fds))) {
			struct fdinfo info;
			struct stat st;
			if (f->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s/fd/%s", procfs, p->d_name, f->d_name);
			held = stat(path, &st) == 0 && st.st_dev == dev && st.st_ino == ino &&
			       fdinfo_read(procfs, atoi(p->d_name), atoi(f->d_name), &info) == 0 &&
			       (info.flags & O_ACCMODE) == O_RDWR;
		}
		closedir(fds);
	}
	closedir(proc);
	return held;
}

void segment_check_alive(struct segment *segment, const char *procfs)
{
	int alive = vtrace_reader_alive(segment->reader, procfs);

	if (alive == 0 && segment->ino && held_by_writer(procfs, segment->dev, segment->ino))
		alive = 1; /* a writer whose pid we do not see as such: another pid namespace */
	segment->state = alive == 1 ? SEGMENT_LIVE : alive == 0 ? SEGMENT_STALE : SEGMENT_UNKNOWN;
}

int segment_sample(struct segment *segment, segment_problem_fn report, void *context)
{
	struct vtrace_stats *swap = segment->previous;
	const char *why = NULL;
	uint64_t now;
	int rc;

	segment->previous = segment->current;
	segment->previous_ns = segment->current_ns;
	segment->has_previous = segment->current_ns != 0;
	segment->current = swap;
	rc = vtrace_reader_sample(segment->reader, segment->current, &now, &why);
	if (rc) {
		problem(report, context, segment->path, rc, why);
		return rc;
	}
	segment->current_ns = now;
	return 0;
}

bool segment_removed(const struct segment *segment)
{
	struct stat st;

	/*
	 * The service unlinks its segment when it closes it; our open file would read on, frozen.
	 * (A link count of 0 alone means nothing: /proc/PID/fd/N may name a deleted segment.)
	 */
	return stat(segment->path, &st) != 0 || st.st_dev != segment->dev || st.st_ino != segment->ino;
}

void segment_free(struct segment *segment)
{
	if (!segment)
		return;
	vtrace_reader_close(segment->reader);
	free(segment->previous);
	free(segment->current);
	free(segment->path);
	free(segment);
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int segment_scan(const char *directory, void (*found)(const char *path, void *context), void *context)
{
	char **names = NULL, *path;
	size_t count = 0, capacity = 0;
	struct dirent *de;
	DIR *dir = opendir(directory);

	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		if (strncmp(de->d_name, "vtrace.", 7) != 0)
			continue;
		if (count == capacity) {
			capacity = capacity ? capacity * 2 : 16;
			names = xrealloc(names, capacity * sizeof(*names));
		}
		names[count++] = xstrdup(de->d_name);
	}
	closedir(dir);
	if (count)
		qsort(names, count, sizeof(*names), compare_names);
	for (size_t i = 0; i < count; i++) {
		if (asprintf(&path, "%s/%s", directory, names[i]) < 0)
			abort();
		found(path, context);
		free(path);
		free(names[i]);
	}
	free(names);
	return 0;
}

/* ---- A set of segments, sampled together ------------------------------------------------ */

static void set_found(const char *path, void *context)
{
	struct segment_set *set = context;
	struct segment *segment;

	for (size_t i = 0; i < set->count; i++)
		if (!strcmp(set->list[i]->path, path)) {
			set->list[i]->seen = true;
			return;
		}
	segment = segment_open(path, false, "/proc", NULL, NULL);
	if (!segment)
		return;
	if (segment->state != SEGMENT_LIVE) {
		segment_free(segment);
		return;
	}
	segment->seen = true;
	set->list = xrealloc(set->list, (set->count + 1) * sizeof(*set->list));
	set->list[set->count++] = segment;
}

void segment_set_refresh(struct segment_set *set)
{
	size_t kept = 0;

	for (size_t i = 0; i < set->count; i++)
		set->list[i]->seen = false;
	segment_scan(vtrace_directory(), set_found, set);
	for (size_t i = 0; i < set->count; i++) {
		struct segment *s = set->list[i];
		if (s->seen && !segment_removed(s) && segment_sample(s, NULL, NULL) == 0)
			set->list[kept++] = s;
		else
			segment_free(s);
	}
	set->count = kept;
}

void segment_set_free(struct segment_set *set)
{
	for (size_t i = 0; i < set->count; i++)
		segment_free(set->list[i]);
	free(set->list);
	*set = (struct segment_set){0};
}
