/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fdinfo.c: parses /proc/PID/fdinfo/N: "pos:", "flags:" (octal), "mnt_id:", "ino:" lines; others are passed over. */
#include "collect/fdinfo.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "collect/sysroot.h"

/* A number in the given base up to the end of the line; false when there is none or it overflows. */
static bool parse_number(const char *p, const char *end, unsigned base, uint64_t *out)
{
	uint64_t value = 0;
	int digits = 0;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	for (; p < end && *p != '\n'; p++, digits++) {
		unsigned digit = (unsigned)(*p - '0');
		if (*p < '0' || digit >= base || value > (UINT64_MAX - digit) / base)
			return false;
		value = value * base + digit;
	}
	*out = value;
	return digits > 0;
}

int fdinfo_parse(const char *text, size_t len, struct fdinfo *out)
{
	const char *p = text, *end = text + len;
	bool have_pos = false, have_flags = false;
	uint64_t value;

	*out = (struct fdinfo){0};
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *colon;

		if (!eol)
			eol = end;
		colon = memchr(p, ':', (size_t)(eol - p));
		if (colon) {
			size_t key = (size_t)(colon - p);
			if (key == 3 && !memcmp(p, "pos", 3)) {
				if (!parse_number(colon + 1, eol, 10, &out->pos))
					return -EINVAL;
				have_pos = true;
			} else if (key == 5 && !memcmp(p, "flags", 5)) {
				if (!parse_number(colon + 1, eol, 8, &value) || value > 0xffffffffu)
					return -EINVAL;
				out->flags = (unsigned)value;
				have_flags = true;
			} else if (key == 6 && !memcmp(p, "mnt_id", 6)) {
				if (!parse_number(colon + 1, eol, 10, &out->mnt_id))
					return -EINVAL;
			} else if (key == 3 && !memcmp(p, "ino", 3)) {
				if (!parse_number(colon + 1, eol, 10, &out->ino))
					return -EINVAL;
			}
		}
		p = eol + 1;
	}
	return have_pos && have_flags ? 0 : -EINVAL;
}

int fdinfo_read(pid_t pid, int fd, struct fdinfo *out)
{
	char path[64], text[4096];
	ssize_t got;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)pid, fd);
	got = sysroot_read_small(path, text, sizeof(text));
	return got < 0 ? (int)got : fdinfo_parse(text, (size_t)got, out);
}
