/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * monitor.h: the lines of a live monitor, as dstat draws them (two header rows, coloured values
 * with units), and their CSV.
 */
#ifndef IOLENS_MONITOR_H
#define IOLENS_MONITOR_H

/*
 * A monitor line is a stream, printed as samples come, with group titles over columns:
 * not a table whose widths wait for all rows, which is why this is not libsmartcols.
 *
 * ----total-cpu-usage---- -dsk/total- -net/total-
 * usr sys idl wai stl| read  writ| recv  send
 *   2   1  97   0   0|  12k  340k|   0     0
 */

#include <stdbool.h>
#include <stdio.h>

enum mon_type {
	MON_PERCENT, /* dstat's 'p': a whole percentage */
	MON_DECIMAL, /* 'd': a whole number, scaled with k, M, G to fit */
	MON_BYTES,   /* 'b': bytes, scaled with B, k, M, G (powers of 1024) */
	MON_FLOAT,   /* 'f': a number with as many decimals as fit */
	MON_TEXT,    /* 's': text, left-aligned */
	MON_NAME,    /* text as MON_TEXT (a process's name), and in CSV too, quoted */
	MON_BITS,    /* 'b' under dstat's --bits: bytes shown as bits, scaled with b, k, M, G (powers of 1000) */
};

struct mon_column {
	const char *nick;  /* the subtitle, at most width characters */
	const char *key;   /* for JSON and CSV: "usr", "read" */
	const char *unit;  /* for the CSV header and JSON keys: "pct", "bytes_per_s", "" */
	enum mon_type type;
	int width;
	double scale;      /* dstat's: 1000 or 1024 for units, else the step of the colour bands */
};

/* One group of columns: a title over them, and the values of this sample. */
struct mon_group {
	char title[64];    /* "total cpu usage", "dsk/vda" */
	char key[64];      /* "cpu_total", "dsk_vda": CSV headers and JSON are built from it */
	const struct mon_column *columns;
	unsigned ncolumns;
	double values[40]; /* in the table's units; NaN: unknown, shown as '-' */
	double raw[40];    /* the same in raw units (bytes, ns, counts) for JSON and CSV; NaN: null */
	char text[64];     /* MON_TEXT and MON_NAME columns show this */
	const char *csv_text; /* MON_NAME: what CSV writes (the name as it is), else text */
	bool joined;       /* another item of the previous group's plugin (cpu1 after cpu0): dstat's ':' between them */
	/* one subtitle centred over the whole group (dstat's top plugins), else each column's nick */
	const char *subtitle;
	bool blank;        /* this sample shows spaces (a top plugin whose processes did nothing, as dstat) */
	unsigned glued;    /* bit c: column c right after the one before, no space between (dstat's top plugins) */
	unsigned after_column; /* after: printed after this column's value (0: nowhere), "%" in dstat's top-cpu-adv */
	const char *after;
};

struct monitor {
	FILE *out;
	bool color;     /* ANSI colours, as dstat's default theme */
	bool light;     /* dstat's --bw theme (a light background) */
	bool integer;   /* --integer: no decimals */
	bool floats;    /* --float: decimals wherever they fit */
	bool more;      /* groups were left out for want of room: lines end with '>', as dstat's */
};

/* The width of a group's columns and the spaces between them. */
int monitor_group_width(const struct mon_group *g);

/* The two header rows. A group is separated from the next by '|' (in the subtitles), or ':' when joined. */
void monitor_header(const struct monitor *m, const struct mon_group *groups, unsigned ngroups);
/*
 * One line of values. final: the end of an interval (dstat's low colours); else an
 * intermediate update of a line still counting (high colours), which the caller redraws.
 */
void monitor_line(const struct monitor *m, const struct mon_group *groups, unsigned ngroups, bool final);

/*
 * CSV: one header line of "<group key>_<column key>_<unit>" names after time_ns and
 * since_boot, then one line per sample, written whole or not at all (a signal between
 * two lines never leaves half of one). Returns 0 or -errno.
 */
int monitor_csv_header(FILE *out, const struct mon_group *groups, unsigned ngroups);
int monitor_csv_line(FILE *out, const struct mon_group *groups, unsigned ngroups, unsigned long long time_ns,
		     bool since_boot);

/*
 * dstat's own CSV (its --output, through the link): a line of quoted group titles and one of
 * quoted column names ("item:name" for a plugin's several items), then the values as shown on
 * screen, in three decimals or none when whole. Returns 0 or -errno.
 */
int monitor_csv_dstat_header(FILE *out, const struct mon_group *groups, unsigned ngroups);
int monitor_csv_dstat_line(FILE *out, const struct mon_group *groups, unsigned ngroups);

/* A value as dstat prints it in width characters (exposed for tests): buf holds width + 1. */
void monitor_format(double value, enum mon_type type, int width, double scale, bool integer, bool floats,
		    char *buf, int *unit_index);

#endif
