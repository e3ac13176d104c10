/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * path_walk.c: a path resolved once, a component at a time from held descriptors, with who else can
 * change where it leads.
 */
#include "common/path_walk.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/magic.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "common/util.h"

#define LINKS_MAX 40 /* as the kernel's MAXSYMLINKS */

/* Root, and the user this process runs as: no one else. */
static bool ours(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

static void add_controller(struct path_walk *walk, enum path_controller_kind kind, unsigned id, const char *where,
			   const char *how)
{
	struct path_controller *c;

	for (size_t i = 0; i < walk->ncontrollers && i < PATH_CONTROLLERS_MAX; i++)
		if (walk->controller[i].kind == kind && walk->controller[i].id == id)
			return;
	if (walk->ncontrollers >= PATH_CONTROLLERS_MAX)
		return;
	c = &walk->controller[walk->ncontrollers++];
	c->kind = kind;
	c->id = id;
	c->how = how;
	snprintf(c->where, sizeof(c->where), "%s", *where ? where : ".");
}

/*
 * Who can replace an entry of directory dir (the entry's owner owner, or 0 for one not made
 * yet), besides root and us: the directory's owner; whoever can write it, or in a sticky
 * directory only the entry's owner.
 */
static void entry_control(struct path_walk *walk, const struct stat *dir, uid_t owner, const char *dir_path,
			  const char *entry_path)
{
	if (!ours(dir->st_uid))
		add_controller(walk, PATH_CONTROL_USER, dir->st_uid, dir_path, "owns");
	if (!(dir->st_mode & (S_IWGRP | S_IWOTH)))
		return;
	if (dir->st_mode & S_ISVTX) {
		if (!ours(owner))
			add_controller(walk, PATH_CONTROL_USER, owner, entry_path, "owns");
		return;
	}
	if ((dir->st_mode & S_IWGRP) && dir->st_gid != 0 && dir->st_gid != getegid())
		add_controller(walk, PATH_CONTROL_GROUP, dir->st_gid, dir_path, "can write");
	if (dir->st_mode & S_IWOTH)
		add_controller(walk, PATH_CONTROL_ANYONE, 0, dir_path, "can write");
}

/* walked + "/" + name, for messages. */
static void walked_add(char *walked, size_t size, const char *name)
{
	size_t len = strlen(walked);

	if (!strcmp(name, "..")) {
		char *slash = strrchr(walked, '/');
		const char *last = slash ? slash + 1 : walked;

		if (*last && strcmp(last, "..") && strcmp(last, ".")) {
			if (slash == walked)
				walked[1] = '\0';
			else if (slash)
				*slash = '\0';
			else
				walked[0] = '\0';
			return;
		}
	}
	snprintf(walked + len, size - len, "%s%s", len && walked[len - 1] != '/' ? "/" : "", name);
}

/* A symbolic link of procfs (/proc/self/fd/N, /proc/PID/cwd): the kernel's, named by no text. */
static bool magic_link(int fd)
{
	struct statfs fs;

	return fstatfs(fd, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void path_walk_close(struct path_walk *walk)
{
	close_fd(&walk->fd);
	if (walk->dir_fd != walk->fd)
		close_fd(&walk->dir_fd);
	walk->dir_fd = -1;
}

/*
 * The symbolic link open at link (owned by owner, at entry_path): its text takes its place at
 * the head of what is left to walk (*todo, *rest), and an absolute one starts again at "/"
 * (*cur, *cur_st). Closes link; 0 or -errno.
 */
static int follow_link(struct path_walk *walk, int link, uid_t owner, const char *entry_path, char **todo, char **rest,
		       int *cur, struct stat *cur_st)
{
	char target[4096], *joined;
	ssize_t target_len = readlinkat(link, "", target, sizeof(target) - 1);
	size_t size;

	close(link);
	if (target_len <= 0)
		return target_len < 0 ? -errno : -ENOENT;
	target[target_len] = '\0';
	if (!ours(owner))
		add_controller(walk, PATH_CONTROL_USER, owner, entry_path, "owns the symbolic link");
	size = (size_t)target_len + strlen(*rest) + 2;
	joined = xcalloc(1, size);
	snprintf(joined, size, "%s%s", target, *rest);
	free(*todo);
	*todo = *rest = joined;
	if (*target == '/') {
		close(*cur);
		*cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (*cur < 0 || fstat(*cur, cur_st) != 0)
			return -errno;
		snprintf(walk->walked, sizeof(walk->walked), "/");
	}
	return 0;
}

int path_walk(const char *path, unsigned flags, struct path_walk *walk)
{
	size_t todo_size = strlen(path) + 2;
	char *todo = xcalloc(1, todo_size), *rest, entry_path[4096];
	struct stat cur_st;
	int cur, links = 0, rc = 0;

	memset(walk, 0, sizeof(*walk));
	walk->fd = walk->dir_fd = -1;
	if (!*path) {
		free(todo);
		return -ENOENT;
	}
	snprintf(todo, todo_size, "%s", path);
	snprintf(walk->walked, sizeof(walk->walked), "%s", *path == '/' ? "/" : "");
	cur = open(*path == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0 || fstat(cur, &cur_st) != 0) {
		rc = -errno;
		goto fail;
	}
	rest = todo;
	for (;;) {
		char name[256], dir_path[4096];
		size_t len;
		bool last, slash_after;
		struct stat st;
		int next;

		rest += strspn(rest, "/");
		if (!*rest) { /* the path ends at the directory we are in: ".", "/", "dir/." */
			walk->fd = cur;
			walk->st = cur_st;
			break;
		}
		len = strcspn(rest, "/");
		if (len >= sizeof(name)) {
			rc = -ENAMETOOLONG;
			goto fail;
		}
		memcpy(name, rest, len);
		name[len] = '\0';
		rest += len;
		slash_after = *rest == '/';
		last = !rest[strspn(rest, "/")];
		if (!strcmp(name, "."))
			continue;
		snprintf(dir_path, sizeof(dir_path), "%s", *walk->walked ? walk->walked : ".");
		next = openat(cur, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			rc = -errno;
			if (rc == -ENOENT && last && !slash_after) { /* a file to make: its directory is held */
				entry_control(walk, &cur_st, geteuid(), dir_path, "");
				walk->dir_fd = cur;
				walk->dir_st = cur_st;
				snprintf(walk->name, sizeof(walk->name), "%s", name);
				walked_add(walk->walked, sizeof(walk->walked), name);
				break;
			}
			goto fail;
		}
		if (fstat(next, &st) != 0) {
			rc = -errno;
			close(next);
			goto fail;
		}
		snprintf(entry_path, sizeof(entry_path), "%s", walk->walked);
		walked_add(entry_path, sizeof(entry_path), name);
		if (!strcmp(name, "..")) /* whoever can move the directory we were in decides what ".." is */
			entry_control(walk, &st, cur_st.st_uid, entry_path, dir_path);
		else
			entry_control(walk, &cur_st, st.st_uid, dir_path, entry_path);
		if (S_ISLNK(st.st_mode) && (!last || slash_after || !(flags & PATH_WALK_NOFOLLOW)) &&
		    magic_link(next)) {
			/*
			 * /proc/PID/fd/N, /dev/stdout: its text is no path; the kernel follows it
			 * to the object itself.
			 */
			if (!ours(st.st_uid)) /* another user's process: they choose what its descriptors are */
				add_controller(walk, PATH_CONTROL_USER, st.st_uid, entry_path, "owns the process of");
			close(next);
			next = openat(cur, name, O_PATH | O_CLOEXEC);
			if (next < 0 || fstat(next, &st) != 0) {
				rc = -errno;
				if (next >= 0)
					close(next);
				goto fail;
			}
		} else if (S_ISLNK(st.st_mode) && (!last || slash_after || !(flags & PATH_WALK_NOFOLLOW))) {
			if (++links > LINKS_MAX) {
				rc = -ELOOP;
				close(next);
				goto fail;
			}
			if ((rc = follow_link(walk, next, st.st_uid, entry_path, &todo, &rest, &cur, &cur_st)) != 0)
				goto fail;
			continue;
		}
		walked_add(walk->walked, sizeof(walk->walked), name);
		if (!last || (slash_after && S_ISDIR(st.st_mode))) {
			if (!S_ISDIR(st.st_mode)) {
				rc = -ENOTDIR;
				close(next);
				goto fail;
			}
			close(cur);
			cur = next;
			cur_st = st;
			if (last) {
				walk->fd = cur;
				walk->st = cur_st;
				break;
			}
			continue;
		}
		if (slash_after) {
			rc = -ENOTDIR;
			close(next);
			goto fail;
		}
		walk->fd = next;
		walk->dir_fd = cur;
		walk->dir_st = cur_st;
		walk->st = st;
		snprintf(walk->name, sizeof(walk->name), "%s", name);
		break;
	}
	free(todo);
	return 0;
fail:
	free(todo);
	if (cur >= 0)
		close(cur);
	walk->fd = walk->dir_fd = -1;
	return rc;
}

const struct path_controller *path_walk_overreach(const struct path_walk *walk, const struct stat *st)
{
	for (size_t i = 0; i < walk->ncontrollers; i++) {
		const struct path_controller *c = &walk->controller[i];
		bool can = st->st_mode & S_IWOTH;

		if (c->kind == PATH_CONTROL_USER)
			can |= st->st_uid == c->id && (st->st_mode & S_IWUSR);
		else if (c->kind == PATH_CONTROL_GROUP)
			can |= st->st_gid == c->id && (st->st_mode & S_IWGRP);
		if (!can)
			return c;
	}
	return NULL;
}

const char *path_controller_who(const struct path_controller *controller, char *buf, size_t len)
{
	if (controller->kind == PATH_CONTROL_ANYONE) {
		snprintf(buf, len, "every user");
	} else if (controller->kind == PATH_CONTROL_GROUP) {
		struct group *g = getgrgid(controller->id);

		snprintf(buf, len, "group %u%s%s%s", controller->id, g ? " (" : "", g ? g->gr_name : "", g ? ")" : "");
	} else {
		struct passwd *p = getpwuid(controller->id);

		snprintf(buf, len, "uid %u%s%s%s", controller->id, p ? " (" : "", p ? p->pw_name : "", p ? ")" : "");
	}
	return buf;
}

int fd_reopen(int fd, int flags)
{
	char path[48];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return open(path, flags | O_CLOEXEC | O_NOCTTY);
}

void path_walk_new_entry(struct path_walk *walk)
{
	if (walk->fd >= 0 && S_ISDIR(walk->st.st_mode))
		entry_control(walk, &walk->st, geteuid(), walk->walked, "");
}

int path_walk_check_write(const struct path_walk *walk, char *why, size_t why_len)
{
	const struct stat *st = walk->fd >= 0 ? &walk->st : &walk->dir_st;
	const struct path_controller *over = path_walk_overreach(walk, st);
	char who[96];

	if (!over)
		return 0;
	return say_why(why, why_len, "%s %s %s and can change where it leads, to %s, which they could not write "
		       "themselves: not written",
		       path_controller_who(over, who, sizeof(who)), over->how, printable_name(over->where),
		       printable_name(walk->walked));
}

void path_walk_say_controllers(const struct path_walk *walk, const char *what)
{
	for (size_t i = 0; i < walk->ncontrollers; i++) {
		const struct path_controller *c = &walk->controller[i];
		char who[96];

		warn_msg("%s: %s %s %s and can change what it names: only what was opened now is written",
			 printable_name(what), path_controller_who(c, who, sizeof(who)), c->how,
			 printable_name(c->where));
	}
}

int path_output_open(const char *path, unsigned flags, mode_t mode, struct path_output *out, char *why, size_t why_len)
{
	struct path_walk walk;
	struct stat st;
	int rc;

	memset(out, 0, sizeof(*out));
	out->fd = out->dir_fd = -1;
	rc = path_walk(path, flags & PATH_WALK_NOFOLLOW, &walk);
	if (rc)
		return say_why(why, why_len, "%s", strerror(-rc));
	if (walk.fd >= 0 && S_ISLNK(walk.st.st_mode)) {
		path_walk_close(&walk);
		return say_why(why, why_len, "a symbolic link, not followed");
	}
	if (walk.fd >= 0 && S_ISDIR(walk.st.st_mode)) {
		path_walk_close(&walk);
		return say_why(why, why_len, "%s", strerror(EISDIR));
	}
	if (walk.fd >= 0 && (flags & PATH_OUTPUT_REGULAR) && !S_ISREG(walk.st.st_mode)) {
		path_walk_close(&walk);
		return say_why(why, why_len, "not a regular file that can be written");
	}
	if (path_walk_check_write(&walk, why, why_len) != 0) {
		path_walk_close(&walk);
		return -1;
	}
	if (walk.fd >= 0)
		out->fd = fd_reopen(walk.fd, O_WRONLY | O_NONBLOCK);
	else
		out->fd = openat(walk.dir_fd, walk.name,
				 O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, mode);
	if (out->fd >= 0 && walk.dir_fd >= 0 && fstat(out->fd, &st) == 0) { /* where it is, to remove it from there */
		out->made = walk.fd < 0;
		out->dir_fd = walk.dir_fd;
		walk.dir_fd = -1;
		snprintf(out->name, sizeof(out->name), "%s", walk.name);
		out->dev = st.st_dev;
		out->ino = st.st_ino;
	}
	rc = out->fd < 0 ? errno : 0;
	path_walk_close(&walk);
	if (rc)
		return say_why(why, why_len, "%s", strerror(rc));
	fcntl(out->fd, F_SETFL, fcntl(out->fd, F_GETFL) & ~O_NONBLOCK);
	return 0;
}

void path_output_close(struct path_output *out, bool discard)
{
	struct stat st;

	if (discard && out->made && out->dir_fd >= 0 &&
	    fstatat(out->dir_fd, out->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == out->dev &&
	    st.st_ino == out->ino)
		unlinkat(out->dir_fd, out->name, 0);
	if (out->fd >= 0)
		close(out->fd);
	if (out->dir_fd >= 0)
		close(out->dir_fd);
	out->fd = out->dir_fd = -1;
}

int pidfile_write(const char *path, struct path_output *out, char *why, size_t why_len)
{
	struct stat st = { .st_mode = S_IFREG };

	if (path_output_open(path, PATH_OUTPUT_REGULAR, 0644, out, why, why_len) != 0)
		return -1;
	if (fstat(out->fd, &st) != 0 || !S_ISREG(st.st_mode) || ftruncate(out->fd, 0) != 0 ||
	    dprintf(out->fd, "%d\n", (int)getpid()) < 0) {
		int err = errno;

		path_output_close(out, true);
		return say_why(why, why_len, "%s", S_ISREG(st.st_mode) ? strerror(err) : "not a regular file");
	}
	out->made = true; /* removed at the end, made now or not, while its name is still its own */
	return 0;
}
