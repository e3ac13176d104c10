/* SPDX-License-Identifier: GPL-2.0-or-later */
/* iolens.c: main(): the subcommand table, and argv[0] dispatch (a link named pcstat runs `iolens pcstat`). */
#include <libgen.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <stdio_ext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/command.h"
#include "cmd/compat.h"
#include "common/util.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "pcstat", cmd_pcstat, "how much of each file is in the page cache (pcstat, fincore)" },
	{ "evict", cmd_evict, "drop files from the page cache, see what left (vmtouch -e)" },
	{ "warm", cmd_warm, "load files into the page cache, or lock them (vmtouch -t, -l)" },
	{ "cachestat", cmd_cachestat, "page-cache hits and misses of the system (bcc's cachestat)" },
	{ "cachetop", cmd_cachetop, "... per process, file or cgroup (bcc's cachetop)" },
	{ "biotop", cmd_biotop, "block I/O and its latency per process (bcc's biotop)" },
	{ "stat", cmd_stat, "a live view of the machine (dstat, iostat -x, vmstat)" },
	{ "bench", cmd_bench, "what a disk can do, and where it saturates (fio, dd)" },
	{ "vstat", cmd_vstat, "what libvtrace servers are doing, op by op, and hangs" },
	{ "doctor", cmd_doctor, "what is wrong with the machine's I/O, worst first" },
	{ "record", cmd_record, "keep what the machine did, to look back at (sar, atop -w)" },
	{ "export", cmd_export, "all of it as Prometheus metrics (node_exporter)" },
	{ "version", cmd_version, "the version, and the eBPF features this kernel has" },
	/* Aliases, for links named after the tools people already type. */
	{ "dstat", cmd_stat, NULL },
	{ "vmtouch", cmd_vmtouch, NULL },
	{ "fincore", cmd_fincore, NULL },
	{ "iostat", cmd_iostat, NULL },
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
	      "Links named pcstat, vmtouch, fincore, dstat, iostat, vstat, cachestat and\n"
	      "cachetop run those commands, with their classic options; see iolens(1).\n"
	      "\n"
	      "Examples:\n"
	      "  iolens doctor                what is wrong, after five seconds of looking\n"
	      "  iolens pcstat /bin/ls        is ls in the page cache?\n"
	      "  iolens cachetop              which processes hit and miss the page cache\n"
	      "  iolens stat -x --latency     iostat -x, with read and write latency\n"
	      "\n"
	      "Each command's --help says more; man iolens-COMMAND has all of it.\n",
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
