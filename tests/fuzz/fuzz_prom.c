/* fuzz_prom.c: libFuzzer target for what export takes from outside: an HTTP Accept header (content negotiation), and label values written into the exposition. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	free(text);
	return 0;
}
