/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * container.h: the container a process or cgroup belongs to (docker, podman, containerd, CRI-O,
 * Kubernetes, systemd-nspawn, LXC), recognised from its cgroup path and named from the runtimes'
 * files on the host, asking no daemon.
 */
#ifndef IOLENS_COLLECT_CONTAINER_H
#define IOLENS_COLLECT_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/toml_key.h"

/*
 * Every name here comes from files others may write (a rootless user's storage, a cgroup a
 * user made in the subtree delegated to them): untrusted text, bounded, only ever shown
 * (escaped by whoever prints it). A container in a subtree a user owns is that user's: its
 * name is looked up in that user's storage only, and said with the user
 * ("web (3f2a9c1b0d4e, user alice)"), so that no user can make theirs look like root's.
 */

enum container_runtime {
	CONTAINER_NONE,
	CONTAINER_DOCKER,     /* docker-ID.scope, /docker/ID */
	CONTAINER_PODMAN,     /* libpod-ID.scope, /libpod_parent/libpod-ID */
	CONTAINER_CONTAINERD, /* cri-containerd-ID.scope, nerdctl-ID.scope, /NAMESPACE/ID */
	CONTAINER_CRIO,       /* crio-ID.scope */
	CONTAINER_KUBERNETES, /* /kubepods/QOS/podUID/ID: a pod's container, the runtime not said */
	CONTAINER_MACHINE,    /* machine-NAME.scope: systemd-nspawn (or a VM systemd-machined registered) */
	CONTAINER_LXC,        /* lxc.payload.NAME, /lxc/NAME */
	CONTAINER_RUNTIMES
};
/* "docker", "podman", "containerd", "cri-o", "kubernetes", "machine", "lxc" ("" for none). */
extern const char *const container_runtime_names[CONTAINER_RUNTIMES];

#define CONTAINER_ID_SIZE 65     /* 64 lowercase hex digits */
#define CONTAINER_SHORT_ID 12    /* as docker ps shows it */
#define CONTAINER_NAME_SIZE 128  /* a name's bytes kept (a longer one is not taken) */
#define CONTAINER_POD_UID_SIZE 65
#define CONTAINER_LABEL_SIZE 512

/* ---- What a cgroup path says (a pure parser) --------------------------------------------- */

struct container_match {
	enum container_runtime runtime;
	char id[CONTAINER_ID_SIZE];       /* "" for machine and lxc */
	char name[CONTAINER_NAME_SIZE];   /* machine, lxc: the name the path holds; "" else */
	char group[64];                   /* containerd's namespace of /NAMESPACE/ID; "" else */
	char pod_uid[CONTAINER_POD_UID_SIZE]; /* Kubernetes: the pod's uid (with '-'); "" else */
	size_t end;                       /* the path's bytes up to the end of its cgroup's name */
};

struct container_path {
	unsigned matches;             /* containers on the path: 0 none, 2 or more nested */
	struct container_match inner; /* the one the cgroup is in (the deepest) */
	struct container_match outer; /* the outermost: the host's runtime knows only it */
	bool has_user;                /* under user@UID.service, a user's own service manager */
	uint32_t user;
};

/*
 * The containers on a cgroup path ("/system.slice/docker-ID.scope"): true when one is there.
 * A container's own sub-cgroups are its (libpod-ID.scope/container). Not containers: the
 * runtimes' monitors (libpod-conmon-ID.scope, crio-conmon-ID.scope, lxc.monitor.NAME). An id
 * is 64 lowercase hex digits, no more, no fewer. Leading ".." (a path outside the reader's
 * cgroup namespace) are passed over; a "." or ".." elsewhere, a path longer than 4096 bytes or
 * one with a NUL is none.
 */
bool container_parse_path(const char *path, size_t len, struct container_path *out);

/* ---- /proc/PID/cgroup, as an attacker can shape it ----------------------------------------- */

/* The hierarchies of cgroup v1 a process is in (iolens's own /proc/self/cgroup): their ids. */
struct cgroup_hierarchies {
	unsigned count;
	unsigned id[32];
};

/* One path of a /proc/PID/cgroup: the v2 hierarchy's (version 2) or a v1 hierarchy's. */
struct cgroup_line {
	int version;
	char controllers[64];   /* v1: "memory", "cpu,cpuacct", "name=systemd" */
	const char *path;       /* into the text, not NUL-terminated */
	size_t len;
};

/*
 * The paths of a /proc/PID/cgroup's text, the v2 one first: how many (at most max). Were a
 * cgroup's name to hold a newline (kernels refuse one now; a file read through a sysroot may be
 * anyone's), a user who may make cgroups could add lines that look like other hierarchies'. The
 * kernel writes one line per hierarchy, v1 ones first with
 * their ids falling, "0::" last, and its v2 path runs to the end of the text. So the file is
 * believed only as the kernel writes it: every line well formed, the v1 ids falling, each once
 * and (known, when not NULL: the hierarchies of iolens's own file) all of them, and no line
 * starting inside the v2 path. Anything else gives 0: no path rather than one someone made.
 */
size_t container_cgroup_lines(const char *text, size_t len, const struct cgroup_hierarchies *known,
			      struct cgroup_line *lines, size_t max);
/* The v1 hierarchy ids of a /proc/self/cgroup. */
void cgroup_hierarchies_parse(const char *text, size_t len, struct cgroup_hierarchies *out);

/* ---- The runtimes' files (pure parsers, for the tests and the fuzzer) ------------------------ */

/* docker's config.v2.json: its "Name" without the leading '/'; false when absent or not a name docker gives. */
bool container_docker_name(const char *json, size_t len, char *name, size_t size);
/*
 * podman's (and CRI-O's) containers.json, an array of {"id": ..., "names": [...]}: found(id,
 * first name) for each entry with a valid id and name; how many. Stops at max entries.
 */
size_t container_podman_names(const char *json, size_t len, size_t max,
			      void (*found)(const char *id, const char *name, void *context), void *context);
/*
 * A string member of a JSON object (docker's daemon.json: "data-root"): absent, found (in value,
 * NUL-terminated), or bad when the text is not one JSON object, or the member not a string of
 * fewer than size bytes without a NUL.
 */
enum setting container_json_setting(const char *json, size_t len, const char *key, char *value, size_t size);
/*
 * A directory a runtime's configuration names, as the runtime takes it (containers/storage's
 * $UID and $HOME, ${UID} and ${HOME}: uid's and its home's): false unless it is an absolute path
 * without another '$', a ".." part or a control character, shorter than size (its trailing '/'
 * left out).
 */
bool container_config_dir(const char *value, uint32_t uid, const char *home, char *out, size_t size);
/* A kubelet pod log directory's name, "NAMESPACE_POD_UID": false unless all three are valid. */
bool container_pod_dir_parse(const char *name, char *namespace_, size_t namespace_size, char *pod, size_t pod_size,
			     char *uid, size_t uid_size);
/* A kubelet container log link's name, "POD_NAMESPACE_CONTAINER-ID.log": false unless valid. */
bool container_log_name_parse(const char *name, char *pod, size_t pod_size, char *namespace_, size_t namespace_size,
			      char *container, size_t container_size, char *id, size_t id_size);
/* Whether text is an id as every runtime here makes them: 64 lowercase hex digits, exactly. */
bool container_id_valid(const char *text, size_t len);
/* Whether a name is one the runtimes give: [A-Za-z0-9][A-Za-z0-9_.-]*, shorter than CONTAINER_NAME_SIZE. */
bool container_name_valid(const char *name, size_t len);

/* ---- A container, named ---------------------------------------------------------------------- */

struct container {
	enum container_runtime runtime;
	char id[CONTAINER_ID_SIZE];          /* "" for machine and lxc */
	char name[CONTAINER_NAME_SIZE];      /* "" not found; Kubernetes: the container's name in its pod */
	char pod[CONTAINER_NAME_SIZE];       /* Kubernetes, "" not found */
	char namespace_[64];
	bool rootless;                       /* in a subtree a user owns: named from that user's storage */
	uint32_t owner;                      /* that user (0 when not rootless) */
	char owner_name[64];                 /* their login name, or the uid */
	bool nested;                         /* in another container: outer is the host's */
	char outer_id[CONTAINER_ID_SIZE];
	char outer_label[CONTAINER_LABEL_SIZE / 2];
	char label[CONTAINER_LABEL_SIZE];    /* as people read it: "web (3f2a9c1b0d4e)" */
};

/*
 * The label: "web (3f2a9c1b0d4e)", "3f2a9c1b0d4e" without a name, "NAMESPACE/POD/NAME (ID)" of a
 * pod's, "fedora (machine)", "u1 (lxc)"; a rootless one's owner inside the parentheses
 * ("web (3f2a9c1b0d4e, user alice)"); a nested one "ID in OUTER". Bytes as they came.
 */
void container_label(struct container *c);

/*
 * Where the runtimes' files are read: IOLENS_CONTAINER_ROOT when set (tests point it at a
 * tree of fixtures), else the sysroot. A rootless user's storage is under their home
 * (getpwuid) below that root. Their configuration (docker's daemon.json, containers/storage's
 * storage.conf, nerdctl.toml: the directories they keep their files in) is read below it too,
 * once a while, and believed only when root's (a rootless user's: theirs) and writable by no
 * group or other user; a bad one names nothing.
 */
const char *container_root(void);

/*
 * The container of a cgroup path (as /proc/PID/cgroup says it, of cgroup v2 or of a v1
 * hierarchy with these controllers), or NULL. The result lives until container_cache_trim.
 */
const struct container *container_of_path(int version, const char *controllers, const char *path, size_t len);
/* A process's container now, from its /proc/PID/cgroup (every hierarchy): NULL none, or gone. */
const struct container *container_of_pid(pid_t pid);
/*
 * A process's container from what eBPF says of it: cgroup, its cgroup v2 id (a directory's
 * inode), and memcg, its v1 memory cgroup's id (0: unknown), each resolved once; pid, when
 * alive, to find them quickly (and for the v1 hierarchies of a hybrid machine). NULL none.
 */
const struct container *container_of_process(pid_t pid, uint64_t cgroup, uint64_t memcg);
/* The container of a cgroup v2 id (a cgroup's rows: biotop -C), or NULL. */
const struct container *container_of_cgroup(uint64_t cgroup);
/*
 * Frees what the lookups cached once there is too much of it, and lets names be looked up again
 * after a while (a container renamed, or whose files were not there yet): call it where no
 * container pointer is held (each interval's start). Not thread-safe: one thread looks up.
 */
void container_cache_trim(void);
void container_cache_free(void);

#endif
