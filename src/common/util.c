/* util.c: messages, size parsing and formatting, small helpers used everywhere. */
#include "common/util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

const char *program_name = "iolens";

void warn_errno(const char *what, int err)
{
	fprintf(stderr, "%s: %s: %s\n", program_name, what, strerror(err));
}

static void vwarn_msg(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", program_name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void warn_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn_msg(fmt, ap);
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
	vwarn_msg(fmt, ap);
	va_end(ap);
	usage_hint();
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

/* The length of the valid UTF-8 sequence at p (no overlong form, no surrogate, at most U+10FFFF), or 0. */
static size_t utf8_length(const unsigned char *p)
{
	size_t len = p[0] >= 0xf0 ? 4 : p[0] >= 0xe0 ? 3 : 2;
	uint32_t c = p[0] & (0x7f >> len);

	if (p[0] < 0xc2 || p[0] > 0xf4)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10ffff)) || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return len;
}

char *escape_text(const char *text, unsigned what)
{
	char *out = xcalloc(strlen(text) * 4 + 1, 1), *o = out;

	for (const unsigned char *p = (const unsigned char *)text; *p;) {
		size_t len = *p >= 0x80 ? utf8_length(p) : 1;

		bool kept = (what & ESCAPE_KEEP_BREAKS) && (*p == '\n' || *p == '\t');

		if (!len || ((what & ESCAPE_CONTROL) && (*p < 0x20 || *p == 0x7f) && !kept) ||
		    ((what & ESCAPE_BACKSLASH) && *p == '\\')) {
			o += sprintf(o, "\\x%02x", *p++);
			continue;
		}
		memcpy(o, p, len);
		o += len;
		p += len;
	}
	*o = '\0';
	return out;
}

const char *printable_name(const char *name)
{
	static char *buffer;

	free(buffer);
	buffer = escape_text(name, ESCAPE_CONTROL | ESCAPE_BACKSLASH);
	return buffer;
}
