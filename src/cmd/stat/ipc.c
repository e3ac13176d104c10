/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ipc.c: iolens stat's group ipc (--ipc): "sysv ipc". */
#include "cmd/stat_group.h"

enum { MSG, SEM, SHM };
static const struct mon_column columns[] = {
	[MSG] = { "msg", "msg", "", MON_DECIMAL, 3, 10 },
	[SEM] = { "sem", "sem", "", MON_DECIMAL, 3, 10 },
	[SHM] = { "shm", "shm", "", MON_DECIMAL, 3, 10 },
};

static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	(void)then;
	(void)seconds;
	(void)since_boot;
	set_same(g, MSG, (double)now->ipc.msg_queues);
	set_same(g, SEM, (double)now->ipc.sem_arrays);
	set_same(g, SHM, (double)now->ipc.shm_segments);
	if (!(now->have & SYS_IPC))
		all_unknown(g);
}

const struct stat_group group_ipc = {
	.rank = 21,
	.plugins = { "ipc" },
	.section = GROUP_DSTAT,
	.title = "sysv ipc",
	.key = "ipc",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_IPC,
	.compute = compute,
};
