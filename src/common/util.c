/* SPDX-License-Identifier: GPL-2.0-or-later */
/* util.c: messages, size parsing and formatting, small helpers used everywhere. */
#include "common/util.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <langinfo.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>
#include <wctype.h>

const char *program_name = "iolens";

/*
 * A message as one line on stderr, with nothing in it a terminal would act on: the names
 * in it went through printable_name (which also makes backslashes unambiguous), and any
 * that did not (an argument echoed back) is escaped here.
 */
static void put_message(const char *text)
{
	char *safe = escape_text(text, ESCAPE_CONTROL | ESCAPE_LOCALE);

	fputs(safe, stderr);
	fputc('\n', stderr);
	free(safe);
}

void warn_errno(const char *what, int err)
{
	warn_msg("%s: %s", what, strerror(err));
}

bool warn_verbose;

/*
 * Whether line was said already in this run (and if not, remembers it): a message is said
 * once, not once per disk, collector, point or interval. Lines are kept as 64-bit FNV-1a
 * hashes in a small open-addressing set; once it is full (a long-running export that met
 * thousands of different messages) lines are said again rather than kept without bound.
 */
static bool said_before(const char *line)
{
	enum { SLOTS = 4096 };
	static uint64_t said[SLOTS];
	static size_t nsaid;
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	uint64_t hash = 14695981039346656037ULL;
	bool before = false;
	size_t i;

	for (const unsigned char *c = (const unsigned char *)line; *c; c++)
		hash = (hash ^ *c) * 1099511628211ULL;
	hash |= 1; /* 0 marks an empty slot */
	pthread_mutex_lock(&lock);
	for (i = hash % SLOTS; said[i] && said[i] != hash; i = (i + 1) % SLOTS)
		;
	if (said[i])
		before = true;
	else if (nsaid < SLOTS / 2) {
		said[i] = hash;
		nsaid++;
	}
	pthread_mutex_unlock(&lock);
	return before;
}

static void vwarn_msg(const char *fmt, va_list ap, bool once)
{
	char *message, *line;

	if (vasprintf(&message, fmt, ap) < 0)
		message = NULL;
	if (asprintf(&line, "%s: %s", program_name, message ? message : fmt) < 0) {
		fprintf(stderr, "%s: out of memory\n", program_name);
		free(message);
		return;
	}
	if (!once || !said_before(line))
		put_message(line);
	free(line);
	free(message);
}

void warn_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn_msg(fmt, ap, true);
	va_end(ap);
}

void warn_detail(const char *fmt, ...)
{
	va_list ap;

	if (!warn_verbose)
		return;
	va_start(ap, fmt);
	vwarn_msg(fmt, ap, true);
	va_end(ap);
}

int say_why(char *why, size_t why_len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, why_len, fmt, ap);
	va_end(ap);
	return -1;
}

void usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn_msg(fmt, ap, false);
	va_end(ap);
	usage_hint();
}

/* The long option that text ("--name" or "--name=value") names, by name or unique prefix, or NULL. */
static const struct option *long_option_of(const char *text, const struct option *longopts)
{
	size_t len = strcspn(text + 2, "=");
	const struct option *found = NULL;

	for (const struct option *o = longopts; o && o->name; o++) {
		if (strncmp(o->name, text + 2, len))
			continue;
		if (strlen(o->name) == len)
			return o;
		found = found ? NULL : o;
	}
	return found;
}

/* How many long options text's name is the start of. */
static int long_options_starting(const char *text, const struct option *longopts)
{
	size_t len = strcspn(text + 2, "=");
	int count = 0;

	for (const struct option *o = longopts; o && o->name; o++)
		count += !strncmp(o->name, text + 2, len);
	return count;
}

static bool python_option_errors;

void option_errors_as_python(void)
{
	python_option_errors = true;
}

/*
 * What is wrong with the option, as GNU getopt says it or, with option_errors_as_python, as
 * dstat says Python getopt's message (name without its '=value'), escaped either way.
 */
static void say_bad_option(const char *arg, const char *optstring, const struct option *longopts)
{
	bool py = python_option_errors, is_long = !strncmp(arg, "--", 2);
	char name[256], msg[320];
	const struct option *o = is_long ? long_option_of(arg, longopts) : NULL;
	const char *spec;

	snprintf(name, sizeof(name), "%.*s", (int)strcspn(arg, "="), arg);
	if (o && o->val == optopt && optopt) {
		if (strchr(arg, '='))
			snprintf(msg, sizeof(msg),
				 py ? "option --%s must not have an argument"
				    : "option '--%s' doesn't allow an argument",
				 o->name);
		else
			snprintf(msg, sizeof(msg),
				 py ? "option --%s requires argument" : "option '--%s' requires an argument", o->name);
	} else if (!optopt && is_long && arg[2] && !o && long_options_starting(arg, longopts) > 1) {
		snprintf(msg, sizeof(msg), py ? "option %s not a unique prefix" : "option '%s' is ambiguous",
			 printable_name(py ? name : arg));
	} else if (!optopt) {
		snprintf(msg, sizeof(msg), py ? "option %s not recognized" : "unrecognized option '%s'",
			 printable_name(py ? name : arg));
	} else if (optopt != ':' && (spec = strchr(optstring, optopt)) && spec[1] == ':') {
		snprintf(msg, sizeof(msg), py ? "option -%c requires argument" : "option requires an argument -- '%c'",
			 optopt);
	} else {
		snprintf(name, sizeof(name), "%s", printable_name((char[]){ (char)optopt, '\0' }));
		snprintf(msg, sizeof(msg), py ? "option -%s not recognized" : "invalid option -- '%s'", name);
	}
	if (!py) {
		warn_msg("%s", msg);
		return;
	}
	/* dstat's words, place and status: on standard output, the pointer to -h on the line, exit 1. */
	printf("%s: %s, try %s -h for a list of all the options\n", program_name, msg, program_name);
	exit(1);
}

int next_option(int argc, char *const argv[], const char *optstring, const struct option *longopts, int *longindex)
{
	int opt;

	opterr = 0;
	opt = getopt_long(argc, argv, optstring, longopts, longindex);
	if (opt != '?')
		return opt;
	say_bad_option(optind > 0 && optind <= argc ? argv[optind - 1] : "", optstring, longopts);
	return '?';
}

void usage_hint(void)
{
	fprintf(stderr, "Try '%s --help' for more information.\n", program_name);
	exit(EXIT_USAGE);
}

int parse_u64(const char *text, uint64_t *out)
{
	char *end;
	unsigned long long value;

	if (!text || *text < '0' || *text > '9')
		return -EINVAL;
	errno = 0;
	value = strtoull(text, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (*end)
		return -EINVAL;
	*out = value;
	return 0;
}

/* Multiplier of a size suffix such as "k", "KiB", "MB"; 0 when unknown. */
static uint64_t suffix_multiplier(const char *suffix)
{
	static const char units[] = "KMGTPE";
	const char *unit;
	uint64_t multiplier = 1;

	if (!*suffix || !strcasecmp(suffix, "b"))
		return 1;
	unit = strchr(units, *suffix >= 'a' ? *suffix - 'a' + 'A' : *suffix);
	if (!unit || !*suffix)
		return 0;
	suffix++;
	if (*suffix && strcasecmp(suffix, "iB") && strcasecmp(suffix, "B"))
		return 0;
	for (const char *u = units; u <= unit; u++)
		multiplier *= 1024;
	return multiplier;
}

int parse_size(const char *text, uint64_t *out)
{
	char *end;
	double value;
	uint64_t multiplier;

	if (!text || !((*text >= '0' && *text <= '9') || *text == '.'))
		return -EINVAL;
	errno = 0;
	value = strtod(text, &end);
	if (errno == ERANGE || !isfinite(value))
		return -ERANGE;
	if (end == text)
		return -EINVAL;
	multiplier = suffix_multiplier(end);
	if (!multiplier)
		return -EINVAL;
	value *= (double)multiplier;
	if (value >= 18446744073709551616.0)
		return -ERANGE;
	/* A fraction must come out as whole bytes: 1.5K yes, 0.3 no. */
	if (value != floor(value))
		return -EINVAL;
	*out = (uint64_t)value;
	return 0;
}

int parse_range(const char *text, uint64_t *offset, uint64_t *length)
{
	const char *colon = text ? strchr(text, ':') : NULL;
	char head[64];
	int rc;

	if (!text)
		return -EINVAL;
	if (!colon) {
		*length = 0;
		return parse_size(text, offset);
	}
	if ((size_t)(colon - text) >= sizeof(head))
		return -EINVAL;
	memcpy(head, text, colon - text);
	head[colon - text] = '\0';
	rc = parse_size(head, offset);
	if (rc)
		return rc;
	return parse_size(colon + 1, length);
}

const char *human_size(uint64_t bytes, char *buf, size_t len)
{
	static const char units[] = "BKMGTPE";
	int unit = 0;
	uint64_t whole = bytes, rest = 0;

	while (whole >= 1024 && unit < 6) {
		rest = whole % 1024;
		whole /= 1024;
		unit++;
	}
	if (unit == 0) {
		snprintf(buf, len, "%lluB", (unsigned long long)bytes);
		return buf;
	}
	/* One decimal, rounded, dropped when it is zero: 1.5K, 2M, 1023.9K. */
	unsigned tenth = (unsigned)((rest * 10 + 512) / 1024);
	if (tenth == 10) {
		whole++;
		tenth = 0;
		if (whole == 1024 && unit < 6) {
			whole = 1;
			unit++;
		}
	}
	if (tenth)
		snprintf(buf, len, "%llu.%u%c", (unsigned long long)whole, tenth, units[unit]);
	else
		snprintf(buf, len, "%llu%c", (unsigned long long)whole, units[unit]);
	return buf;
}

const char *bench_size_label(uint64_t bytes, char *buf, size_t len)
{
	static const char units[] = "KMGT";
	unsigned unit = 0;

	if (bytes < 1024 || bytes % 1024) {
		snprintf(buf, len, "%llu", (unsigned long long)bytes);
		return buf;
	}
	bytes /= 1024;
	while (bytes >= 1024 && bytes % 1024 == 0 && unit < 3) {
		bytes /= 1024;
		unit++;
	}
	snprintf(buf, len, "%llu%c", (unsigned long long)bytes, units[unit]);
	return buf;
}

uint64_t pages_for(uint64_t bytes, uint64_t page)
{
	return bytes / page + (bytes % page != 0);
}

uint64_t page_size(void)
{
	static uint64_t size;

	if (!size) {
		long value = sysconf(_SC_PAGESIZE);
		size = value > 0 ? (uint64_t)value : 4096;
	}
	return size;
}

uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void *xrealloc(void *ptr, size_t size)
{
	void *p = realloc(ptr, size ? size : 1);

	if (!p) {
		warn_errno("memory", ENOMEM);
		abort();
	}
	return p;
}

void *xcalloc(size_t count, size_t size)
{
	void *p = calloc(count ? count : 1, size ? size : 1);

	if (!p) {
		warn_errno("memory", ENOMEM);
		abort();
	}
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p) {
		warn_errno("memory", ENOMEM);
		abort();
	}
	return p;
}

int parse_seconds(const char *text, double max, bool zero_allowed, double *out)
{
	char *end;
	double value;

	errno = 0;
	value = strtod(text, &end);
	if (errno || end == text || *end || !(value >= 0) || (!zero_allowed && value == 0) || value > max)
		return -EINVAL;
	*out = value;
	return 0;
}

void sleep_until_ns(uint64_t deadline_ns, volatile sig_atomic_t *stop)
{
	struct timespec ts = { (time_t)(deadline_ns / 1000000000ull), (long)(deadline_ns % 1000000000ull) };

	while (!(stop && *stop) && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

size_t utf8_decode(const char *text, uint32_t *code_point)
{
	const unsigned char *p = (const unsigned char *)text;
	size_t len = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : 2;
	uint32_t c = p[0] & (0x7f >> len);

	if (p[0] < 0x80) {
		*code_point = p[0];
		return p[0] ? 1 : 0;
	}
	if (p[0] < 0xc2 || p[0] > 0xf4)
		return 0;
	for (size_t i = 1; i < len; i++) { /* a NUL is no continuation byte: never read past the end */
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10ffff)) || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*code_point = c;
	return len;
}

/*
 * Characters that are invisible, or that make a terminal or a text viewer do something:
 * besides the controls (C0, DEL, C1), the bidirectional controls that reorder what follows
 * them (CVE-2021-42574, "Trojan Source"), the separators some viewers break lines at, and
 * the format characters that show nothing (zero-width spaces, invisible operators, the
 * Hangul fillers, tags that spell ASCII unseen). Kept: the zero-width joiners (Persian,
 * Indic scripts and emoji need them) and variation selectors, which change a visible
 * character and hide nothing.
 */
static const struct { uint32_t first, last; } hidden_ranges[] = {
	{ 0x0000, 0x001f },   /* C0 controls: ESC starts CSI and OSC sequences */
	{ 0x007f, 0x009f },   /* DEL and the C1 controls: U+009B is CSI, U+009D is OSC */
	{ 0x061c, 0x061c },   /* ARABIC LETTER MARK (bidirectional) */
	{ 0x115f, 0x1160 },   /* HANGUL CHOSEONG and JUNGSEONG FILLER: blank */
	{ 0x180e, 0x180e },   /* MONGOLIAN VOWEL SEPARATOR: zero width */
	{ 0x200b, 0x200b },   /* ZERO WIDTH SPACE */
	{ 0x200e, 0x200f },   /* LEFT-TO-RIGHT and RIGHT-TO-LEFT MARK */
	{ 0x2028, 0x202e },   /* LINE and PARAGRAPH SEPARATOR; LRE, RLE, PDF, LRO, RLO */
	{ 0x2060, 0x206f },   /* WORD JOINER, invisible operators; LRI, RLI, FSI, PDI; deprecated format */
	{ 0x3164, 0x3164 },   /* HANGUL FILLER: blank */
	{ 0xfeff, 0xfeff },   /* ZERO WIDTH NO-BREAK SPACE (a byte order mark) */
	{ 0xffa0, 0xffa0 },   /* HALFWIDTH HANGUL FILLER: blank */
	{ 0xfff0, 0xfffb },   /* unassigned ignorables; interlinear annotation controls */
	{ 0x1bca0, 0x1bca3 }, /* shorthand format controls */
	{ 0x1d173, 0x1d17a }, /* musical symbol format controls */
	{ 0xe0000, 0xe007f }, /* tags: ASCII nobody sees */
};

bool char_hidden(uint32_t c)
{
	for (size_t i = 0; i < sizeof(hidden_ranges) / sizeof(hidden_ranges[0]) && c >= hidden_ranges[i].first; i++)
		if (c <= hidden_ranges[i].last)
			return true;
	return false;
}

bool locale_is_utf8(void)
{
	return MB_CUR_MAX > 1 && !strcmp(nl_langinfo(CODESET), "UTF-8");
}

/* Whether the terminal's locale shows c (not ASCII) as a character of its own. */
static bool locale_shows(uint32_t c, bool utf8)
{
#ifdef __STDC_ISO_10646__ /* wchar_t is the code point: glibc, musl */
	return utf8 && iswprint((wint_t)c);
#else
	(void)c;
	return false;
#endif
}

/* The length of text's start made of printable ASCII other than the backslash: what no flag escapes. */
static size_t plain_ascii_span(const char *text)
{
	const char *p = text;

	while (*p >= 0x20 && *p < 0x7f && *p != '\\')
		p++;
	return (size_t)(p - text);
}

char *escape_text(const char *text, unsigned what)
{
	size_t plain = plain_ascii_span(text);
	char *out, *o;
	bool utf8;

	/* Most names: nothing to escape, nor any locale to ask. */
	if (!text[plain]) {
		out = xrealloc(NULL, plain + 1);
		memcpy(out, text, plain + 1);
		return out;
	}
	out = xrealloc(NULL, plain + strlen(text + plain) * 4 + 1);
	memcpy(out, text, plain);
	o = out + plain;
	utf8 = (what & ESCAPE_LOCALE) && locale_is_utf8();
	for (const char *p = text + plain; *p;) {
		uint32_t c;
		size_t len;
		bool kept;

		if (*p >= 0x20 && *p < 0x7f && *p != '\\') { /* printable ASCII, most of any name: as it is */
			*o++ = *p++;
			continue;
		}
		len = utf8_decode(p, &c);
		if (!len) { /* not UTF-8: this byte, and the next one starts afresh */
			o += sprintf(o, "\\x%02x", (unsigned char)*p++);
			continue;
		}
		kept = (what & ESCAPE_KEEP_BREAKS) && (c == '\n' || c == '\t');
		if (((what & ESCAPE_CONTROL) && char_hidden(c) && !kept) || ((what & ESCAPE_BACKSLASH) && c == '\\') ||
		    ((what & ESCAPE_BACKSLASH_X) && c == '\\' && p[1] == 'x') ||
		    ((what & ESCAPE_LOCALE) && c >= 0x80 && !locale_shows(c, utf8))) {
			for (size_t i = 0; i < len; i++) /* every byte: \xNN reads back to bytes, whatever they are */
				o += sprintf(o, "\\x%02x", (unsigned char)*p++);
			continue;
		}
		memcpy(o, p, len);
		o += len;
		p += len;
	}
	*o = '\0';
	return out;
}

size_t text_fit(const char *text, size_t columns, size_t *width)
{
	size_t used = 0, bytes = 0;

	/* Printable ASCII other than the backslash (which may start an escape): a column a byte. */
	while (text[bytes] >= 0x20 && text[bytes] < 0x7f && text[bytes] != '\\' && used < columns)
		used++, bytes++;
	while (text[bytes]) {
		uint32_t c;
		size_t len = utf8_decode(text + bytes, &c);
		int w = 1;

		if (!len)
			len = 1; /* not UTF-8 (text not escaped): a byte a column */
		else if (c == '\\' && text[bytes + 1] == 'x' && isxdigit((unsigned char)text[bytes + 2]) &&
			 isxdigit((unsigned char)text[bytes + 3]))
			len = 4, w = 4; /* an escape is cut whole or not at all */
		else if (c >= 0x80 && (w = wcwidth((wchar_t)c)) < 0)
			w = 1; /* what the locale does not know: as a terminal draws a replacement */
		if (used + (size_t)w > columns)
			break;
		used += (size_t)w;
		bytes += len;
	}
	if (width)
		*width = used;
	return bytes;
}

size_t text_width(const char *text)
{
	size_t width;

	text_fit(text, SIZE_MAX, &width);
	return width;
}

const char *printable_name(const char *name)
{
	static char *buffers[4];
	static unsigned next;
	char **buffer = &buffers[next++ % 4];

	free(*buffer);
	*buffer = escape_text(name, ESCAPE_TERMINAL);
	return *buffer;
}

pid_t fork_light(void)
{
	FILE *maps = fopen("/proc/self/maps", "re");
	char line[512];

	while (maps && fgets(line, sizeof(line), maps)) {
		unsigned long from, to;

		if (strstr(line, "anon_inode:bpf-map") && sscanf(line, "%lx-%lx", &from, &to) == 2 && to > from)
			(void)madvise((void *)from, to - from, MADV_DONTFORK); /* a mapping it refuses is copied */
	}
	if (maps)
		fclose(maps);
	return fork();
}
