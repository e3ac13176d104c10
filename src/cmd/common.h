/* common.h: what the commands share: their entry points (the command table), --help and --version; and what the file commands (pcstat, evict, warm) share: walk options, messages, the file table. */
#ifndef IOLENS_CMD_COMMON_H
#define IOLENS_CMD_COMMON_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "collect/files.h"
#include "render/out.h"

/* Every subcommand: iolens CMD ARGS... runs cmd_CMD(argc, argv) with argv[0] = "CMD". */
int cmd_pcstat(int argc, char **argv);
int cmd_evict(int argc, char **argv);
int cmd_warm(int argc, char **argv);
int cmd_vstat(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_cachestat(int argc, char **argv);
int cmd_cachetop(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_export(int argc, char **argv);

enum {
	COMMON_OPT_VERSION = 0x1100,
	COMMON_OPT_HELP,
};
#define COMMON_LONG_OPTIONS \
	{ "help", no_argument, NULL, 'h' }, \
	{ "version", no_argument, NULL, 'V' }

/* -R, -L, -x: how paths are walked. */
#define FILES_SHORT_OPTIONS "RLx"
#define FILES_LONG_OPTIONS \
	{ "recursive", no_argument, NULL, 'R' }, \
	{ "dereference", no_argument, NULL, 'L' }, \
	{ "one-file-system", no_argument, NULL, 'x' }
bool files_parse_option(struct files_options *opts, int opt);
void files_help_options(FILE *stream);

/* Prints "iolens CMD VERSION" and exits 0. */
_Noreturn void print_version(void);

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
/* Prints the message, when there is one to print, and frees what was noted. */
void refusal_report(struct refusals *refusals, const char *what_happened);

#endif
