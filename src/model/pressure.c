/* SPDX-License-Identifier: GPL-2.0-or-later */
/* model/pressure.c: PSI's stall time as a share of an interval. */
#include "model/pressure.h"

double psi_share(uint64_t before_us, uint64_t after_us, double seconds)
{
	if (seconds <= 0 || after_us < before_us)
		return 0;
	return 100.0 * (double)(after_us - before_us) / (seconds * 1e6);
}
