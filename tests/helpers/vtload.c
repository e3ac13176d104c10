/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vtload.c: a scriptable libvtrace server for tests: it counts the requests its commands on stdin describe. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <vtrace.h>

/*
 * vtload SERVICE OP[=NUMBER]...   then, one command per line on stdin, each answered "ok":
 *   run OP N [NS [BYTES [ERRORS]]]  N requests of OP, each lasting NS ns (busy wait), moving
 *                                   BYTES, the first ERRORS of them failing
 *   hold OP                         begin a request of OP and keep it in flight
 *   release                         end the held requests
 *   threads K OP N NS               K threads at once, each running N requests of NS ns
 *   path                            print the segment's path
 *   quit                            close the segment and exit (EOF too)
 * VTLOAD_THREADS=N in the environment: room for N threads' shards (default 64).
 */

static struct vtrace *vt;
static unsigned nops;
static const char **names;

static unsigned op_index(const char *name)
{
	for (unsigned i = 0; i < nops; i++)
		if (!strcmp(names[i], name))
			return i;
	fprintf(stderr, "vtload: no op %s\n", name);
	exit(2);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void run(unsigned op, unsigned long n, unsigned long ns, unsigned long bytes, unsigned long errors)
{
	for (unsigned long i = 0; i < n; i++) {
		struct vtrace_token t = vtrace_begin(vt, op);
		uint64_t until = now_ns() + ns;
		while (ns && now_ns() < until)
			;
		vtrace_end(vt, t, bytes, i < errors ? EIO : 0);
	}
}

struct job {
	unsigned op;
	unsigned long n, ns;
};

static void *thread_main(void *arg)
{
	struct job *job = arg;
	run(job->op, job->n, job->ns, 0, 0);
	return NULL;
}

int main(int argc, char **argv)
{
	struct vtrace_op *ops;
	struct vtrace_token held[64];
	unsigned nheld = 0;
	char line[512], op[128];

	if (argc < 3) {
		fprintf(stderr, "usage: vtload SERVICE OP[=NUMBER]...\n");
		return 2;
	}
	nops = (unsigned)(argc - 2);
	ops = calloc(nops, sizeof(*ops));
	names = calloc(nops, sizeof(*names));
	for (unsigned i = 0; i < nops; i++) {
		char *eq = strchr(argv[i + 2], '=');
		ops[i].number = eq ? atoi(eq + 1) : -1;
		if (eq)
			*eq = '\0';
		ops[i].name = names[i] = argv[i + 2];
	}
	/* VTLOAD_THREADS: shards with an owner (small segments for the fuzzer's seed). */
	struct vtrace_options options = { .max_threads =
					      getenv("VTLOAD_THREADS") ? (unsigned)atoi(getenv("VTLOAD_THREADS")) : 0 };
	vt = vtrace_open(argv[1], ops, nops, &options);
	if (!vt) {
		perror("vtload: vtrace_open");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready %s\n", vtrace_path(vt));
	while (fgets(line, sizeof(line), stdin)) {
		unsigned long n = 0, ns = 0, bytes = 0, errors = 0, k = 0;
		if (sscanf(line, "run %127s %lu %lu %lu %lu", op, &n, &ns, &bytes, &errors) >= 2) {
			run(op_index(op), n, ns, bytes, errors);
		} else if (sscanf(line, "hold %127s", op) == 1 && nheld < 64) {
			held[nheld++] = vtrace_begin(vt, op_index(op));
		} else if (!strncmp(line, "release", 7)) {
			while (nheld)
				vtrace_end(vt, held[--nheld], 0, 0);
		} else if (sscanf(line, "threads %lu %127s %lu %lu", &k, op, &n, &ns) == 4 && k > 0 && k <= 64) {
			pthread_t threads[64];
			struct job job = { op_index(op), n, ns };
			for (unsigned long i = 0; i < k; i++)
				pthread_create(&threads[i], NULL, thread_main, &job);
			for (unsigned long i = 0; i < k; i++)
				pthread_join(threads[i], NULL);
		} else if (!strncmp(line, "path", 4)) {
			printf("%s\n", vtrace_path(vt));
		} else if (!strncmp(line, "quit", 4)) {
			break;
		} else {
			fprintf(stderr, "vtload: bad command: %s", line);
			return 2;
		}
		printf("ok\n");
	}
	vtrace_close(vt);
	free(ops);
	free(names);
	return 0;
}
