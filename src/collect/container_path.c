/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * container_path.c: which container a cgroup path names, as each runtime names its cgroups on v1
 * and v2, and the lines of a /proc/PID/cgroup someone may have shaped.
 */
#include "collect/container.h"

#include <stdio.h>
#include <string.h>

#define CGROUP_PATH_MAX 4096 /* the kernel writes a path into a buffer of PATH_MAX */

const char *const container_runtime_names[CONTAINER_RUNTIMES] = {
	[CONTAINER_NONE] = "", [CONTAINER_DOCKER] = "docker", [CONTAINER_PODMAN] = "podman",
	[CONTAINER_CONTAINERD] = "containerd", [CONTAINER_CRIO] = "cri-o", [CONTAINER_KUBERNETES] = "kubernetes",
	[CONTAINER_MACHINE] = "machine", [CONTAINER_LXC] = "lxc",
};

struct span {
	const char *text;
	size_t len;
};

static bool span_is(struct span s, const char *word)
{
	return s.len == strlen(word) && !memcmp(s.text, word, s.len);
}

static bool starts(struct span s, const char *prefix)
{
	size_t n = strlen(prefix);

	return s.len >= n && !memcmp(s.text, prefix, n);
}

static bool ends(struct span s, const char *suffix)
{
	size_t n = strlen(suffix);

	return s.len >= n && !memcmp(s.text + s.len - n, suffix, n);
}

bool container_id_valid(const char *text, size_t len)
{
	if (len != CONTAINER_ID_SIZE - 1)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((text[i] >= '0' && text[i] <= '9') || (text[i] >= 'a' && text[i] <= 'f')))
			return false;
	return true;
}

/* PREFIX ID SUFFIX, the id 64 hex digits: copied into id. */
static bool id_between(struct span s, const char *prefix, const char *suffix, char *id)
{
	size_t p = strlen(prefix), q = strlen(suffix);

	if (!starts(s, prefix) || !ends(s, suffix) || s.len < p + q || !container_id_valid(s.text + p, s.len - p - q))
		return false;
	memcpy(id, s.text + p, s.len - p - q);
	id[s.len - p - q] = '\0';
	return true;
}

static bool copy_text(const char *text, size_t len, char *out, size_t size)
{
	if (!len || len >= size || memchr(text, '\0', len))
		return false;
	memcpy(out, text, len);
	out[len] = '\0';
	return true;
}

static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0'
	    : c >= 'a' && c <= 'f'  ? c - 'a' + 10
	    : c >= 'A' && c <= 'F'  ? c - 'A' + 10
				    : -1;
}

/* A systemd unit name's escapes undone ("fedora\x2d38" is "fedora-38"): false when it does not fit or makes a NUL. */
static bool unit_unescape(const char *text, size_t len, char *out, size_t size)
{
	size_t used = 0;

	for (size_t i = 0; i < len; i++) {
		char c = text[i];
		int high, low;

		if (c == '\\' && i + 3 < len && text[i + 1] == 'x' && (high = hex_digit(text[i + 2])) >= 0 &&
		    (low = hex_digit(text[i + 3])) >= 0) {
			c = (char)(high << 4 | low);
			i += 3;
		}
		if (!c || used + 1 >= size)
			return false;
		out[used++] = c;
	}
	out[used] = '\0';
	return used > 0;
}

/* A pod's uid as a path spells it (systemd's slices have '_' for '-'): hex digits and dashes. */
static bool pod_uid(const char *text, size_t len, char *out)
{
	if (!len || len >= CONTAINER_POD_UID_SIZE)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = text[i] == '_' ? '-' : text[i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '-'))
			return false;
		out[i] = c;
	}
	out[len] = '\0';
	return true;
}

/*
 * A containerd namespace as a directory at the top: what containerd allows ([a-z0-9] and ._-, from
 * a letter or digit).
 */
static bool namespace_name(struct span s)
{
	if (!s.len || s.len >= 64 ||
	    !((s.text[0] >= 'a' && s.text[0] <= 'z') || (s.text[0] >= '0' && s.text[0] <= '9')))
		return false;
	for (size_t i = 0; i < s.len; i++) {
		char c = s.text[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

/* user@UID.service: the uid of a user's own service manager. */
static bool user_service(struct span s, uint32_t *uid)
{
	uint64_t value = 0;
	size_t digits;

	if (!starts(s, "user@") || !ends(s, ".service"))
		return false;
	digits = s.len - strlen("user@") - strlen(".service");
	if (!digits || digits > 10)
		return false;
	for (size_t i = 0; i < digits; i++) {
		char c = s.text[strlen("user@") + i];

		if (c < '0' || c > '9')
			return false;
		value = value * 10 + (uint64_t)(c - '0');
	}
	if (value >= UINT32_MAX)
		return false;
	*uid = (uint32_t)value;
	return true;
}

/* The container one component names, given the one above it (empty at the top) and its depth (1 at the top). */
static bool component_container(struct span c, struct span parent, unsigned depth, struct container_match *m)
{
	static const struct {
		const char *prefix, *suffix;
		enum container_runtime runtime;
	} scopes[] = {
		{ "docker-", ".scope", CONTAINER_DOCKER },               /* systemd driver; dockershim's pods too */
		{ "libpod-", ".scope", CONTAINER_PODMAN },
		{ "libpod-", "", CONTAINER_PODMAN },                     /* podman's cgroupfs manager, /libpod_parent */
		{ "cri-containerd-", ".scope", CONTAINER_CONTAINERD },
		{ "crio-", ".scope", CONTAINER_CRIO },
		{ "crio-", "", CONTAINER_CRIO },
		{ "nerdctl-", ".scope", CONTAINER_CONTAINERD },
	};

	memset(m, 0, sizeof(*m));
	/* The runtimes' monitors run beside their containers, not in them. */
	if (starts(c, "libpod-conmon-") || starts(c, "crio-conmon-") || starts(c, "lxc.monitor"))
		return false;
	for (size_t i = 0; i < sizeof(scopes) / sizeof(scopes[0]); i++)
		if (id_between(c, scopes[i].prefix, scopes[i].suffix, m->id)) {
			m->runtime = scopes[i].runtime;
			return true;
		}
	if (container_id_valid(c.text, c.len)) {
		memcpy(m->id, c.text, c.len);
		m->id[c.len] = '\0';
		if (span_is(parent, "docker"))                  /* docker's cgroupfs driver, nested too */
			m->runtime = CONTAINER_DOCKER;
		else if (starts(parent, "pod"))                 /* the kubelet's cgroupfs driver */
			m->runtime = CONTAINER_KUBERNETES;
		else if (depth == 2 && namespace_name(parent)) { /* containerd's: /NAMESPACE/ID */
			m->runtime = CONTAINER_CONTAINERD;
			memcpy(m->group, parent.text, parent.len);
			m->group[parent.len] = '\0';
		} else
			return false;
		return true;
	}
	if (starts(c, "machine-") && ends(c, ".scope") &&
	    unit_unescape(c.text + strlen("machine-"), c.len - strlen("machine-") - strlen(".scope"), m->name,
			  sizeof(m->name))) {
		m->runtime = CONTAINER_MACHINE;
		return true;
	}
	if (starts(c, "lxc.payload.") && copy_text(c.text + strlen("lxc.payload."), c.len - strlen("lxc.payload."),
						   m->name, sizeof(m->name))) {
		m->runtime = CONTAINER_LXC;
		return true;
	}
	/* LXC before 4.0: /lxc/NAME on v1, and /lxc.payload/NAME. */
	if (((span_is(parent, "lxc") && depth == 2) || span_is(parent, "lxc.payload")) &&
	    copy_text(c.text, c.len, m->name, sizeof(m->name))) {
		m->runtime = CONTAINER_LXC;
		return true;
	}
	return false;
}

/*
 * A pod's cgroup: kubepods[-QOS]-podUID.slice (systemd driver, '_' for '-'), or podUID
 * under kubepods or kubepods/QOS (cgroupfs driver).
 */
static bool component_pod(struct span c, struct span parent, struct span grandparent, char *uid)
{
	if (starts(c, "kubepods") && ends(c, ".slice")) {
		const char *end = c.text + c.len - strlen(".slice"), *p = NULL;

		for (const char *at = c.text; at + 4 <= end; at++)
			if (!memcmp(at, "-pod", 4))
				p = at;
		return p && pod_uid(p + 4, (size_t)(end - p - 4), uid);
	}
	if (starts(c, "pod") && (span_is(parent, "kubepods") ||
				 ((span_is(parent, "burstable") || span_is(parent, "besteffort")) &&
				  span_is(grandparent, "kubepods"))))
		return pod_uid(c.text + 3, c.len - 3, uid);
	return false;
}

bool container_parse_path(const char *path, size_t len, struct container_path *out)
{
	struct span parent = { "", 0 }, grandparent = { "", 0 };
	char pod[CONTAINER_POD_UID_SIZE] = "";
	unsigned depth = 0;
	size_t at = 0;

	memset(out, 0, sizeof(*out));
	if (len > CGROUP_PATH_MAX || memchr(path, '\0', len))
		return false;
	while (at < len) {
		struct span c = { path + at, 0 };
		struct container_match m;
		const char *slash = memchr(path + at, '/', len - at);
		uint32_t uid;

		c.len = slash ? (size_t)(slash - c.text) : len - at;
		at += c.len + 1;
		if (!c.len)
			continue;
		/* "/../.." leads a path outside the reader's cgroup namespace; nothing else has dots alone. */
		if (span_is(c, "..") && !depth)
			continue;
		if (span_is(c, ".") || span_is(c, "..")) {
			memset(out, 0, sizeof(*out));
			return false;
		}
		depth++;
		/* The first user@UID.service, above any container: whose subtree it is (never a name below it). */
		if (!out->has_user && !out->matches && user_service(c, &uid)) {
			out->has_user = true;
			out->user = uid;
		} else if (component_pod(c, parent, grandparent, pod)) {
			/* kept for the container below it */
		} else if (component_container(c, parent, depth, &m)) {
			if (pod[0] && (m.runtime != CONTAINER_MACHINE && m.runtime != CONTAINER_LXC))
				memcpy(m.pod_uid, pod, sizeof(m.pod_uid));
			m.end = at > len ? len : at - 1;
			pod[0] = '\0';
			if (!out->matches)
				out->outer = m;
			out->inner = m;
			out->matches++;
		}
		grandparent = parent;
		parent = c;
	}
	return out->matches > 0;
}

/* ---- /proc/PID/cgroup ------------------------------------------------------------------------ */

/* "ID:CONTROLLERS:/" at the start of text: the id, and the controllers' span. */
static bool line_head(const char *text, size_t len, unsigned *id, const char **controllers, size_t *controllers_len,
		      size_t *path_at)
{
	size_t i = 0;
	unsigned value = 0;
	const char *colon;

	while (i < len && text[i] >= '0' && text[i] <= '9' && i < 9)
		value = value * 10 + (unsigned)(text[i++] - '0');
	if (!i || i >= len || text[i] != ':')
		return false;
	colon = memchr(text + i + 1, ':', len - i - 1);
	if (!colon || (size_t)(colon - text) + 1 >= len || colon[1] != '/')
		return false;
	*id = value;
	*controllers = text + i + 1;
	*controllers_len = (size_t)(colon - text) - i - 1;
	*path_at = (size_t)(colon - text) + 1;
	return !memchr(*controllers, '\n', *controllers_len);
}

void cgroup_hierarchies_parse(const char *text, size_t len, struct cgroup_hierarchies *out)
{
	size_t at = 0;

	out->count = 0;
	while (at < len && out->count < sizeof(out->id) / sizeof(out->id[0])) {
		const char *end = memchr(text + at, '\n', len - at), *controllers;
		size_t line_len = end ? (size_t)(end - text) - at : len - at, controllers_len, path_at;
		unsigned id;

		if (line_head(text + at, line_len, &id, &controllers, &controllers_len, &path_at) && id)
			out->id[out->count++] = id;
		at += line_len + 1;
	}
}

static bool known_id(const struct cgroup_hierarchies *known, unsigned id)
{
	for (unsigned i = 0; i < known->count; i++)
		if (known->id[i] == id)
			return true;
	return false;
}

/* Whether text holds a newline followed by what starts a line of the file: lines added through a cgroup's name. */
static bool holds_line_head(const char *text, size_t len)
{
	for (const char *nl = memchr(text, '\n', len); nl; nl = memchr(nl + 1, '\n', len - (size_t)(nl + 1 - text))) {
		const char *controllers;
		size_t controllers_len, path_at;
		unsigned id;

		if (line_head(nl + 1, len - (size_t)(nl + 1 - text), &id, &controllers, &controllers_len, &path_at))
			return true;
		if (nl + 1 >= text + len)
			break;
	}
	return false;
}

size_t container_cgroup_lines(const char *text, size_t len, const struct cgroup_hierarchies *known,
			      struct cgroup_line *lines, size_t max)
{
	struct cgroup_line v1[32], v2 = { .version = 2 };
	size_t nv1 = 0, n = 0, at = 0;
	unsigned previous = UINT32_MAX;
	bool have_v2 = false;

	while (at < len) {
		const char *end = memchr(text + at, '\n', len - at), *controllers;
		size_t line_len = end ? (size_t)(end - text) - at : len - at, controllers_len, path_at;
		unsigned id;

		/* Anything but a line as the kernel writes it: a path with a newline, maybe lines added. */
		if (!line_head(text + at, line_len, &id, &controllers, &controllers_len, &path_at))
			return 0;
		if (id == 0 && controllers_len == 0) {
			/* The last line the kernel writes: its path is the rest of the text, newlines and all. */
			v2.path = text + at + path_at;
			v2.len = len - at - path_at;
			if (v2.len && v2.path[v2.len - 1] == '\n')
				v2.len--;
			have_v2 = true;
			break;
		}
		/* Ids fall, each once, each a hierarchy there is: so a line added is seen, as a repeat. */
		if (id >= previous || (known && !known_id(known, id)) || controllers_len >= sizeof(v1[0].controllers) ||
		    nv1 == sizeof(v1) / sizeof(v1[0]))
			return 0;
		v1[nv1] = (struct cgroup_line){ .version = 1, .path = text + at + path_at, .len = line_len - path_at };
		memcpy(v1[nv1].controllers, controllers, controllers_len);
		v1[nv1].controllers[controllers_len] = '\0';
		nv1++;
		previous = id;
		at += line_len + 1;
	}
	/*
	 * Every hierarchy has its line: a "0::" line that came early was added through a v1 path's
	 * name; and no line starts inside the v2 path (one added after a v1 line's "0::", or by its owner).
	 */
	if ((known && nv1 != known->count) || (have_v2 && holds_line_head(v2.path, v2.len)))
		return 0;
	if (have_v2 && n < max)
		lines[n++] = v2;
	for (size_t i = 0; i < nv1 && n < max; i++)
		lines[n++] = v1[i];
	return n;
}
