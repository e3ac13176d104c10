/* SPDX-License-Identifier: GPL-2.0-or-later */
/* diskstats.c: parses /proc/diskstats and asks sysfs how the devices stack. */
#include "collect/diskstats.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/sysroot.h"
#include "common/util.h"

/* ---- parsing ---------------------------------------------------------------------------- */

/* The fields after the name, in the kernel's order (block/genhd.c, diskstats_show). */
#define FIELDS_MAX 17

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* A decimal number that ends at a blank or at end; false when there is none or it overflows. */
static bool take_number(const char **p, const char *end, uint64_t *out)
{
	const char *at = *p;
	uint64_t value = 0;

	if (at >= end || *at < '0' || *at > '9')
		return false;
	for (; at < end && *at >= '0' && *at <= '9'; at++) {
		unsigned digit = (unsigned)(*at - '0');
		if (value > (UINT64_MAX - digit) / 10)
			return false;
		value = value * 10 + digit;
	}
	if (at < end && !is_blank(*at))
		return false;
	*p = at;
	*out = value;
	return true;
}

static const char *skip_blanks(const char *p, const char *end)
{
	while (p < end && is_blank(*p))
		p++;
	return p;
}

/* One line, [p, end) without its newline, into disk; false when it is not a device line. */
static bool parse_line(const char *p, const char *end, struct disk_stats *disk)
{
	uint64_t major, minor, field[FIELDS_MAX] = {0};
	const char *name;
	size_t name_len;
	unsigned count = 0;

	p = skip_blanks(p, end);
	if (!take_number(&p, end, &major) || major > UINT32_MAX)
		return false;
	p = skip_blanks(p, end);
	if (!take_number(&p, end, &minor) || minor > UINT32_MAX)
		return false;
	p = skip_blanks(p, end);
	for (name = p; p < end && !is_blank(*p) && *p != '\0'; p++)
		;
	name_len = (size_t)(p - name);
	if (name_len == 0 || name_len >= sizeof(disk->name) || (p < end && !is_blank(*p)))
		return false;
	/* The name becomes a path component under /sys/class/block. */
	if ((name_len == 1 && name[0] == '.') || (name_len == 2 && name[0] == '.' && name[1] == '.'))
		return false;
	/* Numbers up to the first thing that is not one: newer kernels may add fields. */
	for (;;) {
		uint64_t value;

		p = skip_blanks(p, end);
		if (!take_number(&p, end, &value))
			break;
		if (count < FIELDS_MAX)
			field[count] = value;
		count++;
	}
	if (count < 11)
		return false;

	memset(disk, 0, sizeof(*disk));
	disk->major = (unsigned)major;
	disk->minor = (unsigned)minor;
	memcpy(disk->name, name, name_len);
	disk->name[name_len] = '\0';
	disk->nfields = count >= 17 ? 17 : count >= 15 ? 15 : 11;
	disk->rd_ios = field[0];
	disk->rd_merges = field[1];
	disk->rd_sectors = field[2];
	disk->rd_ticks = field[3];
	disk->wr_ios = field[4];
	disk->wr_merges = field[5];
	disk->wr_sectors = field[6];
	disk->wr_ticks = field[7];
	disk->in_flight = field[8];
	disk->io_ticks = field[9];
	disk->time_in_queue = field[10];
	if (disk->nfields >= 15) {
		disk->dc_ios = field[11];
		disk->dc_merges = field[12];
		disk->dc_sectors = field[13];
		disk->dc_ticks = field[14];
	}
	if (disk->nfields >= 17) {
		disk->fl_ios = field[15];
		disk->fl_ticks = field[16];
	}
	return true;
}

int diskstats_parse(const char *text, size_t len, struct diskstats *out)
{
	const char *p = text, *end = text + len;
	unsigned capacity = 0, lines = 0;

	*out = (struct diskstats){0};
	if (!text && len)
		return -EINVAL;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));

		if (!eol)
			eol = end;
		if (skip_blanks(p, eol) < eol) {
			lines++;
			if (out->count == capacity) {
				capacity = capacity ? capacity * 2 : 32;
				out->disk = xrealloc(out->disk, capacity * sizeof(*out->disk));
			}
			if (parse_line(p, eol, &out->disk[out->count]))
				out->count++;
			else
				out->skipped++;
		}
		p = eol + 1;
	}
	if (lines > 0 && out->count == 0) {
		diskstats_free(out);
		return -EINVAL;
	}
	out->kind = xcalloc(out->count ? out->count : 1, sizeof(*out->kind));
	return 0;
}

void diskstats_free(struct diskstats *stats)
{
	free(stats->disk);
	free(stats->kind);
	*stats = (struct diskstats){0};
}

void diskstats_copy(struct diskstats *to, const struct diskstats *from)
{
	size_t n = from->count ? from->count : 1;

	*to = *from;
	to->disk = xcalloc(n, sizeof(*to->disk));
	to->kind = xcalloc(n, sizeof(*to->kind));
	if (from->count && from->disk)
		memcpy(to->disk, from->disk, from->count * sizeof(*to->disk));
	if (from->count && from->kind)
		memcpy(to->kind, from->kind, from->count * sizeof(*to->kind));
}

/* diskstats says "cciss/c0d0" where sysfs says "cciss!c0d0". */
static bool same_name(const char *a, const char *b)
{
	for (;; a++, b++) {
		if (*a != *b && !((*a == '/' || *a == '!') && (*b == '/' || *b == '!')))
			return false;
		if (!*a)
			return true;
	}
}

const struct disk_stats *diskstats_find(const struct diskstats *stats, const char *name)
{
	unsigned i;

	if (!stats || !name)
		return NULL;
	for (i = 0; i < stats->count; i++)
		if (same_name(stats->disk[i].name, name))
			return &stats->disk[i];
	return NULL;
}

/* ---- sysfs ------------------------------------------------------------------------------ */

/* What sysfs says once and for all of a device (major:minor under that name). */
struct known_device {
	char name[sizeof(((struct disk_stats *)0)->name)];
	unsigned major, minor;
	bool partition, removable;
	char whole[sizeof(((struct disk_kind *)0)->whole)]; /* a partition's disk */
	bool stacked, has_holders; /* as last looked at: again when the devices change */
	bool restacks;             /* a driver whose slaves can change while it exists (dm, md, bcache) */
};

/* The devices of the last read, in its order, so the next one finds them at the same index. */
static struct known_device *known;
static unsigned known_count;
static char *known_root; /* the sysroot they and the open file belong to */
static struct sysroot_file proc_diskstats = SYSROOT_FILE("/proc/diskstats");

/*
 * "/sys/class/block/NAME/what" (or the directory itself for ""), NAME spelled as sysfs does; false
 * when it does not fit.
 */
static bool sysfs_path(char *buf, size_t size, const char *name, const char *what)
{
	static const char prefix[] = "/sys/class/block/";
	size_t start = sizeof(prefix) - 1, name_len = strlen(name), i;
	int n = snprintf(buf, size, "%s%s%s%s", prefix, name, *what ? "/" : "", what);

	if (n < 0 || (size_t)n >= size)
		return false;
	for (i = start; i < start + name_len; i++)
		if (buf[i] == '/')
			buf[i] = '!';
	return true;
}

static bool sysfs_exists(const char *name, const char *what)
{
	char path[256];

	return sysfs_path(path, sizeof(path), name, what) && sysroot_exists(path);
}

/* slaves/ and holders/ hold one symlink per device below or above. */
static bool sysfs_dir_has_entries(const char *name, const char *what)
{
	char path[256];

	return sysfs_path(path, sizeof(path), name, what) && sysroot_dir_has_entries(path);
}

static bool sysfs_is_one(const char *name, const char *what)
{
	char path[256], value[32];

	return sysfs_path(path, sizeof(path), name, what) && sysroot_read_string(path, value, sizeof(value)) == 0 &&
	       strcmp(value, "1") == 0;
}

static const struct known_device *known_lookup(const struct disk_stats *disk, unsigned hint)
{
	unsigned i;

	if (hint < known_count && known[hint].major == disk->major && known[hint].minor == disk->minor &&
	    strcmp(known[hint].name, disk->name) == 0)
		return &known[hint];
	for (i = 0; i < known_count; i++)
		if (known[i].major == disk->major && known[i].minor == disk->minor &&
		    strcmp(known[i].name, disk->name) == 0)
			return &known[i];
	return NULL;
}

/*
 * A partition's disk: the device whose sysfs directory holds the partition's (sda holds sda1,
 * nvme0n1 holds nvme0n1p1). Only devices whose name starts the partition's are asked.
 */
static void whole_disk_of(const struct diskstats *stats, const char *partition, char *out, size_t size)
{
	char spelled[sizeof(stats->disk[0].name)];

	out[0] = '\0';
	snprintf(spelled, sizeof(spelled), "%s", partition);
	for (char *c = strchr(spelled, '/'); c; c = strchr(c, '/'))
		*c = '!'; /* as sysfs spells cciss/c0d0p1 */
	for (unsigned i = 0; i < stats->count; i++) {
		const char *disk = stats->disk[i].name;
		size_t len = strlen(disk);
		if (len < strlen(partition) && !strncmp(disk, partition, len) && sysfs_exists(disk, spelled)) {
			snprintf(out, size, "%s", disk);
			return;
		}
	}
}

/* The block drivers of /proc/devices by major, read again only when a major is not in it. */
static struct block_driver *drivers;
static unsigned driver_count;

void diskstats_forget(void)
{
	free(known);
	known = NULL;
	known_count = 0;
	free(drivers);
	drivers = NULL;
	driver_count = 0;
}

/* A new root means another tree: the open file and what was learnt of the devices belong to the old one. */
static void follow_root(void)
{
	const char *root = sysroot_get();

	if (known_root && strcmp(known_root, root) == 0)
		return;
	sysroot_file_close(&proc_diskstats);
	diskstats_forget();
	free(known_root);
	known_root = xstrdup(root);
}

/*
 * The block drivers of the "Block devices:" part of /proc/devices ("  7 loop"): a loop
 * device is stacked on a file whether it is bound now or was before (its counters stay
 * after it is detached), which loop/ in sysfs does not say.
 */
unsigned diskstats_block_drivers(const char *text, size_t len, struct block_driver **out)
{
	const char *p = text, *end = text + len;
	struct block_driver *list = NULL;
	unsigned count = 0;
	bool block = false;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		size_t line = (size_t)((eol ? eol : end) - p);
		if (line >= 14 && !memcmp(p, "Block devices:", 14)) {
			block = true;
		} else if (line >= 18 && !memcmp(p, "Character devices:", 18)) {
			block = false;
		} else if (block) {
			unsigned number = 0, digits = 0;
			const char *q = p, *stop = p + line;
			while (q < stop && *q == ' ')
				q++;
			for (; q < stop && *q >= '0' && *q <= '9' && digits < 7; q++, digits++)
				number = number * 10 + (unsigned)(*q - '0');
			if (digits && q < stop && *q == ' ') {
				struct block_driver *d;
				size_t n = (size_t)(stop - q - 1);
				list = xrealloc(list, (count + 1) * sizeof(*list));
				d = &list[count++];
				d->major = number;
				if (n >= sizeof(d->name))
					n = sizeof(d->name) - 1;
				memcpy(d->name, q + 1, n);
				d->name[n] = '\0';
			}
		}
		p = eol ? eol + 1 : end;
	}
	*out = list;
	return count;
}

static void drivers_read(void)
{
	static struct sysroot_file devices = SYSROOT_FILE("/proc/devices");
	const char *text;
	size_t len;

	free(drivers);
	drivers = NULL;
	driver_count = 0;
	if (sysroot_file_read(&devices, &text, &len) == 0)
		driver_count = diskstats_block_drivers(text, len, &drivers);
}

/* The driver of a major ("loop", "device-mapper", "md", "virtblk"), or "" when /proc/devices does not say. */
static const char *driver_of(unsigned major, bool *reread)
{
	for (int pass = 0; pass < 2; pass++) {
		for (unsigned i = 0; i < driver_count; i++)
			if (drivers[i].major == major)
				return drivers[i].name;
		if (*reread)
			break;
		drivers_read(); /* a driver loaded since: once a call */
		*reread = true;
	}
	return "";
}

/*
 * Fills kind[] and keeps, for the next call, what sysfs said. Whether a device is a
 * partition or removable does not change while it exists. How devices stack is looked at
 * again when the set of devices changes (a loop device bound, a dm or md device made), and
 * on every call for the drivers whose slaves can change under the same device (a dm table
 * loaded) or that /proc/devices does not name: not every device on every sample, which
 * would cost more than all the rest.
 */
static void fill_kinds(struct diskstats *stats)
{
	struct known_device *now = xcalloc(stats->count ? stats->count : 1, sizeof(*now));
	unsigned i, now_count = 0;
	bool changed = stats->count != known_count, reread = false;

	for (i = 0; i < stats->count && !changed; i++)
		changed = !known_lookup(&stats->disk[i], i);
	for (i = 0; i < stats->count; i++) {
		const struct disk_stats *disk = &stats->disk[i];
		struct disk_kind *kind = &stats->kind[i];
		const struct known_device *seen = known_lookup(disk, i);
		const char *driver = "";
		bool restacks;

		if (seen) {
			kind->in_sysfs = true;
			kind->partition = seen->partition;
			kind->removable = seen->removable;
			memcpy(kind->whole, seen->whole, sizeof(kind->whole));
			restacks = seen->restacks;
		} else {
			kind->partition = sysfs_exists(disk->name, "partition");
			if (kind->partition)
				whole_disk_of(stats, disk->name, kind->whole, sizeof(kind->whole));
			kind->removable = sysfs_is_one(disk->name, "removable");
			driver = driver_of(disk->major, &reread);
			/* A driver not named in /proc/devices is not known to keep still either. */
			restacks = !*driver || !strcmp(driver, "device-mapper") || !strcmp(driver, "md") ||
				   !strcmp(driver, "bcache");
			/*
			 * Looked at last: a device going away meanwhile is not remembered with
			 * answers read from nothing.
			 */
			kind->in_sysfs = sysfs_exists(disk->name, "");
		}
		if (seen && !changed && !restacks) {
			kind->stacked = seen->stacked;
			kind->has_holders = seen->has_holders;
		} else {
			/* A partition has no slaves and no loop/ of its own; dm or md may hold it. */
			if (seen)
				driver = driver_of(disk->major, &reread);
			kind->stacked = !kind->partition &&
			    (!strcmp(driver, "loop") || sysfs_exists(disk->name, "loop") ||
			     sysfs_dir_has_entries(disk->name, "slaves"));
			kind->has_holders = sysfs_dir_has_entries(disk->name, "holders");
		}
		if (kind->in_sysfs) {
			struct known_device *keep = &now[now_count++];

			snprintf(keep->name, sizeof(keep->name), "%s", disk->name);
			keep->major = disk->major;
			keep->minor = disk->minor;
			keep->partition = kind->partition;
			keep->removable = kind->removable;
			memcpy(keep->whole, kind->whole, sizeof(keep->whole));
			keep->stacked = kind->stacked;
			keep->has_holders = kind->has_holders;
			keep->restacks = restacks;
		}
		kind->in_total = kind->in_sysfs && !kind->partition && !kind->stacked;
	}
	free(known);
	known = now;
	known_count = now_count;
}

int diskstats_read(struct diskstats *out)
{
	const char *text;
	size_t len;
	int err;

	*out = (struct diskstats){0};
	follow_root();
	err = sysroot_file_read(&proc_diskstats, &text, &len);
	if (err)
		return err;
	err = diskstats_parse(text, len, out);
	if (err)
		return err;
	fill_kinds(out);
	return 0;
}
