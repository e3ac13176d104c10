/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_container.c: libFuzzer target that feeds each input to the container parsers of
 * collect/container.h: a cgroup path, a /proc/PID/cgroup, docker's config.v2.json, podman's
 * containers.json and the kubelet's file names.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collect/container.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An id as parsed: 64 lowercase hex digits and its NUL, or empty. */
static void check_id(const char *id)
{
	size_t len = strnlen(id, CONTAINER_ID_SIZE);

	if (len == CONTAINER_ID_SIZE || (len && len != CONTAINER_ID_SIZE - 1))
		abort();
	for (size_t i = 0; i < len; i++)
		if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
			abort();
}

static void check_path(const char *path, size_t len)
{
	struct container_path p;

	if (!container_parse_path(path, len, &p))
		return;
	if (!p.matches || p.inner.runtime == CONTAINER_NONE || p.inner.runtime >= CONTAINER_RUNTIMES ||
	    p.outer.end > len || p.inner.end > len || p.outer.end > p.inner.end)
		abort();
	check_id(p.inner.id);
	check_id(p.outer.id);
	/* machine and lxc are named by their path, the others by an id */
	if (!p.inner.id[0] == !p.inner.name[0] || !memchr(p.inner.name, '\0', sizeof(p.inner.name)))
		abort();
}

static void found(const char *id, const char *name, void *context)
{
	(void)context;
	check_id(id);
	if (!id[0] || !container_name_valid(name, strlen(name)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct cgroup_hierarchies known;
	struct cgroup_line lines[8];
	char name[CONTAINER_NAME_SIZE], pod[CONTAINER_NAME_SIZE], ns[64], container[CONTAINER_NAME_SIZE],
		uid[CONTAINER_POD_UID_SIZE], id[CONTAINER_ID_SIZE], *copy;
	size_t n;

	/* The input has no NUL after it: ASan stops any parser that reads past size. */
	check_path(text, size);
	cgroup_hierarchies_parse(text, size, &known);
	if (known.count > sizeof(known.id) / sizeof(known.id[0]))
		abort();
	for (int with_known = 0; with_known < 2; with_known++) {
		n = container_cgroup_lines(text, size, with_known ? &known : NULL, lines, 8);
		for (size_t i = 0; i < n; i++) {
			/* Each path inside the text, none with a line of the file starting in it. */
			if (lines[i].path < text || lines[i].path + lines[i].len > text + size ||
			    (lines[i].version != 1 && lines[i].version != 2) || !memchr(lines[i].controllers, '\0', 64))
				abort();
			check_path(lines[i].path, lines[i].len);
		}
	}
	if (container_docker_name(text, size, name, sizeof(name)) && !container_name_valid(name, strlen(name)))
		abort();
	container_podman_names(text, size, 64, found, NULL);
	/* The kubelet's names are file names: a string. */
	copy = malloc(size + 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	if (container_pod_dir_parse(copy, ns, sizeof(ns), pod, sizeof(pod), uid, sizeof(uid)) &&
	    (!ns[0] || !pod[0] || !uid[0] || strchr(ns, '_') || strchr(pod, '_')))
		abort();
	if (container_log_name_parse(copy, pod, sizeof(pod), ns, sizeof(ns), container, sizeof(container), id,
				     sizeof(id))) {
		check_id(id);
		if (!id[0] || !container[0] || strchr(container, '_'))
			abort();
	}
	free(copy);
	return 0;
}
