/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench/stat-cpu.sh's runner: runs a command, appends its wall time and CPU time (and, with -l, its
 * CPU time at each quiet point of its output) to a file.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>

#define MAX_READINGS 4096
/* After a line, the command is asleep in its delay well within this; read its CPU time then, so
 * every reading is taken at the same point of its loop. */
#define QUIET_NS 200000000L

static const char usage[] =
	"usage: stat-cpu-run [-l] [-m] FILE COMMAND [ARG...]\n"
	"  Runs COMMAND and appends to FILE one line: wall_us user_us system_us, the CPU time from\n"
	"  wait4's rusage of the child. With -l, COMMAND's standard output goes to a pipe that this\n"
	"  program reads and throws away; 200 ms after each burst of output it reads the command's\n"
	"  CPU time (the sum of /proc/PID/task/*/schedstat, in ns) and appends each reading to the line.\n"
	"  With -m, the line ends with the command's maximum resident set size (wait4's ru_maxrss, KiB),\n"
	"  after the readings.\n"
	"  Exit status: COMMAND's.\n";

static long long timeval_us(struct timeval tv)
{
	return tv.tv_sec * 1000000LL + tv.tv_usec;
}

static long long monotonic_us(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec * 1000000LL + now.tv_nsec / 1000;
}

/* The CPU time of every thread of pid, in ns, from schedstat's first field; -1 once it is gone. */
static long long task_cpu_ns(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *tasks = opendir(path);
	if (!tasks)
		return -1;
	long long total = 0;
	int found = 0;
	struct dirent *entry;
	while ((entry = readdir(tasks))) {
		if (entry->d_name[0] == '.')
			continue;
		char stat_path[300];
		snprintf(stat_path, sizeof(stat_path), "/proc/%d/task/%s/schedstat", (int)pid, entry->d_name);
		FILE *file = fopen(stat_path, "r");
		if (!file)
			continue;
		long long ns;
		if (fscanf(file, "%lld", &ns) == 1) {
			total += ns;
			found = 1;
		}
		fclose(file);
	}
	closedir(tasks);
	return found ? total : -1;
}

/* Reads the child's output to its end; after each burst, waits until it is quiet and takes a reading. */
static int follow_output(int fd, pid_t pid, long long *readings, int *reading_count)
{
	char buffer[65536];
	for (;;) {
		ssize_t got = read(fd, buffer, sizeof(buffer));
		if (got == 0)
			return 0;
		if (got < 0) {
			if (errno == EINTR)
				continue;
			perror("stat-cpu-run: read");
			return -1;
		}
		if (!memchr(buffer, '\n', (size_t)got))
			continue;
		struct timespec quiet = { 0, QUIET_NS };
		while (nanosleep(&quiet, &quiet) < 0 && errno == EINTR)
			;
		/* Whatever came meanwhile belongs to the same burst. */
		int flags = fcntl(fd, F_GETFL);
		fcntl(fd, F_SETFL, flags | O_NONBLOCK);
		while ((got = read(fd, buffer, sizeof(buffer))) > 0)
			;
		int at_end = got == 0;
		fcntl(fd, F_SETFL, flags);
		long long ns = task_cpu_ns(pid);
		/* A zombie still has a schedstat; a reading after the end would count its exit. */
		if (!at_end && ns >= 0 && *reading_count < MAX_READINGS)
			readings[(*reading_count)++] = ns;
		if (at_end)
			return 0;
	}
}

int main(int argc, char **argv)
{
	int follow = 0, max_rss = 0;
	int first = 1;
	for (; first < argc && argv[first][0] == '-'; first++) {
		if (strcmp(argv[first], "-l") == 0) {
			follow = 1;
		} else if (strcmp(argv[first], "-m") == 0) {
			max_rss = 1;
		} else {
			fputs(usage, stderr);
			return 2;
		}
	}
	if (argc - first < 2) {
		fputs(usage, stderr);
		return 2;
	}
	const char *out_path = argv[first];
	char **command = argv + first + 1;

	int pipe_fds[2] = { -1, -1 };
	if (follow && pipe2(pipe_fds, O_CLOEXEC) < 0) {
		perror("stat-cpu-run: pipe");
		return 1;
	}
	long long start = monotonic_us();
	pid_t pid = fork();
	if (pid < 0) {
		perror("stat-cpu-run: fork");
		return 1;
	}
	if (pid == 0) {
		if (follow && dup2(pipe_fds[1], STDOUT_FILENO) < 0)
			_exit(127);
		execvp(command[0], command);
		fprintf(stderr, "stat-cpu-run: %s: %s\n", command[0], strerror(errno));
		_exit(127);
	}

	static long long readings[MAX_READINGS];
	int reading_count = 0;
	int failed = 0;
	if (follow) {
		close(pipe_fds[1]);
		failed = follow_output(pipe_fds[0], pid, readings, &reading_count) < 0;
		close(pipe_fds[0]);
	}
	int status;
	struct rusage usage_of_child;
	while (wait4(pid, &status, 0, &usage_of_child) < 0) {
		if (errno != EINTR) {
			perror("stat-cpu-run: wait4");
			return 1;
		}
	}
	long long wall = monotonic_us() - start;

	FILE *out = fopen(out_path, "a");
	if (!out) {
		fprintf(stderr, "stat-cpu-run: %s: %s\n", out_path, strerror(errno));
		return 1;
	}
	fprintf(out, "%lld %lld %lld", wall, timeval_us(usage_of_child.ru_utime), timeval_us(usage_of_child.ru_stime));
	for (int i = 0; i < reading_count; i++)
		fprintf(out, " %lld", readings[i]);
	if (max_rss)
		fprintf(out, " %ld", usage_of_child.ru_maxrss);
	fputc('\n', out);
	if (fclose(out) != 0) {
		fprintf(stderr, "stat-cpu-run: %s: %s\n", out_path, strerror(errno));
		return 1;
	}
	if (failed)
		return 1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}
