/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench/json-lines.sh's program: one interval of ROWS rows shaped as cachetop --files' (13 columns,
 * a path of ~30 characters) written as lines in a format; prints the time per row.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "render/out.h"

static const char usage[] =
	"usage: json-lines table|csv|json ROWS [OUTPUT]\n"
	"  Writes one group of ROWS rows as iolens cachetop --files writes an interval (out_table_lines,\n"
	"  out_table_group) to OUTPUT (default /dev/null), and prints one line:\n"
	"    FORMAT ROWS wall_us W cpu_us C\n"
	"  W and C: the wall and CPU time (of this process) per row, from the first row to the output flushed.\n";

enum { A_T, A_FILE, A_H, A_M, A_D, A_RH, A_WH, A_AC, A_R, A_MA, A_WM, A_E, A_RF, A_N };

/* As src/cmd/cachetop.c's, the columns --files prints by default and to programs. */
static const struct out_column columns[A_N] = {
	[A_T] = { "time_ns", "TIME", NULL, OUT_CLOCK, true, "x", .where = OUT_GROUP },
	[A_FILE] = { "file", "FILE", NULL, OUT_TEXT, true, "x" },
	[A_H] = { "hits", "HITS", NULL, OUT_COUNT, true, "x", .width = 8 },
	[A_M] = { "misses", "MISSES", NULL, OUT_COUNT, true, "x", .width = 8 },
	[A_D] = { "dirties", "DIRTIES", NULL, OUT_COUNT, true, "x", .width = 8 },
	[A_RH] = { "read_hit", "READ_HIT%", NULL, OUT_RATIO, true, "x", .decimals = 1, .width = 10 },
	[A_WH] = { "write_hit", "WRITE_HIT%", NULL, OUT_RATIO, true, "x", .decimals = 1, .width = 10 },
	[A_AC] = { "accesses", "A", NULL, OUT_COUNT, true, "x", .where = OUT_DATA_ONLY },
	[A_R] = { "reads", "R", NULL, OUT_COUNT, true, "x", .where = OUT_DATA_ONLY },
	[A_MA] = { "maps", "M", NULL, OUT_COUNT, true, "x", .where = OUT_DATA_ONLY },
	[A_WM] = { "write_misses", "W", NULL, OUT_COUNT, true, "x", .where = OUT_DATA_ONLY },
	[A_E] = { "evictions", "E", NULL, OUT_COUNT, true, "x", .where = OUT_DATA_ONLY },
	[A_RF] = { "refaults", "REFAULTS", NULL, OUT_COUNT, true, "x", .width = 8 },
};

static double seconds(clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct out_options opts = { .format = OUT_JSON };
	struct out_table *table;
	struct out_row *group;
	double wall, cpu;
	char path[128], *end;
	unsigned long rows;
	FILE *out;

	if (argc < 3 || argc > 4 || (rows = strtoul(argv[2], &end, 10)) == 0 || *end) {
		fputs(usage, stderr);
		return 2;
	}
	if (!strcmp(argv[1], "table"))
		opts.format = OUT_TABLE;
	else if (!strcmp(argv[1], "csv"))
		opts.format = OUT_CSV;
	else if (strcmp(argv[1], "json")) {
		fputs(usage, stderr);
		return 2;
	}
	out = fopen(argc > 3 ? argv[3] : "/dev/null", "w");
	if (!out) {
		perror(argc > 3 ? argv[3] : "/dev/null");
		return 1;
	}
	table = out_table_new(columns, A_N, &opts, "files");
	out_table_lines(table, out);
	wall = seconds(CLOCK_MONOTONIC);
	cpu = seconds(CLOCK_PROCESS_CPUTIME_ID);
	group = out_table_group(table, "interval");
	out_set_count(group, A_T, 1234567890123456789ull);
	for (unsigned long i = 0; i < rows; i++) {
		struct out_row *row = out_row_add(table);

		snprintf(path, sizeof(path), "/srv/data/dir%lu/file-%lu.dat", i % 100, i);
		out_set_text(row, A_FILE, path);
		out_set_count(row, A_H, i * 3);
		out_set_count(row, A_M, i);
		out_set_count(row, A_D, 0);
		out_set_real(row, A_RH, 0.75);
		out_set_count(row, A_AC, i * 4);
		out_set_count(row, A_R, i * 4);
		out_set_count(row, A_MA, 0);
		out_set_count(row, A_WM, 0);
		out_set_count(row, A_E, 1);
		out_set_count(row, A_RF, 0);
	}
	if (out_table_group_end(table) || fflush(out)) {
		perror("write");
		return 1;
	}
	cpu = seconds(CLOCK_PROCESS_CPUTIME_ID) - cpu;
	wall = seconds(CLOCK_MONOTONIC) - wall;
	printf("%s %lu wall_us %.3f cpu_us %.3f\n", argv[1], rows, wall * 1e6 / (double)rows, cpu * 1e6 / (double)rows);
	out_table_free(table);
	return fclose(out) ? 1 : 0;
}
