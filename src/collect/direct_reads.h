/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * direct_reads.h: what processes holding an O_DIRECT descriptor read from storage, from /proc:
 * pages pgpgin counts that no cache took.
 */
#ifndef IOLENS_DIRECT_READS_H
#define IOLENS_DIRECT_READS_H

#include <stdint.h>

#include "collect/proc_io_rounds.h"

/*
 * /proc/vmstat's pgpgin counts every read a disk served, O_DIRECT's too (submit_bio counts each
 * read bio there and in the submitting task's read_bytes). /proc cannot tell a process's direct
 * reads from its others: a process seen with a descriptor open O_DIRECT (fdinfo's flags) has all
 * it read from storage since the last update counted as direct. A process that opens, reads and
 * closes O_DIRECT between two updates is not seen; what a direct reader reads through its other
 * descriptors is counted as direct too.
 */
struct direct_reads {
	struct proc_io_rounds rounds;
	uint64_t bytes; /* read from storage by O_DIRECT holders since the first update */
};

/* Samples every process readable here; 0, or -errno when /proc cannot be listed. */
int direct_reads_update(struct direct_reads *d);
void direct_reads_free(struct direct_reads *d);

/* Whether pid has a descriptor open with O_DIRECT now (fdinfo's flags); false when not known. */
bool proc_holds_direct(pid_t pid);

#endif
