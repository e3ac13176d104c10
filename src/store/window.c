/* SPDX-License-Identifier: GPL-2.0-or-later */
/* window.c: a recorded window played back, a frame at a time laid out as a tree in a private directory. */
#include "store/window.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/sysroot_tree.h"
#include "common/util.h"
#include "store/store.h"

struct store_window {
	struct store_reader *reader;
	char base[4096]; /* the private directory (mkdtemp's, 0700) */
	char root[4200]; /* the tree laid out now, under it */
	unsigned laid;   /* trees laid out so far: each its own name, so the collectors see a new root */
	bool has_root;
	uint64_t last_mono_ns; /* the last frame handed out (0: none yet) */
	/* The last frame passed over since (closer than the step): handed out at the window's end. */
	unsigned char *pending;
	size_t pending_len;
	uint64_t pending_real_ns, pending_mono_ns;
};

/* Removes what dir_fd holds, depth first (a tree of our own, in a directory no one else can enter). */
static void empty_dir(int dir_fd)
{
	DIR *d = fdopendir(dir_fd);
	struct dirent *e;

	if (!d) {
		close(dir_fd);
		return;
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (unlinkat(dirfd(d), e->d_name, 0) != 0 && (errno == EISDIR || errno == EPERM)) {
			int sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0)
				empty_dir(sub);
			unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
		}
	}
	closedir(d);
}

static void remove_root(struct store_window *w)
{
	int fd;

	if (!w->has_root)
		return;
	fd = open(w->root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0)
		empty_dir(fd);
	rmdir(w->root);
	w->has_root = false;
}

int store_window_open(struct store_window **out, const char *dir, uint64_t from_ns, uint64_t to_ns, char *why,
		      size_t why_len)
{
	struct store_window *w = xcalloc(1, sizeof(*w));
	const char *tmp = getenv("TMPDIR");
	int rc;

	*out = NULL;
	rc = store_reader_open(&w->reader, dir, from_ns, to_ns, why, why_len);
	if (rc) {
		free(w);
		return rc;
	}
	snprintf(w->base, sizeof(w->base), "%s/iolens-replay.XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp");
	if (!mkdtemp(w->base)) {
		rc = -errno;
		snprintf(why, why_len, "%s: %s", w->base, strerror(-rc));
		store_reader_close(w->reader);
		free(w);
		return rc;
	}
	*out = w;
	return 0;
}

/* Keeps a copy of a frame passed over, the last one. */
static void keep_pending(struct store_window *w, const struct store_frame *f)
{
	free(w->pending);
	w->pending = xcalloc(1, f->len ? f->len : 1);
	memcpy(w->pending, f->data, f->len);
	w->pending_len = f->len;
	w->pending_real_ns = f->real_ns;
	w->pending_mono_ns = f->mono_ns;
}

/* The next frame to hand out: 1 with *f set (its data the reader's or pending's), or 0 at the end. */
static int next_frame(struct store_window *w, uint64_t step_ns, struct store_frame *f)
{
	int rc;

	while ((rc = store_reader_next(w->reader, f)) == 1) {
		if (f->kind != STORE_KIND_SYSTEM)
			continue;
		/* The first, one a step after the last, or one after a restart (the clock begun again). */
		if (!w->last_mono_ns || f->mono_ns < w->last_mono_ns || f->mono_ns - w->last_mono_ns >= step_ns) {
			free(w->pending);
			w->pending = NULL;
			return 1;
		}
		keep_pending(w, f);
	}
	if (!w->pending)
		return 0;
	f->data = w->pending;
	f->len = w->pending_len;
	f->real_ns = w->pending_real_ns;
	f->mono_ns = w->pending_mono_ns;
	f->kind = STORE_KIND_SYSTEM;
	w->pending = NULL; /* freed after it is laid out */
	return 2;
}

int store_window_next(struct store_window *w, uint64_t step_ns, const char **root, uint64_t *real_ns,
		      uint64_t *mono_ns, char *why, size_t why_len)
{
	struct store_frame f;
	unsigned char *owned = NULL;
	int fd, rc;

	remove_root(w);
	rc = next_frame(w, step_ns, &f);
	if (rc == 0)
		return 0;
	if (rc == 2)
		owned = (unsigned char *)f.data;
	w->last_mono_ns = f.mono_ns;
	snprintf(w->root, sizeof(w->root), "%s/%u", w->base, w->laid++);
	if (mkdir(w->root, 0700) != 0 || (fd = open(w->root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		rc = -errno;
		snprintf(why, why_len, "%s: %s", w->root, strerror(-rc));
		free(owned);
		return rc;
	}
	w->has_root = true;
	rc = tree_lay_out(fd, f.data, f.len);
	close(fd);
	free(owned);
	if (rc) {
		snprintf(why, why_len, "the frame of %llu: %s", (unsigned long long)f.real_ns,
			 rc == -EINVAL ? "not a tree of files" : strerror(-rc));
		return rc;
	}
	*root = w->root;
	*real_ns = f.real_ns;
	*mono_ns = f.mono_ns;
	return 1;
}

const char *store_window_said(struct store_window *w)
{
	return store_reader_said(w->reader);
}

void store_window_close(struct store_window *w)
{
	if (!w)
		return;
	remove_root(w);
	rmdir(w->base);
	free(w->pending);
	store_reader_close(w->reader);
	free(w);
}
