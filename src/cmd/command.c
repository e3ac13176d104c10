/* SPDX-License-Identifier: GPL-2.0-or-later */
/* command.c: options and messages shared by the commands that look at files. */
#include "cmd/command.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

static char **append(char **list, size_t *count, char *item)
{
	list = xrealloc(list, (*count + 1) * sizeof(*list));
	list[(*count)++] = item;
	return list;
}

bool files_parse_option(struct files_args *args, int opt, const char *arg)
{
	switch (opt) {
	case 'R':
		args->walk.recursive = true;
		return true;
	case 'L':
	case 'f':
		args->walk.follow_symlinks = true;
		return true;
	case 'x':
		args->walk.one_filesystem = true;
		return true;
	case 'm':
		if (parse_size(arg, &args->walk.max_size) || !args->walk.max_size)
			usage_error("--max-size: '%s' is not a size (4096, 64k, 1.5M, 2G)", arg);
		return true;
	case 'i':
		args->ignore = append(args->ignore, &args->walk.nignore, (char *)arg);
		args->walk.ignore = args->ignore;
		return true;
	case 'I':
		args->only = append(args->only, &args->walk.nonly, (char *)arg);
		args->walk.only = args->only;
		return true;
	case 'b':
		args->list = arg;
		return true;
	case '0':
		args->list_nul = true;
		return true;
	case 'q':
		args->quiet = files_quiet = true;
		return true;
	}
	return false;
}

char **files_read_list(const char *path, bool nul, size_t *count)
{
	FILE *list = strcmp(path, "-") ? fopen(path, "r") : stdin;
	char **names = NULL, *line = NULL;
	size_t line_capacity = 0;
	ssize_t len;

	if (!list) {
		warn_errno(printable_name(path), errno);
		exit(EXIT_FAIL);
	}
	*count = 0;
	while ((len = getdelim(&line, &line_capacity, nul ? '\0' : '\n', list)) >= 0) {
		if (len && line[len - 1] == (nul ? '\0' : '\n'))
			line[--len] = '\0';
		if (len)
			names = append(names, count, xstrdup(line));
	}
	if (ferror(list)) {
		warn_errno(printable_name(path), errno);
		exit(EXIT_FAIL);
	}
	free(line);
	if (list != stdin)
		fclose(list);
	return names;
}

void files_args_paths(struct files_args *args, int argc, char **argv, int first)
{
	char **listed = NULL;
	size_t nlisted = 0;

	if (args->list_nul && !args->list)
		usage_error("-0, --null goes with -b, --files-from");
	for (int i = first; i < argc; i++)
		args->paths = append(args->paths, &args->npaths, xstrdup(argv[i]));
	if (args->list)
		listed = files_read_list(args->list, args->list_nul, &nlisted);
	for (size_t i = 0; i < nlisted; i++)
		args->paths = append(args->paths, &args->npaths, listed[i]);
	free(listed);
}

void files_args_free(struct files_args *args)
{
	for (size_t i = 0; i < args->npaths; i++)
		free(args->paths[i]);
	free(args->paths);
	free(args->ignore);
	free(args->only);
}

_Noreturn void help_brief(const char *command, const char *text)
{
	printf("%s\nMore: iolens %s --help-all, and man iolens-%s.\n", text, command, command);
	exit(EXIT_OK);
}

void files_help_options(FILE *stream)
{
	fputs("  -R, --recursive        look at every file in the directories, and below\n"
	      "  -L, -f, --dereference  with -R, follow symbolic links (loops are detected)\n"
	      "  -x, --one-file-system  with -R, stay on the filesystem of each directory given\n"
	      "  -m, --max-size SIZE    skip files larger than SIZE (said on stderr; not an error)\n"
	      "  -i, --ignore PATTERN   skip files and directories whose name matches (fnmatch)\n"
	      "  -I, --only PATTERN     only the files whose name matches\n"
	      "  -b, --files-from FILE  the paths in FILE, one a line (- for standard input)\n"
	      "  -0, --null             with -b, the paths end with a NUL byte (find -print0)\n"
	      "  -q, --quiet            no table, and no word about files -m skips\n",
	      stream);
}

void files_range(uint64_t size, uint64_t range_offset, uint64_t range_length, uint64_t *offset, uint64_t *length)
{
	*offset = range_offset < size ? range_offset : size;
	*length = size - *offset;
	if (range_length && range_length < *length)
		*length = range_length;
}

void files_parse_range(const char *arg, uint64_t *offset, uint64_t *length)
{
	if (parse_range(arg, offset, length))
		usage_error("--range: '%s' is not OFFSET[:LENGTH] (sizes such as 4096, 64k, 1.5M, 2G)", arg);
}

void print_version(void)
{
	printf("%s %s\n", program_name, IOLENS_VERSION);
	exit(EXIT_OK);
}

void command_option_rest(int opt, void (*usage)(bool all))
{
	if (opt == 'h' || opt == COMMON_OPT_HELP_ALL)
		usage(opt == COMMON_OPT_HELP_ALL);
	else if (opt == 'V')
		print_version();
	usage_hint();
}

bool print_file_table(struct out_table *table)
{
	int rc;

	out_table_add_count(table, "page_size", page_size());
	rc = out_table_print(table, stdout);
	if (rc)
		warn_errno("output", -rc);
	return rc == 0;
}

bool files_quiet;

bool report_walk_error(const struct files_entry *entry)
{
	if (entry->skipped) {
		if (!files_quiet)
			warn_msg("%s: %s", printable_name(entry->path), entry->reason);
		return false;
	}
	if (entry->reason)
		warn_msg("%s: %s", printable_name(entry->path), entry->reason);
	else
		warn_errno(printable_name(entry->path), entry->error);
	return true;
}

void refusal_note(struct refusals *refusals, const char *path)
{
	if (!refusals->count++)
		refusals->first = xstrdup(path);
}

void refusal_report(struct refusals *refusals, const char *done)
{
	char others[48] = "";

	if (!refusals->count)
		return;
	/* One line for them all, whatever their number: the command did its job, the counts are unknown. */
	if (refusals->count > 1)
		snprintf(others, sizeof(others), " and %llu other%s", (unsigned long long)refusals->count - 1,
			 refusals->count > 2 ? "s" : "");
	warn_msg("%s%s: %scached pages unknown (not owner or writer)",
		 printable_name(refusals->first), others, done);
	free(refusals->first);
	*refusals = (struct refusals){0};
}
