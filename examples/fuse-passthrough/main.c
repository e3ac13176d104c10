/* SPDX-License-Identifier: MIT */
/* main.c: fuse-passthrough, a libfuse3 low-level passthrough filesystem that counts every request with libvtrace. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "passthrough.h"

#ifndef IOLENS_VERSION
#define IOLENS_VERSION "0"
#endif

volatile sig_atomic_t pt_stopping;
volatile sig_atomic_t pt_hang_released;
volatile sig_atomic_t pt_slow_on;

static void usage(FILE *out)
{
	fputs("Usage:\n"
	      " fuse-passthrough [options] SOURCE MOUNTPOINT\n"
	      "\n"
	      "Mirrors the directory SOURCE at MOUNTPOINT through FUSE, and counts every request in\n"
	      "a vtrace segment, $VTRACE_DIR/vtrace.SERVICE.PID (/dev/shm by default), that\n"
	      "`iolens vstat` reads. Serves in the foreground until unmounted (fusermount3 -u) or\n"
	      "sent SIGINT or SIGTERM; the segment goes with it.\n"
	      "\n"
	      "Options:\n"
	      " -f, --foreground       stay in the foreground (it always does)\n"
	      " -s, --single-thread    serve one request at a time\n"
	      " -o OPTIONS             libfuse and mount options: allow_other, default_permissions ...\n"
	      "     --service NAME     the service the segment is named after (default fuse-passthrough)\n"
	      "     --no-vtrace        count nothing: vtrace_begin and vtrace_end get no handle\n"
	      "     --timeout SECONDS  how long the kernel may cache names and attributes (default 1)\n"
	      "     --xattr            pass extended attributes through (default: ENOSYS)\n"
	      "     --hang-op OP       a test switch: the first request of OP (FUSE_MKNOD, mknod ...)\n"
	      "                        stays in flight until the server gets SIGUSR1\n"
	      "     --hang-all         with --hang-op: every request of OP until SIGUSR1, not the first\n"
	      "     --slow-op OP:MS    a test switch: every request of OP (as for --hang-op) takes MS\n"
	      "                        milliseconds (1-60000) longer while it is on; it starts off,\n"
	      "                        and each SIGUSR2 turns it on, or off again\n"
	      " -d, --debug            libfuse's debug output: every request on stderr\n"
	      " -h, --help             display this help\n"
	      " -V, --version          display the version\n"
	      "\n"
	      "Examples:\n"
	      " fuse-passthrough /srv/data /mnt/data &      mirror /srv/data at /mnt/data\n"
	      " iolens vstat fuse-passthrough 1             its requests, each second\n"
	      " fuse-passthrough --hang-op FUSE_MKNOD /srv/data /mnt/data &\n"
	      " mkfifo /mnt/data/fifo &                     stays in flight: vstat says HANG\n"
	      " kill -USR1 %1                               and lets it go\n"
	      " fuse-passthrough --timeout 0 --slow-op FUSE_GETATTR:50 /srv/data /mnt/data &\n"
	      " kill -USR2 %1                               every stat through the mount now 50 ms slower\n"
	      " kill -USR2 %1                               and back to normal\n"
	      " fusermount3 -u /mnt/data                    unmount: the server exits\n",
	      out);
}

static int usage_error(const char *what)
{
	if (what)
		fprintf(stderr, "fuse-passthrough: %s\n", what);
	fputs("Try 'fuse-passthrough --help' for more information.\n", stderr);
	return 2;
}

/* ---- Signals --------------------------------------------------------------------------- */

/*
 * fuse_set_signal_handlers() makes SIGINT, SIGTERM and SIGHUP end the session loop. The
 * loop then waits for every request in progress, so ours also wake the requests that
 * wait: for a lock, or for --hang-op's release.
 */
static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP };
static struct sigaction libfuse_actions[3];
static bool chained[3];

static void on_stop(int sig)
{
	for (unsigned i = 0; i < 3; i++)
		if (stop_signals[i] == sig && chained[i])
			libfuse_actions[i].sa_handler(sig);
	pt_stopping = 1;
	pt_wake_waiters();
}

static void on_release(int sig)
{
	(void)sig;
	pt_hang_released = 1;
}

/* SIGUSR2: --slow-op on, or off again. Signals of one kind do not nest: no other handler writes it. */
static void on_slow(int sig)
{
	(void)sig;
	pt_slow_on = !pt_slow_on;
}

/* Only there to make a blocked fcntl() or flock() return EINTR. */
static void on_wake(int sig)
{
	(void)sig;
}

static void handle(int sig, void (*handler)(int), int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

/* After fuse_set_signal_handlers(): where libfuse handles a signal (not one ignored from the start), we do too. */
static void chain_stop_signals(void)
{
	for (unsigned i = 0; i < 3; i++) {
		struct sigaction old;
		if (sigaction(stop_signals[i], NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) ||
		    old.sa_handler == SIG_IGN || old.sa_handler == SIG_DFL)
			continue;
		libfuse_actions[i] = old;
		chained[i] = true;
		handle(stop_signals[i], on_stop, 0);
	}
}

static void unchain_stop_signals(void)
{
	for (unsigned i = 0; i < 3; i++)
		if (chained[i]) {
			sigaction(stop_signals[i], &libfuse_actions[i], NULL);
			chained[i] = false;
		}
}

/* ---- Heartbeat: readers see a server idle for long as alive --------------------------- */

struct heartbeat {
	struct vtrace *vt;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop;
	pthread_t thread;
	bool running;
};

static void *beat(void *arg)
{
	struct heartbeat *h = arg;
	struct timespec when;

	pthread_mutex_lock(&h->lock);
	while (!h->stop) {
		vtrace_heartbeat(h->vt);
		clock_gettime(CLOCK_MONOTONIC, &when);
		when.tv_sec += 1;
		pthread_cond_timedwait(&h->wake, &h->lock, &when);
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

static void heartbeat_start(struct heartbeat *h, struct vtrace *vt)
{
	pthread_condattr_t attr;
	sigset_t all, old;

	memset(h, 0, sizeof(*h));
	h->vt = vt;
	if (!vt)
		return;
	pthread_mutex_init(&h->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&h->wake, &attr);
	pthread_condattr_destroy(&attr);
	/* Signals are for the thread that runs the session loop: SIGTERM must interrupt its wait. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	h->running = pthread_create(&h->thread, NULL, beat, h) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void heartbeat_stop(struct heartbeat *h)
{
	if (!h->vt)
		return;
	if (h->running) {
		pthread_mutex_lock(&h->lock);
		h->stop = true;
		pthread_cond_signal(&h->wake);
		pthread_mutex_unlock(&h->lock);
		pthread_join(h->thread, NULL);
	}
	pthread_cond_destroy(&h->wake);
	pthread_mutex_destroy(&h->lock);
}

/* ---- Serving ----------------------------------------------------------------------------- */

static int serve(struct fuse_session *se, bool single_thread)
{
	struct fuse_loop_config *config;
	int rc;

	if (single_thread)
		return fuse_session_loop(se);
	config = fuse_loop_cfg_create();
	if (!config) {
		fputs("fuse-passthrough: cannot configure the loop: out of memory\n", stderr);
		return -ENOMEM;
	}
	fuse_loop_cfg_set_clone_fd(config, 0);
	rc = fuse_session_loop_mt(se, config);
	fuse_loop_cfg_destroy(config);
	return rc;
}

/* findmnt and df show SOURCE, type fuse.fuse-passthrough; an -o given later still overrides. */
static int name_mount(struct fuse_args *args, const char *source)
{
	char *fsname = malloc(strlen("fsname=") + strlen(source) + 1), *options = NULL;
	int rc = -1;

	if (!fsname)
		return -1;
	strcpy(fsname, "fsname=");
	strcat(fsname, source);
	if (fuse_opt_add_opt_escaped(&options, fsname) == 0 &&
	    fuse_opt_add_opt(&options, "subtype=fuse-passthrough") == 0 && fuse_opt_insert_arg(args, 1, "-o") == 0 &&
	    fuse_opt_insert_arg(args, 2, options) == 0)
		rc = 0;
	free(options);
	free(fsname);
	return rc;
}

enum { OPT_SERVICE = 256, OPT_NO_VTRACE, OPT_TIMEOUT, OPT_XATTR, OPT_HANG_OP, OPT_HANG_ALL, OPT_SLOW_OP };

static void list_ops(void)
{
	for (int op = 0; op < PT_OP_COUNT; op++)
		fprintf(stderr, " %s", pt_op_table[op].name);
	fputc('\n', stderr);
}

/* --slow-op OP:MS into pt: 0, or -1 with the error said on stderr. */
static int parse_slow_op(struct passthrough *pt, const char *arg)
{
	const char *colon = strrchr(arg, ':');
	char name[32], *end;
	size_t len;
	long ms;

	if (!colon || colon == arg || !colon[1]) {
		fprintf(stderr, "fuse-passthrough: --slow-op %s: OP:MS, please (FUSE_GETATTR:50)\n", arg);
		return -1;
	}
	len = (size_t)(colon - arg);
	pt->slow_op = -1;
	if (len < sizeof(name)) {
		memcpy(name, arg, len);
		name[len] = '\0';
		pt->slow_op = pt_op_find(name);
	}
	if (pt->slow_op < 0) {
		fprintf(stderr, "fuse-passthrough: --slow-op %s: %.*s is not an op; one of:", arg, (int)len, arg);
		list_ops();
		return -1;
	}
	errno = 0;
	ms = strtol(colon + 1, &end, 10);
	if (errno || *end || colon[1] < '0' || colon[1] > '9' || ms < 1 || ms > 60000) {
		fprintf(stderr, "fuse-passthrough: --slow-op %s: MS is a whole number of milliseconds, 1 to 60000\n",
			arg);
		return -1;
	}
	pt->slow_ms = (unsigned)ms;
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option long_options[] = {
		{ "foreground", no_argument, NULL, 'f' },
		{ "single-thread", no_argument, NULL, 's' },
		{ "service", required_argument, NULL, OPT_SERVICE },
		{ "no-vtrace", no_argument, NULL, OPT_NO_VTRACE },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "xattr", no_argument, NULL, OPT_XATTR },
		{ "hang-op", required_argument, NULL, OPT_HANG_OP },
		{ "hang-all", no_argument, NULL, OPT_HANG_ALL },
		{ "slow-op", required_argument, NULL, OPT_SLOW_OP },
		{ "debug", no_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct passthrough pt = { .timeout = 1.0, .hang_op = -1, .slow_op = -1 };
	const char *service = "fuse-passthrough", *source, *mountpoint;
	bool single_thread = false, no_vtrace = false, failed = true;
	struct fuse_session *se = NULL;
	struct heartbeat heartbeat;
	int opt, err, rc = 2;
	char *end;

	if (fuse_opt_add_arg(&args, argv[0]) != 0)
		return 1;
	while ((opt = getopt_long(argc, argv, "fso:dhV", long_options, NULL)) != -1) {
		switch (opt) {
		case 'f':
			break;
		case 's':
			single_thread = true;
			break;
		case 'o':
			if (fuse_opt_add_arg(&args, "-o") != 0 || fuse_opt_add_arg(&args, optarg) != 0)
				goto out_args;
			break;
		case 'd':
			if (fuse_opt_add_arg(&args, "-d") != 0)
				goto out_args;
			break;
		case OPT_SERVICE:
			service = optarg;
			break;
		case OPT_NO_VTRACE:
			no_vtrace = true;
			break;
		case OPT_TIMEOUT:
			errno = 0;
			pt.timeout = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(pt.timeout >= 0)) {
				fprintf(stderr, "fuse-passthrough: --timeout %s: not a number of seconds\n", optarg);
				rc = usage_error(NULL);
				goto out_args;
			}
			break;
		case OPT_XATTR:
			pt.xattr = true;
			break;
		case OPT_HANG_OP:
			pt.hang_op = pt_op_find(optarg);
			if (pt.hang_op < 0) {
				fprintf(stderr, "fuse-passthrough: --hang-op %s: not an op; one of:", optarg);
				list_ops();
				rc = usage_error(NULL);
				goto out_args;
			}
			break;
		case OPT_HANG_ALL:
			pt.hang_all = true;
			break;
		case OPT_SLOW_OP:
			if (parse_slow_op(&pt, optarg) != 0) {
				rc = usage_error(NULL);
				goto out_args;
			}
			break;
		case 'h':
			usage(stdout);
			rc = 0;
			goto out_args;
		case 'V':
			printf("fuse-passthrough %s (libfuse %s)\n", IOLENS_VERSION, fuse_pkgversion());
			rc = 0;
			goto out_args;
		default:
			rc = usage_error(NULL);
			goto out_args;
		}
	}
	if (pt.hang_all && pt.hang_op < 0) {
		rc = usage_error("--hang-all holds the requests of --hang-op's op: give one");
		goto out_args;
	}
	if (argc - optind != 2) {
		rc = usage_error(argc - optind < 2 ? "SOURCE and MOUNTPOINT, please" : "too many arguments");
		goto out_args;
	}
	source = argv[optind];
	mountpoint = argv[optind + 1];
	rc = 1;
	if (name_mount(&args, source) != 0) {
		fputs("fuse-passthrough: out of memory\n", stderr);
		goto out_args;
	}

	err = pt_inodes_init(&pt.inodes, source);
	if (err) {
		fprintf(stderr, "fuse-passthrough: %s: %s\n", source, strerror(err));
		goto out_args;
	}
	if (!no_vtrace) {
		pt.vt = vtrace_open(service, pt_op_table, PT_OP_COUNT, NULL);
		if (!pt.vt) {
			fprintf(stderr, "fuse-passthrough: vtrace_open %s: %s\n", service, strerror(errno));
			goto out_inodes;
		}
	}
	handle(SIGUSR1, on_release, SA_RESTART);
	handle(SIGUSR2, on_slow, SA_RESTART);
	handle(PT_WAKE_SIGNAL, on_wake, 0);

	se = fuse_session_new(&args, &pt_ops, sizeof(pt_ops), &pt);
	if (!se)
		goto out_vtrace; /* libfuse said why */
	if (fuse_set_signal_handlers(se) != 0)
		goto out_session;
	chain_stop_signals();
	if (fuse_session_mount(se, mountpoint) != 0)
		goto out_signals;

	heartbeat_start(&heartbeat, pt.vt);
	failed = serve(se, single_thread) < 0;
	heartbeat_stop(&heartbeat);
	fuse_session_unmount(se);
out_signals:
	unchain_stop_signals();
	fuse_remove_signal_handlers(se);
out_session:
	fuse_session_destroy(se); /* every worker is gone: no one is inside vtrace_begin or vtrace_end */
out_vtrace:
	if (pt.vt && vtrace_close(pt.vt) != 0)
		fprintf(stderr, "fuse-passthrough: removing the vtrace segment: %s\n", strerror(errno));
out_inodes:
	pt_inodes_free(&pt.inodes);
	rc = failed ? 1 : 0;
out_args:
	fuse_opt_free_args(&args);
	return rc;
}
