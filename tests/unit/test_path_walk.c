/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_path_walk.c: paths resolved a component at a time (held to realpath(3)), and who else controls each. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"

#include "common/path_walk.h"

#define OTHER_UID 65534u
#define OTHER_GID 65534u

static char *dir;

static int setup(void **state)
{
	(void)state;
	dir = unit_tmpdir();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unit_rmtree(dir);
	return 0;
}

static char *in_dir(const char *name)
{
	char *path;

	if (asprintf(&path, "%s/%s", dir, name) < 0)
		abort();
	return path;
}

static void touch(const char *name)
{
	char *path = in_dir(name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	close(fd);
	free(path);
}

static void make_dir(const char *name, mode_t mode)
{
	char *path = in_dir(name);

	assert_int_equal(mkdir(path, mode), 0);
	assert_int_equal(chmod(path, mode), 0); /* past the umask */
	free(path);
}

static void make_link(const char *target, const char *name)
{
	char *path = in_dir(name);

	assert_int_equal(symlink(target, path), 0);
	free(path);
}

/* The walk of name ends at the object realpath(3) finds: its device and inode. */
static void resolves_as_realpath(const char *name)
{
	char *path = in_dir(name), real[PATH_MAX];
	struct path_walk walk;
	struct stat st;

	assert_non_null(realpath(path, real));
	assert_int_equal(stat(real, &st), 0);
	assert_int_equal(path_walk(path, 0, &walk), 0);
	assert_true(walk.fd >= 0);
	assert_int_equal(walk.st.st_dev, st.st_dev);
	assert_int_equal(walk.st.st_ino, st.st_ino);
	assert_string_equal(walk.walked, real);
	assert_int_equal(walk.ncontrollers, 0); /* all of it ours */
	path_walk_close(&walk);
	free(path);
}

static void test_resolution(void **state)
{
	(void)state;
	make_dir("a", 0755);
	make_dir("a/b", 0755);
	touch("a/b/file");
	make_link("b/file", "a/relative");      /* relative to the link's directory */
	make_link("../a/b", "a/up");             /* through ".." */
	make_link("relative", "a/chain");        /* a link to a link */
	{
		char *absolute = in_dir("a/b/file");

		make_link(absolute, "a/absolute");
		free(absolute);
	}
	resolves_as_realpath("a/b/file");
	resolves_as_realpath("a/relative");
	resolves_as_realpath("a/up/file");
	resolves_as_realpath("a/chain");
	resolves_as_realpath("a/absolute");
	resolves_as_realpath("a/./b/../b//file");
	resolves_as_realpath("a/up/");
}

static void test_ends(void **state)
{
	struct path_walk walk;
	char *path;
	(void)state;

	make_dir("e", 0755);
	touch("e/file");
	make_link("file", "e/link");
	make_link("loop2", "e/loop1");
	make_link("loop1", "e/loop2");
	/* A name that does not exist yet: its directory held, the name kept. */
	path = in_dir("e/new");
	assert_int_equal(path_walk(path, 0, &walk), 0);
	assert_int_equal(walk.fd, -1);
	assert_true(walk.dir_fd >= 0);
	assert_string_equal(walk.name, "new");
	path_walk_close(&walk);
	free(path);
	/* A missing directory on the way, a file used as one, a loop of links: the kernel's errors. */
	path = in_dir("e/none/new");
	assert_int_equal(path_walk(path, 0, &walk), -ENOENT);
	free(path);
	path = in_dir("e/file/x");
	assert_int_equal(path_walk(path, 0, &walk), -ENOTDIR);
	free(path);
	path = in_dir("e/file/");
	assert_int_equal(path_walk(path, 0, &walk), -ENOTDIR);
	free(path);
	path = in_dir("e/loop1");
	assert_int_equal(path_walk(path, 0, &walk), -ELOOP);
	free(path);
	/* NOFOLLOW: the last link is the object itself. */
	path = in_dir("e/link");
	assert_int_equal(path_walk(path, PATH_WALK_NOFOLLOW, &walk), 0);
	assert_true(S_ISLNK(walk.st.st_mode));
	path_walk_close(&walk);
	free(path);
	/* /proc/self/fd/N is followed by the kernel, to what the descriptor is. */
	{
		char proc[64], *file = in_dir("e/file");
		int fd = open(file, O_RDONLY);
		struct stat st;

		assert_true(fd >= 0);
		fstat(fd, &st);
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		assert_int_equal(path_walk(proc, 0, &walk), 0);
		assert_int_equal(walk.st.st_ino, st.st_ino);
		path_walk_close(&walk);
		close(fd);
		free(file);
	}
}

/* The walk of name has one controller, of kind and id. */
static void controlled_by(const char *name, enum path_controller_kind kind, unsigned id)
{
	char *path = in_dir(name);
	struct path_walk walk;

	assert_int_equal(path_walk(path, 0, &walk), 0);
	assert_int_equal(walk.ncontrollers, 1);
	assert_int_equal(walk.controller[0].kind, kind);
	assert_int_equal(walk.controller[0].id, id);
	path_walk_close(&walk);
	free(path);
}

static void uncontrolled(const char *name)
{
	char *path = in_dir(name);
	struct path_walk walk;

	assert_int_equal(path_walk(path, 0, &walk), 0);
	assert_int_equal(walk.ncontrollers, 0);
	path_walk_close(&walk);
	free(path);
}

static void chown_in_dir(const char *name, uid_t uid, gid_t gid)
{
	char *path = in_dir(name);

	assert_int_equal(lchown(path, uid, gid), 0);
	free(path);
}

static void test_controllers(void **state)
{
	char *path, why[512];
	struct path_walk walk;
	struct stat st;
	(void)state;

	if (geteuid() != 0)
		skip(); /* files of another user are made with chown */
	/* A directory of another user's: its entries are theirs to replace. */
	make_dir("theirs", 0755);
	touch("theirs/file");
	chown_in_dir("theirs", OTHER_UID, OTHER_GID);
	controlled_by("theirs/file", PATH_CONTROL_USER, OTHER_UID);
	uncontrolled("theirs"); /* the directory itself sits in ours */
	/* A sticky directory anyone writes: only the owner of an entry can replace it. */
	make_dir("sticky", 01777);
	touch("sticky/root");
	touch("sticky/user");
	chown_in_dir("sticky/user", OTHER_UID, OTHER_GID);
	uncontrolled("sticky/root");
	controlled_by("sticky/user", PATH_CONTROL_USER, OTHER_UID);
	/* Without the sticky bit, anyone; group-writable, the group. */
	make_dir("open", 0777);
	touch("open/file");
	controlled_by("open/file", PATH_CONTROL_ANYONE, 0);
	make_dir("group", 0775);
	chown_in_dir("group", 0, OTHER_GID);
	touch("group/file");
	controlled_by("group/file", PATH_CONTROL_GROUP, OTHER_GID);
	/* A link another user owns, in a directory of ours: they chose where it leads. */
	make_dir("links", 0755);
	touch("links/target");
	make_link("target", "links/theirs");
	chown_in_dir("links/theirs", OTHER_UID, OTHER_GID);
	controlled_by("links/theirs", PATH_CONTROL_USER, OTHER_UID);
	/* A control on the way stays: the file after it in a directory of ours is still theirs to choose. */
	make_dir("theirs2", 0755);
	make_dir("theirs2/ours", 0755);
	touch("theirs2/ours/file");
	chown_in_dir("theirs2", OTHER_UID, OTHER_GID);
	controlled_by("theirs2/ours/file", PATH_CONTROL_USER, OTHER_UID);

	/* Overreach: root's file through their link is refused; their own file is not. */
	make_link("../links/target", "theirs/to-root");
	path = in_dir("theirs/to-root");
	assert_int_equal(path_walk(path, 0, &walk), 0);
	assert_int_equal(path_walk_check_write(&walk, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "uid 65534"));
	path_walk_close(&walk);
	free(path);
	path = in_dir("theirs/file");
	assert_int_equal(lchown(path, OTHER_UID, OTHER_GID), 0);
	assert_int_equal(path_walk(path, 0, &walk), 0);
	assert_int_equal(path_walk_check_write(&walk, why, sizeof(why)), 0);
	path_walk_close(&walk);
	/* A new file in their directory: theirs to write anyway. */
	free(path);
	path = in_dir("theirs/new");
	assert_int_equal(path_walk(path, 0, &walk), 0);
	assert_int_equal(path_walk_check_write(&walk, why, sizeof(why)), 0);
	path_walk_close(&walk);
	free(path);
	/* Everyone's directory, a file of root's: anyone could have put it there, no one but root may write it. */
	path = in_dir("open/file");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(path_walk(path, 0, &walk), 0);
	assert_non_null(path_walk_overreach(&walk, &st));
	st.st_mode |= S_IWOTH;
	assert_null(path_walk_overreach(&walk, &st));
	path_walk_close(&walk);
	free(path);
}

static void test_output(void **state)
{
	struct path_output out;
	char *path, why[512];
	struct stat st;
	(void)state;

	make_dir("out", 0755);
	path = in_dir("out/made");
	assert_int_equal(path_output_open(path, 0, 0644, &out, why, sizeof(why)), 0);
	assert_true(out.made);
	assert_int_equal(write(out.fd, "x", 1), 1);
	/* Discarded while its name is still its own: removed. */
	path_output_close(&out, true);
	assert_int_equal(stat(path, &st), -1);
	/* Replaced by another file before the discard: the other is left alone. */
	assert_int_equal(path_output_open(path, 0, 0644, &out, why, sizeof(why)), 0);
	{
		char *moved = in_dir("out/moved");

		assert_int_equal(rename(path, moved), 0);
		touch("out/made");
		path_output_close(&out, true);
		assert_int_equal(stat(path, &st), 0);
		free(moved);
	}
	/* An existing file is opened as it is (the caller truncates when it writes); NOFOLLOW refuses a link. */
	assert_int_equal(path_output_open(path, 0, 0644, &out, why, sizeof(why)), 0);
	assert_false(out.made);
	path_output_close(&out, true);
	assert_int_equal(stat(path, &st), 0);
	make_link("made", "out/link");
	free(path);
	path = in_dir("out/link");
	assert_int_equal(path_output_open(path, PATH_WALK_NOFOLLOW, 0644, &out, why, sizeof(why)), -1);
	assert_non_null(strstr(why, "symbolic link"));
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_resolution),
		cmocka_unit_test(test_ends),
		cmocka_unit_test(test_controllers),
		cmocka_unit_test(test_output),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
