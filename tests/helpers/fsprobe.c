/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fsprobe.c: fsprobe DIR: whether filesystem_probe_here asks DIR's stat and statvfs itself
 * ("here RC F_BLOCKS", RC 0 or -errno) or leaves it to a child ("child"), whatever the way to DIR
 * crosses (filesystem_probe_safe's part, which tests/unit/test_mounts.c holds).
 */
#include <stdio.h>

#include "collect/filesystems.h"

int main(int argc, char **argv)
{
	struct fs_probe probe = {0};

	if (argc != 2 || snprintf(probe.dir, sizeof(probe.dir), "%s", argv[1]) >= (int)sizeof(probe.dir)) {
		fprintf(stderr, "usage: fsprobe DIR\n");
		return 2;
	}
	if (filesystem_probe_here(&probe))
		printf("here %d %llu\n", probe.rc, (unsigned long long)probe.vfs.f_blocks);
	else
		printf("child\n");
	return 0;
}
