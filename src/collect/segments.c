/* segments.c: finds libvtrace segments, opens them through libvtrace's reader, keeps two samples of each. */
#include "collect/segments.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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
	int rc, alive;

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
	alive = vtrace_reader_alive(reader, procfs);
	segment->state = alive == 1 ? SEGMENT_LIVE : alive == 0 ? SEGMENT_STALE : SEGMENT_UNKNOWN;
	return segment;
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
