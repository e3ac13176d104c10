/* SPDX-License-Identifier: GPL-2.0-or-later */
/* model/filesystem.c: df's Use%. */
#include "model/filesystem.h"

double df_use_percent(uint64_t total, uint64_t free_all, uint64_t available)
{
	uint64_t used = total > free_all ? total - free_all : 0;

	return used + available ? 100.0 * (double)used / (double)(used + available) : 0;
}
