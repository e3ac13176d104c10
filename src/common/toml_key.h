/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * toml_key.h: one string setting of a TOML file (podman's storage.conf, nerdctl.toml), read as the
 * untrusted text it may be: the whole document followed as TOML writes it, no general parser.
 */
#ifndef IOLENS_TOML_KEY_H
#define IOLENS_TOML_KEY_H

#include <stddef.h>

/* What a configuration file says of one setting. */
enum setting {
	SETTING_ABSENT, /* not there: its program's default holds */
	SETTING_FOUND,
	SETTING_BAD,    /* a file its program would refuse, or the setting not one to take: nothing holds */
};

/*
 * The string value of key in table (NULL: the document's root table), in a TOML document of len
 * bytes (no NUL needed after them): "key = ..." under "[table]", or "table.key = ..." or
 * "table = { key = ... }" above any table, keys bare or quoted, the value in any of TOML's four
 * kinds of string (escapes undone), comments and blank space anywhere TOML allows them. Found:
 * the value in value, NUL-terminated. Bad: the document is not TOML as far as this reader
 * follows it (every line, string, array, inline table and header; numbers and dates only as runs
 * of their characters), the setting is given twice or is not a string (a table, a number), its
 * value holds a NUL or has size bytes or more, or arrays and tables nest deeper than 32.
 */
enum setting toml_string(const char *text, size_t len, const char *table, const char *key, char *value, size_t size);

#endif
