/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * compat.c: links named after the peer tools take their flags: classic pcstat's flags (one dash or
 * two), its files measured, and its outputs chosen (render/pcstat_classic.c writes them).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cmd/command.h"
#include "cmd/compat.h"
#include "collect/files.h"
#include "collect/pagecache.h"
#include "common/util.h"
#include "render/pcstat_classic.h"

/*
 * Classic pcstat (github.com/tobert/pcstat) parses its flags with Go's flag package: one
 * or two dashes, -flag=value or -flag value, parsing ends at the first argument that is
 * not a flag. Its flags, and their meanings:
 */
struct classic_flags {
	uint64_t pid;
	bool terse, nohdr, json, unicode, plain, pps, histo, bname, sort;
};

/* A file measured: its row (the name with -bname the last component), and where it came. */
struct classic_file {
	struct classic_row row;
	size_t order; /* as the files came: equal counts keep it when sorted */
};

struct classic {
	const struct classic_flags *flags;
	struct classic_file *files;
	size_t count, capacity;
	bool failed;
	struct refusals refused;
};

static const char *const classic_bool_flags[] = {
	"terse", "nohdr", "json", "unicode", "plain", "pps", "histo", "bname", "sort",
};

static void classic_usage(FILE *stream)
{
	fprintf(stream,
		"Usage of %s (classic pcstat flags; iolens pcstat --help shows iolens's own):\n"
		"  %s [-flags] FILE...\n"
		"  -bname     convert paths to basename to narrow the output\n"
		"  -histo     print a simple histogram instead of raw data\n"
		"  -json      return data in JSON format\n"
		"  -nohdr     omit the header from terse & text output\n"
		"  -pid int   show all open maps for the given pid\n"
		"  -plain     return data with no box characters\n"
		"  -pps       include the per-page status in JSON output\n"
		"  -sort      sort output by cached pages desc\n"
		"  -terse     show terse output\n"
		"  -unicode   return data with unicode box characters\n"
		"As in pcstat, a flag takes one dash or two (--terse is -terse), and flags end\n"
		"at the first argument that is not one. Any of these flags makes the pcstat\n"
		"link behave as classic pcstat; without them it is iolens pcstat.\n",
		program_name, program_name);
}

static _Noreturn void classic_usage_error(const char *message, const char *arg)
{
	warn_msg("%s%s", message, printable_name(arg));
	classic_usage(stderr);
	exit(EXIT_USAGE);
}

static bool *classic_bool(struct classic_flags *flags, const char *name)
{
	bool *fields[] = { &flags->terse, &flags->nohdr, &flags->json, &flags->unicode, &flags->plain,
			   &flags->pps, &flags->histo, &flags->bname, &flags->sort };

	for (size_t i = 0; i < sizeof(classic_bool_flags) / sizeof(classic_bool_flags[0]); i++)
		if (!strcmp(name, classic_bool_flags[i]))
			return fields[i];
	return NULL;
}

/* The flag's name without its dashes and "=value", or NULL when arg is not a flag. */
static const char *flag_name(const char *arg, char *buf, size_t len)
{
	size_t n;

	if (arg[0] != '-' || arg[1] == '\0')
		return NULL;
	arg += arg[1] == '-' ? 2 : 1;
	n = strcspn(arg, "=");
	if (n >= len)
		n = len - 1;
	memcpy(buf, arg, n);
	buf[n] = '\0';
	return buf;
}

bool pcstat_classic_wanted(int argc, char **argv)
{
	char name[32];

	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];

		if (!strcmp(arg, "--") || arg[0] != '-')
			return false;
		/* One dash or two, as Go's flag package takes them: --terse is -terse. */
		if (!flag_name(arg, name, sizeof(name)))
			continue;
		if (!strcmp(name, "pid") || classic_bool(&(struct classic_flags){0}, name))
			return true;
	}
	return false;
}

/* strconv.ParseBool, which Go's flag package uses for -flag=value: 1 true, 0 false, -1 neither. */
static int go_parse_bool(const char *value)
{
	static const char *const yes[] = { "1", "t", "T", "TRUE", "true", "True" };
	static const char *const no[] = { "0", "f", "F", "FALSE", "false", "False" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcmp(value, yes[i]))
			return 1;
		if (!strcmp(value, no[i]))
			return 0;
	}
	return -1;
}

/* Go's flag package: returns the index of the first file. */
static int classic_parse(int argc, char **argv, struct classic_flags *flags)
{
	int i;

	for (i = 1; i < argc; i++) {
		const char *arg = argv[i], *value;
		char name[64];
		bool *field;

		if (!strcmp(arg, "--"))
			return i + 1;
		if (!flag_name(arg, name, sizeof(name)))
			return i;
		/* Go: "---x", "-=x" and "--=x" are not flags but errors. */
		if (name[0] == '\0' || name[0] == '-')
			classic_usage_error("bad flag syntax: ", arg);
		value = strchr(arg, '=');
		if (!strcmp(name, "h") || !strcmp(name, "help")) {
			classic_usage(stdout);
			exit(EXIT_OK);
		}
		if (!strcmp(name, "pid")) {
			if (value)
				value++;
			else if (i + 1 < argc)
				value = argv[++i];
			else
				classic_usage_error("flag needs an argument: -", name);
			if (parse_u64(value, &flags->pid) || flags->pid > 4194304)
				classic_usage_error("-pid: not a process id: ", value);
			continue;
		}
		field = classic_bool(flags, name);
		if (!field)
			classic_usage_error("flag provided but not defined: -", name);
		if (!value) {
			*field = true;
		} else {
			int parsed = go_parse_bool(value + 1);

			if (parsed < 0) {
				warn_msg("invalid boolean value \"%s\" for -%s: parse error", printable_name(value + 1),
					 printable_name(name));
				classic_usage(stderr);
				exit(EXIT_USAGE);
			}
			*field = parsed;
		}
	}
	return i;
}

/* Which pages are cached, one byte a page, in pieces mincore's vector can hold. */
static int classic_status(int fd, uint64_t pages, unsigned char *status)
{
	const uint64_t piece = 1u << 16;

	for (uint64_t first = 0; first < pages; first += piece) {
		int rc = pagecache_resident(fd, first, pages - first < piece ? pages - first : piece, status + first);
		if (rc)
			return rc;
	}
	return 0;
}

static int classic_visit(const struct files_entry *entry, void *context)
{
	struct classic *c = context;
	struct classic_file file = {0};
	struct pagecache_stat stat;
	const char *name = entry->path;
	int rc;

	if (entry->fd < 0) {
		if (report_walk_error(entry))
			c->failed = true;
		return 0;
	}
	if (c->flags->bname) {
		const char *slash;
		size_t len = strlen(name);

		while (len > 1 && name[len - 1] == '/')
			len--;
		for (slash = name + len; slash > name && slash[-1] != '/'; slash--)
			;
		file.row.name = xcalloc((size_t)(name + len - slash) + 1, 1);
		memcpy(file.row.name, slash, (size_t)(name + len - slash));
	} else {
		file.row.name = xstrdup(name);
	}
	file.order = c->count;
	file.row.size = entry->size;
	file.row.mtime = entry->st.st_mtim;
	file.row.timestamp_ns = realtime_ns();
	rc = pagecache_query(entry->fd, 0, entry->size, &stat);
	if (!rc && (c->flags->pps || c->flags->histo) && stat.pages) {
		file.row.status = xcalloc(stat.pages, 1);
		rc = classic_status(entry->fd, stat.pages, file.row.status);
	}
	if (rc) {
		if (rc == -EPERM)
			refusal_note(&c->refused, entry->path);
		else
			warn_errno(printable_name(entry->path), -rc);
		c->failed = true;
		free(file.row.name);
		free(file.row.status);
		return 0; /* pcstat skips a file it cannot measure */
	}
	file.row.pages = stat.pages;
	file.row.cached = stat.cached;
	if (c->count == c->capacity) {
		c->capacity = c->capacity ? c->capacity * 2 : 64;
		c->files = xrealloc(c->files, c->capacity * sizeof(*c->files));
	}
	c->files[c->count++] = file;
	return 0;
}

/* The columns of the terminal on stdout, else $COLUMNS, else 80 (pcstat divides by zero off a terminal). */
static long terminal_columns(void)
{
	struct winsize size = {0};
	long columns = 0;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col)
		columns = size.ws_col;
	else if (getenv("COLUMNS"))
		columns = strtol(getenv("COLUMNS"), NULL, 10);
	return columns > 0 ? columns : 80;
}

static int by_cached_descending(const void *a, const void *b)
{
	const struct classic_file *x = a, *y = b;

	if (x->row.cached != y->row.cached)
		return x->row.cached < y->row.cached ? 1 : -1;
	return x->order < y->order ? -1 : x->order > y->order;
}

int cmd_pcstat_classic(int argc, char **argv)
{
	struct classic_flags flags = {0};
	struct classic c = { .flags = &flags };
	struct files_options walk = {0};
	struct classic_row *rows;
	int first = classic_parse(argc, argv, &flags);
	enum classic_table style = flags.unicode ? CLASSIC_TABLE_UNICODE
				 : flags.plain   ? CLASSIC_TABLE_PLAIN
						 : CLASSIC_TABLE_ASCII;

	if (first >= argc && !flags.pid) {
		classic_usage(stderr);
		return EXIT_USAGE;
	}
	if (flags.pid)
		files_of_process((pid_t)flags.pid, classic_visit, &c);
	files_walk(argv + first, argc - first, &walk, classic_visit, &c);
	refusal_report(&c.refused, "skipped; ");
	for (size_t i = 0; i < c.count; i++) {
		char *shown = escape_text(c.files[i].row.name, flags.json ? 0 : ESCAPE_TERMINAL);

		if (!flags.json) {
			free(c.files[i].row.name);
			c.files[i].row.name = shown;
		} else {
			free(shown);
		}
	}
	if (flags.sort)
		qsort(c.files, c.count, sizeof(*c.files), by_cached_descending);
	rows = xcalloc(c.count ? c.count : 1, sizeof(*rows));
	for (size_t i = 0; i < c.count; i++)
		rows[i] = c.files[i].row;
	if (flags.json)
		classic_write_json(stdout, rows, c.count, flags.pps);
	else if (flags.terse)
		classic_write_terse(stdout, rows, c.count, !flags.nohdr);
	else if (flags.histo)
		classic_write_histogram(stdout, rows, c.count, terminal_columns());
	else
		classic_write_table(stdout, rows, c.count, style, !flags.nohdr);
	free(rows);
	if (fflush(stdout) || ferror(stdout)) {
		warn_errno("output", errno);
		c.failed = true;
	}
	for (size_t i = 0; i < c.count; i++) {
		free(c.files[i].row.name);
		free(c.files[i].row.status);
	}
	free(c.files);
	return c.failed ? EXIT_FAIL : EXIT_OK;
}
