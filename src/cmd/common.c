/* common.c: options and messages shared by the commands that look at files. */
#include "cmd/common.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"

bool files_parse_option(struct files_options *opts, int opt)
{
	switch (opt) {
	case 'R':
		opts->recursive = true;
		return true;
	case 'L':
		opts->follow_symlinks = true;
		return true;
	case 'x':
		opts->one_filesystem = true;
		return true;
	}
	return false;
}

void files_help_options(FILE *stream)
{
	fputs("  -R, --recursive        look at every file in the directories, and below\n"
	      "  -L, --dereference      with -R, follow symbolic links (loops are detected)\n"
	      "  -x, --one-file-system  with -R, stay on the filesystem of each directory given\n",
	      stream);
}

void print_version(void)
{
	printf("%s %s\n", program_name, IOLENS_VERSION);
	exit(EXIT_OK);
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

void refusal_report(struct refusals *refusals, const char *what_happened)
{
	if (!refusals->count)
		return;
	warn_msg("%s%s: page-cache state unknown ('-'): the kernel tells it only to the file's owner "
		 "or to whoever may write to it%s",
		 printable_name(refusals->first), refusals->count > 1 ? " and others" : "", what_happened);
	if (refusals->count > 1)
		warn_msg("%llu files in all have an unknown page-cache state", (unsigned long long)refusals->count);
	free(refusals->first);
	*refusals = (struct refusals){0};
}
