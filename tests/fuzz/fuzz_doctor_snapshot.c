/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_doctor_snapshot.c: libFuzzer target for doctor's recorded snapshots (--replay): parsed,
 * judged by every rule, rendered, written and read back, as text and packed (doctor_snapshot_pack,
 * which the corpus's packed-* seeds are: the flight recorder's frames).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor/config.h"
#include "doctor/finding.h"
#include "doctor/rules.h"
#include "doctor/snapshot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct doctor_snapshot s, again;
	struct doctor_findings findings = {0};
	struct doctor_config config;
	struct doctor_report report = { .cache_mode = "ebpf", .odirect_mode = "ebpf", .bio_mode = "procfs" };
	char why[512] = "", *text = NULL, *packed = NULL, *text2 = NULL;
	size_t len = 0, packed_len = 0, len2 = 0;
	FILE *out;

	if (doctor_snapshot_parse((const char *)data, size, &s, why, sizeof(why)) != 0) {
		if (!why[0])
			abort(); /* a refusal says why */
		return 0;
	}
	/* Whatever parses, every rule judges and both renderers write, without a fault. */
	doctor_config_init(&config);
	doctor_judge(&s, &config, &findings);
	report.seconds = s.seconds;
	report.findings = &findings;
	out = fopen("/dev/null", "w");
	if (out) {
		doctor_write_json(&report, out);
		doctor_write_text(&report, out);
		fclose(out);
	}
	/* What is written reads back. */
	out = open_memstream(&text, &len);
	if (!out || doctor_snapshot_write(&s, out) != 0)
		abort();
	fclose(out);
	if (doctor_snapshot_parse(text, len, &again, why, sizeof(why)) != 0) {
		fprintf(stderr, "written snapshot does not read back: %s\n", why);
		abort();
	}
	if (again.ndirect != s.ndirect || again.nmounts != s.nmounts || again.ntasks != s.ntasks ||
	    again.nvtrace != s.nvtrace || again.seconds != s.seconds)
		abort();
	doctor_snapshot_free(&again);
	/* Packed (the flight recorder's frames) too, and read back to the same text. */
	out = open_memstream(&packed, &packed_len);
	if (!out || doctor_snapshot_pack(&s, out) != 0)
		abort();
	fclose(out);
	if (doctor_snapshot_parse(packed, packed_len, &again, why, sizeof(why)) != 0) {
		fprintf(stderr, "packed snapshot does not read back: %s\n", why);
		abort();
	}
	out = open_memstream(&text2, &len2);
	if (!out || doctor_snapshot_write(&again, out) != 0)
		abort();
	fclose(out);
	if (len2 != len || memcmp(text, text2, len))
		abort();
	doctor_snapshot_free(&again);
	free(packed);
	free(text2);
	free(text);
	doctor_findings_free(&findings);
	doctor_config_free(&config);
	doctor_snapshot_free(&s);
	return 0;
}
