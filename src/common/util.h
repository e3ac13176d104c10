/* util.h: messages in the house format, number parsing and formatting shared by every command. */
#ifndef IOLENS_UTIL_H
#define IOLENS_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

/* Exit statuses: everything worked, something failed, bad usage. */
enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

/* What messages start with: "iolens pcstat", or "pcstat" when run through a link. */
extern const char *program_name;

/* "PROGRAM: WHAT: strerror(err)" on stderr. */
void warn_errno(const char *what, int err);
/* "PROGRAM: message" on stderr. */
void warn_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A reason for a caller to say (a parser's refusal): the message into why, and -1 to return. */
int say_why(char *why, size_t why_len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A usage error: the message, a pointer to --help, and exit(2). */
_Noreturn void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* After getopt has said what was wrong: the pointer to --help, and exit(2). */
_Noreturn void usage_hint(void);

/*
 * Sizes as people type them: 4096, 4k, 4K, 4KiB, 1.5M, 2G, 1T (powers of 1024; "KB"
 * style suffixes are also 1024, as dd's K is). Returns 0, or -EINVAL / -ERANGE.
 */
int parse_size(const char *text, uint64_t *out);
/* OFFSET[:LENGTH] with sizes as above; LENGTH 0 or absent means to the end. */
int parse_range(const char *text, uint64_t *offset, uint64_t *length);
/*
 * Seconds as people type them for intervals and runtimes: "1", "0.5", "2e-1". Not negative,
 * at most max; zero only when zero_allowed. 0, or -EINVAL.
 */
int parse_seconds(const char *text, double max, bool zero_allowed, double *out);
/* Sleeps until a CLOCK_MONOTONIC time (ns), or until *stop is set by a signal handler. */
void sleep_until_ns(uint64_t deadline_ns, volatile sig_atomic_t *stop);
/* A whole number, strictly: no sign, no trailing text. */
int parse_u64(const char *text, uint64_t *out);

/* 1536 -> "1.5K", as ls -h and util-linux print sizes. buf must hold 16 bytes. */
const char *human_size(uint64_t bytes, char *buf, size_t len);

/* Pages that cover a byte length (a partial last page counts). */
uint64_t pages_for(uint64_t bytes, uint64_t page_size);
/* The system page size, cached. */
uint64_t page_size(void);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t monotonic_ns(void);
/* The wall clock (CLOCK_REALTIME), ns since the epoch. */
uint64_t realtime_ns(void);

/* realloc and strdup that report and abort on out-of-memory, so callers need no path for it. */
void *xrealloc(void *ptr, size_t size);
void *xcalloc(size_t count, size_t size);
char *xstrdup(const char *s);

/*
 * text with the bytes that are not UTF-8 written as \xNN, and with ESCAPE_CONTROL control
 * characters and DEL too (what would move a terminal's cursor or start an escape sequence),
 * with ESCAPE_BACKSLASH the backslash itself (so the result reads back unambiguously).
 * A new string, always valid UTF-8.
 */
#define ESCAPE_CONTROL 0x1u
#define ESCAPE_BACKSLASH 0x2u
#define ESCAPE_KEEP_BREAKS 0x4u /* with ESCAPE_CONTROL: line feeds and tabs kept (CSV quotes them) */
char *escape_text(const char *text, unsigned what);

/*
 * A file name fit for a terminal: control characters and invalid bytes as \xNN.
 * The result lives until the next call.
 */
const char *printable_name(const char *name);

#endif
