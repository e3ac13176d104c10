/* SPDX-License-Identifier: GPL-2.0-or-later */
/* unit.h: what every cmocka unit test includes, and a scratch directory helper. */
#ifndef IOLENS_UNIT_H
#define IOLENS_UNIT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A new directory under $TEST_TMPDIR (a real filesystem), removed by unit_rmtree. */
static inline char *unit_tmpdir(void)
{
	const char *base = getenv("TEST_TMPDIR");
	char *path;

	if (asprintf(&path, "%s/unit.XXXXXX", base && *base ? base : "/tmp") < 0 || !mkdtemp(path))
		abort();
	return path;
}

static inline void unit_rmtree(char *path)
{
	char *command;

	if (asprintf(&command, "rm -rf '%s'", path) >= 0) {
		if (system(command) != 0)
			fprintf(stderr, "could not remove %s\n", path);
		free(command);
	}
	free(path);
}

#endif
