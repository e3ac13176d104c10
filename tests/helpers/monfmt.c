/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * monfmt.c: formats values as iolens's monitor does, for tests/cli/monitor_format.sh to hold
 * against dstat's own code.
 */
#include <stdio.h>
#include <stdlib.h>

#include "render/monitor.h"

/* stdin: "TYPE WIDTH BASE VALUE" lines (TYPE d or f); stdout: "TEXT UNIT" for each. */
int main(void)
{
	char type;
	int width;
	double base, value;

	while (scanf(" %c %d %lf %lf", &type, &width, &base, &value) == 4) {
		char buf[64];
		int unit = 0;

		if (width < 1 || width > 40)
			return 2;
		monitor_format(value, type == 'f' ? MON_FLOAT : MON_DECIMAL, width, base, false, false, buf, &unit);
		printf("%s %d\n", buf, unit);
	}
	return 0;
}
