/* SPDX-License-Identifier: GPL-2.0-or-later */
/* model/pressure.h: pressure stall information (PSI) over an interval. */
#ifndef IOLENS_MODEL_PRESSURE_H
#define IOLENS_MODEL_PRESSURE_H

#include <stdint.h>

/*
 * The share of the interval, in percent, that tasks stalled: the growth of a PSI line's total
 * (µs) over the interval's seconds. 0 when the total went back or the interval is not above 0;
 * not capped (a total read a little after the interval's end can pass 100).
 */
double psi_share(uint64_t before_us, uint64_t after_us, double seconds);

#endif
