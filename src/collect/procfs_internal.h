/* SPDX-License-Identifier: GPL-2.0-or-later */
/* procfs_internal.h: what the /proc parsers share: the scanning of span.h, and the files kept open between samples. */
#ifndef IOLENS_PROCFS_INTERNAL_H
#define IOLENS_PROCFS_INTERNAL_H

#include "collect/span.h"
#include "collect/sysroot.h"

/*
 * Reads a file that a monitor reads at every sample: kept open between reads, and
 * reopened when the sysroot has changed since it was opened (see procfs_close).
 */
int procfs_read_hot(struct sysroot_file *file, const char **text, size_t *len);

#endif
