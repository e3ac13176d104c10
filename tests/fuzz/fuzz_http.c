/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_http.c: libFuzzer target for the request headers export reads: Accept and Accept-Encoding
 * lists with q parameters, Host.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	double weight;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	weight = http_weight(text, "gzip");
	if (!(weight == -1 || (weight >= 0 && weight <= 1e308)))
		abort(); /* -1, or a weight: never NaN */
	http_accepts_gzip(text);
	http_weight(text, "application/openmetrics-text");
	if (http_valid_host(text) && strpbrk(text, "/@\\\"<>"))
		abort(); /* none of these is in a host */
	free(text);
	return 0;
}
