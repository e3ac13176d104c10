/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mounts.c: the mount table (/proc/self/mounts under the root), its fields unescaped. */
#include "collect/mounts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "collect/span.h"
#include "collect/sysroot.h"
#include "common/util.h"

/*
 * The field at *at (up to end), copied with the kernel's octal escapes undone (it
 * writes a space, tab, newline and backslash of a name as \040, \011, \012 and \134); NULL
 * when the line has no more fields.
 */
static char *field(const char *end, const char **at)
{
	const char *p = *at;
	char *out, *q;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p == end)
		return NULL;
	out = q = xcalloc(1, (size_t)(end - p) + 1);
	for (; p < end && *p != ' ' && *p != '\t'; p++) {
		if (*p == '\\' && end - p >= 4 && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' &&
		    p[3] >= '0' && p[3] <= '7') {
			*q++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
			p += 3;
		} else {
			*q++ = *p;
		}
	}
	*at = p;
	return out;
}

int mounts_parse(const char *text, size_t len, struct mounts *out)
{
	const char *p = text, *end = text + len;

	*out = (struct mounts){ 0 };
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *at = p;
		struct mount m = { 0 };

		if (!eol)
			eol = end;
		/* source, mount point, type, options; the two numbers after them are not needed. */
		if ((m.source = field(eol, &at)) && (m.dir = field(eol, &at)) && (m.type = field(eol, &at)) &&
		    (m.options = field(eol, &at)) && m.dir[0] == '/') {
			out->list = xrealloc(out->list, (out->count + 1) * sizeof(*out->list));
			out->list[out->count++] = m;
		} else {
			free(m.source);
			free(m.dir);
			free(m.type);
			free(m.options);
		}
		p = eol + 1;
	}
	return out->count || !len ? 0 : -EINVAL;
}

int mounts_read(struct mounts *out)
{
	struct sysroot_file file = SYSROOT_FILE("/proc/self/mounts");
	const char *text;
	size_t len;
	int rc = sysroot_file_read(&file, &text, &len);

	*out = (struct mounts){ 0 };
	if (rc == 0)
		rc = mounts_parse(text, len, out);
	sysroot_file_close(&file);
	return rc;
}

bool mount_option(const struct mount *m, const char *option)
{
	return m->options && span_lists((struct span){ m->options, m->options + strlen(m->options) }, option);
}

void mounts_free(struct mounts *m)
{
	for (size_t i = 0; i < m->count; i++) {
		free(m->list[i].source);
		free(m->list[i].dir);
		free(m->list[i].type);
		free(m->list[i].options);
	}
	free(m->list);
	*m = (struct mounts){ 0 };
}
