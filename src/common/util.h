/* SPDX-License-Identifier: GPL-2.0-or-later */
/* util.h: messages in the house format, number parsing and formatting shared by every command. */
#ifndef IOLENS_UTIL_H
#define IOLENS_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Exit statuses: everything worked, something failed, bad usage. */
enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

/* What messages start with: "iolens pcstat", or "pcstat" when run through a link. */
extern const char *program_name;

/* "PROGRAM: WHAT: strerror(err)" on stderr. */
void warn_errno(const char *what, int err);
/*
 * "PROGRAM: message" on stderr, once per run: the same text again (per disk, per collector,
 * per interval) is not repeated. One line, one cause, at most ~100 characters; what explains
 * it goes to the man page's DIAGNOSTICS, or to warn_detail.
 */
void warn_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Said as warn_msg is, but only with warn_verbose (a command's -v): the longer explanation. */
void warn_detail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern bool warn_verbose;
/* A reason for a caller to say (a parser's refusal): the message into why, and -1 to return. */
int say_why(char *why, size_t why_len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A usage error: the message, a pointer to --help, and exit(2). */
_Noreturn void usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * getopt_long, but what is wrong is said as a message is (warn_msg), so that an option from a
 * hostile file name (pcstat * where a file is named "--" and U+202E) is escaped: getopt would
 * print it raw. Every command parses its options with it.
 */
struct option;
int next_option(int argc, char *const argv[], const char *optstring, const struct option *longopts, int *longindex);

/* next_option's errors as dstat says them: Python getopt's words, on stdout, exit(1) (the dstat link). */
void option_errors_as_python(void);

/* After next_option has said what was wrong: the pointer to --help, and exit(2). */
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

/* 4096 -> "4K", 1048576 -> "1M", 1000 -> "1000": block sizes as people write them (bench's, exact). */
const char *bench_size_label(uint64_t bytes, char *buf, size_t len);

/* Pages that cover a byte length (a partial last page counts). */
uint64_t pages_for(uint64_t bytes, uint64_t page_size);
/* The system page size, cached. */
uint64_t page_size(void);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t monotonic_ns(void);
/* The wall clock (CLOCK_REALTIME), ns since the epoch. */
uint64_t realtime_ns(void);
/*
 * fork(2), the child without this process's eBPF maps and ring buffers (anon_inode:bpf-map
 * mappings, tens of MB where cachestat counts per file): a fork would copy their page tables,
 * and the children iolens makes (a probe, a looker of names) never use them.
 */
pid_t fork_light(void);

/* realloc and strdup that report and abort on out-of-memory, so callers need no path for it. */
void *xrealloc(void *ptr, size_t size);
void *xcalloc(size_t count, size_t size);
char *xstrdup(const char *s);

/*
 * text with the bytes that are not UTF-8 written as \xNN, and with the flags:
 *   ESCAPE_CONTROL      the characters char_hidden() names, each of their bytes (U+009B is
 *                       \xc2\x9b, U+202E \xe2\x80\xae): what moves a terminal's cursor, starts an
 *                       escape sequence, reorders text or shows nothing
 *   ESCAPE_BACKSLASH    the backslash itself (\x5c), so the result reads back unambiguously
 *   ESCAPE_KEEP_BREAKS  with ESCAPE_CONTROL: line feeds and tabs kept (CSV quotes them)
 *   ESCAPE_LOCALE       what the terminal's locale (LC_CTYPE) cannot show: in a UTF-8 locale
 *                       the characters iswprint() rejects (unassigned, noncharacters), in any
 *                       other every byte above 0x7f (which an 8-bit terminal may take for C1)
 *   ESCAPE_BACKSLASH_X  a backslash before an x only: util-linux's rule, which reads back as
 *                       well (the fincore link keeps fincore's output)
 * A new string, always valid UTF-8; \xNN stands for one byte, so it reads back exactly.
 */
#define ESCAPE_CONTROL 0x1u
#define ESCAPE_BACKSLASH 0x2u
#define ESCAPE_KEEP_BREAKS 0x4u
#define ESCAPE_LOCALE 0x8u
#define ESCAPE_BACKSLASH_X 0x10u
/* For people: tables, lines, full screens and messages (iolens(1), NAMES IN OUTPUT). */
#define ESCAPE_TERMINAL (ESCAPE_CONTROL | ESCAPE_BACKSLASH | ESCAPE_LOCALE)
char *escape_text(const char *text, unsigned what);

/*
 * The length of the valid UTF-8 character text starts with (1 to 4), and its code point;
 * 0 at the end or when it is not valid UTF-8 (overlong, a surrogate, past U+10FFFF, cut).
 */
size_t utf8_decode(const char *text, uint32_t *code_point);

/*
 * Whether c is a control (C0, DEL, C1), a bidirectional control (U+061C, U+200E, U+200F,
 * U+202A..U+202E, U+2066..U+2069), a line or paragraph separator, or a format character
 * that shows nothing (zero-width spaces, fillers, tags): what no name may carry to a
 * terminal as it is. Zero-width joiners and variation selectors are not.
 */
bool char_hidden(uint32_t c);

/* Whether LC_CTYPE's character set is UTF-8. */
bool locale_is_utf8(void);

/*
 * The bytes of text's longest start that fits in columns of a terminal (wide characters
 * take two, combining ones none, an escape \xNN is never cut), and in *width (when not
 * NULL) the columns it takes.
 */
size_t text_fit(const char *text, size_t columns, size_t *width);
/* The columns text takes on a terminal. */
size_t text_width(const char *text);

/*
 * A name fit for a terminal: escape_text(name, ESCAPE_TERMINAL). The result lives until the
 * fourth next call, so up to four names can go into one message.
 */
const char *printable_name(const char *name);

#endif
