/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_procfs.c: the /proc parsers and readers against recorded trees (vm1: this machine, old-2.6:
 * a hand-made old kernel), bad input, and the live system.
 */
#include "unit.h"

#include <errno.h>
#include <time.h>
#include <unistd.h>

#include "collect/procfs.h"
#include "collect/sysroot.h"

#define VM1 "tests/fixtures/procfs/vm1"
#define OLD "tests/fixtures/procfs/old-2.6"
#define UNKNOWN PROCFS_UNKNOWN
#define KIB 1024ull

static void use_root(const char *root)
{
	assert_int_equal(sysroot_set(root), 0);
}

/* The text in a buffer of exactly its length, with no NUL after it: ASan sees a parser reading on. */
static char *exact_copy(const char *text, size_t *len)
{
	char *copy;

	*len = strlen(text);
	copy = malloc(*len ? *len : 1);
	assert_non_null(copy);
	memcpy(copy, text, *len);
	return copy;
}

static void assert_times(const struct cpu_times *t, uint64_t user, uint64_t nice, uint64_t system, uint64_t idle,
			 uint64_t iowait, uint64_t irq, uint64_t softirq, uint64_t steal, uint64_t guest,
			 uint64_t guest_nice)
{
	assert_true(t->user == user);
	assert_true(t->nice == nice);
	assert_true(t->system == system);
	assert_true(t->idle == idle);
	assert_true(t->iowait == iowait);
	assert_true(t->irq == irq);
	assert_true(t->softirq == softirq);
	assert_true(t->steal == steal);
	assert_true(t->guest == guest);
	assert_true(t->guest_nice == guest_nice);
}

static const struct irq_line *find_irq(const struct interrupts *irqs, const char *name)
{
	for (unsigned i = 0; i < irqs->count; i++)
		if (!strcmp(irqs->line[i].name, name))
			return &irqs->line[i];
	fail_msg("no interrupt line %s", name);
	return NULL;
}

static const struct netdev_stats *find_dev(const struct netdev *net, const char *name)
{
	for (unsigned i = 0; i < net->count; i++)
		if (!strcmp(net->dev[i].name, name))
			return &net->dev[i];
	return NULL;
}

/* ---- vm1: this machine (Linux 6.18, 2 cpus), recorded with sockets, locks, IPC and a swap file in use ---- */

static void test_vm1_procstat(void **state)
{
	struct procstat stat;
	(void)state;

	use_root(VM1);
	assert_int_equal(procstat_read(&stat), 0);
	assert_times(&stat.total, 355033, 0, 104381, 988126, 10544, 0, 1743, 1222, 0, 0);
	assert_int_equal(stat.ncpu, 2);
	assert_true(stat.cpu_present[0] && stat.cpu_present[1]);
	assert_times(&stat.cpu[0], 231688, 0, 53085, 439716, 4629, 0, 521, 536, 0, 0);
	assert_times(&stat.cpu[1], 123345, 0, 51295, 548410, 5914, 0, 1222, 685, 0, 0);
	assert_int_equal(stat.intr, 33959317);
	assert_int_equal(stat.ctxt, 86763383);
	assert_int_equal(stat.btime, 1795996398);
	assert_int_equal(stat.processes, 261928);
	assert_int_equal(stat.procs_running, 1);
	assert_int_equal(stat.procs_blocked, 0);
	procstat_free(&stat);
	assert_null(stat.cpu);
	procstat_free(&stat); /* twice is harmless */
}

static void test_vm1_meminfo(void **state)
{
	struct meminfo m;
	(void)state;

	use_root(VM1);
	assert_int_equal(meminfo_read(&m), 0);
	assert_true(m.mem_total == 24684092 * KIB);
	assert_true(m.mem_free == 23933864 * KIB);
	assert_true(m.mem_available == 24349900 * KIB);
	assert_true(m.buffers == 48652 * KIB);
	assert_true(m.cached == 564916 * KIB);
	assert_true(m.swap_cached == 0);
	assert_true(m.active == 273976 * KIB);
	assert_true(m.inactive == 345304 * KIB);
	assert_true(m.active_file == 273004 * KIB);
	assert_true(m.inactive_file == 331704 * KIB);
	assert_true(m.mlocked == 10272 * KIB);
	assert_true(m.swap_total == 65532 * KIB);
	assert_true(m.swap_free == 65532 * KIB);
	assert_true(m.dirty == 724 * KIB);
	assert_true(m.writeback == 0);
	assert_true(m.anon_pages == 17624 * KIB);
	assert_true(m.mapped == 15476 * KIB);
	assert_true(m.shmem == 8856 * KIB);
	assert_true(m.slab == 65028 * KIB);
	assert_true(m.sreclaimable == 43184 * KIB);
	assert_true(m.sunreclaim == 21844 * KIB);
	assert_true(m.page_tables == 1876 * KIB);
	assert_true(m.commit_limit == 12407576 * KIB);
	assert_true(m.committed_as == 71848 * KIB);
}

static void test_vm1_vmstat(void **state)
{
	struct vmstat v;
	(void)state;

	use_root(VM1);
	assert_int_equal(vmstat_read(&v), 0);
	assert_int_equal(v.pgpgin, 11546161);
	assert_int_equal(v.pgpgout, 6298624);
	assert_int_equal(v.pswpin, 0);
	assert_int_equal(v.pswpout, 0);
	assert_int_equal(v.pgfault, 96786116);
	assert_int_equal(v.pgmajfault, 3674);
	assert_int_equal(v.pgalloc, 102938828); /* dma, dma32, movable and device are 0 */
	assert_int_equal(v.pgfree, 104125645);
	assert_int_equal(v.pgsteal_file, 0);
	assert_int_equal(v.pgscan_file, 0);
	assert_int_equal(v.workingset_refault_file, 0);
	assert_int_equal(v.workingset_refault_anon, 0);
	assert_int_equal(v.nr_file_pages, 153392);
	assert_int_equal(v.nr_dirty, 181);
	assert_int_equal(v.nr_writeback, 0);
}

static void test_vmstat_refaults(void **state)
{
	static const char since_5_9[] = "pgpgin 5\nworkingset_refault_anon 7\nworkingset_refault_file 11\n";
	static const char before_5_9[] = "pgpgin 5\nworkingset_refault 13\n";
	struct vmstat v;
	(void)state;

	assert_int_equal(vmstat_parse(since_5_9, strlen(since_5_9), &v), 0);
	assert_int_equal(v.workingset_refault_anon, 7);
	assert_int_equal(v.workingset_refault_file, 11);
	/* Before 5.9 the one count was of file pages; anonymous refaults were not counted. */
	assert_int_equal(vmstat_parse(before_5_9, strlen(before_5_9), &v), 0);
	assert_int_equal(v.workingset_refault_file, 13);
	assert_true(v.workingset_refault_anon == PROCFS_UNKNOWN);
}

static void test_proc_io(void **state)
{
	static const char text[] = "rchar: 1234567\nwchar: 89\nsyscr: 10\nsyscw: 2\nread_bytes: 65536\n"
				   "write_bytes: 8192\ncancelled_write_bytes: 0\n";
	struct proc_io io;
	(void)state;

	assert_int_equal(proc_io_parse(text, strlen(text), &io), 0);
	assert_int_equal(io.rchar, 1234567);
	assert_int_equal(io.read_bytes, 65536);
	assert_int_equal(io.write_bytes, 8192);
	/* Any order; a field missing, or not a number, is refused. */
	assert_int_equal(proc_io_parse("write_bytes: 1\nread_bytes: 2\nrchar: 3", 37, &io), 0);
	assert_int_equal(io.rchar, 3);
	assert_int_equal(proc_io_parse("rchar: 1\nread_bytes: 2\n", 23, &io), -EINVAL);
	assert_int_equal(proc_io_parse("rchar: x\nread_bytes: 2\nwrite_bytes: 3\n", 38, &io), -EINVAL);
	assert_int_equal(proc_io_parse("rchar: 1 2\nread_bytes: 2\nwrite_bytes: 3\n", 40, &io), -EINVAL);
	assert_int_equal(proc_io_parse("", 0, &io), -EINVAL);
}

static void test_proc_task(void **state)
{
	/* A name with a space and a parenthesis, as a thread may give itself; 52 fields. */
	const char *text =
	    "4242 (my (odd) name) D 4200 4242 4200 0 -1 4194560 100 0 0 0 17 23 0 0 20 0 1 0 "
	    "123456 2000000 300 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 9 0 0 0 0 0 0 0 0 0 0\n";
	const char *status = "Name:\tx\nState:\tD (disk sleep)\nvoluntary_ctxt_switches:\t40\n"
			     "nonvoluntary_ctxt_switches:\t2\n";
	struct proc_task task;
	uint64_t switches;
	(void)state;

	assert_int_equal(proc_task_parse(text, strlen(text), &task), 0);
	assert_int_equal(task.pid, 4242);
	assert_string_equal(task.comm, "my (odd) name");
	assert_int_equal(task.state, 'D');
	assert_int_equal(task.ppid, 4200);
	assert_int_equal(task.utime, 17);
	assert_int_equal(task.stime, 23);
	assert_int_equal(task.blkio_ticks, 9);
	assert_int_equal(task.start_time, 123456);
	assert_int_equal(task.vsize, 2000000);
	assert_int_equal(task.rss, 300);
	/* An older kernel's shorter line: no delay accounting field. */
	assert_int_equal(proc_task_parse("7 (sh) S 1 7 7 0 -1 0 0 0 0 0 5 6", 33, &task), 0);
	assert_int_equal(task.stime, 6);
	assert_true(task.blkio_ticks == PROCFS_UNKNOWN);
	assert_true(task.start_time == PROCFS_UNKNOWN && task.vsize == PROCFS_UNKNOWN && task.rss == PROCFS_UNKNOWN);
	/* Cut before stime, no name, a state of two letters, a bad pid: refused. */
	assert_int_equal(proc_task_parse("7 (sh) S 1 7 7 0 -1 0 0 0 0 0 5", 31, &task), -EINVAL);
	assert_int_equal(proc_task_parse("7 sh S 1 7 7 0 -1 0 0 0 0 0 5 6", 31, &task), -EINVAL);
	assert_int_equal(proc_task_parse("7 (sh) SS 1 7 7 0 -1 0 0 0 0 0 5 6", 34, &task), -EINVAL);
	/* The state is a letter: a NUL there (found by fuzz_procfs) or a digit is not one. */
	assert_int_equal(proc_task_parse("7 (sh) \0 1 7 7 0 -1 0 0 0 0 0 5 6", 34, &task), -EINVAL);
	assert_int_equal(proc_task_parse("7 (sh) 5 1 7 7 0 -1 0 0 0 0 0 5 6", 33, &task), -EINVAL);
	assert_int_equal(proc_task_parse("x (sh) S 1 7 7 0 -1 0 0 0 0 0 5 6", 33, &task), -EINVAL);
	assert_int_equal(proc_task_parse("7 (sh", 5, &task), -EINVAL);
	assert_int_equal(proc_task_parse("", 0, &task), -EINVAL);

	assert_int_equal(proc_switches_parse(status, strlen(status), &switches), 0);
	assert_int_equal(switches, 42);
	assert_int_equal(proc_switches_parse("voluntary_ctxt_switches:\t40\n", 28, &switches), -EINVAL);
	assert_int_equal(
	    proc_switches_parse("voluntary_ctxt_switches: x\nnonvoluntary_ctxt_switches: 1\n", 57, &switches), -EINVAL);
}

static int ids_of(const char *text, int pid_here, struct proc_ids *ids)
{
	return proc_ids_parse(text, strlen(text), pid_here, ids);
}

/* /proc/PID/status's ids, as the vtrace readers check a segment's writer by them. */
static void test_proc_ids(void **state)
{
	static const char status[] = "Name:\tvtload\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4242\n"
				     "Uid:\t1000\t1001\t1002\t1003\nGid:\t100\t100\t100\t100\n"
				     "NSpid:\t4242\t17\t1\nNSpgid:\t4242\t17\t1\n";
	struct proc_ids ids;
	(void)state;

	assert_int_equal(ids_of(status, 4242, &ids), 0);
	assert_int_equal(ids.ns_pid, 1); /* the innermost namespace's: the pid it knows itself by */
	assert_int_equal(ids.uid[0], 1000);
	assert_int_equal(ids.uid[1], 1001);
	assert_int_equal(ids.uid[3], 1003);
	/* Before 4.1, no NSpid: the pid here. */
	assert_int_equal(ids_of("Uid:\t0\t0\t0\t0\n", 77, &ids), 0);
	assert_int_equal(ids.ns_pid, 77);
	/* No Uid line, three uids, a uid past 32 bits, an empty or bad NSpid: refused. */
	assert_int_equal(ids_of("NSpid:\t5\n", 5, &ids), -EINVAL);
	assert_int_equal(ids_of("Uid:\t0\t0\t0\n", 5, &ids), -EINVAL);
	assert_int_equal(ids_of("Uid:\t4294967296\t0\t0\t0\n", 5, &ids), -EINVAL);
	assert_int_equal(ids_of("Uid:\t0\t0\t0\t0\nNSpid:\n", 5, &ids), -EINVAL);
	assert_int_equal(ids_of("Uid:\t0\t0\t0\t0\nNSpid:\t5\t-1\n", 5, &ids), -EINVAL);
	assert_int_equal(ids_of("", 5, &ids), -EINVAL);
	/* SigIgn: the ignored signals, in hex (SIGCHLD is bit 16); 0 without the line. */
	assert_int_equal(ids_of("Uid:\t0\t0\t0\t0\nSigIgn:\t0000000000010004\n", 5, &ids), 0);
	assert_int_equal(ids.signals_ignored, 0x10004);
	assert_int_equal(ids_of("Uid:\t0\t0\t0\t0\n", 5, &ids), 0);
	assert_int_equal(ids.signals_ignored, 0);
	assert_int_equal(ids_of("Uid:\t0\t0\t0\t0\nSigIgn:\t00x1\n", 5, &ids), -EINVAL);
	assert_int_equal(ids_of("Uid:\t0\t0\t0\t0\nSigIgn:\n", 5, &ids), -EINVAL);
	assert_int_equal(ids_of("Uid:\t0\t0\t0\t0\nSigIgn:\t1 2\n", 5, &ids), -EINVAL);
}

static void test_vm1_loadavg_uptime(void **state)
{
	struct loadavg load;
	double seconds;
	(void)state;

	use_root(VM1);
	assert_int_equal(loadavg_read(&load), 0);
	assert_float_equal(load.load1, 0.02, 1e-9);
	assert_float_equal(load.load5, 0.42, 1e-9);
	assert_float_equal(load.load15, 0.80, 1e-9);
	assert_int_equal(load.running, 1);
	assert_int_equal(load.total, 80);
	assert_int_equal(load.last_pid, 2229);
	assert_int_equal(uptime_read(&seconds), 0);
	assert_float_equal(seconds, 7347.08, 1e-6);
}

static void test_vm1_netdev(void **state)
{
	struct netdev net;
	const struct netdev_stats *dev;
	(void)state;

	use_root(VM1);
	assert_int_equal(netdev_read(&net), 0);
	assert_int_equal(net.count, 4);
	assert_string_equal(net.dev[0].name, "lo");
	assert_string_equal(net.dev[1].name, "ifb0");
	assert_string_equal(net.dev[2].name, "ifb1");
	assert_string_equal(net.dev[3].name, "eth0");
	assert_int_equal(net.dev[0].rx_bytes, 4499);
	assert_int_equal(net.dev[0].tx_packets, 50);
	dev = find_dev(&net, "eth0");
	assert_non_null(dev);
	assert_int_equal(dev->rx_bytes, 38653019);
	assert_int_equal(dev->rx_packets, 1420);
	assert_int_equal(dev->rx_errs, 0);
	assert_int_equal(dev->rx_drop, 0);
	assert_int_equal(dev->tx_bytes, 70880);
	assert_int_equal(dev->tx_packets, 963);
	assert_int_equal(dev->tx_errs, 0);
	assert_int_equal(dev->tx_drop, 0);
	netdev_free(&net);
	assert_null(net.dev);
}

static void test_vm1_swaps(void **state)
{
	struct swaps swaps;
	(void)state;

	use_root(VM1);
	assert_int_equal(swaps_read(&swaps), 0);
	assert_int_equal(swaps.count, 1);
	assert_string_equal(swaps.area[0].name, "/tmp/procfs-rec/swapfile");
	assert_string_equal(swaps.area[0].type, "file");
	assert_true(swaps.area[0].size == 65532 * KIB);
	assert_true(swaps.area[0].used == 0);
	assert_int_equal(swaps.area[0].priority, -2);
	swaps_free(&swaps);
}

static void test_vm1_interrupts(void **state)
{
	struct interrupts irqs;
	const struct irq_line *line;
	(void)state;

	use_root(VM1);
	assert_int_equal(interrupts_read(&irqs), 0);
	assert_int_equal(irqs.count, 35);
	assert_string_equal(irqs.line[0].name, "24");
	assert_int_equal(irqs.line[0].count, 1);
	assert_string_equal(irqs.line[0].what, "IO-APIC 5-edge ACPI:Ged");
	line = find_irq(&irqs, "36");
	assert_int_equal(line->count, 376379);
	assert_string_equal(line->what, "PCI-MSIX-0000:00:02.0 1-edge virtio1-req.0");
	line = find_irq(&irqs, "LOC");
	assert_int_equal(line->count, 1133358 + 1039822);
	assert_string_equal(line->what, "Local timer interrupts");
	assert_int_equal(find_irq(&irqs, "CAL")->count, 28910502);
	assert_int_equal(find_irq(&irqs, "RES")->count, 2485123);
	/* ERR and MIS have a single number and nothing after it */
	line = find_irq(&irqs, "ERR");
	assert_int_equal(line->count, 0);
	assert_string_equal(line->what, "");
	assert_string_equal(irqs.line[irqs.count - 1].name, "PIW");
	assert_string_equal(irqs.line[irqs.count - 1].what, "Posted-interrupt wakeup event");
	interrupts_free(&irqs);
}

static void test_vm1_psi(void **state)
{
	struct psi psi;
	(void)state;

	use_root(VM1);
	assert_int_equal(psi_read("cpu", &psi), 0);
	assert_true(psi.available && psi.some.present && psi.full.present);
	assert_float_equal(psi.some.avg10, 0.0, 1e-9);
	assert_float_equal(psi.some.avg60, 0.03, 1e-9);
	assert_float_equal(psi.some.avg300, 0.97, 1e-9);
	assert_int_equal(psi.some.total_us, 207788071);
	assert_int_equal(psi.full.total_us, 0);
	assert_int_equal(psi_read("io", &psi), 0);
	assert_float_equal(psi.some.avg10, 0.14, 1e-9);
	assert_int_equal(psi.some.total_us, 98199536);
	assert_float_equal(psi.full.avg300, 0.24, 1e-9);
	assert_int_equal(psi.full.total_us, 71000056);
	assert_int_equal(psi_read("memory", &psi), 0);
	assert_true(psi.available);
	assert_int_equal(psi.some.total_us, 0);
	/* this kernel has no /proc/pressure/irq (CONFIG_IRQ_TIME_ACCOUNTING): not measured, not an error */
	assert_int_equal(psi_read("irq", &psi), 0);
	assert_false(psi.available);
	assert_int_equal(psi_read("disk", &psi), -EINVAL);
	assert_int_equal(psi_read(NULL, &psi), -EINVAL);
}

static void test_vm1_sockets(void **state)
{
	struct sockets s;
	(void)state;

	use_root(VM1);
	assert_int_equal(sockets_read(&s), 0);
	/* tcp: the machine's own :2024 and :40001 listening, 2 connected pairs, one TIME_WAIT, FIN_WAIT2 + CLOSE_WAIT;
	 * tcp6: a listener and one connected pair */
	assert_int_equal(s.tcp_listen, 3);
	assert_int_equal(s.tcp_established, 6);
	assert_int_equal(s.tcp_syn, 0);
	assert_int_equal(s.tcp_time_wait, 1);
	assert_int_equal(s.tcp_close, 2);
	assert_int_equal(s.udp_listen, 2);
	assert_int_equal(s.udp_active, 1);
	assert_int_equal(s.raw, 2);
	assert_int_equal(s.unix_stream, 6);
	assert_int_equal(s.unix_datagram, 3);
	assert_int_equal(s.unix_seqpacket, 3);
	assert_int_equal(s.unix_listen, 2); /* not the never-bound stream socket, also St 01 */
	assert_int_equal(s.unix_active, 8);
	assert_int_equal(s.used, 36);
	assert_int_equal(s.tcp_inuse, 8 + 3);
	assert_int_equal(s.udp_inuse, 2 + 1);
	assert_int_equal(s.raw_inuse, 1 + 1);
	assert_int_equal(s.frag_inuse, 0);
}

static void test_vm1_fs_locks_ipc(void **state)
{
	struct fsstat fs;
	struct locks locks;
	struct ipc ipc;
	(void)state;

	use_root(VM1);
	assert_int_equal(fsstat_read(&fs), 0);
	assert_int_equal(fs.files_open, 235);
	assert_int_equal(fs.inodes_used, 25950 - 21491);
	assert_int_equal(fs.aio_nr, 0);
	assert_int_equal(fs.aio_max_nr, 65536);
	/* a read lease, an OFD read lock, POSIX read and write locks with a waiter, a flock */
	assert_int_equal(locks_read(&locks), 0);
	assert_int_equal(locks.posix, 3);
	assert_int_equal(locks.flock, 1);
	assert_int_equal(locks.lease, 1);
	assert_int_equal(locks.read, 3);
	assert_int_equal(locks.write, 2);
	assert_int_equal(locks.blocked, 1);
	assert_int_equal(ipc_read(&ipc), 0);
	assert_int_equal(ipc.msg_queues, 2);
	assert_int_equal(ipc.sem_arrays, 1);
	assert_int_equal(ipc.shm_segments, 3);
}

/* ---- old-2.6: a hand-made 2.6.9-era tree (see its README) --------------------------------------- */

static void test_old_procstat(void **state)
{
	struct procstat stat;
	(void)state;

	use_root(OLD);
	assert_int_equal(procstat_read(&stat), 0);
	/* no steal, guest, guest_nice columns yet: unknown, not 0 */
	assert_times(&stat.total, 2255, 34, 2290, 22625563, 6290, 127, 456, UNKNOWN, UNKNOWN, UNKNOWN);
	/* cpu2 is offline: a hole in the array */
	assert_int_equal(stat.ncpu, 4);
	assert_true(stat.cpu_present[0] && stat.cpu_present[1] && stat.cpu_present[3]);
	assert_false(stat.cpu_present[2]);
	assert_times(&stat.cpu[2], UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN,
		     UNKNOWN);
	assert_times(&stat.cpu[3], 120, 0, 100, 5656984, 203, 0, 1, UNKNOWN, UNKNOWN, UNKNOWN);
	assert_int_equal(stat.intr, 114930548);
	assert_int_equal(stat.btime, 1062191376);
	procstat_free(&stat);
}

static void test_old_meminfo_vmstat(void **state)
{
	struct meminfo m;
	struct vmstat v;
	(void)state;

	use_root(OLD);
	assert_int_equal(meminfo_read(&m), 0);
	assert_true(m.mem_total == 1026276 * KIB);
	assert_true(m.mem_free == 19180 * KIB);
	assert_true(m.cached == 594524 * KIB);
	assert_true(m.swap_total == 2096472 * KIB);
	assert_true(m.committed_as == 960608 * KIB);
	/* MemAvailable came in 3.14, the file LRUs and Mlocked in 2.6.28, Shmem in 2.6.32 ... */
	assert_true(m.mem_available == UNKNOWN);
	assert_true(m.active_file == UNKNOWN);
	assert_true(m.inactive_file == UNKNOWN);
	assert_true(m.mlocked == UNKNOWN);
	assert_true(m.anon_pages == UNKNOWN);
	assert_true(m.shmem == UNKNOWN);
	assert_true(m.sreclaimable == UNKNOWN);
	assert_true(m.sunreclaim == UNKNOWN);

	assert_int_equal(vmstat_read(&v), 0);
	assert_int_equal(v.pgpgin, 3046421);
	assert_int_equal(v.pgalloc, 1234 + 57840119 + 15307);
	assert_int_equal(v.nr_dirty, 210);
	assert_true(v.nr_file_pages == UNKNOWN);
	/* per-zone pgsteal_* mix anon and file: no file-only figure */
	assert_true(v.pgsteal_file == UNKNOWN);
	assert_true(v.pgscan_file == UNKNOWN);
	assert_true(v.workingset_refault_file == UNKNOWN);
}

static void test_old_netdev_swaps(void **state)
{
	struct netdev net;
	struct swaps swaps;
	const struct netdev_stats *eth0;
	(void)state;

	use_root(OLD);
	assert_int_equal(netdev_read(&net), 0);
	assert_int_equal(net.count, 3);
	/* "eth0:3940649674": the count runs into the colon */
	eth0 = find_dev(&net, "eth0");
	assert_non_null(eth0);
	assert_int_equal(eth0->rx_bytes, 3940649674u);
	assert_int_equal(eth0->rx_packets, 3021334);
	assert_int_equal(eth0->rx_errs, 2);
	assert_int_equal(eth0->rx_drop, 17);
	assert_int_equal(eth0->tx_bytes, 1290237815);
	assert_int_equal(eth0->tx_packets, 2210983);
	netdev_free(&net);

	assert_int_equal(swaps_read(&swaps), 0);
	assert_int_equal(swaps.count, 2);
	assert_string_equal(swaps.area[0].name, "/dev/sda2");
	assert_string_equal(swaps.area[0].type, "partition");
	assert_true(swaps.area[0].size == 2096472 * KIB);
	assert_int_equal(swaps.area[0].priority, -1);
	assert_string_equal(swaps.area[1].name, "/var/swap\\040file");
	assert_true(swaps.area[1].used == 1024 * KIB);
	swaps_free(&swaps);
}

static void test_old_interrupts(void **state)
{
	struct interrupts irqs;
	const struct irq_line *line;
	(void)state;

	use_root(OLD);
	assert_int_equal(interrupts_read(&irqs), 0);
	assert_int_equal(irqs.count, 10);
	/* three columns (cpu2 offline), not four */
	line = find_irq(&irqs, "169");
	assert_int_equal(line->count, 1234567 + 100 + 50);
	assert_string_equal(line->what, "IO-APIC-level eth0, uhci_hcd");
	assert_int_equal(find_irq(&irqs, "LOC")->count, 112006127ull + 112006103 + 112006089);
	assert_string_equal(find_irq(&irqs, "NMI")->what, "");
	assert_int_equal(find_irq(&irqs, "MIS")->count, 3);
	interrupts_free(&irqs);
}

static void test_old_missing_files(void **state)
{
	struct psi psi;
	struct sockets s;
	struct fsstat fs;
	struct locks locks;
	struct ipc ipc;
	(void)state;

	use_root(OLD);
	/* no /proc/pressure before 4.20 */
	assert_int_equal(psi_read("cpu", &psi), 0);
	assert_false(psi.available);
	assert_false(psi.some.present);
	/* no IPv6: tcp6, udp6, raw6 and sockstat6 are missing and count nothing */
	assert_int_equal(sockets_read(&s), 0);
	assert_int_equal(s.tcp_listen, 2);
	assert_int_equal(s.tcp_established, 1);
	assert_int_equal(s.tcp_syn, 2);
	assert_int_equal(s.tcp_time_wait, 1);
	assert_int_equal(s.tcp_close, 2); /* LAST_ACK and CLOSING */
	assert_int_equal(s.udp_listen, 2);
	assert_int_equal(s.udp_active, 1);
	assert_int_equal(s.raw, 0);
	assert_int_equal(s.unix_stream, 4);
	assert_int_equal(s.unix_datagram, 3);
	assert_int_equal(s.unix_seqpacket, 0);
	assert_int_equal(s.unix_listen, 2);
	assert_int_equal(s.unix_active, 3);
	assert_int_equal(s.used, 45);
	assert_int_equal(s.tcp_inuse, 6);
	assert_int_equal(s.udp_inuse, 3);
	/* no aio files (as without CONFIG_AIO): unknown */
	assert_int_equal(fsstat_read(&fs), 0);
	assert_int_equal(fs.files_open, 2550);
	assert_int_equal(fs.inodes_used, 35017 - 2716);
	assert_true(fs.aio_nr == UNKNOWN);
	assert_true(fs.aio_max_nr == UNKNOWN);
	/* a lock with two waiters (the second one nested deeper), and a lease being broken */
	assert_int_equal(locks_read(&locks), 0);
	assert_int_equal(locks.posix, 2);
	assert_int_equal(locks.flock, 1);
	assert_int_equal(locks.lease, 1);
	assert_int_equal(locks.read, 2);
	assert_int_equal(locks.write, 2);
	assert_int_equal(locks.blocked, 2);
	assert_int_equal(ipc_read(&ipc), 0);
	assert_int_equal(ipc.msg_queues, 0);
	assert_int_equal(ipc.sem_arrays, 1);
	assert_int_equal(ipc.shm_segments, 2);
}

/* A tree with none of the files: every reader fails with ENOENT or reports unknowns, none crashes. */
static void test_empty_root(void **state)
{
	char *dir = unit_tmpdir();
	struct procstat stat;
	struct meminfo m;
	struct sockets s;
	struct fsstat fs;
	struct ipc ipc;
	struct psi psi;
	struct netdev net;
	double seconds;
	(void)state;

	use_root(dir);
	assert_int_equal(procstat_read(&stat), -ENOENT);
	assert_int_equal(stat.ncpu, 0);
	assert_null(stat.cpu);
	procstat_free(&stat);
	assert_int_equal(meminfo_read(&m), -ENOENT);
	assert_true(m.mem_total == UNKNOWN);
	assert_int_equal(netdev_read(&net), -ENOENT);
	assert_int_equal(net.count, 0);
	assert_int_equal(uptime_read(&seconds), -ENOENT);
	assert_int_equal(psi_read("io", &psi), 0);
	assert_false(psi.available);
	assert_int_equal(sockets_read(&s), 0);
	assert_int_equal(s.tcp_established, 0);
	assert_true(s.used == UNKNOWN && s.tcp_inuse == UNKNOWN && s.frag_inuse == UNKNOWN);
	assert_int_equal(fsstat_read(&fs), 0);
	assert_true(fs.files_open == UNKNOWN && fs.inodes_used == UNKNOWN);
	assert_int_equal(ipc_read(&ipc), 0);
	assert_true(ipc.msg_queues == UNKNOWN && ipc.sem_arrays == UNKNOWN && ipc.shm_segments == UNKNOWN);
	use_root(VM1);
	unit_rmtree(dir);
}

/* The readers keep files open; a new root must not go on reading the old tree. */
static void test_root_change(void **state)
{
	struct meminfo m;
	(void)state;

	use_root(VM1);
	assert_int_equal(meminfo_read(&m), 0);
	assert_true(m.mem_total == 24684092 * KIB);
	use_root(OLD);
	assert_int_equal(meminfo_read(&m), 0);
	assert_true(m.mem_total == 1026276 * KIB);
	use_root(VM1);
	assert_int_equal(meminfo_read(&m), 0);
	assert_true(m.mem_total == 24684092 * KIB);
	procfs_close();
	assert_int_equal(meminfo_read(&m), 0);
	assert_true(m.mem_total == 24684092 * KIB);
}

/* ---- bad input ---------------------------------------------------------------------------------- */

static int run_procstat(const char *text)
{
	struct procstat stat;
	size_t len;
	char *copy = exact_copy(text, &len);
	int rc = procstat_parse(copy, len, &stat);

	if (rc != 0) {
		assert_int_equal(stat.ncpu, 0);
		assert_null(stat.cpu);
		assert_null(stat.cpu_present);
	}
	procstat_free(&stat);
	free(copy);
	return rc;
}

static void test_procstat_malformed(void **state)
{
	struct procstat stat;
	char *huge;
	(void)state;

	assert_int_equal(run_procstat(""), -EINVAL);
	assert_int_equal(run_procstat("intr 1\nctxt 2\n"), -EINVAL);                 /* no cpu line */
	assert_int_equal(run_procstat("cpu  1 2 3\n"), -EINVAL);                     /* fewer than 4 columns */
	assert_int_equal(run_procstat("cpu  1 2 x 4\n"), -EINVAL);
	assert_int_equal(run_procstat("cpu  1 2 3 18446744073709551616\n"), -EINVAL); /* 2^64 */
	assert_int_equal(run_procstat("cpu  1 2 3 -4\n"), -EINVAL);
	assert_int_equal(run_procstat("cpu  1 2 3 4\ncpu0 1 2 3\n"), -EINVAL);
	assert_int_equal(run_procstat("cpu  1 2 3 4\ncpu99999999 1 2 3 4\n"), -EINVAL); /* no such cpu */
	assert_int_equal(run_procstat("cpu  1 2 3 4\ncpu0 1 2 3 4\ncpu0 1 2 3 4\n"), -EINVAL);
	assert_int_equal(run_procstat("cpu  1 2 3 4\nctxt\n"), -EINVAL);
	assert_int_equal(run_procstat("cpu  1 2 3 4\nbtime soon\n"), -EINVAL);
	/* what parses: extra columns, unknown lines, no final newline, the largest number */
	assert_int_equal(run_procstat("cpu  1 2 3 4 5 6 7 8 9 10 11 12\ncpufreq 3\nnew_line x y\n"), 0);
	assert_int_equal(run_procstat("cpu  18446744073709551615 2 3 4"), 0);

	/* only len bytes are read: the 5 after them is not iowait */
	assert_int_equal(procstat_parse("cpu  1 2 3 4 5\n", 12, &stat), 0);
	assert_int_equal(stat.total.idle, 4);
	assert_true(stat.total.iowait == UNKNOWN);
	assert_true(stat.ctxt == UNKNOWN && stat.btime == UNKNOWN && stat.procs_blocked == UNKNOWN);
	assert_int_equal(stat.ncpu, 0);
	procstat_free(&stat);

	/* a high cpu alone: everything below it absent */
	assert_int_equal(procstat_parse("cpu  1 2 3 4\ncpu70 1 2 3 4\n", 27, &stat), 0);
	assert_int_equal(stat.ncpu, 71);
	assert_false(stat.cpu_present[0]);
	assert_true(stat.cpu_present[70]);
	procstat_free(&stat);

	/* a line of a million digits */
	huge = malloc(1000011);
	assert_non_null(huge);
	memcpy(huge, "cpu  1 2 3 ", 11);
	memset(huge + 11, '9', 1000000);
	assert_int_equal(procstat_parse(huge, 1000011, &stat), -EINVAL);
	free(huge);
}

static int run_meminfo(const char *text, struct meminfo *m)
{
	size_t len;
	char *copy = exact_copy(text, &len);
	int rc = meminfo_parse(copy, len, m);

	free(copy);
	return rc;
}

static void test_meminfo_malformed(void **state)
{
	struct meminfo m;
	(void)state;

	assert_int_equal(run_meminfo("", &m), -EINVAL);
	assert_int_equal(run_meminfo("MemFree: 1 kB\n", &m), -EINVAL); /* no MemTotal */
	assert_true(m.mem_free == UNKNOWN);
	assert_int_equal(run_meminfo("MemTotal: 1 MB\n", &m), -EINVAL);
	assert_int_equal(run_meminfo("MemTotal: 1\n", &m), -EINVAL);
	assert_int_equal(run_meminfo("MemTotal: kB\n", &m), -EINVAL);
	assert_int_equal(run_meminfo("MemTotal: 1 kB extra\n", &m), -EINVAL);
	assert_int_equal(run_meminfo("MemTotal: 18014398509481984 kB\n", &m), -EINVAL); /* 2^54 KiB: 2^64 bytes */
	assert_int_equal(run_meminfo("MemTotal: 5 kB\nDirty: -1 kB\n", &m), -EINVAL);
	assert_true(m.mem_total == UNKNOWN);
	/* what parses */
	assert_int_equal(run_meminfo("MemTotal: 18014398509481983 kB", &m), 0);
	assert_true(m.mem_total == 18014398509481983ull * KIB);
	assert_int_equal(run_meminfo("MemTotal:5 kB\nHugePages_Total: 7\nNew(field): x y z\nno colon here\n", &m), 0);
	assert_true(m.mem_total == 5 * KIB);
	assert_true(m.dirty == UNKNOWN);
	assert_true(m.active == UNKNOWN);
}

static int run_vmstat(const char *text, struct vmstat *v)
{
	size_t len;
	char *copy = exact_copy(text, &len);
	int rc = vmstat_parse(copy, len, v);

	free(copy);
	return rc;
}

static void test_vmstat_malformed(void **state)
{
	struct vmstat v;
	(void)state;

	assert_int_equal(run_vmstat("", &v), -EINVAL);
	assert_int_equal(run_vmstat("nr_something 1\n", &v), -EINVAL); /* none of ours */
	assert_int_equal(run_vmstat("pgpgin x\n", &v), -EINVAL);
	assert_int_equal(run_vmstat("pgpgin\n", &v), -EINVAL);
	assert_int_equal(run_vmstat("pgpgin 99999999999999999999\n", &v), -EINVAL);
	assert_int_equal(run_vmstat("pgpgin 1\npgalloc_dma -1\n", &v), -EINVAL);
	assert_true(v.pgpgin == UNKNOWN);
	/* what parses */
	assert_int_equal(run_vmstat("pgpgin 5\nnr_other -3\n", &v), 0);
	assert_int_equal(v.pgpgin, 5);
	assert_true(v.pgpgout == UNKNOWN && v.pgalloc == UNKNOWN);
	/* before 5.9 */
	assert_int_equal(run_vmstat("workingset_refault 42\n", &v), 0);
	assert_int_equal(v.workingset_refault_file, 42);
	assert_int_equal(run_vmstat("workingset_refault_anon 1\nworkingset_refault_file 7\n", &v), 0);
	assert_int_equal(v.workingset_refault_file, 7);
	/* counters wrap, and their sum with them: deltas stay right */
	assert_int_equal(run_vmstat("pgalloc_normal 18446744073709551615\npgalloc_dma 2\n", &v), 0);
	assert_int_equal(v.pgalloc, 1);
}

static void test_loadavg_uptime_malformed(void **state)
{
	static const char *const bad_loads[] = {
		"", "\n", "0.00 0.01 0.05 1/2\n", "0.00 0.01 0.05 12 3\n", "a b c 1/2 3\n", "-1.00 0 0 1/2 3\n",
		"1e3 0 0 1/2 3\n", "0. 0 0 1/2 3\n", ".5 0 0 1/2 3\n", "nan 0 0 1/2 3\n", "inf 0 0 1/2 3\n",
		"0.1234567890123456789 0 0 1/2 3\n", "0 0 0 /2 3\n", "0 0 0 1/ 3\n", "0 0 0 1/2 -3\n",
		"99999999999999999999.5 0 0 1/2 3\n",
	};
	struct loadavg load;
	double seconds;
	size_t len;
	char *copy;
	(void)state;

	for (size_t i = 0; i < sizeof(bad_loads) / sizeof(bad_loads[0]); i++) {
		copy = exact_copy(bad_loads[i], &len);
		assert_int_equal(loadavg_parse(copy, len, &load), -EINVAL);
		free(copy);
	}
	copy = exact_copy("12 1.5 0.25 3/4000 123", &len);
	assert_int_equal(loadavg_parse(copy, len, &load), 0);
	assert_float_equal(load.load1, 12.0, 1e-9);
	assert_float_equal(load.load15, 0.25, 1e-9);
	assert_int_equal(load.total, 4000);
	free(copy);

	assert_int_equal(uptime_parse("", 0, &seconds), -EINVAL);
	assert_int_equal(uptime_parse("abc 1\n", 6, &seconds), -EINVAL);
	assert_int_equal(uptime_parse("-5.00 1\n", 8, &seconds), -EINVAL);
	assert_int_equal(uptime_parse("5 1", 3, &seconds), 0);
	assert_float_equal(seconds, 5.0, 1e-9);
	assert_int_equal(uptime_parse("12.50", 4, &seconds), 0); /* "12.5" */
	assert_float_equal(seconds, 12.5, 1e-9);
}

#define NETDEV_HEADER                                                                                              \
	"Inter-|   Receive                                                |  Transmit\n"                             \
	" face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls "   \
	"carrier compressed\n"

static int run_netdev(const char *text, struct netdev *net)
{
	size_t len;
	char *copy = exact_copy(text, &len);
	int rc = netdev_parse(copy, len, net);

	free(copy);
	if (rc != 0) {
		assert_int_equal(net->count, 0);
		assert_null(net->dev);
	}
	return rc;
}

static void test_netdev_malformed(void **state)
{
	struct netdev net;
	(void)state;

	assert_int_equal(run_netdev(NETDEV_HEADER "  eth0: 1 2 3\n", &net), -EINVAL);
	assert_int_equal(
	    run_netdev(NETDEV_HEADER "  lo: 1 2 3 4 5 6 7 8 9 10 11 12\n   : 1 2 3 4 5 6 7 8 9 10 11 12\n", &net),
	    -EINVAL);
	assert_int_equal(run_netdev("a b: 1 2 3 4 5 6 7 8 9 10 11 12\n", &net), -EINVAL);
	assert_int_equal(run_netdev("a-name-much-longer-than-ifnamsiz-allows: 1 2 3 4 5 6 7 8 9 10 11 12\n", &net),
			 -EINVAL);
	assert_int_equal(run_netdev("lo: 1 2 3 4 5 6 7 8 99999999999999999999 10 11 12\n", &net), -EINVAL);
	assert_int_equal(run_netdev("lo: 1 2 3 4 5 6 7 8 x 10 11 12\n", &net), -EINVAL);
	/* what parses: no device at all, twelve columns and no newline */
	assert_int_equal(run_netdev("", &net), 0);
	assert_int_equal(net.count, 0);
	assert_int_equal(run_netdev(NETDEV_HEADER, &net), 0);
	assert_int_equal(net.count, 0);
	assert_int_equal(run_netdev("lo:1 2 3 4 5 6 7 8 9 10 11 12", &net), 0);
	assert_int_equal(net.count, 1);
	assert_int_equal(net.dev[0].tx_drop, 12);
	netdev_free(&net);
}

static int run_swaps(const char *text, struct swaps *swaps)
{
	size_t len;
	char *copy = exact_copy(text, &len);
	int rc = swaps_parse(copy, len, swaps);

	free(copy);
	if (rc != 0)
		assert_null(swaps->area);
	return rc;
}

static void test_swaps_malformed(void **state)
{
	struct swaps swaps;
	char text[512];
	(void)state;

#define SWAPS_HEADER "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
	assert_int_equal(run_swaps("", &swaps), -EINVAL);
	assert_int_equal(run_swaps("/dev/sda2 partition 100 0 -1\n", &swaps), -EINVAL); /* no header */
	assert_int_equal(run_swaps(SWAPS_HEADER "/dev/sda2 partition 100 0\n", &swaps), -EINVAL);
	assert_int_equal(run_swaps(SWAPS_HEADER "/dev/sda2 partition 100 0 -1 extra\n", &swaps), -EINVAL);
	assert_int_equal(run_swaps(SWAPS_HEADER "/dev/sda2 partition 18014398509481984 0 -1\n", &swaps), -EINVAL);
	assert_int_equal(run_swaps(SWAPS_HEADER "/dev/sda2 partition 100 0 2147483648\n", &swaps), -EINVAL);
	assert_int_equal(run_swaps(SWAPS_HEADER "/dev/sda2 partition 100 0 --1\n", &swaps), -EINVAL);
	assert_int_equal(run_swaps(SWAPS_HEADER "/dev/sda2 a-type-of-swap-too-long 100 0 -1\n", &swaps), -EINVAL);
	assert_int_equal(run_swaps(SWAPS_HEADER "/dev/sda2 partition 1 0 -1\n/dev/sdb x\n", &swaps), -EINVAL);
	/* what parses: no swap; the lowest priority; a name longer than the field, cut */
	assert_int_equal(run_swaps(SWAPS_HEADER, &swaps), 0);
	assert_int_equal(swaps.count, 0);
	assert_int_equal(run_swaps(SWAPS_HEADER "/dev/sda2 partition 100 0 -2147483648\n\n", &swaps), 0);
	assert_int_equal(swaps.count, 1);
	assert_int_equal(swaps.area[0].priority, -2147483647 - 1);
	swaps_free(&swaps);
	memset(text, 0, sizeof(text));
	strcpy(text, SWAPS_HEADER "/");
	memset(text + strlen(text), 'a', 300);
	strcat(text, " file 8 4 -3");
	assert_int_equal(run_swaps(text, &swaps), 0);
	assert_int_equal(strlen(swaps.area[0].name), 255);
	assert_true(swaps.area[0].used == 4 * KIB);
	swaps_free(&swaps);
}

static int run_interrupts(const char *text, struct interrupts *irqs)
{
	size_t len;
	char *copy = exact_copy(text, &len);
	int rc = interrupts_parse(copy, len, irqs);

	free(copy);
	if (rc != 0)
		assert_null(irqs->line);
	return rc;
}

static void test_interrupts_malformed(void **state)
{
	struct interrupts irqs;
	char text[1024];
	(void)state;

#define IRQ_HEADER "           CPU0       CPU1       \n"
	assert_int_equal(run_interrupts("", &irqs), -EINVAL);
	assert_int_equal(run_interrupts("\n  0: 1 2 timer\n", &irqs), -EINVAL);       /* no header */
	assert_int_equal(run_interrupts("  0: 1 2 timer\n", &irqs), -EINVAL);         /* no header */
	assert_int_equal(run_interrupts(IRQ_HEADER "garbage 1 2\n", &irqs), -EINVAL); /* no colon */
	assert_int_equal(run_interrupts(IRQ_HEADER "  0:\n", &irqs), -EINVAL);        /* no count */
	assert_int_equal(run_interrupts(IRQ_HEADER "  0: x y\n", &irqs), -EINVAL);
	assert_int_equal(run_interrupts(IRQ_HEADER " :  1 2\n", &irqs), -EINVAL);
	assert_int_equal(run_interrupts(IRQ_HEADER "  0: 99999999999999999999 1 timer\n", &irqs), -EINVAL);
	assert_int_equal(run_interrupts(IRQ_HEADER "  0: 18446744073709551615 1 timer\n", &irqs), -EINVAL);
	/* what parses: more numbers than cpus (ARM's hwirq after the chip), a glued count, a long line */
	assert_int_equal(run_interrupts(IRQ_HEADER " 11:  5  6  GICv3  27 Level  arch_timer\nErr:0\n\n", &irqs), 0);
	assert_int_equal(irqs.count, 2);
	assert_int_equal(irqs.line[0].count, 11);
	assert_string_equal(irqs.line[0].what, "GICv3 27 Level arch_timer");
	assert_string_equal(irqs.line[1].name, "Err");
	assert_int_equal(irqs.line[1].count, 0);
	interrupts_free(&irqs);
	/* a chip that prints nothing leaves the hwirq right after the counts: no third cpu */
	assert_int_equal(run_interrupts(IRQ_HEADER " 12:  5  6  7 Level  foo\n", &irqs), 0);
	assert_int_equal(irqs.line[0].count, 11);
	assert_string_equal(irqs.line[0].what, "7 Level foo");
	interrupts_free(&irqs);
	strcpy(text, IRQ_HEADER "a-very-long-name-for-an-interrupt-line-indeed: 1 2 ");
	for (int i = 0; i < 40; i++)
		strcat(text, "dev-number-x, ");
	assert_int_equal(run_interrupts(text, &irqs), 0);
	assert_int_equal(strlen(irqs.line[0].name), 31);
	assert_int_equal(strlen(irqs.line[0].what), 127);
	assert_int_equal(irqs.line[0].count, 3);
	interrupts_free(&irqs);
}

static int run_psi(const char *text, struct psi *psi)
{
	size_t len;
	char *copy = exact_copy(text, &len);
	int rc = psi_parse(copy, len, psi);

	free(copy);
	if (rc != 0)
		assert_false(psi->available);
	return rc;
}

static void test_psi_malformed(void **state)
{
	struct psi psi;
	(void)state;

	assert_int_equal(run_psi("", &psi), -EINVAL);
	assert_int_equal(run_psi("other avg10=0.00\n", &psi), -EINVAL);
	assert_int_equal(run_psi("some avg10=0.00 avg60=0.00 avg300=0.00\n", &psi), -EINVAL); /* no total */
	assert_int_equal(run_psi("some avg10=x avg60=0.00 avg300=0.00 total=1\n", &psi), -EINVAL);
	assert_int_equal(run_psi("some avg10 avg60=0.00 avg300=0.00 total=1\n", &psi), -EINVAL);
	assert_int_equal(run_psi("some avg10=0.00 avg60=0.00 avg300=0.00 total=-1\n", &psi), -EINVAL);
	assert_int_equal(run_psi("some avg10=0.00 avg60=0.00 avg300=0.00 total=1\nfull avg10=1\n", &psi), -EINVAL);
	/* before 5.13 the cpu file had only "some"; irq has only "full"; keys to come are passed over */
	assert_int_equal(run_psi("some avg10=1.50 avg60=0.00 avg300=0.00 total=9", &psi), 0);
	assert_true(psi.available && psi.some.present);
	assert_false(psi.full.present);
	assert_float_equal(psi.some.avg10, 1.5, 1e-9);
	assert_int_equal(run_psi("full avg10=1.00 avg60=2.00 avg300=3.00 total=4 avg1800=0.50\n", &psi), 0);
	assert_false(psi.some.present);
	assert_float_equal(psi.full.avg300, 3.0, 1e-9);
	assert_int_equal(psi.full.total_us, 4);
}

#define TCP_HEADER "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"

static int run_sockets(int (*parse)(const char *, size_t, struct sockets *), const char *text, struct sockets *s)
{
	size_t len;
	char *copy = exact_copy(text, &len);
	int rc = parse(copy, len, s);

	free(copy);
	return rc;
}

static void test_sockets_malformed(void **state)
{
	static const struct sockets zero;
	struct sockets s = {0};
	(void)state;

	assert_int_equal(run_sockets(sockets_parse_tcp, "", &s), -EINVAL);
	assert_int_equal(run_sockets(sockets_parse_tcp, "   0: 0100007F:0016 00000000:0000 0A\n", &s), -EINVAL);
	assert_int_equal(run_sockets(sockets_parse_tcp, TCP_HEADER "garbage\n", &s), -EINVAL);
	assert_int_equal(run_sockets(sockets_parse_tcp, TCP_HEADER "   0: 0100007F:0016\n", &s), -EINVAL);
	assert_int_equal(run_sockets(sockets_parse_tcp, TCP_HEADER "   0: 0100007F:0016 00000000:0000 ZZ\n", &s),
			 -EINVAL);
	assert_int_equal(run_sockets(sockets_parse_tcp, TCP_HEADER "   0: 0100007F:0016 00000000:0000 0A0\n", &s),
			 -EINVAL);
	assert_int_equal(run_sockets(sockets_parse_tcp, TCP_HEADER "   x: 0100007F:0016 00000000:0000 0A\n", &s),
			 -EINVAL);
	assert_int_equal(run_sockets(sockets_parse_tcp, TCP_HEADER "   0: 0100007F 00000000:0000 0A\n", &s), -EINVAL);
	/* a good line then a bad one: nothing added */
	assert_int_equal(run_sockets(sockets_parse_tcp,
				     TCP_HEADER "   0: 0100007F:0016 00000000:0000 0A\n   1: 0100007F:0016 "
						"00000000:0000\n",
				     &s),
			 -EINVAL);
	assert_int_equal(run_sockets(sockets_parse_udp, "", &s), -EINVAL);
	assert_int_equal(run_sockets(sockets_parse_raw, "junk\n", &s), -EINVAL);
	assert_int_equal(run_sockets(sockets_parse_unix, "", &s), -EINVAL);
	assert_int_equal(run_sockets(sockets_parse_unix, "0000000000000000: 00000002 0 0 0001 01 1\n", &s), -EINVAL);
	assert_int_equal(run_sockets(sockets_parse_sockstat, "", &s), -EINVAL);
	assert_int_equal(run_sockets(sockets_parse_sockstat, "sockets: used\n", &s), -EINVAL);
	assert_int_equal(run_sockets(sockets_parse_sockstat, "TCP: inuse x\n", &s), -EINVAL);
	assert_int_equal(run_sockets(sockets_parse_sockstat, "TCP: orphan 1\n", &s), -EINVAL);
	assert_int_equal(run_sockets(sockets_parse_sockstat, "NEW: inuse 1\n", &s), -EINVAL);
	assert_memory_equal(&s, &zero, sizeof(s));

	/* what parses: tables with only a header, states to come, and the shortest lines */
	assert_int_equal(run_sockets(sockets_parse_tcp, TCP_HEADER, &s), 0);
	assert_int_equal(
	    run_sockets(sockets_parse_tcp,
			TCP_HEADER "   0: 0100007F:0016 00000000:0000 0A\n\n   1: 0:0 0:0 0D\n   2: 0:0 0:0 ff", &s),
	    0);
	assert_int_equal(s.tcp_listen, 1);
	/* the two add up */
	assert_int_equal(run_sockets(sockets_parse_tcp, TCP_HEADER "   0: 0100007F:0016 00000000:0000 0a\n", &s), 0);
	assert_int_equal(s.tcp_listen, 2);
	assert_int_equal(run_sockets(sockets_parse_raw, TCP_HEADER "  1: 0:0 0:0 07\n  2: 0:0 0:0 01\n", &s), 0);
	assert_int_equal(s.raw, 2);
	/* a unix socket's path with a newline in it: the rest of the path is no socket */
	assert_int_equal(run_sockets(sockets_parse_unix,
				     "Num       RefCount Protocol Flags    Type St Inode Path\n"
				     "0000000000000000: 00000002 00000000 00010000 0001 01 12 /tmp/a\n"
				     "b 0000000000000000: 00000002 00000000 00010000 0001 01 12\n"
				     "0000000000000000: 00000002 00000000 00000000 0002 03 13\n"
				     "0000000000000000: 00000002 00000000 00000000 0001 01 14\n"
				     "00000000: 2 0 0 0007 03",
				     &s),
			 0);
	/* a stream socket never bound is St 01 as a listener is: only the flag tells them apart */
	assert_int_equal(s.unix_stream, 2);
	assert_int_equal(s.unix_listen, 1);
	assert_int_equal(s.unix_datagram, 1);
	assert_int_equal(s.unix_active, 1);
	assert_int_equal(
	    run_sockets(sockets_parse_sockstat, "TCP6: inuse 4\nUDPLITE6: inuse 1\nFRAG6: inuse 2 memory 0", &s), 0);
	assert_int_equal(s.tcp_inuse, 4);
	assert_int_equal(s.frag_inuse, 2);
	assert_int_equal(s.udp_inuse, 0);
}

static int run_locks(const char *text, struct locks *locks)
{
	size_t len;
	char *copy = exact_copy(text, &len);
	int rc = locks_parse(copy, len, locks);

	free(copy);
	return rc;
}

/* Mount points with a space and a backslash in them, a FUSE mount over another, lines the kernel never writes. */
static void test_mountinfo(void **state)
{
	static const char text[] =
		"22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
		"40 22 0:45 / /mnt/with\\040space rw - fuse.x src rw,user_id=0\n"
		"41 22 0:46 / /mnt/back\\134slash rw - tmpfs tmpfs rw\n"
		"42 22 0:47 / /mnt/stacked rw - tmpfs tmpfs rw\n"
		"43 42 0:48 / /mnt/stacked rw - fuse.y src rw\n";
	struct mountinfo mounts;
	unsigned major = 9, minor = 9;
	size_t len;
	char *copy = exact_copy(text, &len);
	(void)state;

	assert_int_equal(mountinfo_parse(copy, len, &mounts), 0);
	assert_int_equal(mounts.count, 5);
	assert_string_equal(mounts.mount[1].dir, "/mnt/with space");
	assert_string_equal(mounts.mount[2].dir, "/mnt/back\\slash");
	assert_string_equal(mounts.mount[0].type, "ext4"); /* after the separator, past the optional fields */
	assert_string_equal(mounts.mount[1].type, "fuse.x");
	assert_string_equal(mounts.mount[4].type, "fuse.y");
	assert_ptr_equal(mountinfo_find(&mounts, "/mnt/stacked"), &mounts.mount[4]); /* the one on top */
	assert_null(mountinfo_find(&mounts, "/mnt"));
	assert_true(mountinfo_device(&mounts, "/", &major, &minor));
	assert_int_equal(major, 8);
	assert_int_equal(minor, 1);
	assert_true(mountinfo_device(&mounts, "/mnt/with space", &major, &minor));
	assert_int_equal(minor, 45);
	assert_true(mountinfo_device(&mounts, "/mnt/stacked", &major, &minor)); /* the one on top */
	assert_int_equal(minor, 48);
	assert_false(mountinfo_device(&mounts, "/mnt", &major, &minor));
	mountinfo_free(&mounts);
	free(copy);
	/* No separator (no kernel writes that): a mount of no known type. */
	copy = exact_copy("22 1 8:1 / / rw\n23 22 0:5 / /x rw -\n", &len);
	assert_int_equal(mountinfo_parse(copy, len, &mounts), 0);
	assert_true(mounts.count == 2 && !strcmp(mounts.mount[0].type, "") && !strcmp(mounts.mount[1].type, ""));
	mountinfo_free(&mounts);
	free(copy);

	for (const char *const *bad = (const char *const[]){ "22 1 8:1 /\n", "22 1 8-1 / /\n", "22 1 :1 / /\n",
							     "22 1 8: / /\n", "22 1 99999999999:1 / /\n", NULL };
	     *bad; bad++) {
		copy = exact_copy(*bad, &len);
		assert_int_equal(mountinfo_parse(copy, len, &mounts), -EINVAL);
		assert_int_equal(mounts.count, 0);
		free(copy);
	}
}

static void test_locks_ipc_numbers_malformed(void **state)
{
	struct locks locks;
	uint64_t values[3];
	(void)state;

	assert_int_equal(run_locks("garbage\n", &locks), -EINVAL);
	assert_int_equal(run_locks("1: POSIX\n", &locks), -EINVAL);
	assert_int_equal(run_locks("1: POSIX ADVISORY\n", &locks), -EINVAL);
	assert_int_equal(run_locks("1: ->\n", &locks), -EINVAL);
	assert_int_equal(run_locks("x: POSIX  ADVISORY  WRITE 1 08:01:2 0 EOF\n", &locks), -EINVAL);
	assert_int_equal(run_locks(":\n", &locks), -EINVAL);
	assert_int_equal(run_locks("1: POSIX ADVISORY WRITE 1 08:01:2 0 EOF\n2:\n", &locks), -EINVAL);
	assert_int_equal(locks.posix, 0);
	/* what parses: no locks; kinds and accesses from older and newer kernels */
	assert_int_equal(run_locks("", &locks), 0);
	assert_int_equal(locks.posix + locks.flock + locks.lease + locks.blocked, 0);
	assert_int_equal(run_locks("1: FLOCK  MSNFS     RW    1 08:01:2 0 EOF\n"
				   "2: DELEG  ACTIVE    READ  1 08:01:3 0 EOF\n"
				   "3: ACCESS ADVISORY  UNLCK 1 08:01:4 0 EOF\n"
				   "4: UNKNOWN UNKNOWN  WRITE 1 <none>:0 0 EOF\n"
				   "4:  -> FLOCK  ADVISORY  WRITE 7 08:01:5 0 EOF",
				   &locks),
			 0);
	assert_int_equal(locks.flock, 1);
	assert_int_equal(locks.lease, 1);
	assert_int_equal(locks.posix, 1);
	assert_int_equal(locks.read, 2);
	assert_int_equal(locks.write, 2);
	assert_int_equal(locks.blocked, 1);

	assert_int_equal(ipc_count_lines("", 0), 0);
	assert_int_equal(ipc_count_lines("  key shmid\n", 12), 0);
	assert_int_equal(ipc_count_lines("  key shmid\n 0 1\n\n   \n 0 2", 26), 2);
	assert_int_equal(ipc_count_lines("  key shmid\n 0 1\n 0 2\n", 17), 1); /* only len bytes */

	assert_int_equal(procfs_parse_numbers("169\t0\t2466177\n", 14, values, 3), 3);
	assert_int_equal(values[2], 2466177);
	assert_int_equal(procfs_parse_numbers("169\t0\t2466177\n", 14, values, 2), 2);
	assert_int_equal(procfs_parse_numbers("", 0, values, 3), 0);
	assert_int_equal(procfs_parse_numbers("1 x", 3, values, 3), -EINVAL);
	assert_int_equal(procfs_parse_numbers("1\n2\n", 4, values, 3), 2);
	assert_int_equal(procfs_parse_numbers("-1", 2, values, 3), -EINVAL);
}

/* ---- the live system ------------------------------------------------------------------------------- */

static void test_live(void **state)
{
	struct procstat stat;
	struct meminfo m;
	struct vmstat v;
	struct netdev net;
	struct interrupts irqs;
	struct sockets s;
	struct fsstat fs;
	struct locks locks;
	struct ipc ipc;
	struct swaps swaps;
	struct loadavg load;
	struct psi psi;
	double seconds, phys;
	unsigned present = 0;
	(void)state;

	use_root("/");
	assert_int_equal(procstat_read(&stat), 0);
	assert_int_equal(uptime_read(&seconds), 0);
	for (unsigned i = 0; i < stat.ncpu; i++)
		present += stat.cpu_present[i];
	assert_int_equal(present, sysconf(_SC_NPROCESSORS_ONLN));
	assert_true(stat.ncpu <= (unsigned)sysconf(_SC_NPROCESSORS_CONF));
	assert_true(stat.total.user != UNKNOWN && stat.total.idle > 0);
	assert_true(stat.total.steal != UNKNOWN); /* any kernel since 2.6.11 */
	assert_true(stat.ctxt != UNKNOWN && stat.processes > 0 && stat.procs_running >= 1);
	assert_true(llabs((long long)stat.btime - (long long)(time(NULL) - (time_t)seconds)) <= 60);
	procstat_free(&stat);

	assert_int_equal(meminfo_read(&m), 0);
	phys = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
	assert_true(m.mem_total != UNKNOWN);
	assert_true((double)m.mem_total > phys * 0.99 && (double)m.mem_total < phys * 1.01);
	assert_true(m.mem_free <= m.mem_total && m.mem_available != UNKNOWN && m.mem_available <= m.mem_total);
	assert_true(m.active_file != UNKNOWN && m.cached != UNKNOWN);

	assert_int_equal(vmstat_read(&v), 0);
	assert_true(v.pgpgin != UNKNOWN && v.pgfault > 0 && v.pgalloc != UNKNOWN && v.pgalloc > 0);
	assert_true(v.nr_file_pages != UNKNOWN && v.nr_file_pages * (uint64_t)sysconf(_SC_PAGESIZE) <= m.mem_total);

	assert_int_equal(netdev_read(&net), 0);
	assert_non_null(find_dev(&net, "lo"));
	netdev_free(&net);

	/* the others read too, with nothing to pin down but their sanity */
	assert_int_equal(loadavg_read(&load), 0);
	assert_true(load.running >= 1 && load.total >= load.running);
	assert_int_equal(interrupts_read(&irqs), 0);
	assert_true(irqs.count > 0);
	interrupts_free(&irqs);
	assert_int_equal(swaps_read(&swaps), 0);
	swaps_free(&swaps);
	assert_int_equal(psi_read("io", &psi), 0);
	assert_int_equal(sockets_read(&s), 0);
	assert_true(s.used != UNKNOWN);
	assert_int_equal(fsstat_read(&fs), 0);
	assert_true(fs.files_open != UNKNOWN && fs.files_open > 0);
	assert_int_equal(locks_read(&locks), 0);
	assert_int_equal(ipc_read(&ipc), 0);
	/* a second sample reuses the open files */
	assert_int_equal(meminfo_read(&m), 0);
	assert_true(m.mem_total != UNKNOWN);
}

static int teardown(void **state)
{
	(void)state;
	procfs_close();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vm1_procstat),
		cmocka_unit_test(test_vm1_meminfo),
		cmocka_unit_test(test_vm1_vmstat),
		cmocka_unit_test(test_vmstat_refaults),
		cmocka_unit_test(test_proc_io),
		cmocka_unit_test(test_proc_task),
		cmocka_unit_test(test_proc_ids),
		cmocka_unit_test(test_vm1_loadavg_uptime),
		cmocka_unit_test(test_vm1_netdev),
		cmocka_unit_test(test_vm1_swaps),
		cmocka_unit_test(test_vm1_interrupts),
		cmocka_unit_test(test_vm1_psi),
		cmocka_unit_test(test_vm1_sockets),
		cmocka_unit_test(test_vm1_fs_locks_ipc),
		cmocka_unit_test(test_old_procstat),
		cmocka_unit_test(test_old_meminfo_vmstat),
		cmocka_unit_test(test_old_netdev_swaps),
		cmocka_unit_test(test_old_interrupts),
		cmocka_unit_test(test_old_missing_files),
		cmocka_unit_test(test_empty_root),
		cmocka_unit_test(test_root_change),
		cmocka_unit_test(test_procstat_malformed),
		cmocka_unit_test(test_meminfo_malformed),
		cmocka_unit_test(test_vmstat_malformed),
		cmocka_unit_test(test_loadavg_uptime_malformed),
		cmocka_unit_test(test_netdev_malformed),
		cmocka_unit_test(test_swaps_malformed),
		cmocka_unit_test(test_interrupts_malformed),
		cmocka_unit_test(test_psi_malformed),
		cmocka_unit_test(test_sockets_malformed),
		cmocka_unit_test(test_locks_ipc_numbers_malformed),
		cmocka_unit_test(test_mountinfo),
		cmocka_unit_test(test_live),
	};
	return cmocka_run_group_tests(tests, NULL, teardown);
}
