/* SPDX-License-Identifier: MIT */
/*
 * connect() cost, for scripts/bench-net: N connect() calls of one UDP socket to ADDR:PORT
 * (a UDP connect sends nothing; what is measured is the syscall and the hooks in its path:
 * cgroup/connect4 under pysb-bpf). Prints the mean nanoseconds per call.
 *   net_connect ADDR PORT N
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct timespec t0, t1;
	long n;
	int fd;

	if (argc != 4 || inet_pton(AF_INET, argv[1], &a.sin_addr) != 1) {
		fprintf(stderr, "usage: net_connect ADDR PORT N\n");
		return 2;
	}
	a.sin_port = htons((unsigned short)atoi(argv[2]));
	n = atol(argv[3]);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0) {
		perror("socket");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < n; i++) {
		if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
			perror("connect");
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%.0f\n", ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / (double)n);
	close(fd);
	return 0;
}
