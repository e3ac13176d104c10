/* SPDX-License-Identifier: GPL-2.0-or-later */
/* compat.h: links named after the peer tools (pcstat, vmtouch, fincore, iostat) that take those tools' own flags. */
#ifndef IOLENS_CMD_COMPAT_H
#define IOLENS_CMD_COMPAT_H

#include <stdbool.h>

/* True when the arguments hold one of classic pcstat's flags, one dash or two (-json, --terse, -pid...). */
bool pcstat_classic_wanted(int argc, char **argv);
/* Classic pcstat: its flags, its text, terse, JSON and histogram outputs. */
int cmd_pcstat_classic(int argc, char **argv);

/* vmtouch's flags and its summary, verbose bars, touch, evict and lock. */
int cmd_vmtouch(int argc, char **argv);

/* util-linux fincore's options and columns (PAGES: resident pages), on cachestat(2). */
int cmd_fincore(int argc, char **argv);

/* sysstat iostat's options, reports (-x, -h, -p...) and JSON, from diskstats and /proc/stat. */
int cmd_iostat(int argc, char **argv);

#endif
