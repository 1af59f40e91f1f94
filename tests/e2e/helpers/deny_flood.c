/* SPDX-License-Identifier: MIT */
/*
 * A flood of file opens, fast enough to outrun an event consumer under TCG (a Python loop
 * is not). Counts what the kernel answered, so the e2e tests can compare the event
 * stream's counts with the calls that were really made.
 *   deny_flood create N DIR    creates DIR/f0 ... DIR/f<N-1> (run unconfined first)
 *   deny_flood distinct N DIR  opens each of them once, read-only
 *   deny_flood repeat N FILE   opens FILE N times, read-only
 * A fourth argument, a cgroup.procs file: the helper moves itself there first (into a
 * cgroup the daemon confines: no exec after the move, which the policy would deny), and
 * prints "half" halfway through (the test kills the daemon then, in mid-burst).
 * Prints "calls N denied D ok K other O" (denied: EACCES or EPERM).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
