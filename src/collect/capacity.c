/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * capacity.c: a disk's capacity file: its identity from sysfs (WWN, serial, or model and size),
 * written atomically, read back; the share of it a load uses.
 */
#include "collect/capacity.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "common/path_walk.h"
#include "common/util.h"

#include "collect/sysroot.h"

/* "prefix-value" into key, with what a file name should not hold as '_'. */
static void make_key(char *key, size_t len, const char *prefix, const char *value)
{
	size_t at = (size_t)snprintf(key, len, "%s-", prefix);

	for (const unsigned char *c = (const unsigned char *)value; *c && at + 1 < len; c++) {
		bool plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
			     *c == '.' || *c == '_' || *c == '-';

		/* Runs of spaces (SCSI pads its t10 names) become one '_'. */
		if (!plain && at && key[at - 1] == '_')
			continue;
		key[at++] = plain ? (char)*c : '_';
	}
	while (at > 0 && key[at - 1] == '_')
		at--;
	key[at] = '\0';
}

/* The whole disk's kernel name for devno: a partition's parent. 0, or -1 with why. */
static int whole_disk(dev_t devno, char *name, size_t len, char *why, size_t why_len)
{
	char link[PATH_MAX], resolved[PATH_MAX], probe[PATH_MAX + 16];
	char *slash;

	if (!sysroot_path(link, sizeof(link), "/sys/dev/block/%u:%u", major(devno), minor(devno)) ||
	    !realpath(link, resolved))
		return say_why(why, why_len, "no block device %u:%u in /sys/dev/block", major(devno), minor(devno));
	snprintf(probe, sizeof(probe), "%s/partition", resolved);
	if (access(probe, F_OK) == 0 && (slash = strrchr(resolved, '/')))
		*slash = '\0';
	slash = strrchr(resolved, '/');
	if (!slash || !slash[1] || strlen(slash + 1) >= len)
		return say_why(why, why_len, "block device %u:%u: no disk name in sysfs", major(devno), minor(devno));
	memcpy(name, slash + 1, strlen(slash + 1) + 1);
	return 0;
}

int capacity_identity(dev_t devno, struct capacity_identity *out, char *why, size_t why_len)
{
	static const char *const ids[] = { "wwid", "device/wwid", "device/serial", "serial" };
	char path[PATH_MAX], value[256], size_text[32], model[128];
	unsigned long long sectors;

	memset(out, 0, sizeof(*out));
	if (whole_disk(devno, out->disk, sizeof(out->disk), why, why_len) != 0)
		return -1;
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		snprintf(path, sizeof(path), "/sys/block/%s/%s", out->disk, ids[i]);
		if (sysroot_read_string(path, value, sizeof(value)) == 0 && value[0]) {
			const char *source = strstr(ids[i], "wwid") ? "wwid" : "serial";

			snprintf(out->source, sizeof(out->source), "%s", source);
			make_key(out->key, sizeof(out->key), source, value);
			return 0;
		}
	}
	snprintf(path, sizeof(path), "/sys/block/%s/size", out->disk);
	if (sysroot_read_string(path, size_text, sizeof(size_text)) != 0 || sscanf(size_text, "%llu", &sectors) != 1 ||
	    !sectors)
		return say_why(why, why_len, "%s: no WWN or serial in sysfs, and no size", out->disk);
	snprintf(path, sizeof(path), "/sys/block/%s/device/model", out->disk);
	if (sysroot_read_string(path, model, sizeof(model)) != 0 || !model[0]) {
		/* No model (loop, virtio, zram): the driver's name, which is the kernel's name without its number. */
		size_t n = strlen(out->disk);

		while (n > 0 && out->disk[n - 1] >= '0' && out->disk[n - 1] <= '9')
			n--;
		snprintf(model, sizeof(model), "%.*s", (int)n, out->disk);
	}
	snprintf(value, sizeof(value), "%s-%llu", model, sectors * 512);
	snprintf(out->source, sizeof(out->source), "model");
	make_key(out->key, sizeof(out->key), "model", value);
	return 0;
}

const char *capacity_dir(const char *dir)
{
	const char *env = getenv(CAPACITY_DIR_ENV);

	if (dir && dir[0])
		return dir;
	return env && env[0] ? env : CAPACITY_DEFAULT_DIR;
}

bool capacity_path(const char *dir, const struct capacity_identity *id, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%s.json", dir, id->key);

	return n > 0 && (size_t)n < len;
}

/* mkdir -p, 0755. 0, or -errno. */
static int make_dirs(const char *dir)
{
	char path[PATH_MAX];
	size_t len = strlen(dir);

	if (len >= sizeof(path))
		return -ENAMETOOLONG;
	memcpy(path, dir, len + 1);
	for (char *c = path + 1; ; c++) {
		if (*c == '/' || !*c) {
			char saved = *c;

			*c = '\0';
			if (mkdir(path, 0755) != 0 && errno != EEXIST)
				return -errno;
			*c = saved;
			if (!saved)
				break;
		}
	}
	return 0;
}

int capacity_save(const char *dir, const struct capacity_identity *id, const char *text, size_t len, char *why,
		  size_t why_len)
{
	char path[PATH_MAX], temporary[NAME_MAX + 1], final[NAME_MAX + 1], walk_why[512];
	struct path_walk walk;
	int fd = -1, rc;
	size_t done = 0;

	if (!capacity_path(dir, id, path, sizeof(path)) ||
	    snprintf(final, sizeof(final), "%s.json", id->key) >= (int)sizeof(final))
		return say_why(why, why_len, "%s: the path is too long", dir);
	if ((rc = make_dirs(dir)) != 0)
		return say_why(why, why_len, "%s: %s", dir, strerror(-rc));
	/* The directory resolved once and held: the file is made and renamed in it, never by its path again. */
	if ((rc = path_walk(dir, 0, &walk)) != 0)
		return say_why(why, why_len, "%s: %s", dir, strerror(-rc));
	if (walk.fd < 0 || !S_ISDIR(walk.st.st_mode)) {
		path_walk_close(&walk);
		return say_why(why, why_len, "%s: %s", dir, strerror(ENOTDIR));
	}
	if (path_walk_check_write(&walk, walk_why, sizeof(walk_why)) != 0) {
		path_walk_close(&walk);
		return say_why(why, why_len, "%s: %s", dir, walk_why);
	}
	for (unsigned attempt = 0; fd < 0 && attempt < 100; attempt++) {
		snprintf(temporary, sizeof(temporary), ".%.200s.json.%08llx", id->key,
			 (unsigned long long)((monotonic_ns() ^ ((uint64_t)getpid() << 32)) & 0xffffffffu) + attempt);
		fd = openat(walk.fd, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		rc = errno;
		path_walk_close(&walk);
		return say_why(why, why_len, "%s: %s", dir, strerror(rc));
	}
	fchmod(fd, 0644);
	while (done < len) {
		ssize_t wrote = write(fd, text + done, len - done);

		if (wrote < 0 && errno == EINTR)
			continue;
		if (wrote <= 0)
			goto failed;
		done += (size_t)wrote;
	}
	if (fsync(fd) != 0)
		goto failed;
	if (close(fd) != 0) {
		fd = -1;
		goto failed;
	}
	fd = -1;
	if (renameat(walk.fd, temporary, walk.fd, final) != 0)
		goto failed;
	{ /* the rename itself on disk too */
		int dir_fd = openat(walk.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (dir_fd >= 0) {
			fsync(dir_fd);
			close(dir_fd);
		}
	}
	path_walk_close(&walk);
	return 0;
failed:
	rc = errno ? errno : EIO;
	if (fd >= 0)
		close(fd);
	unlinkat(walk.fd, temporary, 0);
	path_walk_close(&walk);
	return say_why(why, why_len, "%s: %s", path, strerror(rc));
}

int capacity_load(const char *dir, dev_t devno, struct bench_result_doc *out, char *path, size_t path_len, char *why,
		  size_t why_len)
{
	struct capacity_identity id;
	char file[PATH_MAX];

	if (capacity_identity(devno, &id, why, why_len) != 0)
		return -1;
	if (!capacity_path(dir, &id, file, sizeof(file)))
		return say_why(why, why_len, "%s: the path is too long", dir);
	if (path)
		snprintf(path, path_len, "%s", file);
	if (access(file, F_OK) != 0 && errno == ENOENT) {
		say_why(why, why_len, "no capacity saved for %s (%s): %s does not exist", id.disk, id.key, file);
		return 1;
	}
	if (bench_result_load(file, out, why, why_len) != 0)
		return -1;
	if (!out->has_capacity || strcmp(out->capacity_key, id.key))
		return say_why(why, why_len, "%s: not the capacity of %s (its key is %s)", file, id.key,
			    out->has_capacity ? out->capacity_key : "missing");
	return 0;
}

/* Whether the directory open as fd has a name ending .json. */
static bool has_json(int fd)
{
	DIR *d = fdopendir(fd);
	struct dirent *e;
	bool found = false;

	if (!d) {
		close(fd);
		return true; /* unread: perhaps one */
	}
	while (!found && (e = readdir(d))) {
		size_t n = strlen(e->d_name);

		found = n > 5 && !strcmp(e->d_name + n - 5, ".json");
	}
	closedir(d);
	return found;
}

bool capacity_none_saved(const char *dir)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static struct {
		char dir[PATH_MAX];
		struct stat st;
		bool known, none;
	} last;
	struct timespec now;
	struct stat st;
	bool none;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR;
	if (fstat(fd, &st) != 0) {
		close(fd);
		return false;
	}
	pthread_mutex_lock(&lock);
	/* (its ctime too: a copy's times set back, rsync -t or touch -d, move it) */
	if (last.known && !strcmp(last.dir, dir) && last.st.st_dev == st.st_dev && last.st.st_ino == st.st_ino &&
	    last.st.st_mtim.tv_sec == st.st_mtim.tv_sec && last.st.st_mtim.tv_nsec == st.st_mtim.tv_nsec &&
	    last.st.st_ctim.tv_sec == st.st_ctim.tv_sec && last.st.st_ctim.tv_nsec == st.st_ctim.tv_nsec) {
		none = last.none;
		pthread_mutex_unlock(&lock);
		close(fd);
		return none;
	}
	pthread_mutex_unlock(&lock);
	none = !has_json(fd);
	clock_gettime(CLOCK_REALTIME, &now);
	pthread_mutex_lock(&lock);
	/*
	 * A directory's mtime moves by the filesystem's clock tick: one changed within the last
	 * second could change again with the same mtime, so it is not taken as known.
	 */
	last.known = strlen(dir) < sizeof(last.dir) && now.tv_sec - st.st_mtim.tv_sec > 1;
	if (last.known) {
		snprintf(last.dir, sizeof(last.dir), "%s", dir);
		last.st = st;
		last.none = none;
	}
	pthread_mutex_unlock(&lock);
	return none;
}

/* x's place between a and b (log2 of each), 0 to 1, held at the ends. */
static double position(double x, double a, double b)
{
	double t;

	if (!(x > a) || !(b > a))
		return 0;
	if (x >= b)
		return 1;
	t = (log2(x) - log2(a)) / (log2(b) - log2(a));
	return t < 0 ? 0 : t > 1 ? 1 : t;
}

/* A pair of cases (QD1 and deep) at a depth: IOPS and bytes/s. */
static bool pair_at(const struct bench_result_doc *capacity, const char *family, const char *deep, bool write,
		    double depth, double *iops, double *bytes_per_s, double *bs)
{
	const struct bench_case *low, *high;
	char name[48];
	double t;

	snprintf(name, sizeof(name), "%s_q1t1_%s", family, write ? "write" : "read");
	low = bench_result_find(capacity, name);
	snprintf(name, sizeof(name), "%s_%s_%s", family, deep, write ? "write" : "read");
	high = bench_result_find(capacity, name);
	if (!low || !high || !(low->iops > 0) || !(high->iops > 0) || !(low->bytes_per_s > 0) ||
	    !(high->bytes_per_s > 0))
		return false;
	t = position(depth, low->qd, high->qd);
	*iops = low->iops + t * (high->iops - low->iops);
	*bytes_per_s = low->bytes_per_s + t * (high->bytes_per_s - low->bytes_per_s);
	*bs = (double)low->bs;
	return true;
}

bool capacity_at(const struct bench_result_doc *capacity, bool write, double size, double depth, double *iops,
		 double *bytes_per_s)
{
	double small_iops, small_bytes, small_bs, large_iops, large_bytes, large_bs, t;

	if (!pair_at(capacity, "rnd4k", "q32t1", write, depth, &small_iops, &small_bytes, &small_bs) ||
	    !pair_at(capacity, "seq1m", "q8t1", write, depth, &large_iops, &large_bytes, &large_bs))
		return false;
	t = position(size, small_bs, large_bs);
	*iops = small_iops + t * (large_iops - small_iops);
	*bytes_per_s = small_bytes + t * (large_bytes - small_bytes);
	return true;
}

double capacity_share(const struct bench_result_doc *capacity, const struct capacity_demand *load)
{
	double share = 0;

	for (int write = 0; write <= 1; write++) {
		double iops, bytes_per_s, by_iops, by_bytes;

		if (!(load->iops[write] > 0) && !(load->bytes_per_s[write] > 0))
			continue;
		if (!capacity_at(capacity, write, load->size[write], load->depth, &iops, &bytes_per_s))
			return NAN;
		by_iops = load->iops[write] / iops;
		by_bytes = load->bytes_per_s[write] / bytes_per_s;
		share += by_iops > by_bytes ? by_iops : by_bytes;
	}
	return 100 * share;
}
