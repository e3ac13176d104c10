/* SPDX-License-Identifier: GPL-2.0-or-later */
/* capture.h: doctor's window on the machine, kept as a snapshot for the rules. */
#ifndef IOLENS_DOCTOR_CAPTURE_H
#define IOLENS_DOCTOR_CAPTURE_H

#include "doctor/snapshot.h"

/*
 * Watches the machine for seconds (0: one sample, no rates; a stop signal ends it early) and
 * fills the snapshot with what the rules judge; what cannot be seen is said on stderr.
 * direct_off: no O_DIRECT looked for but the open files at the start (no eBPF program).
 * capacity_dir: where disks' capacities are kept (NULL: capacity_dir's default).
 */
void doctor_capture(struct doctor_snapshot *s, double seconds, bool direct_off, const char *capacity_dir);
/*
 * keep: a recorder's windows, one after the other: the eBPF programs stay loaded from one
 * doctor_capture to the next (each window's counts its own still), and threads are sampled once
 * a second, not four times: loading the programs was most of a short window's cost, sampling
 * most of a long one's. false unloads them.
 */
void doctor_capture_keep(bool keep);
/*
 * A recorder's: at each window's end, fn reads the system's counters for its own frame and
 * returns them (the disks, memory, vmstat and pressure among them), which the window ends with
 * instead of reading them again a moment apart. NULL: the window reads its own.
 */
struct system_sample;
typedef const struct system_sample *(*doctor_end_fn)(void *context);
void doctor_capture_end_with(doctor_end_fn fn, void *context);

#endif
