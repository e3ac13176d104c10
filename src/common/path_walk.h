/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * path_walk.h: a path resolved once, a component at a time from held descriptors, with who else can
 * change where it leads.
 */
#ifndef IOLENS_PATH_WALK_H
#define IOLENS_PATH_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/*
 * Someone other than root and this process's user who can change where a path leads: the
 * owner of a directory on the way or of a symbolic link followed, whoever can write a
 * directory on the way (in a sticky one, only the owner of the entry), a group, or anyone.
 */
enum path_controller_kind { PATH_CONTROL_USER, PATH_CONTROL_GROUP, PATH_CONTROL_ANYONE };

struct path_controller {
	enum path_controller_kind kind;
	unsigned id;       /* the uid or gid */
	char where[256];   /* the directory or link that gives the control, as walked */
	const char *how;   /* "owns", "can write", "owns the symbolic link" */
};

#define PATH_CONTROLLERS_MAX 4

struct path_walk {
	int fd;              /* O_PATH of the object the path names; -1 when its last component does not exist */
	int dir_fd;          /* O_PATH of the directory of the last component; -1 when the path ends at "." or "/" */
	char name[256];      /* the last component, in dir_fd */
	struct stat st;      /* the object's (with fd >= 0) */
	struct stat dir_st;  /* the directory's (with dir_fd >= 0) */
	char walked[4096];   /* the path as resolved, symbolic links followed: for messages */
	struct path_controller controller[PATH_CONTROLLERS_MAX];
	size_t ncontrollers;
};

#define PATH_WALK_NOFOLLOW 0x1u /* a symbolic link as the last component is the object, not followed */

/*
 * Resolves path as the kernel does, each component opened from the directory before it with
 * O_PATH|O_NOFOLLOW and symbolic links read and followed here (at most 40), noting who else
 * can change each step. Nothing is resolved by name again after: the object is walk->fd, and
 * a file to make goes into walk->dir_fd. 0, or -errno (the walk is closed).
 */
int path_walk(const char *path, unsigned flags, struct path_walk *walk);
void path_walk_close(struct path_walk *walk);

/*
 * The first controller of the walk that could not itself write a file with the mode and
 * owners of st (so the walk led root, or us, where they could not go): NULL when there is none.
 */
const struct path_controller *path_walk_overreach(const struct path_walk *walk, const struct stat *st);

/*
 * For a command that writes what a user named, as root: 0 when every controller of the walk
 * could itself write the object, or for a file to make its directory (so the walk cannot lead
 * the command anywhere they could not go); else why not, into why, and -1.
 */
int path_walk_check_write(const struct path_walk *walk, char *why, size_t why_len);
/* The walk ends at a directory a file will be made in: who else can replace that file, too. */
void path_walk_new_entry(struct path_walk *walk);
/* Says, a line each, who else controls the walk of what (a path, for the message). */
void path_walk_say_controllers(const struct path_walk *walk, const char *what);

/* "uid 65534 (nobody)", "group 100 (users)", "every user": into buf. */
const char *path_controller_who(const struct path_controller *controller, char *buf, size_t len);

/*
 * A file to write that a user named, for a command that may run as root: resolved by
 * path_walk (with PATH_WALK_NOFOLLOW, a symbolic link as the last component is refused),
 * refused where someone else could lead it where they could not write themselves, opened
 * once, never truncated here, or made with O_EXCL (made).
 */
struct path_output {
	int fd;
	bool made;       /* made now: path_output_close(discard) removes it */
	int dir_fd;      /* where it is, to remove it only while its name still names it; -1 unknown */
	char name[256];
	dev_t dev;
	ino_t ino;
};
#define PATH_OUTPUT_REGULAR 0x100u /* only a regular file (never a FIFO or a device) */
/* flags: PATH_WALK_NOFOLLOW, PATH_OUTPUT_REGULAR. 0, or -1 with why (for "PATH: why"). */
int path_output_open(const char *path, unsigned flags, mode_t mode, struct path_output *out, char *why, size_t why_len);
/* Closes; with discard, removes the file when it was made here and still has its name. */
void path_output_close(struct path_output *out, bool discard);
/*
 * A pid file: opened so, truncated, "PID\n" written; path_output_close(out, true) removes it
 * at the end (made now or not) while its name still names it. 0, or -1 with why.
 */
int pidfile_write(const char *path, struct path_output *out, char *why, size_t why_len);

/*
 * The object of an O_PATH descriptor opened again with flags (the access mode, O_DIRECT,
 * O_EXCL for a block device), through /proc/self/fd: the same inode whatever its name is
 * now. A new descriptor, or -1 with errno.
 */
int fd_reopen(int fd, int flags);

#endif
