/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_mounts.c: the mount table parsed (escapes undone, options, bad lines), held to getmntent(3)
 * on this machine's own table, and read through a recorded tree.
 */
#include "unit.h"

#include <errno.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/filesystems.h"
#include "collect/mounts.h"
#include "collect/procfs.h"
#include "collect/sysroot.h"

static void test_parse(void **state)
{
	static const char table[] =
		"sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0\n"
		"/dev/vda1 / ext4 rw,relatime 0 0\n"
		"server:/export /mnt/a\\040b\\134c nfs4 ro,vers=4.2 0 0\n"
		"half a line\n"
		"\n"
		"tmpfs /tmp\\011tab tmpfs rw 0 0"; /* the last line without a newline */
	struct mounts m;
	(void)state;

	assert_int_equal(mounts_parse(table, strlen(table), &m), 0);
	assert_int_equal(m.count, 4);
	assert_string_equal(m.list[0].type, "sysfs");
	assert_string_equal(m.list[1].source, "/dev/vda1");
	assert_string_equal(m.list[1].dir, "/");
	/* A space and a backslash of a name, as the kernel escapes them. */
	assert_string_equal(m.list[2].dir, "/mnt/a b\\c");
	assert_string_equal(m.list[2].source, "server:/export");
	assert_string_equal(m.list[3].dir, "/tmp\ttab");
	/* Options are whole words among the commas. */
	assert_true(mount_option(&m.list[2], "ro"));
	assert_false(mount_option(&m.list[1], "ro"));
	assert_true(mount_option(&m.list[0], "relatime"));
	assert_false(mount_option(&m.list[0], "rel"));
	assert_false(mount_option(&m.list[0], "nosuid,nodev"));
	mounts_free(&m);
	assert_int_equal(m.count, 0);

	/* No line well formed: an error, nothing kept; an empty table is none. */
	assert_int_equal(mounts_parse("junk\nmore junk\n", 15, &m), -EINVAL);
	assert_int_equal(m.count, 0);
	assert_int_equal(mounts_parse("", 0, &m), 0);
	assert_int_equal(m.count, 0);
	/* A cut escape is taken as it is; a mount point that is no path is no mount. */
	assert_int_equal(mounts_parse("a /x\\04 t o 0 0\nb rel t o 0 0\n", 30, &m), 0);
	assert_int_equal(m.count, 1);
	assert_string_equal(m.list[0].dir, "/x\\04");
	mounts_free(&m);
}

/* This machine's table, read both ways: the same mounts, fields and order as getmntent's. */
static void test_same_as_getmntent(void **state)
{
	FILE *f = setmntent("/proc/self/mounts", "re");
	struct mounts m;
	struct mntent *e;
	size_t i = 0;
	(void)state;

	assert_non_null(f);
	assert_int_equal(mounts_read(&m), 0);
	while ((e = getmntent(f))) {
		assert_true(i < m.count);
		assert_string_equal(m.list[i].source, e->mnt_fsname);
		assert_string_equal(m.list[i].dir, e->mnt_dir);
		assert_string_equal(m.list[i].type, e->mnt_type);
		assert_string_equal(m.list[i].options, e->mnt_opts);
		assert_int_equal(mount_option(&m.list[i], "ro"), hasmntopt(e, "ro") != NULL);
		i++;
	}
	endmntent(f);
	assert_int_equal(i, m.count);
	mounts_free(&m);
}

/* Under a recorded root, its table. */
static void test_sysroot(void **state)
{
	char *dir = unit_tmpdir(), path[512];
	struct mounts m;
	FILE *f;
	(void)state;

	snprintf(path, sizeof(path), "%s/proc", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/proc/self", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/proc/self/mounts", dir);
	assert_non_null(f = fopen(path, "w"));
	fputs("cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid 0 0\n", f);
	fclose(f);
	assert_int_equal(sysroot_set(dir), 0);
	assert_int_equal(mounts_read(&m), 0);
	assert_int_equal(m.count, 1);
	assert_string_equal(m.list[0].dir, "/sys/fs/cgroup");
	mounts_free(&m);
	/* A root without the file: its error, an empty table. */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mounts_read(&m), -ENOENT);
	assert_int_equal(m.count, 0);
	assert_int_equal(sysroot_set("/"), 0);
	unit_rmtree(dir);
}

/*
 * A memory filesystem, or an ext2/3/4 on a disk, is probed in place only when the path to it
 * crosses no mount a server answers for (NFS, FUSE, FUSE on a block device, an automount, an
 * overlay of others): a stat there could wait on it.
 */
static void test_probe_safe(void **state)
{
	static const char text[] =
		"22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
		"23 22 0:5 / /dev rw - devtmpfs udev rw\n"
		"24 23 0:25 / /dev/shm rw - tmpfs tmpfs rw\n"
		"25 22 0:26 / /run rw - tmpfs tmpfs rw\n"
		"26 25 0:27 / /run/user/1000 rw - tmpfs tmpfs rw\n"
		"30 22 0:50 / /mnt/nfs rw - nfs4 server:/export rw\n"
		"31 30 0:51 / /mnt/nfs/scratch/ram rw - tmpfs tmpfs rw\n"
		"32 22 8:2 / /mnt/ntfs rw - fuseblk /dev/sda2 rw\n"
		"33 32 0:52 / /mnt/ntfs/ram rw - tmpfs tmpfs rw\n"
		"34 22 0:53 / /srv/fuse rw - fuse.sshfs host: rw\n"
		"35 22 0:54 / /srv/fuse rw - tmpfs tmpfs rw\n" /* over the FUSE mount: the path never enters it */
		"36 22 8:3 / /home rw - xfs /dev/sda3 rw\n"
		"37 22 0:55 / /mnt/covered rw - tmpfs tmpfs rw\n"
		"38 37 0:56 / /mnt/covered rw - nfs4 server:/other rw\n" /* the tmpfs's line leads to NFS */
		"39 22 8:4 / /cluster rw - gfs2 /dev/sdb rw\n"
		"40 39 0:57 / /cluster/ram rw - tmpfs tmpfs rw\n"
		"41 22 0:20 / /sys rw - sysfs sysfs rw\n"
		"42 41 0:58 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n" /* (a cgroup v1 machine's) */
		"43 22 8:5 / /boot rw - ext4 /dev/sda5 rw\n"
		"44 30 8:6 / /mnt/nfs/disk rw - ext4 /dev/sda6 rw\n"
		"45 22 0:59 / /net rw - autofs systemd-1 rw\n"
		"46 45 0:60 / /net/ram rw - tmpfs tmpfs rw\n"
		"47 22 0:61 / /merged rw - overlay overlay rw\n"
		"48 47 0:62 / /merged/ram rw - tmpfs tmpfs rw\n"
		"49 22 8:7 / /data rw - ext4 /dev/sda7 rw\n"
		"50 49 0:63 / /data rw - fuse.sshfs host: rw\n" /* over the ext4: a stat there asks the server */
		"51 22 0:64 / /img rw - ext4 /dev/loop0 rw\n"  /* (an ext4 without a device is nothing known) */
		"52 22 8:8 / /quota rw - ext4 /dev/sda8 rw,relatime,prjquota\n"
		"53 22 8:9 / /opt/a rw - ext4 /dev/sda9 rw\n"
		"54 22 8:10 / /opt rw - ext4 /dev/sda10 rw\n"; /* mounted over /opt/a's way */
	struct mountinfo m;
	size_t root_line;
	(void)state;

	assert_int_equal(mountinfo_parse(text, strlen(text), &m), 0);
	assert_true(filesystem_probe_safe(&m, "tmpfs", "/dev/shm"));
	assert_true(filesystem_probe_safe(&m, "tmpfs", "/run/user/1000"));
	assert_true(filesystem_probe_safe(&m, "tmpfs", "/srv/fuse"));
	assert_true(filesystem_probe_safe(&m, "devtmpfs", "/dev"));
	assert_false(filesystem_probe_safe(&m, "tmpfs", "/mnt/nfs/scratch/ram"));
	assert_false(filesystem_probe_safe(&m, "tmpfs", "/mnt/ntfs/ram"));
	assert_false(filesystem_probe_safe(&m, "xfs", "/home"));   /* on a disk: probed in a child */
	assert_false(filesystem_probe_safe(&m, "nfs4", "/mnt/nfs"));
	assert_false(filesystem_probe_safe(&m, "tmpfs", "relative"));
	assert_false(filesystem_probe_safe(&m, "tmpfs", "/mnt/covered")); /* a stat there reaches the NFS root */
	assert_false(filesystem_probe_safe(&m, "tmpfs", "/cluster/ram"));
	assert_false(filesystem_probe_safe(&m, "tmpfs", "/run/nothing")); /* not mounted (now) */
	/* A path crossing the kernel's own filesystems (sysfs), but not an automount nor an overlay. */
	assert_true(filesystem_probe_safe(&m, "tmpfs", "/sys/fs/cgroup"));
	assert_false(filesystem_probe_safe(&m, "tmpfs", "/net/ram"));
	assert_false(filesystem_probe_safe(&m, "tmpfs", "/merged/ram"));
	/* ext2/3/4 on a disk answer from their superblock, reached as a tmpfs would be. */
	assert_true(filesystem_probe_safe(&m, "ext4", "/"));
	assert_true(filesystem_probe_safe(&m, "ext4", "/boot"));
	assert_false(filesystem_probe_safe(&m, "ext4", "/mnt/nfs/disk")); /* through NFS */
	assert_false(filesystem_probe_safe(&m, "ext4", "/data"));         /* under FUSE now */
	assert_false(filesystem_probe_safe(&m, "ext4", "/img"));          /* device 0:64 */
	assert_false(filesystem_probe_safe(&m, "ext4", "/quota"));        /* project quotas enforced */
	assert_true(filesystem_probe_safe(&m, "ext4", "/opt"));
	assert_false(filesystem_probe_safe(&m, "ext4", "/opt/a")); /* hidden: its name read in /opt's ext4 */
	assert_true(mountinfo_find(&m, "/quota")->project_quota);
	assert_false(mountinfo_find(&m, "/boot")->project_quota);
	mountinfo_free(&m);
	/* Without "/" in the table (a view from elsewhere): nothing is known of the way. */
	root_line = strlen("22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n");
	assert_int_equal(mountinfo_parse(text + root_line, strlen(text) - root_line, &m), 0);
	assert_false(filesystem_probe_safe(&m, "tmpfs", "/dev/shm"));
	assert_false(filesystem_probe_safe(&m, "tmpfs", "/")); /* (nothing mounted there, as far as it says) */
	mountinfo_free(&m);
}

/* Asked in place: the mount point's stat and statvfs, as the child asks them. */
static void test_probe_here(void **state)
{
	struct fs_probe probe = { .dir = "/" };
	(void)state;

	filesystem_probe_here(&probe);
	assert_int_equal(probe.rc, 0);
	assert_true(S_ISDIR(probe.st.st_mode));
	assert_true(probe.vfs.f_frsize > 0);
	snprintf(probe.dir, sizeof(probe.dir), "/nonexistent/iolens");
	filesystem_probe_here(&probe);
	assert_int_equal(probe.rc, -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_probe_safe),
		cmocka_unit_test(test_probe_here),
		cmocka_unit_test(test_same_as_getmntent),
		cmocka_unit_test(test_sysroot),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
