/* SPDX-License-Identifier: MIT */
/*
 * The syscalls whose cost a sandbox changes, in a tight loop; prints the median of
 * `rounds` rounds in ns per operation:  syscall_loop OP PATH [COUNT [ROUNDS]]
 *   open   open(PATH, O_RDONLY) + close
 *   stat   stat(PATH)
 *   create open(PATH, O_CREAT|O_WRONLY) + close + unlink   (PATH: a new file name)
 *   exec   fork + execve(PATH) + wait                      (PATH: e.g. /bin/true)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int one(const char *op, const char *path)
{
	struct stat st;
	int fd, status;
	pid_t pid;

	if (!strcmp(op, "open")) {
		fd = open(path, O_RDONLY);
		if (fd < 0)
			return -1;
		return close(fd);
	}
	if (!strcmp(op, "stat"))
		return stat(path, &st);
	if (!strcmp(op, "create")) {
		fd = open(path, O_CREAT | O_WRONLY, 0600);
		if (fd < 0)
			return -1;
		close(fd);
		return unlink(path);
	}
	if (!strcmp(op, "exec")) {
		pid = fork();
		if (pid == 0) {
			execl(path, path, (char *)NULL);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &status, 0) < 0 || status)
			return -1;
		return 0;
	}
	return -1;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	long count = argc > 3 ? atol(argv[3]) : 20000;
	int rounds = argc > 4 ? atoi(argv[4]) : 5;
	double r[64];

	if (argc < 3 || rounds < 1 || rounds > 64 || count < 1) {
		fprintf(stderr, "usage: syscall_loop open|stat|create|exec PATH [COUNT [ROUNDS]]\n");
		return 2;
	}
	for (int i = 0; i < rounds; i++) {
		double t0 = now_ns();

		for (long n = 0; n < count; n++) {
			if (one(argv[1], argv[2])) {
				perror(argv[1]);
				return 1;
			}
		}
		r[i] = (now_ns() - t0) / count;
	}
	qsort(r, rounds, sizeof(r[0]), cmp);
	printf("%.0f %.0f %.0f\n", r[rounds / 2], r[0], r[rounds - 1]);
	return 0;
}
