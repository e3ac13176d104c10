/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz_procfs.c: libFuzzer target that feeds each input to every /proc parser of collect/procfs.h. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collect/procfs.h"
#include "collect/sysroot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A name the parser filled must end inside its field. */
static void check_name(const char *name, size_t size)
{
	if (!memchr(name, '\0', size))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct procstat stat;
	struct meminfo memory;
	struct vmstat vm;
	struct loadavg load;
	struct netdev net;
	struct swaps swaps;
	struct interrupts irqs;
	struct psi psi;
	struct sockets sockets = {0};
	struct locks locks;
	struct mountinfo mounts;
	struct proc_io io;
	struct proc_task task;
	uint64_t switches;
	uint64_t numbers[4];
	double seconds;

	/* The input has no NUL after it: ASan stops any parser that reads past size. */
	if (procstat_parse(text, size, &stat) == 0) {
		if (stat.ncpu > 65536 || (stat.ncpu > 0 && (!stat.cpu || !stat.cpu_present)))
			abort();
		for (unsigned i = 0; i < stat.ncpu; i++)
			if (!stat.cpu_present[i] && stat.cpu[i].user != PROCFS_UNKNOWN)
				abort();
	} else if (stat.ncpu != 0 || stat.cpu || stat.cpu_present) {
		abort();
	}
	procstat_free(&stat);

	if (meminfo_parse(text, size, &memory) == 0 && memory.mem_total == PROCFS_UNKNOWN)
		abort();
	vmstat_parse(text, size, &vm);
	if (proc_io_parse(text, size, &io) == 0) {
		/* The estimate from nothing to these counters, and back: never more hits than reads. */
		struct proc_io_sample before = { .pid = 1, .start_time = 7 }, after = before;
		struct proc_io_delta delta;

		after.io = io;
		if (!proc_io_delta(&before, &after, &delta) || delta.hit_pages > delta.read_pages)
			abort();
		if (proc_io_delta(&after, &before, &delta) !=
		    (io.rchar == 0 && io.read_bytes == 0 && io.write_bytes == 0))
			abort();
	}
	{
		/* A /proc entry's name: a pid only when all digits. */
		char name[64];
		size_t len = size < sizeof(name) - 1 ? size : sizeof(name) - 1;
		pid_t pid;

		memcpy(name, text, len);
		name[len] = '\0';
		pid = proc_pid_name(name);
		if (pid < 0 || (pid && strspn(name, "0123456789") != strlen(name)))
			abort();
	}
	if (proc_task_parse(text, size, &task) == 0) {
		check_name(task.comm, sizeof(task.comm));
		if (task.pid <= 0 || !task.state)
			abort();
	}
	proc_switches_parse(text, size, &switches);
	struct proc_ids ids;
	if (proc_ids_parse(text, size, 1, &ids) == 0 && ids.ns_pid <= 0)
		abort();
	loadavg_parse(text, size, &load);
	uptime_parse(text, size, &seconds);

	if (netdev_parse(text, size, &net) == 0)
		for (unsigned i = 0; i < net.count; i++)
			check_name(net.dev[i].name, sizeof(net.dev[i].name));
	else if (net.dev || net.count)
		abort();
	netdev_free(&net);

	if (swaps_parse(text, size, &swaps) == 0)
		for (unsigned i = 0; i < swaps.count; i++) {
			check_name(swaps.area[i].name, sizeof(swaps.area[i].name));
			check_name(swaps.area[i].type, sizeof(swaps.area[i].type));
		}
	swaps_free(&swaps);

	if (interrupts_parse(text, size, &irqs) == 0)
		for (unsigned i = 0; i < irqs.count; i++) {
			check_name(irqs.line[i].name, sizeof(irqs.line[i].name));
			check_name(irqs.line[i].what, sizeof(irqs.line[i].what));
		}
	interrupts_free(&irqs);

	if (psi_parse(text, size, &psi) == 0 && (!psi.available || (!psi.some.present && !psi.full.present)))
		abort();

	sockets_parse_tcp(text, size, &sockets);
	sockets_parse_udp(text, size, &sockets);
	sockets_parse_unix(text, size, &sockets);
	sockets_parse_raw(text, size, &sockets);
	sockets_parse_sockstat(text, size, &sockets);

	locks_parse(text, size, &locks);
	if (mountinfo_parse(text, size, &mounts) == 0)
		mountinfo_free(&mounts);
	if (ipc_count_lines(text, size) > size)
		abort();
	if (procfs_parse_numbers(text, size, numbers, 4) > 4)
		abort();
	return 0;
}
