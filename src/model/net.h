/* SPDX-License-Identifier: GPL-2.0-or-later */
/* model/net.h: a network interface's rates between two monitor samples. */
#ifndef IOLENS_MODEL_NET_H
#define IOLENS_MODEL_NET_H

#include <stdbool.h>

#include "collect/system.h"

/*
 * An interface's bytes (or packets) per second received and sent; item "total" sums the
 * interfaces that are devices of their own (all but lo when none is), and only those in both
 * samples whose counters did not go back. False when unknown.
 */
bool sample_net_rates(const struct system_sample *then, const struct system_sample *now, const char *item,
		      bool packets, double seconds, double *received, double *sent);

#endif
