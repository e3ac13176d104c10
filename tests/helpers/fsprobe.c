/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fsprobe.c: fsprobe DIR: what doctor makes of the mount at DIR from /proc/self/mountinfo:
 *   prjquota yes|no in-place yes|no
 * whether its superblock enforces project quotas, and whether filesystem_probe_safe lets doctor
 * ask its stat and statvfs itself (no: a probe child asks them). Exit 1 when nothing is mounted
 * at DIR or mountinfo cannot be read.
 */
#include <stdio.h>

#include "collect/filesystems.h"
#include "collect/procfs.h"

int main(int argc, char **argv)
{
	const struct mount_device *m;
	struct mountinfo mounts;
	int rc = 1;

	if (argc != 2) {
		fprintf(stderr, "usage: fsprobe DIR\n");
		return 2;
	}
	if (mountinfo_read(&mounts) != 0) {
		fprintf(stderr, "fsprobe: /proc/self/mountinfo cannot be read\n");
		return 1;
	}
	if ((m = mountinfo_find(&mounts, argv[1]))) {
		printf("prjquota %s in-place %s\n", m->project_quota ? "yes" : "no",
		       filesystem_probe_safe(&mounts, m->type, argv[1]) ? "yes" : "no");
		rc = 0;
	} else {
		fprintf(stderr, "fsprobe: nothing is mounted at %s\n", argv[1]);
	}
	mountinfo_free(&mounts);
	return rc;
}
