/* SPDX-License-Identifier: GPL-2.0-or-later */
/* recorded.c: the doctor's window iolens record --doctor kept at a time, for cachetop --at and biotop --at. */
#include "cmd/recorded.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "collect/sysroot_tree.h"
#include "common/util.h"
#include "common/when.h"
#include "store/store.h"

const char *recorded_clock(uint64_t ns, char *buf, size_t size)
{
	time_t t = (time_t)(ns / 1000000000ull);
	struct tm tm;

	if (!localtime_r(&t, &tm) || !strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, size, "@%llu", (unsigned long long)(ns / 1000000000ull));
	return buf;
}

const char *recorded_moment(uint64_t ns, char *buf, size_t size)
{
	char stamp[32], today[32];
	const char *date_end = strchr(recorded_clock(ns, stamp, sizeof(stamp)), ' ');

	recorded_clock(realtime_ns(), today, sizeof(today));
	if (date_end && !strncmp(stamp, today, (size_t)(date_end - stamp) + 1))
		snprintf(buf, size, "%s", date_end + 1);
	else
		snprintf(buf, size, "%s", stamp);
	return buf;
}

int recorded_gap(struct recorded_gap *gap, uint64_t real_ns, uint64_t mono_ns, const char *boot)
{
	bool restarted = false;
	char a[32], b[32];

	if (gap->mono_ns) {
		double drift = ((double)real_ns - (double)gap->real_ns) - ((double)mono_ns - (double)gap->mono_ns);

		restarted = mono_ns < gap->mono_ns || (boot[0] && gap->boot[0] && strcmp(boot, gap->boot));
		if (restarted)
			warn_msg("the machine restarted between %s and %s: its counters began again",
				 recorded_clock(gap->real_ns, a, sizeof(a)), recorded_clock(real_ns, b, sizeof(b)));
		else if (fabs(drift) > 1e9)
			warn_msg("the clock was set %+.0f s between %s and %s: times shown are the clock's",
				 drift / 1e9, recorded_clock(gap->real_ns, a, sizeof(a)),
				 recorded_clock(real_ns, b, sizeof(b)));
	}
	gap->real_ns = real_ns;
	gap->mono_ns = mono_ns;
	if (boot[0] || restarted)
		snprintf(gap->boot, sizeof(gap->boot), "%s", boot);
	return restarted;
}

const char *recorded_boot(const unsigned char *tree, size_t len, char *buf, size_t size)
{
	struct tree_entry entry;
	size_t at = 0, n;

	buf[0] = '\0';
	while (tree_next(tree, len, &at, &entry) == 1) {
		if (entry.type != 'F' || strcmp(entry.path, "/proc/sys/kernel/random/boot_id"))
			continue;
		n = entry.len < size ? entry.len : size - 1;
		memcpy(buf, entry.data, n);
		buf[n] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		break;
	}
	return buf;
}

void recorded_range(const char *from, const char *to, const char **dir, uint64_t *from_ns, uint64_t *to_ns)
{
	uint64_t now = realtime_ns();
	char why[512];

	*to_ns = now;
	if (when_parse(from, now, from_ns, why, sizeof(why)) != 0)
		usage_error("--from: %s", why);
	if (to && when_parse(to, now, to_ns, why, sizeof(why)) != 0)
		usage_error("--to: %s", why);
	if (*to_ns < *from_ns)
		usage_error("--to %s is before --from %s", to, from);
	if (!*dir)
		*dir = store_default_dir(false);
}

int recorded_snapshot_at(const char *dir, const char *when, struct doctor_snapshot *out, uint64_t *start_ns,
			 uint64_t *end_ns)
{
	struct store_reader *reader;
	struct store_frame frame;
	uint64_t at;
	char why[512], a[32], b[32];
	const char *said;
	int found = 0;

	if (when_parse(when, realtime_ns(), &at, why, sizeof(why)) != 0)
		usage_error("--at: %s", why);
	if (!dir)
		dir = store_default_dir(false);
	if (store_reader_open(&reader, dir, at, UINT64_MAX, why, sizeof(why)) != 0) {
		warn_msg("%s", why);
		return EXIT_FAIL;
	}
	while (!found && store_reader_next(reader, &frame) == 1) {
		if (frame.kind != STORE_KIND_DOCTOR)
			continue;
		if (doctor_snapshot_parse((const char *)frame.data, frame.len, out, why, sizeof(why)) != 0) {
			warn_msg("%s: the window of %s: %s", printable_name(dir),
				 recorded_clock(frame.real_ns, a, sizeof(a)), why);
			continue;
		}
		found = 1;
		*end_ns = frame.real_ns;
		*start_ns = frame.real_ns - (uint64_t)(out->seconds * 1e9);
	}
	if ((said = store_reader_said(reader)))
		warn_msg("%s: %s", printable_name(dir), said);
	store_reader_close(reader);
	if (!found) {
		warn_msg("%s: no window of doctor's recorded at %s or after (iolens record --doctor keeps them)",
			 printable_name(dir), when);
		return EXIT_FAIL;
	}
	if (*start_ns > at)
		warn_msg("nothing recorded at %s: the next window, from %s to %s", when,
			 recorded_clock(*start_ns, a, sizeof(a)), recorded_clock(*end_ns, b, sizeof(b)));
	return 0;
}
