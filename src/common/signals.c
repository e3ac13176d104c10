/* SPDX-License-Identifier: GPL-2.0-or-later */
/* signals.c: the stop flag, the signals that set it, and what a failed output means. */
#include "common/signals.h"

#include <errno.h>

#include "common/util.h"

volatile sig_atomic_t stop_signal;

static void on_signal(int signo)
{
	stop_signal = signo;
}

void stop_on_signals(void)
{
	struct sigaction action = { .sa_handler = on_signal };

	sigemptyset(&action.sa_mask);
	sigaction(SIGINT, &action, NULL);
	sigaction(SIGTERM, &action, NULL);
	sigaction(SIGHUP, &action, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int output_failed(void)
{
	int err = errno ? errno : EIO;

	if (err == EPIPE)
		return EXIT_OK;
	warn_errno("standard output", err);
	return EXIT_FAIL;
}
