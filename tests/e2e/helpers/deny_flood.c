/* SPDX-License-Identifier: MIT */
/*
 * A flood of file opens, fast enough to outrun an event consumer under TCG (a Python loop
 * is not). Counts what the kernel answered, so the e2e tests can compare the event
 * stream's counts with the calls that were really made.
 *   deny_flood create N DIR    creates DIR/f0 ... DIR/f<N-1> (run unconfined first)
 *   deny_flood distinct N DIR  opens each of them once, read-only
 *   deny_flood repeat N FILE   opens FILE N times, read-only
 *   deny_flood contend N FILE  the same, shared by CONTENDERS processes pinned to CPU 0:
 *                              on a preemptible kernel, hooks preempt one another there
 * A fourth argument, a cgroup.procs file: the helper moves itself there first (into a
 * cgroup the daemon confines: no exec after the move, which the policy would deny), and
 * prints "half" halfway through (the test kills the daemon then, in mid-burst).
 * Prints "calls N denied D ok K other O" (denied: EACCES or EPERM).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define CONTENDERS 8

/* contend: CONTENDERS children on CPU 0 open FILE N / CONTENDERS times each; their counts
 * are added in shared memory, printed by the parent as one line. */
static int contend(unsigned long n, const char *file)
{
	unsigned long *sum = mmap(NULL, 3 * sizeof(*sum), PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	cpu_set_t cpu0;
	int status, failed = 0;

	if (sum == MAP_FAILED)
		return 1;
	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	for (int c = 0; c < CONTENDERS; c++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid)
			continue;
		if (sched_setaffinity(0, sizeof(cpu0), &cpu0))
			_exit(1);
		for (unsigned long i = c; i < n; i += CONTENDERS) {
			int fd = open(file, O_RDONLY);

			if (fd >= 0)
				__atomic_fetch_add(&sum[1], 1, __ATOMIC_RELAXED), close(fd);
			else if (errno == EACCES || errno == EPERM)
				__atomic_fetch_add(&sum[0], 1, __ATOMIC_RELAXED);
			else
				__atomic_fetch_add(&sum[2], 1, __ATOMIC_RELAXED);
		}
		_exit(0);
	}
	while (wait(&status) > 0)
		failed |= !WIFEXITED(status) || WEXITSTATUS(status);
	printf("calls %lu denied %lu ok %lu other %lu\n", n, sum[0], sum[1], sum[2]);
	return failed;
}

int main(int argc, char **argv)
{
	unsigned long n, denied = 0, ok = 0, other = 0;
	char path[4096];
	int create, distinct;

	if (argc != 4 && argc != 5)
		return 2;
	if (argc == 5) {
		FILE *procs = fopen(argv[4], "w");

		if (!procs || fprintf(procs, "%d\n", getpid()) < 0 || fclose(procs)) {
			perror(argv[4]);
			return 1;
		}
	}
	if (!strcmp(argv[1], "contend"))
		return argc == 4 ? contend(strtoul(argv[2], NULL, 10), argv[3]) : 2;
	create = !strcmp(argv[1], "create");
	distinct = !strcmp(argv[1], "distinct");
	if (!create && !distinct && strcmp(argv[1], "repeat"))
		return 2;
	n = strtoul(argv[2], NULL, 10);
	for (unsigned long i = 0; i < n; i++) {
		int fd;

		if (argc == 5 && i == n / 2) {
			printf("half\n");
			fflush(stdout);
		}
		if (create || distinct)
			snprintf(path, sizeof(path), "%s/f%lu", argv[3], i);
		fd = create ? open(path, O_WRONLY | O_CREAT, 0644)
			    : open(distinct ? path : argv[3], O_RDONLY);
		if (fd >= 0) {
			ok++;
			close(fd);
		} else if (errno == EACCES || errno == EPERM) {
			denied++;
		} else {
			other++;
		}
	}
	printf("calls %lu denied %lu ok %lu other %lu\n", n, denied, ok, other);
	return 0;
}
