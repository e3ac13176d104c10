/* SPDX-License-Identifier: GPL-2.0-or-later */
/* export.h: the metric families of iolens export that node_exporter and the Prometheus client libraries also have, under iolens's names: filesystems, vmstat, the exporter's own process. */
#ifndef IOLENS_CMD_EXPORT_H
#define IOLENS_CMD_EXPORT_H

#include <regex.h>

#include "collect/filesystems.h"
#include "render/prom.h"

/*
 * iolens_filesystem_*: size, free and available bytes, files and free files of each mounted
 * filesystem, as df counts them, labelled device, fstype and mountpoint; the pseudo ones
 * (filesystem_pseudo) and the mount points mount_points_exclude matches (NULL: none) left
 * out. A mount that does not answer in time gets iolens_filesystem_device_error 1 and no
 * numbers, and is not asked again until the probe left waiting on it has its answer (watch).
 */
void filesystem_metrics(struct prom *p, struct fs_watch *watch, const regex_t *mount_points_exclude);
/* iolens_vmstat_*: the /proc/vmstat counters of paging and refaults, as the kernel counts them. */
void vmstat_metrics(struct prom *p);
/* process_*: the exporter itself, named as client_golang names every Go exporter's. */
void process_metrics(struct prom *p);

#endif
