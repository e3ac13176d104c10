/* SPDX-License-Identifier: MIT */
/* inodes.c: the inodes the kernel knows, each an O_PATH descriptor keyed by st_dev and st_ino, freed when forgotten. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "passthrough.h"

#define FIRST_BUCKETS 1024u

static size_t bucket_of(const struct pt_inodes *inodes, dev_t dev, ino_t ino)
{
	uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15ull ^ (uint64_t)dev * 0xc2b2ae3d27d4eb4full;

	return (size_t)(h >> 17) & (inodes->bucket_count - 1);
}

static void insert(struct pt_inodes *inodes, struct pt_inode *inode)
{
	size_t b = bucket_of(inodes, inode->dev, inode->ino);

	inode->next = inodes->buckets[b];
	inodes->buckets[b] = inode;
	inodes->count++;
}

/* Twice the buckets when chains grow longer than one on average; if memory is short, longer chains do. */
static void grow(struct pt_inodes *inodes)
{
	struct pt_inode **old = inodes->buckets;
	size_t old_count = inodes->bucket_count;
	struct pt_inode **grown = calloc(old_count * 2, sizeof(*grown));

	if (!grown)
		return;
	inodes->buckets = grown;
	inodes->bucket_count = old_count * 2;
	inodes->count = 0;
	for (size_t b = 0; b < old_count; b++)
		for (struct pt_inode *inode = old[b], *next; inode; inode = next) {
			next = inode->next;
			insert(inodes, inode);
		}
	free(old);
}

static struct pt_inode *find(struct pt_inodes *inodes, dev_t dev, ino_t ino)
{
	for (struct pt_inode *inode = inodes->buckets[bucket_of(inodes, dev, ino)]; inode; inode = inode->next)
		if (inode->dev == dev && inode->ino == ino)
			return inode;
	return NULL;
}

static void unlink_inode(struct pt_inodes *inodes, struct pt_inode *gone)
{
	struct pt_inode **link = &inodes->buckets[bucket_of(inodes, gone->dev, gone->ino)];

	while (*link && *link != gone)
		link = &(*link)->next;
	if (*link) {
		*link = gone->next;
		inodes->count--;
	}
}

int pt_inodes_init(struct pt_inodes *inodes, const char *source)
{
	struct stat st;

	memset(inodes, 0, sizeof(*inodes));
	pthread_mutex_init(&inodes->lock, NULL);
	inodes->root.fd = open(source, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (inodes->root.fd < 0)
		return errno;
	if (fstat(inodes->root.fd, &st) != 0) {
		int err = errno;
		close(inodes->root.fd);
		return err;
	}
	inodes->buckets = calloc(FIRST_BUCKETS, sizeof(*inodes->buckets));
	if (!inodes->buckets) {
		close(inodes->root.fd);
		return ENOMEM;
	}
	inodes->bucket_count = FIRST_BUCKETS;
	inodes->root.dev = st.st_dev;
	inodes->root.ino = st.st_ino;
	inodes->root.nlookup = 1;
	insert(inodes, &inodes->root); /* so that a lookup that leads back to the root finds it */
	return 0;
}

void pt_inodes_free(struct pt_inodes *inodes)
{
	for (size_t b = 0; b < inodes->bucket_count; b++)
		for (struct pt_inode *inode = inodes->buckets[b], *next; inode; inode = next) {
			next = inode->next;
			close(inode->fd);
			if (inode != &inodes->root)
				free(inode);
		}
	free(inodes->buckets);
	pthread_mutex_destroy(&inodes->lock);
}

/* The kernel's inode numbers are our pointers, but for the root. */
struct pt_inode *pt_inode(struct passthrough *pt, fuse_ino_t ino)
{
	return ino == FUSE_ROOT_ID ? &pt->inodes.root : (struct pt_inode *)(uintptr_t)ino;
}

static fuse_ino_t ino_of(struct passthrough *pt, struct pt_inode *inode)
{
	return inode == &pt->inodes.root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)inode;
}

int pt_inode_lookup(struct passthrough *pt, struct pt_inode *parent, const char *name, struct fuse_entry_param *e)
{
	struct pt_inodes *inodes = &pt->inodes;
	struct pt_inode *inode;
	int fd, err;

	memset(e, 0, sizeof(*e));
	e->attr_timeout = pt->timeout;
	e->entry_timeout = pt->timeout;
	fd = openat(parent->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno;
	if (fstatat(fd, "", &e->attr, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
		err = errno;
		close(fd);
		return err;
	}

	pthread_mutex_lock(&inodes->lock);
	inode = find(inodes, e->attr.st_dev, e->attr.st_ino);
	if (inode) {
		inode->nlookup++;
		pthread_mutex_unlock(&inodes->lock);
		close(fd); /* the one we hold already names it */
	} else {
		inode = calloc(1, sizeof(*inode));
		if (!inode) {
			pthread_mutex_unlock(&inodes->lock);
			close(fd);
			return ENOMEM;
		}
		*inode = (struct pt_inode){ .fd = fd, .dev = e->attr.st_dev, .ino = e->attr.st_ino, .nlookup = 1 };
		if (inodes->count >= inodes->bucket_count)
			grow(inodes);
		insert(inodes, inode);
		pthread_mutex_unlock(&inodes->lock);
	}
	e->ino = ino_of(pt, inode);
	return 0;
}

void pt_inode_forget(struct passthrough *pt, struct pt_inode *inode, uint64_t nlookup)
{
	struct pt_inodes *inodes = &pt->inodes;

	if (inode == &inodes->root)
		return;
	pthread_mutex_lock(&inodes->lock);
	inode->nlookup = nlookup < inode->nlookup ? inode->nlookup - nlookup : 0;
	if (inode->nlookup == 0) {
		unlink_inode(inodes, inode);
		pthread_mutex_unlock(&inodes->lock);
		close(inode->fd);
		free(inode);
		return;
	}
	pthread_mutex_unlock(&inodes->lock);
}
