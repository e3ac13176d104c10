/* SPDX-License-Identifier: GPL-2.0-or-later */
/* top_int.c: iolens stat's group top-int (--top-int): "most frequent". */
#include <stdio.h>
#include <string.h>

#include "cmd/stat_group.h"

enum { NAME, RATE };
static const struct mon_column columns[] = {
	[NAME] = { "interrupt", "name", "", MON_NAME, 15, 0 },
	[RATE] = { "int/s", "rate", "per_s", MON_DECIMAL, 5, 1000 },
};

/*
 * An interrupt's devices as dstat's top-int names them: "_hcd:" made "/", "@pci" and the
 * [:0-9+.] after it left out, "ahci[...]" made "ahci".
 */
static void int_name(const char *devices, char *out, size_t size)
{
	size_t used = 0;

	for (const char *p = devices; *p && used + 1 < size;) {
		if (!strncmp(p, "_hcd:", 5)) {
			out[used++] = '/';
			p += 5;
		} else if (!strncmp(p, "@pci", 4) && p[4] && strchr(":0123456789+.", p[4])) {
			for (p += 4; *p && strchr(":0123456789+.", *p); p++)
				;
		} else if (!strncmp(p, "ahci[", 5) && p[5] && p[5] != ']' &&
			   p[5 + strspn(p + 5, ":0123456789abcdefghijklmnopqrstuvwxyz.")] == ']') {
			size_t n = 5 + strspn(p + 5, ":0123456789abcdefghijklmnopqrstuvwxyz.") + 1;
			for (const char *a = "ahci"; *a && used + 1 < size; a++)
				out[used++] = *a;
			p += n;
		} else {
			out[used++] = *p++;
		}
	}
	out[used] = '\0';
}

/* dstat's top-int: the numbered interrupt with the most per second, named by its devices. */
static void compute(struct group *g, const struct system_sample *then, const struct system_sample *now,
		    double seconds, bool since_boot)
{
	const struct irq_line *chosen = NULL;
	double best = 0;

	(void)since_boot;
	if (!(now->have & SYS_INTERRUPTS)) {
		stat_top_name(g, 0, "", false);
		all_unknown(g);
		return;
	}
	for (unsigned i = 0; i < now->interrupts.count; i++) {
		const struct irq_line *b = &now->interrupts.line[i], *a = NULL;
		double value;

		if (b->name[0] < '0' || b->name[0] > '9')
			continue;
		for (unsigned j = 0; (then->have & SYS_INTERRUPTS) && j < then->interrupts.count && !a; j++)
			if (!strcmp(then->interrupts.line[j].name, b->name))
				a = &then->interrupts.line[j];
		if (!a && (then->have & SYS_INTERRUPTS))
			continue; /* new since: its first interval is not known */
		value = rate(b->count, a ? a->count : 0, seconds);
		if (value > best)
			best = value, chosen = b;
	}
	if (chosen) {
		/* The devices: what follows the chip and the trigger ("IO-APIC 1-edge i8042"), else "int N". */
		const char *devices = chosen->what;
		char name[64];
		for (int skip = 0; skip < 2 && devices; skip++) {
			devices = strchr(devices, ' ');
			if (devices)
				devices++;
		}
		if (devices && *devices)
			int_name(devices, name, sizeof(name));
		else
			snprintf(name, sizeof(name), "int %s", chosen->name);
		stat_top_name(g, 0, name, false);
	} else {
		stat_top_name(g, 0, "", false);
	}
	g->shown.blank = !chosen;
	set_same(g, 0, NAN);
	set_same(g, 1, best);
}

const struct stat_group group_top_int = {
	.rank = 43,
	.plugins = { "top-int" },
	.section = GROUP_DSTAT_PLUGIN,
	.plugin_option = true,
	.title = "most frequent",
	.key = "top_int",
	.columns = columns,
	.ncolumns = sizeof(columns) / sizeof(columns[0]),
	.needs = SYS_INTERRUPTS,
	.subtitle = "interrupt",
	.glued = 1u << 1,
	.top = true,
	.compute = compute,
};
