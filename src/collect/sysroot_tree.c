/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sysroot_tree.c: what the collectors read, kept in one buffer, and read back entry by entry. */
#include "collect/sysroot_tree.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"

void sysroot_capture_bytes(struct sysroot_capture *c, const void *data, size_t len)
{
	if (c->len + len > c->capacity) {
		c->capacity = c->capacity ? c->capacity : 65536;
		while (c->len + len > c->capacity)
			c->capacity *= 2;
		c->data = xrealloc(c->data, c->capacity);
	}
	if (len)
		memcpy(c->data + c->len, data, len);
	c->len += len;
}

/* An absolute path of sound components: no empty one, no "." or "..". */
static bool sound_path(const char *path)
{
	const char *p = path;

	if (*p != '/')
		return false;
	while (*p == '/') {
		const char *end = strchr(p + 1, '/');
		size_t n = end ? (size_t)(end - p - 1) : strlen(p + 1);

		if (!n || (n == 1 && p[1] == '.') || (n == 2 && p[1] == '.' && p[2] == '.'))
			return false;
		p += 1 + n;
	}
	return true;
}

void sysroot_capture_add(struct sysroot_capture *c, char type, const char *path, const void *data, size_t len)
{
	char full[4096];
	size_t path_len;
	unsigned char head[3], size[4];
	int n;

	while (path[0] == '.' && path[1] == '/')
		path += 2;
	n = snprintf(full, sizeof(full), "%s%s", path[0] == '/' ? "" : "/", path);
	/* A path the tree cannot hold ("/proc/../x", too long) is left out: the replay finds it missing. */
	if (n < 0 || (size_t)n >= sizeof(full) || !sound_path(full) || len > UINT32_MAX)
		return;
	path_len = (size_t)n;
	head[0] = (unsigned char)type;
	head[1] = (unsigned char)(path_len & 0xff);
	head[2] = (unsigned char)(path_len >> 8);
	for (unsigned i = 0; i < 4; i++)
		size[i] = (unsigned char)((uint64_t)len >> (8 * i));
	sysroot_capture_bytes(c, head, sizeof(head));
	sysroot_capture_bytes(c, full, path_len);
	sysroot_capture_bytes(c, size, sizeof(size));
	sysroot_capture_bytes(c, data, len);
}

void sysroot_capture_free(struct sysroot_capture *c)
{
	free(c->data);
	memset(c, 0, sizeof(*c));
}

/* A directory entry's names: each a sound name ended by a NUL. */
static bool sound_names(const unsigned char *data, size_t len)
{
	size_t at = 0;

	while (at < len) {
		const unsigned char *end = memchr(data + at, '\0', len - at);
		size_t n = end ? (size_t)(end - (data + at)) : 0;

		if (!end || !n || memchr(data + at, '/', n) || (n == 1 && data[at] == '.') ||
		    (n == 2 && data[at] == '.' && data[at + 1] == '.'))
			return false;
		at += n + 1;
	}
	return true;
}

int tree_next(const unsigned char *tree, size_t len, size_t *at, struct tree_entry *e)
{
	size_t p = *at, path_len, data_len;

	if (p >= len)
		return 0;
	if (len - p < 3)
		return -EINVAL;
	e->type = (char)tree[p];
	path_len = (size_t)tree[p + 1] | (size_t)tree[p + 2] << 8;
	p += 3;
	if ((e->type != 'F' && e->type != 'E' && e->type != 'D') || !path_len || path_len >= sizeof(e->path) ||
	    len - p < path_len + 4 || memchr(tree + p, '\0', path_len))
		return -EINVAL;
	memcpy(e->path, tree + p, path_len);
	e->path[path_len] = '\0';
	p += path_len;
	data_len = (size_t)tree[p] | (size_t)tree[p + 1] << 8 | (size_t)tree[p + 2] << 16 | (size_t)tree[p + 3] << 24;
	p += 4;
	if (len - p < data_len || !sound_path(e->path))
		return -EINVAL;
	e->data = tree + p;
	e->len = data_len;
	if (e->type == 'E' && (data_len != 1 || (e->data[0] != 'd' && e->data[0] != 'f')))
		return -EINVAL;
	if (e->type == 'D' && !sound_names(e->data, data_len))
		return -EINVAL;
	*at = p + data_len;
	return 1;
}

int tree_select(const unsigned char *tree, size_t len, bool (*keep)(const struct tree_entry *),
		struct sysroot_capture *out)
{
	struct tree_entry *e = xcalloc(1, sizeof(*e));
	size_t at = 0, before = 0;
	int rc, kept = 0;

	while ((rc = tree_next(tree, len, &at, e)) > 0) {
		if (keep(e)) {
			if (out)
				sysroot_capture_bytes(out, tree + before, at - before);
			kept++;
		}
		before = at;
	}
	free(e);
	return rc < 0 ? rc : kept;
}
