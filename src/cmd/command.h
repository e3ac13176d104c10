/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * command.h: what the commands share: their entry points (the command table), --help and --version;
 * and what the file commands (pcstat, evict, warm) share: walk options, messages, the file table.
 */
#ifndef IOLENS_CMD_COMMAND_H
#define IOLENS_CMD_COMMAND_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "collect/files.h"
#include "render/out.h"

/* Every subcommand: iolens CMD ARGS... runs cmd_CMD(argc, argv), argv[0] "iolens CMD" (or the link's name). */
int cmd_pcstat(int argc, char **argv);
int cmd_evict(int argc, char **argv);
int cmd_warm(int argc, char **argv);
int cmd_vstat(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_cachestat(int argc, char **argv);
int cmd_cachetop(int argc, char **argv);
int cmd_biotop(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_version(int argc, char **argv);

enum {
	COMMON_OPT_VERSION = 0x1100,
	COMMON_OPT_HELP,
	COMMON_OPT_HELP_ALL,
};
#define COMMON_LONG_OPTIONS \
	{ "help", no_argument, NULL, 'h' }, \
	{ "help-all", no_argument, NULL, COMMON_OPT_HELP_ALL }, \
	{ "version", no_argument, NULL, 'V' }

/*
 * --help: TEXT, a screen at most (usage, the options people use, two examples), then where
 * the rest is (--help-all, the man page iolens-COMMAND(1)); exits 0.
 */
_Noreturn void help_brief(const char *command, const char *text);

/*
 * -R, -L, -x: how paths are walked; and vmtouch's daily options: -f (as -L), -m, -i, -I,
 * -b, -0, -q.
 */
#define FILES_SHORT_OPTIONS "RLxfm:i:I:b:0q"
enum {
	FILES_OPT_MAX_SIZE = 0x1200,
	FILES_OPT_IGNORE,
	FILES_OPT_ONLY,
	FILES_OPT_FILES_FROM,
	FILES_OPT_NULL,
};
#define FILES_LONG_OPTIONS \
	{ "recursive", no_argument, NULL, 'R' }, \
	{ "dereference", no_argument, NULL, 'L' }, \
	{ "one-file-system", no_argument, NULL, 'x' }, \
	{ "max-size", required_argument, NULL, 'm' }, \
	{ "ignore", required_argument, NULL, 'i' }, \
	{ "only", required_argument, NULL, 'I' }, \
	{ "files-from", required_argument, NULL, 'b' }, \
	{ "null", no_argument, NULL, '0' }, \
	{ "quiet", no_argument, NULL, 'q' }

/* What the file options chose: the walk's options, and the paths (the command line's, then -b's). */
struct files_args {
	struct files_options walk;
	char **ignore, **only;
	const char *list;  /* -b FILE, or "-" for standard input */
	bool list_nul;     /* -0 */
	bool quiet;        /* -q: no table; errors are still said */
	char **paths;
	size_t npaths;
};
/* Takes one getopt result; true when it was a file option. */
bool files_parse_option(struct files_args *args, int opt, const char *arg);
/* The paths: argv[first..] and then those of -b. Empty when there are none (the caller says). */
void files_args_paths(struct files_args *args, int argc, char **argv, int first);
void files_args_free(struct files_args *args);
void files_help_options(FILE *stream);
/* Names from a list file, one a line or ending with NUL; exits 1 with a message when it cannot be read. */
char **files_read_list(const char *path, bool nul, size_t *count);

/* The part of a file that a --range OFFSET[:LENGTH] covers: offset and length clamped to the file. */
void files_range(uint64_t size, uint64_t range_offset, uint64_t range_length, uint64_t *offset, uint64_t *length);
/* --range: parses OFF[:LEN] or exits 2 saying why. */
void files_parse_range(const char *arg, uint64_t *offset, uint64_t *length);

/* Prints "iolens CMD VERSION" and exits 0. */
_Noreturn void print_version(void);
/*
 * The options every command takes, at the end of its switch: -h and --help-all call usage(all),
 * -V prints the version, and any other is a usage error.
 */
_Noreturn void command_option_rest(int opt, void (*usage)(bool all));

/*
 * The message for a path the walk could not look at, or left out as asked (-m; said unless
 * files_quiet): true when it is an error.
 */
bool report_walk_error(const struct files_entry *entry);
extern bool files_quiet;

/*
 * Prints a table of files, with the page size that its counts of pages are in (JSON);
 * false, with the message said, when the output could not be written.
 */
bool print_file_table(struct out_table *table);

/*
 * Files whose page-cache state the kernel would not tell (pagecache_query's -EPERM):
 * noted as they come, reported once at the end, with the reason, as the house rule says.
 */
struct refusals {
	uint64_t count;
	char *first;
};
void refusal_note(struct refusals *refusals, const char *path);
/*
 * Prints the one line that says so, when there is one to say, and frees what was noted; done
 * ("dropped; ") says what the command did all the same. The kernel tells a file's page-cache
 * state (cachestat, mincore) only to its owner and to whoever may write to it: for another
 * reader the counts are unknown ('-'), which is no failure of the command.
 */
void refusal_report(struct refusals *refusals, const char *done);

#endif
