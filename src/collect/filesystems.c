/* filesystems.c: the mounted filesystems' usage as df counts it, asked in a child process (common/bounded.c) so that a hung mount is said, never waited on. */
#include "collect/filesystems.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "common/bounded.h"
#include "common/util.h"

bool filesystem_pseudo(const char *type)
{
	static const char *const pseudo[] = { "proc", "sysfs", "cgroup", "cgroup2", "devpts", "mqueue", "debugfs",
					      "tracefs", "securityfs", "pstore", "bpf", "configfs", "fusectl",
					      "binfmt_misc", "hugetlbfs", "autofs", "rpc_pipefs", "nsfs", "efivarfs",
					      "selinuxfs", "squashfs", "iso9660", "erofs", "overlay", "devtmpfs", "ramfs" };

	for (size_t i = 0; i < sizeof(pseudo) / sizeof(pseudo[0]); i++)
		if (!strcmp(type, pseudo[i]))
			return true;
	return false;
}

static void probe_in_child(void *arg)
{
	struct fs_probe *p = arg;

	p->rc = stat(p->dir, &p->st) == 0 && statvfs(p->dir, &p->vfs) == 0 ? 0 : -errno;
}

int filesystem_probe(struct fs_probe *probe)
{
	return bounded_call(probe_in_child, probe, sizeof(*probe), BOUNDED_FS_MS);
}

int filesystem_probe_watched(struct fs_watch *watch, struct fs_probe *probe)
{
	size_t i;
	pid_t child;
	int rc;

	for (i = 0; i < watch->count && strcmp(watch->stuck[i].dir, probe->dir); i++)
		;
	if (i < watch->count) {
		pid_t got = waitpid(watch->stuck[i].child, NULL, WNOHANG);

		if (got == 0)
			return -ETIMEDOUT; /* still stuck: asking again would only add a child stuck beside it */
		free(watch->stuck[i].dir); /* ended (or not ours any more): asked again below */
		watch->stuck[i] = watch->stuck[--watch->count];
	}
	rc = bounded_call_keep(probe_in_child, probe, sizeof(*probe), BOUNDED_FS_MS, &child);
	if (rc == -ETIMEDOUT && child > 0) {
		watch->stuck = xrealloc(watch->stuck, (watch->count + 1) * sizeof(*watch->stuck));
		watch->stuck[watch->count].dir = xstrdup(probe->dir);
		watch->stuck[watch->count++].child = child;
	}
	return rc;
}

void fs_watch_free(struct fs_watch *watch)
{
	for (size_t i = 0; i < watch->count; i++)
		free(watch->stuck[i].dir);
	free(watch->stuck);
	*watch = (struct fs_watch){0};
}
