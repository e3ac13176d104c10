/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz_doctor_config.c: libFuzzer target for doctor's configuration (/etc/iolens/doctor.conf, --accept, --set). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "doctor/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct doctor_config c;
	char why[512] = "";
	const char *paths[] = { "/var/lib/db/file", NULL };

	doctor_config_init(&c);
	if (doctor_config_parse(&c, (const char *)data, size, "fuzz", why, sizeof(why)) == 0) {
		/* What parses is whole: every threshold a number, every accept named and matchable. */
		for (unsigned i = 0; i < TH_COUNT; i++)
			if (!(c.threshold[i] >= 0))
				abort();
		for (size_t i = 0; i < c.naccepts; i++)
			if (!c.accepts[i].rule[0] || memchr(c.accepts[i].value, '\n', strlen(c.accepts[i].value)))
				abort();
		doctor_config_accepted(&c, "odirect", "postgres", paths, 2);
	} else if (!why[0]) {
		abort(); /* a refusal says why */
	}
	doctor_config_free(&c);
	return 0;
}
