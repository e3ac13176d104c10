/* iolens.c: main(): the subcommand table, and argv[0] dispatch (a link named pcstat runs `iolens pcstat`). */
#include <libgen.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <stdio_ext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/common.h"
#include "cmd/compat.h"
#include "common/util.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "pcstat", cmd_pcstat, "how much of each file is in the page cache, and where" },
	{ "evict", cmd_evict, "drop files from the page cache, and show what really left" },
	{ "warm", cmd_warm, "load files into the page cache (and lock them there)" },
	{ "vstat", cmd_vstat, "per-operation statistics of servers that use libvtrace" },
	{ "stat", cmd_stat, "a live view of cpu, disks, network, memory, pressure and servers (dstat)" },
	{ "doctor", cmd_doctor, "what is wrong with this machine's I/O, worst first, with the numbers that show it" },
	{ "cachestat", cmd_cachestat, "page-cache hits, misses, dirties, evictions and refaults of the system (bcc's cachestat)" },
	{ "cachetop", cmd_cachetop, "page-cache hits and misses per process or per file (bcc's cachetop)" },
	{ "biotop", cmd_biotop, "block I/O and its latency per process or cgroup, and disk (bcc's biotop)" },
	{ "export", cmd_export, "what iolens measures, as Prometheus metrics on /metrics" },
	{ "bench", cmd_bench, "disk throughput, IOPS and latency, block-size sweeps and the knee (fio, dd)" },
	{ "version", cmd_version, "the version, and how each eBPF feature counts on this kernel (--features)" },
	/* Aliases, for links named after the tools people already type. */
	{ "dstat", cmd_stat, NULL },
	{ "vmtouch", cmd_vmtouch, NULL },
	{ "fincore", cmd_fincore, NULL },
};

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static void usage(FILE *stream)
{
	fputs("Usage:\n"
	      " iolens COMMAND [options] [arguments]\n"
	      " iolens COMMAND --help\n"
	      "\n"
	      "See where the I/O time goes: the page cache, the disks, and the servers.\n"
	      "\n"
	      "Commands:\n",
	      stream);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (commands[i].summary)
			fprintf(stream, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fputs("\n"
	      "Options:\n"
	      "  -h, --help     show this help\n"
	      "  -V, --version  show the version\n"
	      "\n"
	      "A link to iolens named after a command runs that command: pcstat FILE is\n"
	      "iolens pcstat FILE; vstat, cachestat and cachetop likewise; dstat is iolens stat.\n"
	      "pcstat also takes classic pcstat's flags (-json, -terse...), and a link named\n"
	      "vmtouch takes vmtouch's (beware: its -L is mlockall, not follow links), and\n"
	      "one named fincore fincore's (its PAGES: resident pages, pcstat's cached).\n"
	      "\n"
	      "Examples:\n"
	      "  iolens pcstat /bin/ls        is ls in the page cache?\n"
	      "  iolens evict big.db          drop a file from the cache, see what stayed\n"
	      "  iolens warm --lock big.db    load a file and keep it resident until Ctrl-C\n"
	      "  iolens vstat 1               what every libvtrace server does, every second\n"
	      "  iolens bench --rw write      where this disk's write throughput saturates\n"
	      "  iolens cachetop              which processes hit and miss the page cache\n"
	      "  iolens biotop -s p99         which processes wait longest for their disks\n",
	      stream);
}

static int run(const struct command *command, const char *prefix, int argc, char **argv)
{
	static char name[64];

	snprintf(name, sizeof(name), "%s%s", prefix, command->name);
	program_name = name;
	argv[0] = name; /* getopt's own messages name the command too */
	return command->run(argc, argv);
}

int main(int argc, char **argv)
{
	const struct command *command;
	char *self = argc > 0 ? basename(argv[0]) : "iolens";

	/* Character classes from the environment, so tables measure UTF-8 names right; numbers
	 * stay in the C locale, so 75.000 never becomes 75,000 in CSV and JSON. */
	setlocale(LC_CTYPE, "");

	/*
	 * A closed standard output would be taken by the next file opened (a test file, an
	 * eBPF map), and what is printed would land there: say so and stop.
	 */
	if (fcntl(STDOUT_FILENO, F_GETFD) < 0 && errno == EBADF) {
		fprintf(stderr, "%s: standard output is closed\n", self);
		return EXIT_FAIL;
	}

	/* One thread writes stdout: skip the stream lock, which costs a lot per padding space. */
	__fsetlocking(stdout, FSETLOCKING_BYCALLER);

	/* Invoked through a link named after a command, or as iolens-COMMAND. */
	if (!strncmp(self, "iolens-", 7) && (command = find_command(self + 7)))
		return run(command, "iolens ", argc, argv);
	if (!strcmp(self, "pcstat") && pcstat_classic_wanted(argc, argv))
		return run(&(struct command){ "pcstat", cmd_pcstat_classic, NULL }, "", argc, argv);
	if ((command = find_command(self)))
		return run(command, "", argc, argv);

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("iolens %s\n", IOLENS_VERSION);
		return EXIT_OK;
	}
	command = find_command(argv[1]);
	if (!command) {
		warn_msg("'%s' is not a command.", printable_name(argv[1]));
		fputs("Try 'iolens --help' for the list.\n", stderr);
		return EXIT_USAGE;
	}
	return run(command, "iolens ", argc - 1, argv + 1);
}
