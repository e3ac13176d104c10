/* SPDX-License-Identifier: GPL-2.0-or-later */
/* model/filesystem.h: a filesystem's use from statvfs's counts. */
#ifndef IOLENS_MODEL_FILESYSTEM_H
#define IOLENS_MODEL_FILESYSTEM_H

#include <stdint.h>

/*
 * df's Use%: used / (used + available to users), in percent, of blocks or of inodes (total,
 * free to root, available to users: f_blocks, f_bfree, f_bavail or f_files, f_ffree, f_favail).
 * 0 when neither is above 0.
 */
double df_use_percent(uint64_t total, uint64_t free_all, uint64_t available);

#endif
