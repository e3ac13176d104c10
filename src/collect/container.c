/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * container.c: a process's or cgroup's container: its path parsed, its owner checked, its name
 * looked up once in the runtime's files on the host (docker, podman, nerdctl, the kubelet's logs),
 * where the runtime's configuration puts them, and remembered.
 */
#include "collect/container.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect/memcg.h"
#include "collect/sysroot.h"
#include "common/key_map.h"
#include "common/path_walk.h"
#include "common/util.h"

#define NAMES_TTL_NS (30ull * 1000000000ull) /* a name is looked up again after this: renamed, or its files came late */
#define CACHE_MAX 4096                       /* entries of each table: more, and all are forgotten at the next trim */
#define DOCKER_CONFIG_MAX (4u << 20)         /* config.v2.json: some KiB, more with many labels */
#define PODMAN_FILE_MAX (32u << 20)          /* containers.json: about 1 KiB a container */
#define ENTRIES_MAX 65536                    /* of a directory read for names */
#define NERDCTL_ENTRIES_MAX 4096
#define PROC_CGROUP_MAX (128u << 10)         /* 4 KiB a path at most, one per hierarchy */
#define CONFIG_MAX (1u << 20)                /* daemon.json, storage.conf, nerdctl.toml: some KiB */

struct entry {
	struct container c;
	struct container_match match, outer;
	uint64_t named_ns; /* when its name was looked up */
};

/* The container of a cgroup path, or of an id, or none (a value must not be NULL in a key_map). */
static const struct container no_container;
#define NONE ((void *)&no_container)

static struct key_map entries;     /* a container's key -> struct entry (owned) */
static struct key_map paths;       /* version, controllers and path -> struct entry or NONE */
static struct key_map ids, memcgs; /* a cgroup v2 id, a v1 memory cgroup's id -> struct entry or NONE */
static struct key_map podman_files; /* a containers.json's path -> struct podman_file */

static struct cgroup_hierarchies hierarchies; /* iolens's own: the v1 ones a file must have */
static bool hierarchies_read, hierarchies_known;

/* ---- Where and how the runtimes' files are read -------------------------------------------------- */

const char *container_root(void)
{
	const char *env = getenv("IOLENS_CONTAINER_ROOT");

	return env && *env ? env : sysroot_get();
}

/* ROOT/path of the runtimes' files (printf's format): false when it does not fit. */
static bool root_path_v(char *buf, size_t size, const char *format, va_list args) __attribute__((format(printf, 3, 0)));
static bool root_path_v(char *buf, size_t size, const char *format, va_list args)
{
	const char *root = container_root();
	size_t used = 0;
	int n;

	if (strcmp(root, "/")) {
		n = snprintf(buf, size, "%s", root);
		if (n < 0 || (size_t)n >= size)
			return false;
		used = (size_t)n;
	}
	n = vsnprintf(buf + used, size - used, format, args);
	return n >= 0 && (size_t)n < size - used;
}

static bool root_path(char *buf, size_t size, const char *format, ...) __attribute__((format(printf, 3, 4)));
static bool root_path(char *buf, size_t size, const char *format, ...)
{
	va_list args;
	bool fits;

	va_start(args, format);
	fits = root_path_v(buf, size, format, args);
	va_end(args);
	return fits;
}

/*
 * Whether a runtime's file or directory is believed: a rootless container's when its user has
 * it (not root's: a link in the user's storage may lead to root's files, of another container);
 * root's runtimes' when root, or iolens's own user, has it.
 */
static bool trusted(uid_t uid, uint32_t owner)
{
	return owner ? uid == owner : uid == 0 || uid == geteuid();
}

/*
 * A regular file, open for reading, and what fstat says of it; -1 else (errno EINVAL for one that
 * is not regular). Never opens a FIFO or a device, even were a link on the way changed meanwhile
 * (one in a user's storage may point anywhere): the path is opened O_PATH, which opens nothing,
 * and the inode it leads to, once checked, through /proc/self/fd.
 */
static int open_regular(const char *path, struct stat *st)
{
	int path_fd = open(path, O_PATH | O_CLOEXEC), fd = -1, err = EINVAL;

	if (path_fd < 0)
		return -1;
	if (fstat(path_fd, st) != 0) {
		err = errno;
	} else if (S_ISREG(st->st_mode)) {
		fd = fd_reopen(path_fd, O_RDONLY | O_NONBLOCK);
		err = errno;
	}
	close(path_fd);
	errno = err;
	return fd;
}

/* What an open file holds, st_size bytes at most (fewer if it shrank): NUL-terminated (free it). */
static char *read_whole(int fd, const struct stat *st, size_t *len)
{
	char *text = xcalloc(1, (size_t)st->st_size + 1);
	size_t used = 0;

	while (used < (size_t)st->st_size) {
		ssize_t n = read(fd, text + used, (size_t)st->st_size - used);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		used += (size_t)n;
	}
	*len = used;
	return text;
}

/* The whole of a regular file of at most max bytes that a trusted user owns (free it), or NULL. */
static char *read_trusted(const char *path, size_t max, uint32_t owner, size_t *len, struct stat *out)
{
	struct stat st;
	char *text = NULL;
	int fd = open_regular(path, &st);

	if (fd < 0)
		return NULL;
	if (trusted(st.st_uid, owner) && (uint64_t)st.st_size <= max) {
		text = read_whole(fd, &st, len);
		if (out)
			*out = st;
	}
	close(fd);
	return text;
}

/* A directory a trusted user owns, open for readdir; NULL else. */
static DIR *open_trusted_dir(const char *path, uint32_t owner)
{
	DIR *dir = opendir(path);
	struct stat st;

	if (dir && (fstat(dirfd(dir), &st) != 0 || !S_ISDIR(st.st_mode) || !trusted(st.st_uid, owner))) {
		closedir(dir);
		dir = NULL;
	}
	return dir;
}

/* A user's home directory and login name, from the password database. */
static bool user_home(uint32_t uid, char *home, size_t home_size)
{
	struct passwd pw, *found = NULL;
	char buf[4096];

	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &found) != 0 || !found || pw.pw_dir[0] != '/' ||
	    strlen(pw.pw_dir) >= home_size)
		return false;
	snprintf(home, home_size, "%s", pw.pw_dir);
	return true;
}

static void user_name(uint32_t uid, char *name, size_t size)
{
	struct passwd pw, *found = NULL;
	char buf[4096];

	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &found) == 0 && found && pw.pw_name[0])
		snprintf(name, size, "%s", pw.pw_name);
	else
		snprintf(name, size, "%u", (unsigned)uid);
}

/* ---- Where the runtimes keep their files: as their configuration says --------------------------- */

/* A runtime's configuration file: its text, or why there is none. */
struct config {
	enum { CONFIG_ABSENT, CONFIG_READ, CONFIG_BAD } state;
	char *text;
	size_t len;
};

/* A configuration's file, or its directory, believed: a trusted user's, that no group or other user may write. */
static bool config_trusted(const struct stat *st, uint32_t owner)
{
	return trusted(st->st_uid, owner) && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

/*
 * A runtime's configuration file. Not believed, and so ignored as if absent (the runtime's
 * defaults then hold), unless it and the directory it is named in (where whoever may write could
 * have put a link to another file) are believed; a rootless user's must be that user's. Bad when
 * it is there but is not a regular file of at most CONFIG_MAX bytes.
 */
static struct config read_config(const char *path, uint32_t owner)
{
	struct config config = { .state = CONFIG_BAD };
	const char *slash = strrchr(path, '/');
	char dir[4096];
	struct stat st;
	int fd;

	if (!slash || (size_t)(slash - path) >= sizeof(dir))
		return config;
	snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || !config_trusted(&st, owner)) {
		config.state = CONFIG_ABSENT;
		return config;
	}
	fd = open_regular(path, &st);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			config.state = CONFIG_ABSENT;
		return config;
	}
	if (!config_trusted(&st, owner)) {
		config.state = CONFIG_ABSENT;
	} else if ((uint64_t)st.st_size <= CONFIG_MAX) {
		config.text = read_whole(fd, &st, &config.len);
		config.state = CONFIG_READ;
	}
	close(fd);
	return config;
}

/* The configuration file at ROOT/path (printf's format). */
static struct config config_at(uint32_t owner, const char *format, ...) __attribute__((format(printf, 2, 3)));
static struct config config_at(uint32_t owner, const char *format, ...)
{
	char path[4096];
	va_list args;
	bool fits;

	va_start(args, format);
	fits = root_path_v(path, sizeof(path), format, args);
	va_end(args);
	return fits ? read_config(path, owner) : (struct config){ .state = CONFIG_BAD };
}

/*
 * The directory a configuration's setting names (json: a member of docker's daemon.json, else a
 * TOML key of table), into dir: the runtime's default when the file, the setting or its value is
 * not there (an empty one is none, as containers/storage takes it); "" when the file or the setting
 * is one the runtime would refuse, or not a directory to read under the runtimes' root.
 */
static void config_dir(const struct config *config, bool json, const char *table, const char *key,
		       const char *fallback, uint32_t owner, const char *home, char *dir, size_t size)
{
	enum setting said = SETTING_ABSENT;
	char value[4096] = "";

	dir[0] = '\0';
	if (config->state == CONFIG_BAD)
		return;
	if (config->state == CONFIG_READ)
		said = json ? container_json_setting(config->text, config->len, key, value, sizeof(value))
			    : toml_string(config->text, config->len, table, key, value, sizeof(value));
	if (said == SETTING_BAD)
		return;
	if (said == SETTING_ABSENT || !value[0]) {
		if (strlen(fallback) < size)
			snprintf(dir, size, "%s", fallback);
	} else if (!container_config_dir(value, owner, home, dir, size)) {
		dir[0] = '\0';
	}
}

/* Where the runtimes of root, or of a rootless user, keep their files ("": not known). */
struct runtime_dirs {
	uint64_t read_ns;     /* when their configuration was read */
	char docker[4096];    /* docker's data-root */
	char graphroot[4096]; /* podman's (containers/storage's) */
	char runroot[4096];
	char nerdctl[4096];   /* nerdctl's data_root: root's only (a rootless nerdctl's containers are not named) */
};

static struct runtime_dirs root_dirs;
static struct key_map user_dirs; /* a rootless user's uid -> struct runtime_dirs (owned) */

static void read_dirs(struct runtime_dirs *dirs, uint32_t owner)
{
	char home[4096] = "", fallback[4096];
	struct config config;

	*dirs = (struct runtime_dirs){ .read_ns = monotonic_ns() };
	/* A rootless user's runtimes keep their files in the home: none known without one. */
	if (!user_home(owner, home, sizeof(home)) && owner)
		return;
	/* docker: /etc/docker/daemon.json's "data-root"; a rootless one's, ~/.config/docker/daemon.json */
	config =
	    owner ? config_at(owner, "%s/.config/docker/daemon.json", home) : config_at(0, "/etc/docker/daemon.json");
	snprintf(fallback, sizeof(fallback), "%s%s", owner ? home : "",
		 owner ? "/.local/share/docker" : "/var/lib/docker");
	config_dir(&config, true, NULL, "data-root", fallback, owner, home, dirs->docker, sizeof(dirs->docker));
	free(config.text);
	/*
	 * podman (containers/storage): graphroot and runroot of [storage] in /etc/containers/storage.conf,
	 * or when there is none, the distribution's /usr/share/containers/storage.conf; a rootless
	 * user's, ~/.config/containers/storage.conf.
	 */
	if (owner) {
		config = config_at(owner, "%s/.config/containers/storage.conf", home);
	} else {
		config = config_at(0, "/etc/containers/storage.conf");
		if (config.state == CONFIG_ABSENT)
			config = config_at(0, "/usr/share/containers/storage.conf");
	}
	snprintf(fallback, sizeof(fallback), "%s%s", owner ? home : "",
		 owner ? "/.local/share/containers/storage" : "/var/lib/containers/storage");
	config_dir(&config, false, "storage", "graphroot", fallback, owner, home, dirs->graphroot,
		   sizeof(dirs->graphroot));
	if (owner)
		snprintf(fallback, sizeof(fallback), "/run/user/%u/containers", (unsigned)owner);
	else
		snprintf(fallback, sizeof(fallback), "/run/containers/storage");
	config_dir(&config, false, "storage", "runroot", fallback, owner, home, dirs->runroot, sizeof(dirs->runroot));
	free(config.text);
	/* nerdctl: data_root of /etc/nerdctl/nerdctl.toml */
	if (!owner) {
		config = config_at(0, "/etc/nerdctl/nerdctl.toml");
		config_dir(&config, false, NULL, "data_root", "/var/lib/nerdctl", 0, home, dirs->nerdctl,
			   sizeof(dirs->nerdctl));
		free(config.text);
	}
}

/* Where root's runtimes (owner 0), or a rootless user's, keep their files: read once a while. */
static const struct runtime_dirs *dirs_of(uint32_t owner)
{
	struct runtime_dirs *dirs = owner ? key_map_get(&user_dirs, &owner, sizeof(owner)) : &root_dirs;

	if (!dirs) {
		dirs = xcalloc(1, sizeof(*dirs));
		key_map_put(&user_dirs, &owner, sizeof(owner), dirs);
	}
	if (!dirs->read_ns || monotonic_ns() - dirs->read_ns > NAMES_TTL_NS)
		read_dirs(dirs, owner);
	return dirs;
}

/* ---- Names, runtime by runtime ------------------------------------------------------------------- */

/* docker: DATA-ROOT/containers/ID/config.v2.json ("Name": "/web"). */
static bool docker_name(const struct container *c, const struct runtime_dirs *dirs, char *name, size_t size)
{
	char path[4096];
	size_t len;
	char *text;
	bool found;

	if (!dirs->docker[0] ||
	    !root_path(path, sizeof(path), "%s/containers/%s/config.v2.json", dirs->docker, c->id) ||
	    !(text = read_trusted(path, DOCKER_CONFIG_MAX, c->owner, &len, NULL)))
		return false;
	found = container_docker_name(text, len, name, size);
	free(text);
	return found;
}

/* A containers.json parsed: its names by id, for as long as the file is the same. */
struct podman_file {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	struct key_map names; /* id -> name (owned) */
};

static void podman_file_clear(struct podman_file *file)
{
	const void *key;
	size_t len, i = 0;
	void *value;

	while (key_map_next(&file->names, &i, &key, &len, &value))
		free(value);
	key_map_free(&file->names);
}

static void podman_found(const char *id, const char *name, void *context)
{
	free(name_map_put(context, id, xstrdup(name)));
}

/* The name of id in a containers.json (at ROOT/path), parsed again only when the file changed; NULL none. */
static const char *podman_file_name(const char *path, uint32_t owner, const char *id)
{
	struct podman_file *file;
	struct stat st;

	if (stat(path, &st) != 0)
		return NULL;
	file = name_map_get(&podman_files, path);
	if (!file || file->dev != st.st_dev || file->ino != st.st_ino || file->size != st.st_size ||
	    file->mtime.tv_sec != st.st_mtim.tv_sec || file->mtime.tv_nsec != st.st_mtim.tv_nsec) {
		size_t len;
		char *text = read_trusted(path, PODMAN_FILE_MAX, owner, &len, &st);

		if (!file) {
			file = xcalloc(1, sizeof(*file));
			name_map_put(&podman_files, path, file);
		}
		podman_file_clear(file);
		*file =
		    (struct podman_file){ .dev = st.st_dev, .ino = st.st_ino, .size = st.st_size, .mtime = st.st_mtim };
		if (text)
			container_podman_names(text, len, PODMAN_FILE_MAX / 64, podman_found, &file->names);
		free(text);
	}
	return name_map_get(&file->names, id);
}

/*
 * podman (and CRI-O, which shares its storage): GRAPHROOT/DRIVER-containers/containers.json,
 * "names"; a container made with --rm in volatile-containers.json beside it, or under RUNROOT
 * with containers/storage's transient_store.
 */
static bool podman_name(const struct container *c, const struct runtime_dirs *dirs, char *name, size_t size)
{
	static const char *const drivers[] = { "overlay", "vfs", "btrfs", "zfs" };
	const char *const files[][2] = { { dirs->graphroot, "containers.json" },
					 { dirs->graphroot, "volatile-containers.json" },
					 { dirs->runroot, "volatile-containers.json" } };

	for (size_t d = 0; d < sizeof(drivers) / sizeof(drivers[0]); d++) {
		for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
			const char *found;
			char path[4096];

			if (files[f][0][0] &&
			    root_path(path, sizeof(path), "%s/%s-containers/%s", files[f][0], drivers[d],
				      files[f][1]) &&
			    (found = podman_file_name(path, c->owner, c->id))) {
				snprintf(name, size, "%s", found);
				return true;
			}
		}
	}
	return false;
}

/*
 * A pod's container, from what the kubelet writes under /var/log: a link per container,
 * /var/log/containers/POD_NAMESPACE_CONTAINER-ID.log, to /var/log/pods/NAMESPACE_POD_UID/CONTAINER/N.log;
 * the pod's directory alone for one that logs nothing (its sandbox).
 */
static bool kubernetes_names(struct container *c, const char *pod_uid)
{
	char path[4096], id[CONTAINER_ID_SIZE], suffix[CONTAINER_ID_SIZE + 8];
	struct dirent *entry;
	unsigned seen = 0;
	bool found = false;
	DIR *dir;

	snprintf(suffix, sizeof(suffix), "-%s.log", c->id);
	if (root_path(path, sizeof(path), "/var/log/containers") && (dir = open_trusted_dir(path, 0))) {
		while (!found && (entry = readdir(dir)) && seen++ < ENTRIES_MAX) {
			size_t len = strlen(entry->d_name);
			char target[4096], link[4096], namespace_[64], pod[CONTAINER_NAME_SIZE],
			    container[CONTAINER_NAME_SIZE], dir_namespace[64], dir_pod[CONTAINER_NAME_SIZE],
			    dir_uid[CONTAINER_POD_UID_SIZE];
			const char *slash;
			ssize_t n;

			if (len <= strlen(suffix) || strcmp(entry->d_name + len - strlen(suffix), suffix) ||
			    !container_log_name_parse(entry->d_name, pod, sizeof(pod), namespace_, sizeof(namespace_),
						      container, sizeof(container), id, sizeof(id)))
				continue;
			/* The link says which pod's directory it is: the pod of the cgroup, when the path named it. */
			if (pod_uid[0]) {
				if (!root_path(link, sizeof(link), "/var/log/containers/%s", entry->d_name) ||
				    (n = readlink(link, target, sizeof(target) - 1)) <= 0)
					continue;
				target[n] = '\0';
				/* .../NAMESPACE_POD_UID/CONTAINER/N.log: the directory two above the file */
				for (int k = 0; k < 2 && (slash = strrchr(target, '/')); k++)
					target[slash - target] = '\0';
				slash = strrchr(target, '/');
				if (!slash ||
				    !container_pod_dir_parse(slash + 1, dir_namespace, sizeof(dir_namespace), dir_pod,
							     sizeof(dir_pod), dir_uid, sizeof(dir_uid)) ||
				    strcmp(dir_uid, pod_uid) || strcmp(dir_pod, pod) ||
				    strcmp(dir_namespace, namespace_))
					continue;
			}
			snprintf(c->name, sizeof(c->name), "%s", container);
			snprintf(c->pod, sizeof(c->pod), "%s", pod);
			snprintf(c->namespace_, sizeof(c->namespace_), "%s", namespace_);
			found = true;
		}
		closedir(dir);
	}
	if (found || !pod_uid[0] || !root_path(path, sizeof(path), "/var/log/pods") ||
	    !(dir = open_trusted_dir(path, 0)))
		return found;
	seen = 0;
	while (!found && (entry = readdir(dir)) && seen++ < ENTRIES_MAX) {
		char namespace_[64], pod[CONTAINER_NAME_SIZE], uid[CONTAINER_POD_UID_SIZE];

		if (container_pod_dir_parse(entry->d_name, namespace_, sizeof(namespace_), pod, sizeof(pod), uid,
					    sizeof(uid)) &&
		    !strcmp(uid, pod_uid)) {
			snprintf(c->pod, sizeof(c->pod), "%s", pod);
			snprintf(c->namespace_, sizeof(c->namespace_), "%s", namespace_);
			found = true;
		}
	}
	closedir(dir);
	return found;
}

/* nerdctl (containerd): DATA_ROOT/HASH/names/NAMESPACE/NAME, a file holding the id. */
static bool nerdctl_name(const struct container *c, const struct runtime_dirs *dirs, const char *namespace_, char *name,
			 size_t size)
{
	char path[4096];
	struct dirent *top, *entry;
	unsigned seen = 0;
	bool found = false;
	DIR *hashes, *names;

	if (!dirs->nerdctl[0] || !root_path(path, sizeof(path), "%s", dirs->nerdctl) ||
	    !(hashes = open_trusted_dir(path, 0)))
		return false;
	while (!found && (top = readdir(hashes)) && seen < NERDCTL_ENTRIES_MAX) {
		if (top->d_name[0] == '.' ||
		    !root_path(path, sizeof(path), "%s/%s/names/%s", dirs->nerdctl, top->d_name, namespace_) ||
		    !(names = open_trusted_dir(path, 0)))
			continue;
		while (!found && (entry = readdir(names)) && seen++ < NERDCTL_ENTRIES_MAX) {
			char file[4096];
			size_t len;
			char *text;

			if (!container_name_valid(entry->d_name, strlen(entry->d_name)) ||
			    !root_path(file, sizeof(file), "%s/%s/names/%s/%s", dirs->nerdctl, top->d_name, namespace_,
				       entry->d_name) ||
			    !(text = read_trusted(file, 256, 0, &len, NULL)))
				continue;
			while (len && (text[len - 1] == '\n' || text[len - 1] == ' '))
				len--;
			if (len == CONTAINER_ID_SIZE - 1 && !memcmp(text, c->id, len)) {
				snprintf(name, size, "%s", entry->d_name);
				found = true;
			}
			free(text);
		}
		closedir(names);
	}
	closedir(hashes);
	return found;
}

/* ---- Labels ---------------------------------------------------------------------------------------- */

void container_label(struct container *c)
{
	char what[384], short_id[CONTAINER_SHORT_ID + 1], owner[96] = "";
	char *label = c->label;
	size_t size = sizeof(c->label);

	snprintf(short_id, sizeof(short_id), "%.*s", CONTAINER_SHORT_ID, c->id);
	if (c->rootless)
		snprintf(owner, sizeof(owner), "user %s", c->owner_name);
	if (c->nested) {
		/* Only the outer one is the host's: the inner's name is in the outer's files. */
		snprintf(label, size, "%s%s%s%s in %s", c->id[0] ? short_id : c->name, owner[0] ? " (" : "", owner,
			 owner[0] ? ")" : "", c->outer_label);
		return;
	}
	if (c->pod[0])
		snprintf(what, sizeof(what), "%s/%s%s%s", c->namespace_, c->pod, c->name[0] ? "/" : "", c->name);
	else
		snprintf(what, sizeof(what), "%s", c->name);
	if (!c->id[0]) /* machine, lxc: named by their path */
		snprintf(label, size, "%s (%s%s%s)", what, container_runtime_names[c->runtime], owner[0] ? ", " : "",
			 owner);
	else if (what[0])
		snprintf(label, size, "%s (%s%s%s)", what, short_id, owner[0] ? ", " : "", owner);
	else
		snprintf(label, size, "%s%s%s%s", short_id, owner[0] ? " (" : "", owner, owner[0] ? ")" : "");
}

/* ---- The tables ------------------------------------------------------------------------------------- */

static void key_of(const struct container_match *m, bool rootless, uint32_t owner, char *key, size_t size)
{
	snprintf(key, size, "%d/%s/%s/%s/%s/%d/%u", (int)m->runtime, m->id, m->name, m->group, m->pod_uid, rootless,
		 (unsigned)owner);
}

static struct entry *entry_of(const struct container_match *m, const struct container_match *outer, bool rootless,
			      uint32_t owner);

/* The names of an entry, looked up now. */
static void name_entry(struct entry *e, bool rootless, uint32_t owner)
{
	struct container *c = &e->c;
	const struct runtime_dirs *dirs;

	c->name[0] = c->pod[0] = c->namespace_[0] = c->outer_label[0] = '\0';
	c->runtime = e->match.runtime;
	e->named_ns = monotonic_ns();
	if (c->rootless)
		user_name(owner, c->owner_name, sizeof(c->owner_name));
	if (c->nested) {
		const struct entry *outer = entry_of(&e->outer, NULL, rootless, owner);

		snprintf(c->outer_label, sizeof(c->outer_label), "%.*s", (int)sizeof(c->outer_label) - 1,
			 outer->c.label);
		snprintf(c->outer_id, sizeof(c->outer_id), "%s", outer->c.id);
		if (!c->id[0])
			snprintf(c->name, sizeof(c->name), "%s", e->match.name);
		container_label(c);
		return;
	}
	/* A rootless container's names are in its user's storage only (none without a home). */
	dirs = dirs_of(c->owner);
	switch (c->runtime) {
	case CONTAINER_MACHINE:
	case CONTAINER_LXC:
		snprintf(c->name, sizeof(c->name), "%s", e->match.name);
		break;
	case CONTAINER_DOCKER: /* a pod's (dockershim) by the kubelet's names, else docker's own */
		if (e->match.pod_uid[0] && !c->rootless && kubernetes_names(c, e->match.pod_uid))
			break;
		docker_name(c, dirs, c->name, sizeof(c->name));
		break;
	case CONTAINER_PODMAN:
		podman_name(c, dirs, c->name, sizeof(c->name));
		break;
	case CONTAINER_CRIO:
	case CONTAINER_KUBERNETES:
		if (!c->rootless)
			kubernetes_names(c, e->match.pod_uid);
		break;
	case CONTAINER_CONTAINERD:
		if (c->rootless)
			break;
		if (e->match.pod_uid[0] || !e->match.group[0])
			kubernetes_names(c, e->match.pod_uid);
		else if (!nerdctl_name(c, dirs, e->match.group, c->name, sizeof(c->name)) &&
			 docker_name(c, dirs, c->name, sizeof(c->name)))
			c->runtime = CONTAINER_DOCKER; /* docker with --cgroup-parent /GROUP */
		break;
	default:
		break;
	}
	container_label(c);
}

/* An entry remembered, its names looked up again when they are old. */
static struct entry *fresh(struct entry *e)
{
	if (monotonic_ns() - e->named_ns > NAMES_TTL_NS)
		name_entry(e, e->c.rootless, e->c.owner);
	return e;
}

static struct entry *entry_of(const struct container_match *m, const struct container_match *outer, bool rootless,
			      uint32_t owner)
{
	char key[1024], outer_key[512] = "";
	struct entry *e;

	key_of(m, rootless, owner, key, sizeof(key));
	if (outer) {
		key_of(outer, rootless, owner, outer_key, sizeof(outer_key));
		snprintf(key + strlen(key), sizeof(key) - strlen(key), " in %s", outer_key);
	}
	if ((e = name_map_get(&entries, key)))
		return fresh(e);
	e = xcalloc(1, sizeof(*e));
	e->match = *m;
	if (outer)
		e->outer = *outer;
	e->c.nested = outer != NULL;
	e->c.rootless = rootless;
	e->c.owner = rootless ? owner : 0;
	snprintf(e->c.id, sizeof(e->c.id), "%s", m->id);
	name_map_put(&entries, key, e);
	name_entry(e, rootless, owner);
	return e;
}

/*
 * Whose the container is: the owner of its cgroup's directory, when not root (a subtree
 * delegated to a user, who may name cgroups as they please); else the user of a
 * user@UID.service above it; else root's. True for a user's.
 */
static bool owner_of(int version, const char *controllers, const char *path, size_t end, const struct container_path *p,
		     uint32_t *owner)
{
	char mount[512], full[8192];
	struct stat st;

	*owner = 0;
	if (version == 2 ? memcg_v2_mounted() && snprintf(mount, sizeof(mount), "%s", memcg_v2_mount()) > 0
			 : cgroup_v1_mount(controllers, mount, sizeof(mount))) {
		if (end < sizeof(full) && sysroot_path(full, sizeof(full), "%s%.*s", mount, (int)end, path) &&
		    stat(full, &st) == 0 && st.st_uid != 0) {
			*owner = (uint32_t)st.st_uid;
			return true;
		}
	}
	if (p->has_user && p->user != 0) {
		*owner = p->user;
		return true;
	}
	return false;
}

/* The entry of a cgroup path, new: NULL when it names no container. */
static struct entry *resolve_path(int version, const char *controllers, const char *path, size_t len)
{
	struct container_path p;
	uint32_t owner;
	bool rootless;

	if (!container_parse_path(path, len, &p))
		return NULL;
	/* Whose the outermost container is (of a nested one, the host's runtime knows only it). */
	rootless = owner_of(version, controllers, path, p.outer.end, &p, &owner);
	return entry_of(&p.inner, p.matches > 1 ? &p.outer : NULL, rootless, owner);
}

/* The entry of a cgroup path, remembered by the path: NULL for none. */
static struct entry *path_entry(int version, const char *controllers, const char *path, size_t len)
{
	char key[4200];
	size_t head;
	void *value;
	struct entry *e;

	head = (size_t)snprintf(key, sizeof(key), "%d:%s:", version, controllers);
	if (head >= sizeof(key) || len > sizeof(key) - head)
		return NULL;
	memcpy(key + head, path, len);
	value = key_map_get(&paths, key, head + len);
	if (value == NONE)
		return NULL;
	if (value)
		return fresh(value);
	e = resolve_path(version, controllers, path, len);
	key_map_put(&paths, key, head + len, e ? (void *)e : NONE);
	return e;
}

const struct container *container_of_path(int version, const char *controllers, const char *path, size_t len)
{
	struct entry *e = path_entry(version, controllers ? controllers : "", path, len);

	return e ? &e->c : NULL;
}

/* iolens's own hierarchies, read once: what a process's file must show. */
static const struct cgroup_hierarchies *known_hierarchies(void)
{
	if (!hierarchies_read) {
		char text[4096];
		ssize_t len = sysroot_read_small("/proc/self/cgroup", text, sizeof(text));

		hierarchies_read = true;
		hierarchies_known = len > 0 && (size_t)len < sizeof(text) - 1;
		if (hierarchies_known)
			cgroup_hierarchies_parse(text, (size_t)len, &hierarchies);
	}
	return hierarchies_known ? &hierarchies : NULL;
}

/* The lines of a process's /proc/PID/cgroup, in buf: how many. */
static size_t pid_lines(pid_t pid, char *buf, size_t size, struct cgroup_line *lines, size_t max)
{
	char path[64];
	ssize_t len;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	len = sysroot_read_small(path, buf, size);
	if (len <= 0 || (size_t)len >= size - 1) /* gone, or cut: nothing rather than a path cut short */
		return 0;
	return container_cgroup_lines(buf, (size_t)len, known_hierarchies(), lines, max);
}

static char *cgroup_buffer(void)
{
	static char *buf;

	if (!buf)
		buf = xcalloc(1, PROC_CGROUP_MAX);
	return buf;
}

const struct container *container_of_pid(pid_t pid)
{
	struct cgroup_line lines[33];
	size_t n = pid_lines(pid, cgroup_buffer(), PROC_CGROUP_MAX, lines, sizeof(lines) / sizeof(lines[0]));

	for (size_t i = 0; i < n; i++) {
		const struct container *c =
		    container_of_path(lines[i].version, lines[i].controllers, lines[i].path, lines[i].len);

		if (c)
			return c;
	}
	return NULL;
}

/* The container of a cgroup id in a table of ids, found in the hierarchy at mount (a walk of it) when new. */
static const struct container *by_id(struct key_map *table, uint64_t id, int version, const char *controllers,
				     const char *mount, pid_t pid)
{
	void *value = key_map_get(table, &id, sizeof(id));
	struct entry *e = NULL;
	char path[4096];
	bool found = false;

	if (value == NONE)
		return NULL;
	if (value)
		return &fresh(value)->c;
	/* The process's own path first, if it is that cgroup still: one stat, not a walk. */
	if (pid > 0) {
		struct cgroup_line lines[33];
		size_t n = pid_lines(pid, cgroup_buffer(), PROC_CGROUP_MAX, lines, sizeof(lines) / sizeof(lines[0]));

		for (size_t i = 0; i < n && !found; i++) {
			char full[8192];
			struct stat st;

			if (lines[i].version != version ||
			    (version == 1 && strcmp(lines[i].controllers, controllers)) || lines[i].len >= sizeof(path))
				continue;
			if (sysroot_path(full, sizeof(full), "%s%.*s", mount, (int)lines[i].len, lines[i].path) &&
			    stat(full, &st) == 0 && st.st_ino == id) {
				e = path_entry(version, controllers, lines[i].path, lines[i].len);
				found = true;
			}
		}
	}
	if (!found && memcg_path_of_id(mount, id, path, sizeof(path)))
		e = path_entry(version, controllers, path, strlen(path));
	key_map_put(table, &id, sizeof(id), e ? (void *)e : NONE);
	return e ? &e->c : NULL;
}

const struct container *container_of_cgroup(uint64_t cgroup)
{
	if (!cgroup || !memcg_v2_mounted())
		return NULL;
	return by_id(&ids, cgroup, 2, "", memcg_v2_mount(), 0);
}

const struct container *container_of_process(pid_t pid, uint64_t cgroup, uint64_t memcg)
{
	const struct container *c = NULL;
	const struct cgroup_hierarchies *known = known_hierarchies();

	if (cgroup && memcg_v2_mounted())
		c = by_id(&ids, cgroup, 2, "", memcg_v2_mount(), pid);
	/* A hybrid machine's containers may be in its v1 hierarchies only (docker's cgroupfs driver). */
	if (!c && pid > 0 && (!cgroup || !known || known->count))
		c = container_of_pid(pid);
	if (!c && memcg && memcg_v1_memory_mount()[0])
		c = by_id(&memcgs, memcg, 1, "memory", memcg_v1_memory_mount(), 0);
	return c;
}

/* ---- Forgetting ------------------------------------------------------------------------------------- */

void container_cache_free(void)
{
	const void *key;
	size_t len, i = 0;
	void *value;

	while (key_map_next(&entries, &i, &key, &len, &value))
		free(value);
	i = 0;
	while (key_map_next(&podman_files, &i, &key, &len, &value)) {
		podman_file_clear(value);
		free(value);
	}
	key_map_free(&entries);
	key_map_free(&paths);
	key_map_free(&ids);
	key_map_free(&memcgs);
	key_map_free(&podman_files);
	i = 0;
	while (key_map_next(&user_dirs, &i, &key, &len, &value))
		free(value);
	key_map_free(&user_dirs);
	root_dirs.read_ns = 0;
	hierarchies_read = false;
}

void container_cache_trim(void)
{
	if (entries.count > CACHE_MAX || paths.count > CACHE_MAX || ids.count > CACHE_MAX || memcgs.count > CACHE_MAX ||
	    podman_files.count > 64 || user_dirs.count > 64)
		container_cache_free();
}
