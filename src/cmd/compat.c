/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * compat.c: links named after the peer tools take their flags: classic pcstat's flags (one dash or
 * two) and its outputs.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cmd/command.h"
#include "cmd/compat.h"
#include "collect/files.h"
#include "collect/pagecache.h"
#include "common/util.h"

/*
 * Classic pcstat (github.com/tobert/pcstat) parses its flags with Go's flag package: one
 * or two dashes, -flag=value or -flag value, parsing ends at the first argument that is
 * not a flag. Its flags, and their meanings:
 */
enum classic_format { CLASSIC_TEXT, CLASSIC_PLAIN, CLASSIC_UNICODE, CLASSIC_TERSE, CLASSIC_JSON, CLASSIC_HISTO };

struct classic_flags {
	uint64_t pid;
	bool terse, nohdr, json, unicode, plain, pps, histo, bname, sort;
};

struct classic_file {
	char *name;          /* as shown: escaped, and with -bname the last component */
	uint64_t size;
	uint64_t timestamp_ns; /* the time right before the cache was asked */
	struct timespec mtime;
	uint64_t pages, cached;
	unsigned char *status; /* one byte a page, for -pps and -histo */
	size_t order;          /* as the files came: equal counts keep it when sorted */
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
		file.name = xcalloc((size_t)(name + len - slash) + 1, 1);
		memcpy(file.name, slash, (size_t)(name + len - slash));
	} else {
		file.name = xstrdup(name);
	}
	file.order = c->count;
	file.size = entry->size;
	file.mtime = entry->st.st_mtim;
	file.timestamp_ns = realtime_ns();
	rc = pagecache_query(entry->fd, 0, entry->size, &stat);
	if (!rc && (c->flags->pps || c->flags->histo) && stat.pages) {
		file.status = xcalloc(stat.pages, 1);
		rc = classic_status(entry->fd, stat.pages, file.status);
	}
	if (rc) {
		if (rc == -EPERM)
			refusal_note(&c->refused, entry->path);
		else
			warn_errno(printable_name(entry->path), -rc);
		c->failed = true;
		free(file.name);
		free(file.status);
		return 0; /* pcstat skips a file it cannot measure */
	}
	file.pages = stat.pages;
	file.cached = stat.cached;
	if (c->count == c->capacity) {
		c->capacity = c->capacity ? c->capacity * 2 : 64;
		c->files = xrealloc(c->files, c->capacity * sizeof(*c->files));
	}
	c->files[c->count++] = file;
	return 0;
}

static double classic_percent(const struct classic_file *file)
{
	/* In pcstat's order: the share first, then times 100 (66.66666666666666, not ...67). */
	return file->pages ? (double)file->cached / (double)file->pages * 100.0 : NAN;
}

/* The digits Go prints for a float64: the fewest that read back to the same number. */
static void go_float(double value, bool g_format, char *out, size_t len)
{
	if (isnan(value)) {
		snprintf(out, len, "NaN");
		return;
	}
	if (g_format) {
		/* %g in Go: exponent form below 1e-4 or from 1e21 (shortest precision uses 6 for the choice). */
		int exponent = value == 0 ? 0 : (int)floor(log10(fabs(value)));
		if (value != 0 && (exponent < -4 || exponent >= 21)) {
			for (int precision = 0; precision <= 17; precision++) {
				snprintf(out, len, "%.*e", precision, value);
				if (strtod(out, NULL) == value)
					break;
			}
			/* C writes e-05 as Go does: two exponent digits at least. */
			return;
		}
	}
	for (int decimals = 0; decimals <= 20; decimals++) {
		snprintf(out, len, "%.*f", decimals, value);
		if (strtod(out, NULL) == value)
			return;
	}
}

/* RFC 3339 with nanoseconds, trailing zeros cut, in local time: Go's time.Time in JSON. */
static void go_time(int64_t seconds, long nanoseconds, char *out, size_t len)
{
	time_t t = (time_t)seconds;
	struct tm tm;
	char fraction[16] = "", zone[32];
	long offset;
	size_t used;

	localtime_r(&t, &tm);
	if (nanoseconds) {
		snprintf(fraction, sizeof(fraction), ".%09ld", nanoseconds);
		for (size_t n = strlen(fraction); fraction[n - 1] == '0'; n--)
			fraction[n - 1] = '\0';
	}
	offset = tm.tm_gmtoff / 60;
	if (offset == 0)
		snprintf(zone, sizeof(zone), "Z");
	else
		snprintf(zone, sizeof(zone), "%c%02ld:%02ld", offset < 0 ? '-' : '+', labs(offset) / 60,
			 labs(offset) % 60);
	used = strftime(out, len, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + used, len - used, "%s%s", fraction, zone);
}

/*
 * A JSON string as Go's encoding/json writes it; bytes that are not UTF-8 as \xNN, and what
 * char_hidden() names as \uXXXX, as out_json_write does (iolens(1)). Go writes U+2028 and
 * U+2029 that way too.
 */
static void go_json_string(const char *text)
{
	char *escaped = escape_text(text, ESCAPE_BACKSLASH);
	const char *p = escaped;

	putchar('"');
	while (*p) {
		uint32_t c;
		size_t len = utf8_decode(p, &c); /* never 0: escape_text made it UTF-8 */

		if (c == '"' || c == '\\')
			printf("\\%c", (int)c);
		else if (c == '\n')
			fputs("\\n", stdout);
		else if (c == '\r')
			fputs("\\r", stdout);
		else if (c == '\t')
			fputs("\\t", stdout);
		else if (c == '<' || c == '>' || c == '&' || (char_hidden(c) && c <= 0xffff))
			printf("\\u%04x", (unsigned)c);
		else if (char_hidden(c)) /* a tag: a UTF-16 surrogate pair */
			printf("\\u%04x\\u%04x", 0xd800 + ((c - 0x10000) >> 10), 0xdc00 + ((c - 0x10000) & 0x3ff));
		else
			fwrite(p, 1, len, stdout);
		p += len;
	}
	putchar('"');
	free(escaped);
}

static void print_json(const struct classic *c)
{
	char number[64], when[64];

	putchar('[');
	for (size_t i = 0; i < c->count; i++) {
		const struct classic_file *file = &c->files[i];
		double percent = classic_percent(file);

		fputs(i ? ",{\"filename\":" : "{\"filename\":", stdout);
		go_json_string(file->name);
		printf(",\"size\":%llu", (unsigned long long)file->size);
		go_time((int64_t)(file->timestamp_ns / 1000000000u), (long)(file->timestamp_ns % 1000000000u), when,
			sizeof(when));
		printf(",\"timestamp\":\"%s\"", when);
		go_time(file->mtime.tv_sec, file->mtime.tv_nsec, when, sizeof(when));
		printf(",\"mtime\":\"%s\"", when);
		printf(",\"pages\":%llu,\"cached\":%llu,\"uncached\":%llu", (unsigned long long)file->pages,
		       (unsigned long long)file->cached, (unsigned long long)(file->pages - file->cached));
		/* An empty file has no percentage: pcstat's JSON fails on it (NaN); null says unknown. */
		if (isnan(percent)) {
			fputs(",\"percent\":null", stdout);
		} else {
			go_float(percent, false, number, sizeof(number));
			printf(",\"percent\":%s", number);
		}
		if (c->flags->pps && file->pages) {
			fputs(",\"status\":[", stdout);
			for (uint64_t page = 0; page < file->pages; page++)
				fputs(page ? (file->status[page] ? ",true" : ",false")
					   : (file->status[page] ? "true" : "false"),
				      stdout);
			fputs("]}", stdout);
		} else {
			fputs(",\"status\":null}", stdout);
		}
	}
	fputs("]\n", stdout);
}

static void print_terse(const struct classic *c)
{
	char number[64];

	if (!c->flags->nohdr)
		puts("name,size,timestamp,mtime,pages,cached,percent");
	for (size_t i = 0; i < c->count; i++) {
		const struct classic_file *file = &c->files[i];

		go_float(classic_percent(file), true, number, sizeof(number));
		printf("%s,%llu,%llu,%lld,%llu,%llu,%s\n", file->name, (unsigned long long)file->size,
		       (unsigned long long)(file->timestamp_ns / 1000000000u), (long long)file->mtime.tv_sec,
		       (unsigned long long)file->pages, (unsigned long long)file->cached, number);
	}
}

static size_t max_name_length(const struct classic *c)
{
	size_t longest = 5;

	for (size_t i = 0; i < c->count; i++)
		if (text_width(c->files[i].name) > longest)
			longest = text_width(c->files[i].name);
	return longest;
}

static void repeat(const char *text, size_t times)
{
	while (times--)
		fputs(text, stdout);
}

static void print_percent(double percent)
{
	if (isnan(percent))
		fputs("    NaN", stdout);
	else
		printf("%7.3f", percent);
}

/* One of the boxed table's three rules: the name column's width, then Size, Pages, Cached and Percent's. */
static void print_rule(bool unicode, size_t width, const char *const corners[2][3])
{
	static const size_t columns[] = { 16, 12, 11, 9 };
	const char *const *c = corners[unicode], *h = unicode ? "─" : "-";

	fputs(c[0], stdout);
	repeat(h, width + 2);
	for (size_t i = 0; i < sizeof(columns) / sizeof(columns[0]); i++) {
		fputs(c[1], stdout);
		repeat(h, columns[i]);
	}
	fputs(c[2], stdout);
	putchar('\n');
}

/* The boxed table (-unicode with box-drawing characters), or -plain's columns. */
static void print_text(const struct classic *c, enum classic_format format)
{
	/* { ASCII, unicode } corners: left, between columns, right (pcstat's ASCII header rule ends in '|'). */
	static const char *const top[2][3] = { { "+", "+", "+" }, { "┌", "┬", "┐" } };
	static const char *const middle[2][3] = { { "|", "+", "|" }, { "├", "┼", "┤" } };
	static const char *const bottom[2][3] = { { "+", "+", "+" }, { "└", "┴", "┘" } };
	const bool unicode = format == CLASSIC_UNICODE, plain = format == CLASSIC_PLAIN;
	const char *v = unicode ? "│" : "|";
	size_t width = max_name_length(c);

	if (!plain)
		print_rule(unicode, width, top);
	if (!c->flags->nohdr) {
		if (plain) {
			fputs("Name", stdout);
			repeat(" ", width - 4);
			fputs("  Size (bytes)    Pages       Cached     Percent\n", stdout);
		} else {
			printf("%s Name", v);
			repeat(" ", width - 4);
			printf(" %s Size (bytes)   %s Pages      %s Cached    %s Percent %s\n", v, v, v, v, v);
			print_rule(unicode, width, middle);
		}
	}
	for (size_t i = 0; i < c->count; i++) {
		const struct classic_file *file = &c->files[i];

		if (plain) {
			fputs(file->name, stdout);
			repeat(" ", width - text_width(file->name));
			printf("  %-15llu %-11llu %-10llu ", (unsigned long long)file->size,
			       (unsigned long long)file->pages, (unsigned long long)file->cached);
			print_percent(classic_percent(file));
			putchar('\n');
			continue;
		}
		printf("%s %s", v, file->name);
		repeat(" ", width - text_width(file->name));
		printf(" %s %-15llu%s %-11llu%s %-10llu%s ", v, (unsigned long long)file->size, v,
		       (unsigned long long)file->pages, v, (unsigned long long)file->cached, v);
		print_percent(classic_percent(file));
		printf(" %s\n", v);
	}
	if (!plain)
		print_rule(unicode, width, bottom);
}

/* pcstat's sparkline: a block a page when they fit, else an eighth-block level per bucket of pages. */
static void print_histogram(const struct classic *c)
{
	static const char *const levels[] = { "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█" };
	size_t width = max_name_length(c);
	struct winsize size = {0};
	long columns = 0, buckets;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col)
		columns = size.ws_col;
	else if (getenv("COLUMNS"))
		columns = strtol(getenv("COLUMNS"), NULL, 10);
	if (columns <= 0)
		columns = 80; /* pcstat divides by zero off a terminal */
	buckets = (columns - (long)width) / 2 - 10;
	if (buckets < 1)
		buckets = 1;

	for (size_t i = 0; i < c->count; i++) {
		const struct classic_file *file = &c->files[i];

		fputs(file->name, stdout);
		repeat(" ", width - text_width(file->name));
		printf(" %8llu ", (unsigned long long)file->pages);
		if ((uint64_t)buckets > file->pages) {
			for (uint64_t page = 0; page < file->pages; page++)
				fputs(file->status[page] ? levels[7] : levels[0], stdout);
		} else {
			uint64_t per_bucket = file->pages / (uint64_t)buckets, cached = 0;

			for (uint64_t page = 0; page < file->pages; page++) {
				cached += file->status[page] ? 1 : 0;
				if ((page + 1) % per_bucket)
					continue;
				double share = (double)cached / (double)per_bucket;
				fputs(!cached ? levels[0] : share < 0.16 ? levels[1] : share < 0.33 ? levels[2]
				      : share < 0.50 ? levels[3] : share < 0.66 ? levels[4] : share < 0.83 ? levels[5]
				      : share < 1.00 ? levels[6] : levels[7], stdout);
				cached = 0;
			}
		}
		putchar('\n');
	}
}

static int by_cached_descending(const void *a, const void *b)
{
	const struct classic_file *x = a, *y = b;

	if (x->cached != y->cached)
		return x->cached < y->cached ? 1 : -1;
	return x->order < y->order ? -1 : x->order > y->order;
}

int cmd_pcstat_classic(int argc, char **argv)
{
	struct classic_flags flags = {0};
	struct classic c = { .flags = &flags };
	struct files_options walk = {0};
	enum classic_format format;
	int first = classic_parse(argc, argv, &flags);

	if (first >= argc && !flags.pid) {
		classic_usage(stderr);
		return EXIT_USAGE;
	}
	if (flags.pid)
		files_of_process((pid_t)flags.pid, classic_visit, &c);
	files_walk(argv + first, argc - first, &walk, classic_visit, &c);
	refusal_report(&c.refused, "skipped; ");
	for (size_t i = 0; i < c.count; i++) {
		char *shown = escape_text(c.files[i].name, flags.json ? 0 : ESCAPE_TERMINAL);

		if (!flags.json) {
			free(c.files[i].name);
			c.files[i].name = shown;
		} else {
			free(shown);
		}
	}
	if (flags.sort)
		qsort(c.files, c.count, sizeof(*c.files), by_cached_descending);
	format = flags.json ? CLASSIC_JSON : flags.terse ? CLASSIC_TERSE : flags.histo ? CLASSIC_HISTO
	       : flags.unicode ? CLASSIC_UNICODE : flags.plain ? CLASSIC_PLAIN : CLASSIC_TEXT;
	switch (format) {
	case CLASSIC_JSON:
		print_json(&c);
		break;
	case CLASSIC_TERSE:
		print_terse(&c);
		break;
	case CLASSIC_HISTO:
		print_histogram(&c);
		break;
	default:
		print_text(&c, format);
	}
	if (fflush(stdout) || ferror(stdout)) {
		warn_errno("output", errno);
		c.failed = true;
	}
	for (size_t i = 0; i < c.count; i++) {
		free(c.files[i].name);
		free(c.files[i].status);
	}
	free(c.files);
	return c.failed ? EXIT_FAIL : EXIT_OK;
}
