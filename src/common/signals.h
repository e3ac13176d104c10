/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * signals.h: how a command that runs until told to stop is told: one flag, one set of signals, one
 * answer to a closed output.
 */
#ifndef IOLENS_SIGNALS_H
#define IOLENS_SIGNALS_H

#include <signal.h>

/* The signal that asked the command to stop; 0 until one came. Loops test it, sleeps wake on it. */
extern volatile sig_atomic_t stop_signal;

/*
 * SIGINT, SIGTERM and SIGHUP set stop_signal, so the loop ends and cleans up (eBPF programs
 * detached, files removed, what was measured printed); SIGPIPE is ignored, so a closed output
 * is an EPIPE that the caller hands to output_failed() rather than a death mid-cleanup.
 */
void stop_on_signals(void);

/* stdout failed: a reader that went away (EPIPE) ends quietly with 0, as head(1) expects; else said, 1. */
int output_failed(void);

#endif
