/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test_inode_names.c: the looker's hints: a path still its file's names it, any other is not taken. */
#include "unit.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "collect/inode_names.h"

/* The name the looker gives file, with these hints, waiting 5 s at most. */
static void name_of(const struct stat *file, const struct inode_name_hint *hints, size_t nhints, char *out,
		    size_t len)
{
	struct inode_names names = { .hints = hints, .nhints = nhints };
	struct file_id id = { file->st_dev, file->st_ino };
	char unknown[64];

	inode_names_resolve(&names, &id, 1, 5000000000ull, NULL);
	snprintf(out, len, "%s", inode_names_get(&names, file->st_dev, file->st_ino, unknown, sizeof(unknown)));
	inode_names_free(&names);
}

/*
 * A file with two names: "near/file", in the working directory (where the looker begins its
 * walk), and a hard link "far/.../link" a dozen directories down. Without a hint it is named by
 * one of the two (the walk finds the near one; on ext4 the kernel's cached name may be either);
 * a hint of the far one, true, is taken as it is; a hint that is another file's path, or no
 * file's, is not, and the file is named by one of its own.
 */
static void assert_one_of(const char *got, const char *a, const char *b)
{
	if (strcmp(got, a) && strcmp(got, b))
		fail_msg("\"%s\" is neither \"%s\" nor \"%s\"", got, a, b);
}

static void test_hints(void **state)
{
	char dir[] = "/var/tmp/test_inode_names.XXXXXX", cwd[PATH_MAX], near[PATH_MAX], far[PATH_MAX],
	     other[PATH_MAX], got[PATH_MAX], cleanup[PATH_MAX + 16];
	struct stat file, st;
	int fd;
	(void)state;

	assert_non_null(mkdtemp(dir));
	assert_int_equal(stat(dir, &st), 0);
	if (!major(st.st_dev)) { /* hints are for block devices' files */
		rmdir(dir);
		skip();
	}
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	snprintf(near, sizeof(near), "%s/near", dir);
	assert_int_equal(mkdir(near, 0700), 0);
	snprintf(far, sizeof(far), "%s/far", dir);
	for (int depth = 0; depth < 12; depth++) {
		assert_int_equal(mkdir(far, 0700), 0);
		strcat(far, "/d");
	}
	assert_int_equal(mkdir(far, 0700), 0);
	strcat(near, "/file");
	strcat(far, "/link");
	assert_true((fd = open(near, O_CREAT | O_WRONLY, 0600)) >= 0);
	close(fd);
	assert_int_equal(link(near, far), 0);
	snprintf(other, sizeof(other), "%s/other", dir);
	assert_true((fd = open(other, O_CREAT | O_WRONLY, 0600)) >= 0);
	close(fd);
	assert_int_equal(stat(near, &file), 0);
	assert_int_equal(chdir(dir), 0);

	name_of(&file, NULL, 0, got, sizeof(got));
	assert_one_of(got, near, far);
	name_of(&file, &(struct inode_name_hint){ file.st_dev, file.st_ino, far }, 1, got, sizeof(got));
	assert_string_equal(got, far);
	name_of(&file, &(struct inode_name_hint){ file.st_dev, file.st_ino, other }, 1, got, sizeof(got));
	assert_one_of(got, near, far);
	strcat(other, ".gone");
	name_of(&file, &(struct inode_name_hint){ file.st_dev, file.st_ino, other }, 1, got, sizeof(got));
	assert_one_of(got, near, far);

	assert_int_equal(chdir(cwd), 0);
	snprintf(cleanup, sizeof(cleanup), "rm -rf %s", dir);
	assert_int_equal(system(cleanup), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hints),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
