/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_prom.c: libFuzzer target for what export takes from outside: an HTTP Accept header (content
 * negotiation), and label values written into the exposition, in text and in protobuf.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/http.h"
#include "render/prom.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *out = NULL;
	size_t len = 0;
	struct prom p = { 0 };

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	prom_wants_openmetrics(text);
	prom_negotiate(text);

	/* A label value of any bytes stays inside its quotes on one line. */
	p.out = open_memstream(&out, &len);
	if (!p.out) {
		free(text);
		return 0;
	}
	prom_u64(&p, "iolens_x_total", 1, "op", text, NULL);
	fclose(p.out);
	if (len == 0 || out[len - 1] != '\n' || memchr(out, '\n', len - 1))
		abort();
	for (size_t i = strlen("iolens_x_total{op=\""); i < len; i++) {
		if (out[i] == '\\') {
			i++; /* an escape: \\ \" \n */
			continue;
		}
		if (out[i] == '"') { /* the closing quote: then "} 1\n" */
			if (strcmp(out + i, "\"} 1\n"))
				abort();
			break;
		}
	}
	free(out);

	/* In protobuf: one delimited family whose length is what follows it. */
	out = NULL;
	len = 0;
	p = (struct prom){ .protobuf = true };
	if ((p.out = open_memstream(&out, &len))) {
		prom_family(&p, "iolens_x", PROM_GAUGE, "x");
		prom_u64(&p, "iolens_x", 1, "op", text, NULL);
		prom_end(&p);
		fclose(p.out);
		if (!p.failed) {
			size_t at = 0, length = 0;
			unsigned shift = 0;

			while (at < len && out[at] & 0x80)
				length |= (size_t)(out[at++] & 0x7f) << shift, shift += 7;
			if (at >= len)
				abort();
			length |= (size_t)out[at++] << shift;
			if (at + length != len)
				abort();
		}
		free(out);
	}
	free(text);
	return 0;
}
