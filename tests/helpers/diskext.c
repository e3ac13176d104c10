/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * diskext.c: samples /proc/diskstats, waits, samples again and prints one device's iostat -x
 * figures as "key value" lines, keyed as iostat -o JSON names them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collect/diskstats.h"
#include "common/util.h"
#include "model/disk.h"

static void sleep_seconds(double seconds)
{
	struct timespec ts = {.tv_sec = (time_t)seconds, .tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9)};

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

static int sample(struct diskstats *stats, uint64_t *ns)
{
	int rc = diskstats_read(stats);

	*ns = monotonic_ns();
	if (rc)
		fprintf(stderr, "diskext: /proc/diskstats: %s\n", strerror(-rc));
	return rc;
}

int main(int argc, char **argv)
{
	struct diskstats before, after;
	const struct disk_stats *a, *b;
	struct disk_ext x;
	uint64_t t0, t1;
	double seconds, interval;

	if (argc != 3 || (interval = atof(argv[2])) <= 0) {
		fprintf(stderr, "usage: diskext DEVICE SECONDS\n");
		return 2;
	}
	if (sample(&before, &t0))
		return 1;
	sleep_seconds(interval);
	if (sample(&after, &t1))
		return 1;
	a = diskstats_find(&before, argv[1]);
	b = diskstats_find(&after, argv[1]);
	if (!a || !b) {
		fprintf(stderr, "diskext: no device %s in /proc/diskstats\n", argv[1]);
		return 1;
	}
	seconds = (double)(t1 - t0) / 1e9;
	disk_ext_compute(a, b, seconds, &x);
	printf("seconds %.6f\n", seconds);
	printf("r/s %.2f\nw/s %.2f\nd/s %.2f\nf/s %.2f\n", x.r_s, x.w_s, x.d_s, x.f_s);
	printf("rkB/s %.2f\nwkB/s %.2f\ndkB/s %.2f\n", x.rkb_s, x.wkb_s, x.dkb_s);
	printf("rrqm/s %.2f\nwrqm/s %.2f\ndrqm/s %.2f\n", x.rrqm_s, x.wrqm_s, x.drqm_s);
	printf("rrqm %.2f\nwrqm %.2f\ndrqm %.2f\n", x.rrqm_pct, x.wrqm_pct, x.drqm_pct);
	printf("r_await %.2f\nw_await %.2f\nd_await %.2f\nf_await %.2f\n", x.r_await, x.w_await, x.d_await, x.f_await);
	printf("rareq-sz %.2f\nwareq-sz %.2f\ndareq-sz %.2f\n", x.rareq_sz, x.wareq_sz, x.dareq_sz);
	printf("aqu-sz %.2f\nutil %.2f\n", x.aqu_sz, x.util);
	diskstats_free(&before);
	diskstats_free(&after);
	return 0;
}
