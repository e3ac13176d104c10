/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_container.c: containers recognised from cgroup paths as each runtime names them (v1 and v2,
 * both drivers, rootless, nested, malformed, hostile), /proc/PID/cgroup as an attacker may shape
 * it, the runtimes' files parsed, and containers named from trees of fixtures: the runtimes'
 * default locations, and where their configuration moves them (read only when trusted; bad ones
 * name nothing).
 */
#include "unit.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/container.h"
#include "collect/sysroot.h"
#include "common/util.h"

#define FIXTURE "tests/fixtures/containers"

/* 64 hex digits: the id every path below uses, and others. */
#define ID "3f2a9c1b0d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8"
#define ID2 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define UID_ "6d2f5b4e-1a2b-4c3d-9e8f-0a1b2c3d4e5f"
#define UID_SLICE "6d2f5b4e_1a2b_4c3d_9e8f_0a1b2c3d4e5f"

static bool parse(const char *path, struct container_path *p)
{
	return container_parse_path(path, strlen(path), p);
}

/* The runtime and id of the container a path is in; "none" when it is in none. */
static const char *said(const char *path)
{
	static char text[256];
	struct container_path p;

	if (!parse(path, &p))
		return "none";
	snprintf(text, sizeof(text), "%s %s%s%s", container_runtime_names[p.inner.runtime],
		 p.inner.id[0] ? p.inner.id : p.inner.name, p.inner.pod_uid[0] ? " pod " : "", p.inner.pod_uid);
	return text;
}

static void test_docker(void **state)
{
	struct container_path p;
	(void)state;

	/* systemd driver (cgroup v2, and v1's hierarchies alike) */
	assert_string_equal(said("/system.slice/docker-" ID ".scope"), "docker " ID);
	/* cgroupfs driver */
	assert_string_equal(said("/docker/" ID), "docker " ID);
	/* a process's own sub-cgroup is its container's */
	assert_string_equal(said("/system.slice/docker-" ID ".scope/init.scope"), "docker " ID);
	/* docker in docker: the inner one, inside the outer one (the host's) */
	assert_true(parse("/docker/" ID "/docker/" ID2, &p));
	assert_int_equal(p.matches, 2);
	assert_string_equal(p.inner.id, ID2);
	assert_string_equal(p.outer.id, ID);
	assert_int_equal(p.outer.end, strlen("/docker/" ID));
	assert_true(parse("/system.slice/docker-" ID ".scope/docker/" ID2, &p));
	assert_int_equal(p.matches, 2);
	assert_int_equal(p.outer.runtime, CONTAINER_DOCKER);
	assert_string_equal(p.inner.id, ID2);
	/* with docker's --cgroup-parent: a namespace-like parent, resolved by docker's files later */
	assert_string_equal(said("/actions_job/" ID), "containerd " ID);
	assert_int_equal(p.has_user, false);
}

static void test_podman(void **state)
{
	struct container_path p;
	(void)state;

	assert_string_equal(said("/machine.slice/libpod-" ID ".scope"), "podman " ID);
	assert_string_equal(said("/machine.slice/libpod-" ID ".scope/container"), "podman " ID);
	/* podman's cgroupfs manager */
	assert_string_equal(said("/libpod_parent/libpod-" ID), "podman " ID);
	/* conmon, the monitor, is not in the container */
	assert_string_equal(said("/machine.slice/libpod-conmon-" ID ".scope"), "none");
	/* rootless: under the user's own service manager, whose uid is said */
	assert_true(parse("/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID ".scope", &p));
	assert_true(p.has_user);
	assert_int_equal(p.user, 1000);
	assert_int_equal(p.inner.runtime, CONTAINER_PODMAN);
	/* the first user@ is whose: a user cannot make theirs root's by naming a cgroup user@0.service */
	assert_true(parse("/user.slice/user-1000.slice/user@1000.service/user@0.service/libpod-" ID ".scope", &p));
	assert_int_equal(p.user, 1000);
	/* podman pods: the pod's slice is no container of its own */
	assert_string_equal(said("/machine.slice/machine-libpod_pod_" ID2 ".slice/libpod-" ID ".scope"), "podman " ID);
}

static void test_kubernetes(void **state)
{
	(void)state;

	/* systemd driver: each QoS class, and the guaranteed pods directly under kubepods.slice */
	assert_string_equal(said("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_SLICE
				 ".slice/cri-containerd-" ID ".scope"),
			    "containerd " ID " pod " UID_);
	assert_string_equal(said("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_SLICE
				 ".slice/crio-" ID ".scope"),
			    "cri-o " ID " pod " UID_);
	assert_string_equal(said("/kubepods.slice/kubepods-pod" UID_SLICE ".slice/crio-" ID ".scope"),
			    "cri-o " ID " pod " UID_);
	/* dockershim's */
	assert_string_equal(said("/kubepods.slice/kubepods-pod" UID_SLICE ".slice/docker-" ID ".scope"),
			    "docker " ID " pod " UID_);
	/* CRI-O's monitor */
	assert_string_equal(said("/kubepods.slice/kubepods-pod" UID_SLICE ".slice/crio-conmon-" ID ".scope"), "none");
	/* cgroupfs driver: the runtime is not said */
	assert_string_equal(said("/kubepods/burstable/pod" UID_ "/" ID), "kubernetes " ID " pod " UID_);
	assert_string_equal(said("/kubepods/besteffort/pod" UID_ "/" ID), "kubernetes " ID " pod " UID_);
	assert_string_equal(said("/kubepods/pod" UID_ "/" ID), "kubernetes " ID " pod " UID_);
	/* a pod's slice alone is no container */
	assert_string_equal(said("/kubepods.slice/kubepods-pod" UID_SLICE ".slice"), "none");
	/* a uid that is not one: no pod said, the container still */
	assert_string_equal(said("/kubepods.slice/kubepods-podXYZ.slice/cri-containerd-" ID ".scope"),
			    "containerd " ID);
}

static void test_others(void **state)
{
	struct container_path p;
	(void)state;

	/* systemd-nspawn: machine-NAME.scope, the name's unit escapes undone */
	assert_string_equal(said("/machine.slice/machine-fedora\\x2d38.scope"), "machine fedora-38");
	assert_string_equal(said("/machine.slice/machine-fedora\\x2d38.scope/payload"), "machine fedora-38");
	assert_string_equal(said("/machine.slice/machine-.scope"), "none");
	/* LXC: lxc.payload.NAME (4.0 on), /lxc/NAME before; the monitor is not the container */
	assert_string_equal(said("/lxc.payload.u1"), "lxc u1");
	assert_string_equal(said("/lxc.payload.u1/init.scope"), "lxc u1");
	assert_string_equal(said("/lxc.payload/u1"), "lxc u1");
	assert_string_equal(said("/lxc/u1"), "lxc u1");
	assert_string_equal(said("/lxc.monitor.u1"), "none");
	/* containerd: nerdctl's systemd scope, and /NAMESPACE/ID with cgroupfs */
	assert_string_equal(said("/system.slice/nerdctl-" ID ".scope"), "containerd " ID);
	assert_true(parse("/default/" ID, &p));
	assert_int_equal(p.inner.runtime, CONTAINER_CONTAINERD);
	assert_string_equal(p.inner.group, "default");
	assert_string_equal(said("/k8s.io/" ID), "containerd " ID);
	/* an id deeper down, under no runtime's directory: nothing */
	assert_string_equal(said("/system.slice/foo.service/" ID), "none");
	/* no container */
	assert_string_equal(said("/"), "none");
	assert_string_equal(said(""), "none");
	assert_string_equal(said("/user.slice/user-1000.slice/session-2.scope"), "none");
	assert_string_equal(said("/system.slice/docker.service"), "none");
}

static void test_malformed(void **state)
{
	char *huge;
	(void)state;

	/* ids of the wrong length, or not lowercase hex */
	assert_string_equal(said("/system.slice/docker-" ID "0.scope"), "none");
	assert_string_equal(
	    said("/system.slice/docker-3f2a9c1b0d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e.scope"), "none");
	assert_string_equal(
	    said("/system.slice/docker-3F2A9C1B0D4E5F60718293A4B5C6D7E8F90A1B2C3D4E5F60718293A4B5C6D7E8.scope"),
	    "none");
	assert_string_equal(said("/system.slice/docker-3f2a9c1b0d4e.scope"), "none");
	assert_string_equal(said("/docker/" ID "x"), "none");
	assert_string_equal(
	    said("/docker/" ID "/docker/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdeg"),
	    "docker " ID);
	assert_string_equal(said("/system.slice/docker-" ID ".scopex"), "none");
	assert_string_equal(said("/system.slice/docker-.scope"), "none");
	assert_string_equal(said("/system.slice/docker-" ID ".scope."), "none");
	/* a cgroupns's path above its root is passed over; dots elsewhere are no path the kernel writes */
	assert_string_equal(said("/../../system.slice/docker-" ID ".scope"), "docker " ID);
	assert_string_equal(said("/docker/../" ID), "none");
	assert_string_equal(said("/system.slice/./docker-" ID ".scope"), "none");
	assert_string_equal(said("/x/../docker/" ID), "none");
	/* a newline in a name is a byte of it: its component is no runtime's */
	assert_string_equal(said("/system.slice/docker-" ID ".scope\n0::/"), "none");
	assert_string_equal(said("/user.slice/x\n0::/system.slice/docker-" ID ".scope"), "docker " ID);
	/* a NUL, and a path longer than the kernel writes */
	{
		struct container_path p;
		const char with_nul[] = "/system.slice/docker-" ID ".scope\0/docker/" ID2;

		assert_false(container_parse_path(with_nul, sizeof(with_nul) - 1, &p));
	}
	huge = xcalloc(1, 6000);
	memset(huge, 'a', 5000);
	memcpy(huge + 5000, "/docker/" ID, strlen("/docker/" ID));
	assert_string_equal(said(huge), "none");
	/* many levels (within the length) are fine */
	for (int i = 0; i < 1000; i++)
		memcpy(huge + 2 * i, "/a", 2);
	memcpy(huge + 2000, "/docker/" ID, strlen("/docker/" ID) + 1);
	assert_string_equal(said(huge), "docker " ID);
	free(huge);
	/* a uid no one has: user@4294967295.service is not taken for a user */
	{
		struct container_path p;

		assert_true(parse("/user.slice/user@4294967295.service/docker-" ID ".scope", &p));
		assert_false(p.has_user);
		assert_true(parse("/user.slice/user@12345678901.service/docker-" ID ".scope", &p));
		assert_false(p.has_user);
	}
}

static size_t lines_of(const char *text, const struct cgroup_hierarchies *known, struct cgroup_line *lines)
{
	return container_cgroup_lines(text, strlen(text), known, lines, 8);
}

static void test_proc_cgroup(void **state)
{
	struct cgroup_hierarchies known;
	struct cgroup_line lines[8];
	const char *self = "9:name=systemd:/\n4:memory:/process_api/0811\n1:cpu,cpuacct:/\n0::/\n";
	(void)state;

	cgroup_hierarchies_parse(self, strlen(self), &known);
	assert_int_equal(known.count, 3);
	/* As the kernel writes it: the v2 path first, then each v1 hierarchy's */
	assert_int_equal(
	    lines_of("9:name=systemd:/a\n4:memory:/docker/" ID "\n1:cpu,cpuacct:/c\n0::/d\n", &known, lines), 4);
	assert_int_equal(lines[0].version, 2);
	assert_int_equal(lines[0].len, 2);
	assert_memory_equal(lines[0].path, "/d", 2);
	assert_string_equal(lines[2].controllers, "memory");
	assert_int_equal(lines[2].len, strlen("/docker/" ID));
	/* the v2 path runs to the end of the text: a name's newline is its own */
	assert_int_equal(
	    lines_of("9:name=systemd:/\n4:memory:/\n1:cpu,cpuacct:/\n0::/user.slice/a\nb\n", &known, lines), 4);
	assert_int_equal(lines[0].len, strlen("/user.slice/a\nb"));
	/* ... but a line made inside it is not believed, nor the file */
	assert_int_equal(lines_of("9:name=systemd:/\n4:memory:/\n1:cpu,cpuacct:/\n0::/user.slice/a\n"
				  "4:memory:/docker/" ID "\n", &known, lines), 0);
	assert_int_equal(lines_of("0::/user.slice/a\n0::/system.slice/docker-" ID ".scope\n", NULL, lines), 0);
	/* a line added through a v1 name: a hierarchy twice */
	assert_int_equal(lines_of("9:name=systemd:/u/x\n4:memory:/docker/" ID "\n4:memory:/\n1:cpu,cpuacct:/\n0::/\n",
				  &known, lines), 0);
	/* ... or a hierarchy there is not */
	assert_int_equal(lines_of("9:name=systemd:/u/x\n5:blkio:/docker/" ID "\n4:memory:/\n1:cpu,cpuacct:/\n0::/\n",
				  &known, lines), 0);
	/* ... or a "0::" line made early: hierarchies missing before it */
	assert_int_equal(lines_of("9:name=systemd:/u/x\n0::/system.slice/docker-" ID ".scope/y\n4:memory:/\n"
				  "1:cpu,cpuacct:/\n0::/\n", &known, lines), 0);
	/* ... or, all hierarchies there, a "0::" line before the real one */
	assert_int_equal(lines_of("9:name=systemd:/\n4:memory:/\n1:cpu,cpuacct:/u/x\n0::/system.slice/docker-" ID
				  ".scope/y\n0::/\n", &known, lines), 0);
	/* ids that do not fall, a line that is not one */
	assert_int_equal(lines_of("1:cpu,cpuacct:/\n4:memory:/\n0::/\n", NULL, lines), 0);
	assert_int_equal(lines_of("9:name=systemd:/\njunk\n0::/\n", NULL, lines), 0);
	/* without iolens's own file to hold it to, a well-formed file is taken */
	assert_int_equal(lines_of("4:memory:/docker/" ID "\n0::/\n", NULL, lines), 2);
	/* v1 only (no cgroup2 mounted) */
	assert_int_equal(lines_of("4:memory:/docker/" ID "\n1:cpu,cpuacct:/docker/" ID "\n", NULL, lines), 2);
	assert_int_equal(lines[0].version, 1);
	assert_int_equal(lines_of("", NULL, lines), 0);
}

/* podman's names as "ID=NAME;" after one another. */
static void collect(const char *id, const char *name, void *context)
{
	char *found = context;

	snprintf(found + strlen(found), 512 - strlen(found), "%s=%s;", id, name);
}

static void test_files(void **state)
{
	char name[CONTAINER_NAME_SIZE], pod[CONTAINER_NAME_SIZE], ns[64], container[CONTAINER_NAME_SIZE],
		uid[CONTAINER_POD_UID_SIZE], id[CONTAINER_ID_SIZE];
	const char *podman =
	    "[{\"id\":\"" ID "\",\"names\":[\"api\",\"other\"]},{\"id\":\"short\",\"names\":[\"x\"]},"
	    "{\"id\":\"" ID2 "\",\"names\":[]},{\"id\":\"" ID2 "\",\"names\":[\"bad name\"]},{\"names\":[\"y\"]},7]";
	char found[512] = "";
	(void)state;

	/* docker's config.v2.json: "Name" without its '/' */
	assert_true(container_docker_name("{\"ID\":\"x\",\"Name\":\"/web\"}", 26, name, sizeof(name)));
	assert_string_equal(name, "web");
#define DOCKER(json) container_docker_name(json, strlen(json), name, sizeof(name))
	assert_false(DOCKER("{\"Name\":\"web\"}"));           /* docker's names start with '/' */
	assert_false(DOCKER("{\"Name\":\"/\"}"));
	assert_false(DOCKER("{\"Name\":\"/we\\nb\"}"));       /* a name docker never gives */
	assert_false(DOCKER("{\"Name\":\"/we\\u001b[31mb\"}"));
	assert_false(DOCKER("{\"Name\":\"/-web\"}"));
	assert_false(DOCKER("{\"Name\":\"/web\\u0000x\"}"));
	assert_false(DOCKER("{\"Name\":7}"));
	assert_false(DOCKER("[\"/web\"]"));
	assert_false(DOCKER("{\"Name\":\"/web\""));           /* cut short */
	assert_false(DOCKER(""));
	assert_false(
	    DOCKER("{\"a\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],\"Name\":\"/web\"}"));
	{
		char long_name[300] = "{\"Name\":\"/";

		memset(long_name + strlen(long_name), 'a', 200);
		strcat(long_name, "\"}");
		assert_false(DOCKER(long_name));                 /* longer than kept */
	}
#undef DOCKER
	/* podman's containers.json: each entry's id and first name, the invalid passed over */
	assert_int_equal(container_podman_names(podman, strlen(podman), 100, collect, found), 1);
	assert_string_equal(found, ID "=api;");
	found[0] = '\0';
	assert_int_equal(container_podman_names(podman, strlen(podman) - 1, 100, collect, found), 0); /* cut short */
	assert_int_equal(container_podman_names("{\"id\":\"" ID "\"}", 73, 100, collect, found), 0);
	assert_int_equal(container_podman_names(podman, strlen(podman), 0, collect, found), 0);
	/* the kubelet's directories and links */
	assert_true(container_pod_dir_parse("default_web-0_" UID_, ns, sizeof(ns), pod, sizeof(pod), uid, sizeof(uid)));
	assert_string_equal(ns, "default");
	assert_string_equal(pod, "web-0");
	assert_string_equal(uid, UID_);
	assert_true(container_pod_dir_parse("kube-system_coredns-7db6d8ff4d-x2x9z.v1_" UID_, ns, sizeof(ns), pod,
					    sizeof(pod), uid, sizeof(uid)));
	assert_string_equal(pod, "coredns-7db6d8ff4d-x2x9z.v1");
	assert_false(
	    container_pod_dir_parse("default_web_0_" UID_, ns, sizeof(ns), pod, sizeof(pod), uid, sizeof(uid)));
	assert_false(
	    container_pod_dir_parse("default_Web-0_" UID_, ns, sizeof(ns), pod, sizeof(pod), uid, sizeof(uid)));
	assert_false(
	    container_pod_dir_parse("de.fault_web-0_" UID_, ns, sizeof(ns), pod, sizeof(pod), uid, sizeof(uid)));
	assert_false(container_pod_dir_parse("default_web-0_", ns, sizeof(ns), pod, sizeof(pod), uid, sizeof(uid)));
	assert_false(container_pod_dir_parse("default_web-0", ns, sizeof(ns), pod, sizeof(pod), uid, sizeof(uid)));
	assert_true(container_log_name_parse("web-0_default_nginx-" ID ".log", pod, sizeof(pod), ns, sizeof(ns),
					     container, sizeof(container), id, sizeof(id)));
	assert_string_equal(pod, "web-0");
	assert_string_equal(ns, "default");
	assert_string_equal(container, "nginx");
	assert_string_equal(id, ID);
	assert_true(container_log_name_parse("web-0_default_my-app-" ID ".log", pod, sizeof(pod), ns, sizeof(ns),
					     container, sizeof(container), id, sizeof(id)));
	assert_string_equal(container, "my-app");
	assert_false(container_log_name_parse("web-0_default_nginx-" ID ".txt", pod, sizeof(pod), ns, sizeof(ns),
					      container, sizeof(container), id, sizeof(id)));
	assert_false(container_log_name_parse("web-0_default_nginx" ID ".log", pod, sizeof(pod), ns, sizeof(ns),
					      container, sizeof(container), id, sizeof(id)));
	assert_false(container_log_name_parse("web-0_default_-" ID ".log", pod, sizeof(pod), ns, sizeof(ns), container,
					      sizeof(container), id, sizeof(id)));
	assert_false(container_log_name_parse("web-0_default_nginx-" ID2 "0.log", pod, sizeof(pod), ns, sizeof(ns),
					      container, sizeof(container), id, sizeof(id)));
	assert_false(container_log_name_parse("web-0_default_x_nginx-" ID ".log", pod, sizeof(pod), ns, sizeof(ns),
					      container, sizeof(container), id, sizeof(id)));
	/* docker's daemon.json: "data-root", or none; anything else than a string there is bad */
	{
		char dir[64];

#define JSON(text) container_json_setting(text, strlen(text), "data-root", dir, sizeof(dir))
		assert_int_equal(JSON("{\"log-driver\":\"journald\",\"data-root\":\"/srv/docker\"}"), SETTING_FOUND);
		assert_string_equal(dir, "/srv/docker");
		assert_int_equal(JSON("{\"log-driver\":\"journald\"}"), SETTING_ABSENT);
		assert_string_equal(dir, "");
		assert_int_equal(JSON("{}"), SETTING_ABSENT);
		assert_int_equal(JSON("{\"data-root\":7}"), SETTING_BAD);
		assert_int_equal(JSON("{\"data-root\":\"/a\\u0000b\"}"), SETTING_BAD);
		assert_int_equal(JSON("[\"data-root\"]"), SETTING_BAD);
		assert_int_equal(JSON("{\"data-root\":\"/srv/docker\""), SETTING_BAD); /* cut short */
		assert_int_equal(JSON(""), SETTING_BAD);
		assert_int_equal(
		    JSON("{\"data-root\":\"/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}"),
		    SETTING_BAD); /* longer than kept */
		assert_string_equal(dir, "");
#undef JSON
		/* a directory a setting names: $UID and $HOME as containers/storage replaces them, nothing else */
#define DIR(text) container_config_dir(text, 1000, "/home/alice", dir, sizeof(dir))
		assert_true(DIR("/srv/docker"));
		assert_string_equal(dir, "/srv/docker");
		assert_true(DIR("/srv/docker//"));
		assert_string_equal(dir, "/srv/docker");
		assert_true(DIR("/"));
		assert_string_equal(dir, "/");
		assert_true(DIR("$HOME/containers/$UID"));
		assert_string_equal(dir, "/home/alice/containers/1000");
		assert_true(DIR("${HOME}/c/${UID}x"));
		assert_string_equal(dir, "/home/alice/c/1000x");
		assert_true(DIR("/srv/a..b/..c/d.."));
		assert_false(DIR("$XDG_DATA_HOME/containers")); /* the runtime's environment: unknown */
		assert_false(DIR("$UIDX/a"));
		assert_false(DIR("/srv/$"));
		assert_false(DIR("srv/docker"));                /* relative */
		assert_false(DIR(""));
		assert_false(DIR("/srv/../etc"));               /* out of the root the files are read under */
		assert_false(DIR("/srv/.."));
		assert_false(DIR("/srv/do\ncker"));
		assert_false(DIR("/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
		assert_false(container_config_dir("$HOME/x", 0, "", dir, sizeof(dir))); /* no home known */
		assert_false(container_config_dir("$HOME/x", 0, NULL, dir, sizeof(dir)));
		assert_true(container_config_dir("/$UID", 0, NULL, dir, sizeof(dir)));
		assert_string_equal(dir, "/0");
#undef DIR
	}
	/* names */
	assert_true(container_name_valid("web", 3));
	assert_true(container_name_valid("k8s_nginx_web-0_default_1_0", 27));
	assert_false(container_name_valid("", 0));
	assert_false(container_name_valid(".web", 4));
	assert_false(container_name_valid("we b", 4));
	assert_false(container_name_valid("we\nb", 4));
}

/* The fixture's ids (tests/fixtures/containers/ids: NAME=ID lines). */
static const char *fixture_id(const char *name)
{
	static char ids[16][CONTAINER_ID_SIZE];
	static unsigned next;
	char line[256], *value = NULL;
	FILE *f = fopen(FIXTURE "/ids", "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, strlen(name)) && line[strlen(name)] == '=') {
			value = ids[next++ % 16];
			snprintf(value, CONTAINER_ID_SIZE, "%.64s", line + strlen(name) + 1);
		}
	fclose(f);
	assert_non_null(value);
	return value;
}

/* The label of pid's container in the fixture's tree, "none" without one. */
static const char *label_of(pid_t pid)
{
	const struct container *c = container_of_pid(pid);

	return c ? c->label : "none";
}

static char *expect(const char *format, ...) __attribute__((format(printf, 1, 2)));
static char *expect(const char *format, ...)
{
	static char text[512];
	va_list args;

	va_start(args, format);
	vsnprintf(text, sizeof(text), format, args);
	va_end(args);
	return text;
}

static void test_named(void **state)
{
	const struct container *c;
	(void)state;

	unsetenv("IOLENS_CONTAINER_ROOT");
	assert_int_equal(sysroot_set(FIXTURE "/root"), 0);
	container_cache_free();
	/* docker: config.v2.json's "Name", systemd driver on v2 and cgroupfs on v1 */
	assert_string_equal(label_of(101), expect("web (%.12s)", fixture_id("D")));
	c = container_of_pid(101);
	assert_int_equal(c->runtime, CONTAINER_DOCKER);
	assert_string_equal(c->id, fixture_id("D"));
	assert_string_equal(c->name, "web");
	assert_false(c->rootless);
	assert_string_equal(label_of(102), expect("db (%.12s)", fixture_id("D2")));
	/* podman, root's: containers.json */
	assert_string_equal(label_of(103), expect("api (%.12s)", fixture_id("P")));
	/* podman, rootless: said as nobody's; its storage is not nobody's here (see test_untrusted) */
	assert_string_equal(label_of(104), expect("%.12s (user nobody)", fixture_id("PR")));
	c = container_of_pid(104);
	assert_true(c->rootless);
	assert_int_equal(c->owner, 65534);
	/* conmon is in no container */
	assert_string_equal(label_of(105), "none");
	/* Kubernetes: the container's name, pod and namespace from the kubelet's links and directories */
	assert_string_equal(label_of(106), expect("default/web-0/nginx (%.12s)", fixture_id("K")));
	c = container_of_pid(106);
	assert_string_equal(c->pod, "web-0");
	assert_string_equal(c->namespace_, "default");
	assert_string_equal(c->name, "nginx");
	assert_int_equal(c->runtime, CONTAINER_CONTAINERD);
	/* a pod's sandbox logs nothing: its pod, from the pod's directory */
	assert_string_equal(label_of(107), expect("default/web-0 (%.12s)", fixture_id("S")));
	assert_string_equal(label_of(108), expect("kube-system/coredns-abc/coredns (%.12s)", fixture_id("K2")));
	/* systemd-nspawn, LXC: their names are in their paths */
	assert_string_equal(label_of(109), "fedora-38 (machine)");
	assert_string_equal(label_of(110), "u1 (lxc)");
	/* nerdctl's names */
	assert_string_equal(label_of(111), expect("mynginx (%.12s)", fixture_id("N")));
	/* docker in docker: the inner one by its id, in the host's */
	{
		char want[256];

		snprintf(want, sizeof(want), "%.12s in web (%.12s)", fixture_id("I"), fixture_id("D"));
		assert_string_equal(label_of(112), want);
		c = container_of_pid(112);
		assert_true(c->nested);
		assert_string_equal(c->outer_id, fixture_id("D"));
		assert_string_equal(c->name, "");
	}
	/* a file with a line made through a cgroup's name: not believed */
	assert_string_equal(label_of(113), "none");
	assert_string_equal(label_of(119), "none");
	/* a user's cgroup named as root's container: the user's, never root's name */
	assert_string_equal(label_of(114), expect("%.12s (user nobody)", fixture_id("D")));
	/* no files for it, a name docker never gives: the id alone */
	assert_string_equal(label_of(115), expect("%.12s", fixture_id("U")));
	assert_string_equal(label_of(116), expect("%.12s", fixture_id("H")));
	/* an id a digit short, no container at all, no such process */
	assert_string_equal(label_of(117), "none");
	assert_string_equal(label_of(118), "none");
	assert_string_equal(label_of(99999), "none");
	/* the same, remembered: the same entry */
	assert_ptr_equal(container_of_pid(101), container_of_pid(101));
	/* a path given, v1 or v2 */
	c = container_of_path(1, "memory", "/docker/x", 9);
	assert_null(c);
	container_cache_trim();
	container_cache_free();
	assert_int_equal(sysroot_set("/"), 0);
}

/* Files a user other than root, iolens's and the container's owner has are not believed (as root: chown). */
static void test_untrusted(void **state)
{
	char *dir = unit_tmpdir(), path[4096], command[8192];
	struct passwd *nobody = getpwnam("nobody");
	(void)state;

	if (geteuid() != 0) {
		unit_rmtree(dir);
		skip();
	}
	snprintf(command, sizeof(command),
		 "cp -a %s/root/. %s/ && chown 4242 %s/var/lib/docker/containers/%s/config.v2.json", FIXTURE, dir, dir,
		 fixture_id("D"));
	assert_int_equal(system(command), 0);
	assert_int_equal(sysroot_set(dir), 0);
	container_cache_free();
	assert_string_equal(label_of(101), expect("%.12s", fixture_id("D")));
	/* the directory of the kubelet's links another user's: not read */
	snprintf(command, sizeof(command), "chown 4242 %s/var/log/containers %s/var/log/pods", dir, dir);
	assert_int_equal(system(command), 0);
	container_cache_free();
	assert_string_equal(label_of(106), expect("%.12s", fixture_id("K")));
	/* a FIFO where a file is: never opened */
	snprintf(path, sizeof(path), "%s/var/lib/containers/storage/overlay-containers/containers.json", dir);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkfifo(path, 0600), 0);
	container_cache_free();
	assert_string_equal(label_of(103), expect("%.12s", fixture_id("P")));
	/* a rootless container's storage: believed when its user has it, never when another (root) does */
	snprintf(command, sizeof(command), "chown -R 65534 %s/nonexistent", dir);
	assert_int_equal(system(command), 0);
	container_cache_free();
	if (nobody && !strcmp(nobody->pw_dir, "/nonexistent"))
		assert_string_equal(label_of(104), expect("web (%.12s, user nobody)", fixture_id("PR")));
	snprintf(command, sizeof(command),
		 "chown 0 %s/nonexistent/.local/share/containers/storage/overlay-containers/containers.json", dir);
	assert_int_equal(system(command), 0);
	container_cache_free();
	assert_string_equal(label_of(104), expect("%.12s (user nobody)", fixture_id("PR")));
	/* IOLENS_CONTAINER_ROOT: the runtimes' files elsewhere than the sysroot's */
	assert_int_equal(sysroot_set(FIXTURE "/root"), 0);
	setenv("IOLENS_CONTAINER_ROOT", dir, 1);
	container_cache_free();
	assert_string_equal(label_of(102), expect("db (%.12s)", fixture_id("D2")));
	assert_string_equal(label_of(101), expect("%.12s", fixture_id("D")));
	unsetenv("IOLENS_CONTAINER_ROOT");
	container_cache_free();
	assert_int_equal(sysroot_set("/"), 0);
	unit_rmtree(dir);
}

/* ---- The runtimes' configured locations: moved/ ---------------------------------------------------- */

/* A command run in dir (sh -c). */
static void shell(const char *dir, const char *command)
{
	char line[8192];

	snprintf(line, sizeof(line), "cd '%s' && %s", dir, command);
	assert_int_equal(system(line), 0);
}

/*
 * A copy of the fixture's moved/ tree as the sysroot, none of it writable by group or others (a
 * checkout under umask 002 would leave it so), names looked up afresh.
 */
static char *moved_tree(void)
{
	char *dir = unit_tmpdir(), command[8192];

	snprintf(command, sizeof(command), "cp -a %s/moved/. %s/ && chmod -R go-w %s", FIXTURE, dir, dir);
	assert_int_equal(system(command), 0);
	unsetenv("IOLENS_CONTAINER_ROOT");
	assert_int_equal(sysroot_set(dir), 0);
	container_cache_free();
	return dir;
}

/* The fixture's moved/FILE copied into dir again (not writable by group or others), then command run there. */
static void from_fixture(const char *dir, const char *file, const char *command)
{
	char *fixture = realpath(FIXTURE "/moved", NULL), line[8192];

	assert_non_null(fixture);
	snprintf(line, sizeof(line), "cd '%s' && rm -f '%s' && cp '%s/%s' '%s' && chmod go-w '%s' && %s", dir, file,
		 fixture, file, file, file, command);
	assert_int_equal(system(line), 0);
	free(fixture);
}

static void moved_done(char *dir)
{
	container_cache_free();
	assert_int_equal(sysroot_set("/"), 0);
	unit_rmtree(dir);
}

/* pid's label after the configuration changed (every name looked up again). */
static const char *relabel(pid_t pid)
{
	container_cache_free();
	return label_of(pid);
}

/* Where root's runtimes' configuration puts their files (and stale copies are where it does not). */
static void test_configured(void **state)
{
	char *dir = moved_tree();
	(void)state;

	/* docker's data-root (daemon.json) */
	assert_string_equal(label_of(201), expect("moved-web (%.12s)", fixture_id("MD")));
	/* podman's graphroot and runroot (storage.conf): containers.json, and volatile-containers.json
	   of a --rm container beside it, or under the runroot (transient_store) */
	assert_string_equal(label_of(202), expect("moved-api (%.12s)", fixture_id("MP")));
	assert_string_equal(label_of(203), expect("rm-job (%.12s)", fixture_id("MV")));
	assert_string_equal(label_of(204), expect("transient-job (%.12s)", fixture_id("MT")));
	/* nerdctl's data_root (nerdctl.toml) */
	assert_string_equal(label_of(205), expect("moved-nginx (%.12s)", fixture_id("MN")));
	/* the same paths, not a new configuration: the same names */
	assert_ptr_equal(container_of_pid(201), container_of_pid(201));
	/* without /etc's storage.conf, the distribution's (/usr/share/containers) */
	shell(dir, "rm etc/containers/storage.conf");
	assert_string_equal(relabel(202), expect("distro-api (%.12s)", fixture_id("MP")));
	/* the setting absent, or empty: the runtime's default */
	shell(dir, "echo '{\"log-driver\": \"journald\"}' > etc/docker/daemon.json");
	assert_string_equal(relabel(201), expect("stale-web (%.12s)", fixture_id("MD")));
	shell(dir, "echo '{\"data-root\": \"\"}' > etc/docker/daemon.json");
	assert_string_equal(relabel(201), expect("stale-web (%.12s)", fixture_id("MD")));
	/* no configuration at all: every runtime's default */
	shell(dir, "rm -r etc usr/share/containers");
	assert_string_equal(relabel(201), expect("stale-web (%.12s)", fixture_id("MD")));
	assert_string_equal(label_of(202), expect("stale-api (%.12s)", fixture_id("MP")));
	assert_string_equal(label_of(203), expect("stale-job (%.12s)", fixture_id("MV")));
	assert_string_equal(label_of(204), expect("%.12s", fixture_id("MT")));
	assert_string_equal(label_of(205), expect("stale-nginx (%.12s)", fixture_id("MN")));
	moved_done(dir);
}

/* A configuration its runtime would refuse, or one that names no directory to read: no name, no guess, no hang. */
static void test_configured_bad(void **state)
{
	static const char *const docker[] = {
		"echo 'not json' > etc/docker/daemon.json",
		"echo '{\"data-root\": 7}' > etc/docker/daemon.json",
		"echo '{\"data-root\": \"srv/docker\"}' > etc/docker/daemon.json",
		"echo '{\"data-root\": \"/var/../srv/docker\"}' > etc/docker/daemon.json",
		"echo '{\"data-root\": \"$DOCKER_ROOT/docker\"}' > etc/docker/daemon.json",
		/* more than 1 MiB, however valid */
		"{ printf '{\"data-root\": \"/srv/docker\", \"pad\": \"'; head -c 1100000 /dev/zero | tr '\\0' x; "
		"printf '\"}'; } > etc/docker/daemon.json",
		/* not a regular file: never opened (a FIFO would block a reader; a device may be anything) */
		"rm etc/docker/daemon.json && mkfifo etc/docker/daemon.json",
		"rm etc/docker/daemon.json && ln -s /dev/zero etc/docker/daemon.json",
		"rm etc/docker/daemon.json && mkdir etc/docker/daemon.json",
	};
	char *dir = moved_tree();
	(void)state;

	for (size_t i = 0; i < sizeof(docker) / sizeof(docker[0]); i++) {
		shell(dir, "rm -rf etc/docker && mkdir etc/docker");
		shell(dir, "echo '{\"data-root\": \"/srv/docker\"}' > etc/docker/daemon.json");
		assert_string_equal(relabel(201), expect("moved-web (%.12s)", fixture_id("MD")));
		shell(dir, docker[i]);
		if (strcmp(relabel(201), expect("%.12s", fixture_id("MD"))))
			fail_msg("%s: %s", docker[i], label_of(201));
	}
	/* a trailing '/' is the same directory */
	shell(dir, "rm -rf etc/docker && mkdir etc/docker && echo '{\"data-root\": \"/srv/docker/\"}' > "
		   "etc/docker/daemon.json");
	assert_string_equal(relabel(201), expect("moved-web (%.12s)", fixture_id("MD")));
	/* storage.conf: the setting not a string, the file not TOML (anywhere), the table twice */
	shell(dir, "sed -i 's|^graphroot = .*|graphroot = 7|' etc/containers/storage.conf");
	assert_string_equal(relabel(202), expect("%.12s", fixture_id("MP")));
	from_fixture(dir, "etc/containers/storage.conf", "echo 'size = \"10G' >> etc/containers/storage.conf");
	assert_string_equal(relabel(202), expect("%.12s", fixture_id("MP")));
	from_fixture(dir, "etc/containers/storage.conf", "echo '[storage]' >> etc/containers/storage.conf");
	assert_string_equal(relabel(202), expect("%.12s", fixture_id("MP")));
	from_fixture(dir, "etc/containers/storage.conf", "true");
	assert_string_equal(relabel(202), expect("moved-api (%.12s)", fixture_id("MP")));
	/* nerdctl.toml: data_root a table */
	shell(dir, "echo '[data_root]' >> etc/nerdctl/nerdctl.toml");
	assert_string_equal(relabel(205), expect("%.12s", fixture_id("MN")));
	moved_done(dir);
}

/*
 * A configuration others may have written is ignored, as if absent: one writable by group or
 * others, or in such a directory, or another user's (as root: chown); a rootless user's is theirs
 * alone, and leads only to their own storage.
 */
static void test_configured_untrusted(void **state)
{
	static const char *const untrusted[] = {
		"chmod o+w etc/docker/daemon.json",
		"chmod g+w etc/docker/daemon.json",
		"chmod g+w etc/docker",
		"chown 4242 etc/docker/daemon.json",
		"chown 4242 etc/docker",
		/* a link to another user's file: the file is what is read */
		"cp -p etc/docker/daemon.json srv/d.json && chown 4242 srv/d.json && ln -sf ../../srv/d.json "
		"etc/docker/daemon.json",
	};
	struct passwd *nobody = getpwnam("nobody");
	char *dir;
	(void)state;

	if (geteuid() != 0)
		skip();
	dir = moved_tree();
	for (size_t i = 0; i < sizeof(untrusted) / sizeof(untrusted[0]); i++) {
		from_fixture(dir, "etc/docker/daemon.json", "chown -R 0:0 etc/docker && chmod 755 etc/docker");
		assert_string_equal(relabel(201), expect("moved-web (%.12s)", fixture_id("MD")));
		shell(dir, untrusted[i]);
		if (strcmp(relabel(201), expect("stale-web (%.12s)", fixture_id("MD"))))
			fail_msg("%s: %s", untrusted[i], label_of(201));
	}
	/* a link root put in its own directory to root's file elsewhere: followed */
	from_fixture(dir, "etc/docker/daemon.json", "chown -R 0:0 etc/docker && mv etc/docker/daemon.json srv/ && "
			 "ln -s ../../srv/daemon.json etc/docker/daemon.json");
	assert_string_equal(relabel(201), expect("moved-web (%.12s)", fixture_id("MD")));
	/* the same for storage.conf (the distribution's is read then, as when /etc has none) and nerdctl.toml */
	shell(dir, "chmod g+w etc/containers/storage.conf && chmod o+w etc/nerdctl");
	assert_string_equal(relabel(202), expect("distro-api (%.12s)", fixture_id("MP")));
	assert_string_equal(label_of(205), expect("stale-nginx (%.12s)", fixture_id("MN")));
	/* nobody's own storage.conf ($HOME/graph) and daemon.json, when nobody has them */
	if (!nobody || strcmp(nobody->pw_dir, "/nonexistent")) {
		moved_done(dir);
		skip();
	}
	shell(dir, "chown -R 65534 nonexistent");
	assert_string_equal(relabel(206), expect("rootless-web (%.12s, user nobody)", fixture_id("MR")));
	assert_string_equal(label_of(207), expect("rootless-docker (%.12s, user nobody)", fixture_id("MRD")));
	/* root's, or group-writable: not nobody's word; its storage's default then */
	shell(dir, "chown 0 nonexistent/.config/containers/storage.conf nonexistent/.config/docker/daemon.json");
	assert_string_equal(relabel(206), expect("stale-rootless (%.12s, user nobody)", fixture_id("MR")));
	assert_string_equal(label_of(207), expect("stale-rootless-docker (%.12s, user nobody)", fixture_id("MRD")));
	shell(dir, "chown 65534 nonexistent/.config/containers/storage.conf && chmod g+w "
		   "nonexistent/.config/containers/storage.conf");
	assert_string_equal(relabel(206), expect("stale-rootless (%.12s, user nobody)", fixture_id("MR")));
	/* nobody's graphroot set to root's storage, which names nobody's container: not believed there */
	shell(dir, "chmod g-w nonexistent/.config/containers/storage.conf && "
		   "sed -i 's|^graphroot = .*|graphroot = \"/srv/containers/graph\"|' "
		   "nonexistent/.config/containers/storage.conf");
	assert_string_equal(relabel(206), expect("%.12s (user nobody)", fixture_id("MR")));
	/* root's containers are still named from root's configuration */
	assert_string_equal(label_of(202), expect("distro-api (%.12s)", fixture_id("MP")));
	moved_done(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_docker),     cmocka_unit_test(test_podman),
		cmocka_unit_test(test_kubernetes),
		cmocka_unit_test(test_others),     cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_proc_cgroup),
		cmocka_unit_test(test_files),      cmocka_unit_test(test_named),       cmocka_unit_test(test_untrusted),
		cmocka_unit_test(test_configured), cmocka_unit_test(test_configured_bad),
		cmocka_unit_test(test_configured_untrusted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
