/* SPDX-License-Identifier: GPL-2.0-or-later */
/* http_negotiate.c: what a client's headers say: the q of a token, the exposition format asked for, a valid Host. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http/http.h"

/* The q parameter in ";a=b;q=0.5;c" (the text between the name and the next comma); 1 without one. */
static double quality(const char *params, const char *end)
{
	double weight = 1;

	for (const char *at = params; at < end; at++) {
		char number[16];
		size_t n = 0;

		if (*at != ';')
			continue;
		at++;
		while (at < end && (*at == ' ' || *at == '\t'))
			at++;
		if (end - at < 2 || (at[0] != 'q' && at[0] != 'Q') || at[1] != '=')
			continue;
		for (at += 2; at < end && *at != ';' && n < sizeof(number) - 1; at++)
			number[n++] = *at;
		number[n] = '\0';
		weight = strtod(number, NULL);
		if (!(weight > 0)) /* 0, garbage or NaN: not this */
			weight = 0;
		else if (weight > 1)
			weight = 1;
		at--;
	}
	return weight;
}

/* Whether ";a=b;c=d" (up to end) has the parameter "name=value" (case aside, spaces around ';' allowed). */
static bool has_param(const char *params, const char *end, const char *param)
{
	size_t len = strlen(param);

	for (const char *at = params; at < end; at++) {
		const char *stop;

		if (*at != ';')
			continue;
		while (at + 1 < end && (at[1] == ' ' || at[1] == '\t'))
			at++;
		for (stop = at + 1; stop < end && *stop != ';' && *stop != ' ' && *stop != '\t'; stop++)
			;
		if ((size_t)(stop - at - 1) == len && !strncasecmp(at + 1, param, len))
			return true;
	}
	return false;
}

double http_weight(const char *header, const char *token)
{
	return http_weight_with(header, token, NULL);
}

double http_weight_with(const char *header, const char *token, const char *const *params)
{
	size_t token_len = strlen(token);
	double best = -1;

	for (const char *at = header; at && *at;) {
		const char *end = strchr(at, ','), *name_end;

		if (!end)
			end = at + strlen(at);
		while (at < end && (*at == ' ' || *at == '\t'))
			at++;
		name_end = at;
		while (name_end < end && *name_end != ';' && *name_end != ' ' && *name_end != '\t')
			name_end++;
		if ((size_t)(name_end - at) == token_len && !strncasecmp(at, token, token_len)) {
			double weight = quality(name_end, end);

			for (const char *const *param = params; param && *param; param++)
				if (!has_param(name_end, end, *param))
					weight = -1; /* another variant of the type: not this one */

			if (weight > best)
				best = weight;
		}
		at = *end ? end + 1 : end;
	}
	return best;
}

bool http_accepts_gzip(const char *accept_encoding)
{
	double gzip = http_weight(accept_encoding, "gzip"), x_gzip = http_weight(accept_encoding, "x-gzip");

	if (x_gzip > gzip)
		gzip = x_gzip;
	if (gzip >= 0)
		return gzip > 0;
	return http_weight(accept_encoding, "*") > 0;
}

bool http_valid_host(const char *value)
{
	static const char allowed[] =
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~%!$&'()*+,;=:[]";
	size_t len = strspn(value, allowed);

	return value[len + strspn(value + len, " \t")] == '\0';
}

bool prom_wants_openmetrics(const char *accept)
{
	return http_weight(accept, "application/openmetrics-text") > 0;
}

enum prom_format prom_negotiate(const char *accept)
{
	static const char *const delimited[] = { "proto=io.prometheus.client.MetricFamily", "encoding=delimited",
						 NULL };
	double protobuf = http_weight_with(accept, "application/vnd.google.protobuf", delimited);
	double openmetrics = http_weight(accept, "application/openmetrics-text");

	if (protobuf > 0 && protobuf >= openmetrics)
		return PROM_FORMAT_PROTOBUF;
	return openmetrics > 0 ? PROM_FORMAT_OPENMETRICS : PROM_FORMAT_TEXT;
}
