/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * segment_dir.c: the files named vtrace.* in a directory, round after round: inotify says which
 * came and went, what is no segment is remembered by inode, and each look is its owner's time.
 */
#include "collect/segments.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/key_map.h"
#include "common/util.h"

/*
 * Names of a user's that may become segments (files made a moment ago, segments refused room
 * for now), looked at again each round: at most this many; the user's next ones are taken for
 * what they are now.
 */
#define PENDING_PER_USER 64
/* Names read from inotify in a round, at most: past that, the directory is read whole instead. */
#define EVENTS_PER_ROUND 16384

/* A name looked at each round. */
struct dir_name {
	enum { NAME_NEW, NAME_KEPT, NAME_PENDING } state; /* NEW: came, not looked at yet */
	ino_t ino;               /* as last looked at */
	uid_t uid;
	unsigned listed, looked; /* the last round it was in the directory's listing, and looked at */
};

/*
 * A name remembered not to be a segment (or waiting for its owner's time): the keyed hash of
 * the name (its low two bits free), the inode folded to 32 bits, the owner. Not a segment
 * while the name names that inode: a writer makes each segment a new file.
 */
struct junk {
	uint64_t key;
	uint32_t ino;
	uint32_t uid;
};
#define JUNK_WAIT 1u /* its owner's time ran out before it was looked at */
#define JUNK_MARK 2u /* seen by the read of the whole directory under way */
#define JUNK_BITS 3u

struct segment_dir {
	char *path;
	int fd;                  /* the directory, -1 until opened */
	dev_t dev;
	ino_t ino;
	int notify;              /* inotify, -1 without: each round reads the directory whole */
	bool remember;           /* false: a single look, nothing kept */
	bool full;               /* the next round reads the whole directory */
	bool lost;               /* the directory went (removed, moved, unmounted): opened again */
	unsigned round;
	struct key_map names;    /* name -> struct dir_name */
	struct key_map pending;  /* uid -> its names PENDING */
	struct junk *junk;
	size_t junk_capacity, junk_count;
};

/* ---- What is no segment ------------------------------------------------------------------- */

static uint64_t junk_key(const char *name)
{
	uint64_t key = key_hash(name, strlen(name)) & ~(uint64_t)JUNK_BITS;

	return key ? key : 1ull << 2; /* 0 is an empty slot */
}

static uint32_t fold(ino_t ino)
{
	return (uint32_t)((uint64_t)ino ^ (uint64_t)ino >> 32);
}

static size_t home(const struct segment_dir *dir, uint64_t key)
{
	return (size_t)(key >> 2) & (dir->junk_capacity - 1);
}

/* The slot of name's entry, or SIZE_MAX. */
static size_t junk_find(const struct segment_dir *dir, uint64_t key)
{
	if (!dir->junk_count)
		return SIZE_MAX;
	for (size_t i = home(dir, key);; i = (i + 1) & (dir->junk_capacity - 1)) {
		if (!dir->junk[i].key)
			return SIZE_MAX;
		if ((dir->junk[i].key & ~(uint64_t)JUNK_BITS) == key)
			return i;
	}
}

static void junk_insert(struct segment_dir *dir, struct junk entry)
{
	size_t i = home(dir, entry.key);

	while (dir->junk[i].key)
		i = (i + 1) & (dir->junk_capacity - 1);
	dir->junk[i] = entry;
	dir->junk_count++;
}

/* The table again, at capacity: every entry (growing), or only those marked, their marks cleared (sweeping). */
static void junk_rebuild(struct segment_dir *dir, size_t capacity, bool sweep)
{
	struct junk *old = dir->junk;
	size_t old_capacity = dir->junk_capacity;

	dir->junk = xcalloc(capacity, sizeof(*dir->junk));
	dir->junk_capacity = capacity;
	dir->junk_count = 0;
	for (size_t i = 0; i < old_capacity; i++) {
		struct junk entry = old[i];

		if (!entry.key || (sweep && !(entry.key & JUNK_MARK)))
			continue;
		if (sweep)
			entry.key &= ~(uint64_t)JUNK_MARK;
		junk_insert(dir, entry);
	}
	free(old);
}

/* Linear probing's removal: the entries after it that belong before it move up. */
static void junk_remove(struct segment_dir *dir, uint64_t key)
{
	size_t mask = dir->junk_capacity - 1, i = junk_find(dir, key), j;

	if (i == SIZE_MAX)
		return;
	for (j = i;;) {
		size_t k;

		j = (j + 1) & mask;
		if (!dir->junk[j].key)
			break;
		k = home(dir, dir->junk[j].key);
		if ((j > i && (k <= i || k > j)) || (j < i && k <= i && k > j)) {
			dir->junk[i] = dir->junk[j];
			i = j;
		}
	}
	dir->junk[i].key = 0;
	dir->junk_count--;
}

/* Remembers name (a file of uid's at ino) as no segment, or as waiting for uid's time; marked. */
static void junk_put(struct segment_dir *dir, const char *name, ino_t ino, uid_t uid, bool wait)
{
	uint64_t key = junk_key(name);
	struct junk entry = { key | JUNK_MARK | (wait ? JUNK_WAIT : 0), fold(ino), (uint32_t)uid };
	size_t i = junk_find(dir, key);

	if (i != SIZE_MAX) {
		dir->junk[i] = entry;
		return;
	}
	if (dir->junk_count >= SEGMENT_DIR_REMEMBERED)
		return; /* looked at again at the next read of the whole directory */
	if ((dir->junk_count + 1) * 2 > dir->junk_capacity)
		junk_rebuild(dir, dir->junk_capacity ? dir->junk_capacity * 2 : 1024, false);
	junk_insert(dir, entry);
}

/* ---- Names looked at each round ---------------------------------------------------------- */

static size_t pending_of(const struct segment_dir *dir, uid_t uid)
{
	return (size_t)(uintptr_t)key_map_get(&dir->pending, &uid, sizeof(uid));
}

static void count_pending(struct segment_dir *dir, uid_t uid, int delta)
{
	size_t count = pending_of(dir, uid) + (size_t)delta;

	if (count)
		key_map_put(&dir->pending, &uid, sizeof(uid), (void *)(uintptr_t)count);
	else
		key_map_remove(&dir->pending, &uid, sizeof(uid));
}

static void drop_name(struct segment_dir *dir, const char *name)
{
	struct dir_name *known = name_map_remove(&dir->names, name);

	if (known && known->state == NAME_PENDING)
		count_pending(dir, known->uid, -1);
	free(known);
}

static void remember_name(struct segment_dir *dir, const char *name, int state, ino_t ino, uid_t uid)
{
	struct dir_name *known = name_map_get(&dir->names, name);

	if (!known) {
		known = xcalloc(1, sizeof(*known));
		known->listed = dir->round;
		known->looked = state == NAME_NEW ? dir->round - 1 : dir->round;
		name_map_put(&dir->names, name, known);
	} else if (known->state == NAME_PENDING) {
		count_pending(dir, known->uid, -1);
	}
	known->state = state;
	known->ino = ino;
	known->uid = uid;
	if (state == NAME_PENDING)
		count_pending(dir, uid, 1);
}

/* The name left the directory. */
static void forget(struct segment_dir *dir, const char *name)
{
	drop_name(dir, name);
	junk_remove(dir, junk_key(name));
}

/* What the reader made of a name (a file of uid's at ino): kept, looked at again, or remembered as none. */
static void settle(struct segment_dir *dir, struct segment_round *round, const char *name, ino_t ino, uid_t uid,
		   enum segment_found verdict)
{
	const struct dir_name *known;

	if (!dir->remember)
		return;
	switch (verdict) {
	case SEGMENT_KEPT:
		remember_name(dir, name, NAME_KEPT, ino, uid);
		return;
	case SEGMENT_AGAIN:
		if (!segment_user_left(round, uid)) { /* its time ran out: with its other names, at a later read */
			drop_name(dir, name);
			junk_put(dir, name, ino, uid, true);
			dir->full = true;
			return;
		}
		known = name_map_get(&dir->names, name);
		if ((known && known->state == NAME_PENDING) || pending_of(dir, uid) < PENDING_PER_USER) {
			remember_name(dir, name, NAME_PENDING, ino, uid);
			return;
		}
		break; /* more of them than any writer makes at once: taken for what it is now */
	case SEGMENT_NOT:
		break;
	}
	drop_name(dir, name);
	junk_put(dir, name, ino, uid, false);
}

/*
 * Looks at one name (known: what is remembered of it, or NULL), and calls found() when it may
 * be a segment. The lstat is charged to the file's owner; a user with no time left this round
 * has the name looked at in a later one.
 */
static void look_at(struct segment_dir *dir, struct segment_round *round, const char *name, struct dir_name *known,
		    segment_found_fn found, void *context)
{
	char path[PATH_MAX + NAME_MAX + 2];
	struct segment_clock started = segment_clock();
	struct stat st;
	enum segment_found verdict;

	if (known)
		known->looked = dir->round;
	/* the reader holds it, and tells itself whether it is still that file */
	if (known && known->state == NAME_KEPT) {
		ino_t ino = known->ino;
		uid_t uid = known->uid;

		snprintf(path, sizeof(path), "%s/%s", dir->path, name);
		if ((verdict = found(path, context)) != SEGMENT_KEPT)
			settle(dir, round, name, ino, uid, verdict);
		return;
	}
	if (fstatat(dir->fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		drop_name(dir, name); /* gone: its removal is on its way, or was missed */
		return;
	}
	if (!segment_user_left(round, st.st_uid)) {
		segment_user_skipped(round, st.st_uid);
		if (!known || known->state != NAME_PENDING)
			settle(dir, round, name, st.st_ino, st.st_uid, SEGMENT_AGAIN);
		segment_user_spent(round, st.st_uid, started);
		return;
	}
	/* An empty file is a segment being made (a writer creates it, then sizes it), or a name taken. */
	if (S_ISREG(st.st_mode) && st.st_size == 0) {
		verdict = segment_young(&st) ? SEGMENT_AGAIN : SEGMENT_NOT;
	} else {
		snprintf(path, sizeof(path), "%s/%s", dir->path, name);
		segment_user_spent(round, st.st_uid, started); /* (what found() does is charged by it) */
		verdict = found(path, context);
		started = segment_clock();
	}
	settle(dir, round, name, st.st_ino, st.st_uid, verdict);
	segment_user_spent(round, st.st_uid, started);
}

/* ---- The directory ----------------------------------------------------------------------- */

static void free_names(struct segment_dir *dir)
{
	void *value;

	for (size_t i = 0; key_map_next(&dir->names, &i, NULL, NULL, &value);)
		free(value);
	key_map_free(&dir->names);
	key_map_free(&dir->pending);
	free(dir->junk);
	dir->junk = NULL;
	dir->junk_capacity = dir->junk_count = 0;
}

static void close_dir(struct segment_dir *dir)
{
	if (dir->notify >= 0)
		close(dir->notify);
	if (dir->fd >= 0)
		close(dir->fd);
	dir->notify = dir->fd = -1;
	free_names(dir);
}

/* Told of every name that comes and goes from now on, before the directory is read. */
static void watch(struct segment_dir *dir)
{
	char self[64];

	dir->notify = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (dir->notify < 0)
		return; /* (out of instances: each round reads the whole directory) */
	/* The directory we hold, not whatever the path names by now. */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", dir->fd);
	if (inotify_add_watch(dir->notify, self,
			      IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_MODIFY | IN_ATTRIB |
				  IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR) < 0) {
		close(dir->notify);
		dir->notify = -1;
	}
}

/* The directory the path names, opened again when it names another one now (all known of the old forgotten). */
static int open_dir(struct segment_dir *dir)
{
	struct stat st;

	if (dir->fd >= 0 && !dir->lost) {
		if (stat(dir->path, &st) != 0)
			return -errno;
		if (st.st_dev == dir->dev && st.st_ino == dir->ino)
			return 0;
	}
	close_dir(dir);
	dir->lost = false;
	dir->fd = open(dir->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir->fd < 0 || fstat(dir->fd, &st) != 0) {
		int rc = -errno;

		close_dir(dir);
		return rc;
	}
	dir->dev = st.st_dev;
	dir->ino = st.st_ino;
	if (dir->remember)
		watch(dir);
	dir->full = true;
	return 0;
}

/* What inotify says came and went since the last round. */
static void drain(struct segment_dir *dir)
{
	char buf[65536] __attribute__((aligned(__alignof__(struct inotify_event))));
	size_t names = 0;
	ssize_t len;

	while ((len = read(dir->notify, buf, sizeof(buf))) != 0) {
		if (len < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				dir->full = true;
			return;
		}
		for (char *p = buf; p < buf + len;) {
			const struct inotify_event *event = (const struct inotify_event *)p;

			p += sizeof(*event) + event->len;
			if (event->mask & IN_Q_OVERFLOW)
				dir->full = true;
			if (event->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT))
				dir->lost = true;
			if (!event->len || strncmp(event->name, "vtrace.", 7) != 0)
				continue;
			/* (read on, so that the queue is empty after the read of it all) */
			if (++names > EVENTS_PER_ROUND) {
				dir->full = true;
				continue;
			}
			if (event->mask & (IN_DELETE | IN_MOVED_FROM))
				forget(dir, event->name);
			/*
			 * Come, or changed (sized, its mode set: a writer interrupted between its
			 * open and its header, and found empty and old meanwhile): looked at again.
			 */
			if (event->mask & (IN_CREATE | IN_MOVED_TO | IN_MODIFY | IN_ATTRIB)) {
				junk_remove(dir, junk_key(event->name));
				if (!name_map_get(&dir->names, event->name))
					remember_name(dir, event->name, NAME_NEW, 0, 0);
			}
		}
		if (names > 16 * EVENTS_PER_ROUND)
			return; /* made faster than read: read whole */
	}
}

/* Every name of the directory: those known looked at after, new ones now, those remembered as none passed over. */
static int read_all(struct segment_dir *dir, struct segment_round *round, segment_found_fn found, void *context)
{
	int fd = openat(dir->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc;
	struct dirent *de;
	DIR *listing;
	void *value;
	const void *key;

	if (fd < 0 || !(listing = fdopendir(fd))) {
		rc = -errno;
		if (fd >= 0)
			close(fd);
		return rc;
	}
	dir->full = false;
	for (size_t i = 0; i < dir->junk_capacity; i++) /* (each seen in the listing is marked, and kept) */
		dir->junk[i].key &= ~(uint64_t)JUNK_MARK;
	while ((de = readdir(listing))) {
		struct dir_name *known;
		size_t slot;

		if (strncmp(de->d_name, "vtrace.", 7) != 0)
			continue;
		if ((known = name_map_get(&dir->names, de->d_name))) {
			known->listed = dir->round;
			continue;
		}
		slot = junk_find(dir, junk_key(de->d_name));
		if (slot != SIZE_MAX && dir->junk[slot].ino == fold(de->d_ino)) {
			struct junk *entry = &dir->junk[slot];

			entry->key |= JUNK_MARK;
			if (!(entry->key & JUNK_WAIT))
				continue;
			if (!segment_user_left(round, entry->uid)) {
				segment_user_skipped(round, entry->uid);
				dir->full = true;
				continue;
			}
			junk_remove(dir, junk_key(de->d_name));
		}
		look_at(dir, round, de->d_name, NULL, found, context);
	}
	closedir(listing);
	/* What the listing did not have is gone (its removal was missed). */
	for (size_t i = 0; key_map_next(&dir->names, &i, &key, NULL, &value);) {
		const struct dir_name *known = value;

		if (known->listed != dir->round)
			drop_name(dir, key);
	}
	if (dir->junk_capacity)
		junk_rebuild(dir, dir->junk_capacity, true);
	return 0;
}

struct segment_dir *segment_dir_new(const char *path)
{
	struct segment_dir *dir = xcalloc(1, sizeof(*dir));

	dir->path = xstrdup(path);
	dir->fd = dir->notify = -1;
	dir->remember = true;
	return dir;
}

void segment_dir_free(struct segment_dir *dir)
{
	if (!dir)
		return;
	close_dir(dir);
	free(dir->path);
	free(dir);
}

/* One round over dir (opened). */
static int scan(struct segment_dir *dir, struct segment_round *round, segment_found_fn found, void *context)
{
	const void *key;
	void *value;
	int rc;

	dir->round++;
	if (dir->notify >= 0)
		drain(dir);
	if ((rc = open_dir(dir)) != 0)
		return rc;
	if ((dir->notify < 0 || dir->full) && (rc = read_all(dir, round, found, context)) != 0)
		return rc;
	/* The names kept, being made, or that came: each looked at once a round. */
	for (size_t i = 0; key_map_next(&dir->names, &i, &key, NULL, &value);) {
		struct dir_name *known = value;
		char name[NAME_MAX + 1];

		if (known->looked == dir->round)
			continue;
		snprintf(name, sizeof(name), "%s", (const char *)key); /* (the entry may go while it is looked at) */
		look_at(dir, round, name, known, found, context);
	}
	return 0;
}

int segment_dir_scan(struct segment_dir *dir, struct segment_round *round, segment_found_fn found, void *context)
{
	return scan(dir, round, found, context);
}

int segment_scan_at(int dirfd, const char *directory, struct segment_round *round, segment_found_fn found,
		    void *context)
{
	struct segment_dir dir = { .path = (char *)directory, .notify = -1 };
	struct stat st;
	int rc;

	dir.fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
	if (dir.fd < 0 || fstat(dir.fd, &st) != 0) {
		rc = -errno;
		if (dir.fd >= 0)
			close(dir.fd);
		return rc;
	}
	dir.dev = st.st_dev;
	dir.ino = st.st_ino;
	dir.round = 1;
	rc = read_all(&dir, round, found, context);
	close_dir(&dir);
	return rc;
}

int segment_scan(const char *directory, struct segment_round *round, segment_found_fn found, void *context)
{
	int fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc;

	if (fd < 0)
		return -errno;
	rc = segment_scan_at(fd, directory, round, found, context);
	close(fd);
	return rc;
}
