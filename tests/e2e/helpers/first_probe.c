/* SPDX-License-Identifier: MIT */
/*
 * A workload probed from its first instruction: a child creates cgroup DIR, moves itself
 * into it, and at once connects a TCP socket to 127.0.0.1:PORT (a closed port: refused
 * when allowed, EPERM when denied), then opens SECRET again and again until it is denied
 * or MAX_MS have passed; then it opens ALLOWED once. The child touches no other file (its results go
 * back through shared memory); the parent prints them:
 *   forbidden_ok=<opens of SECRET that succeeded> first=<ok|denied>
 *   denied_after_ms=<from the mkdir to the first denial, or "never"> allowed=<ok|errno=N>
 *   connect=<ok|errno=N>
 *   first_probe DIR SECRET ALLOWED MAX_MS PORT
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct result {
	long ok;
	int first_ok;
	double denied_ms; /* < 0: never */
	int allowed_errno;
	int setup_errno;
	int connect_errno;
};

static double ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1e3 + (t.tv_nsec - t0->tv_nsec) / 1e6;
}

int main(int argc, char **argv)
{
	struct result *r;
	struct timespec t0;
	char procs[4096], pid[32];
	double max_ms;
	int fd, st;
	pid_t c;

	if (argc != 6)
		return 2;
	max_ms = atof(argv[4]);
	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED)
		return 1;
	memset(r, 0, sizeof(*r));
	r->denied_ms = -1;
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", argv[1]);
	c = fork();
	if (c < 0)
		return 1;
	if (!c) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (mkdir(argv[1], 0755)) {
			r->setup_errno = errno;
			_exit(1);
		}
		fd = open(procs, O_WRONLY);
		snprintf(pid, sizeof(pid), "%d", getpid());
		if (fd < 0 || write(fd, pid, strlen(pid)) < 0) {
			r->setup_errno = errno;
			_exit(1);
		}
		close(fd);
		/* From here on, this process is the new cgroup's workload. */
		{
			struct sockaddr_in a = { .sin_family = AF_INET,
						 .sin_port = htons((uint16_t)atoi(argv[5])),
						 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
			int s = socket(AF_INET, SOCK_STREAM, 0);

			r->connect_errno = s < 0 ? errno
				: connect(s, (struct sockaddr *)&a, sizeof(a)) ? errno : 0;
			if (s >= 0)
				close(s);
		}
		for (long i = 0;; i++) {
			fd = open(argv[2], O_RDONLY);
			if (fd < 0) {
				r->denied_ms = ms_since(&t0);
				break;
			}
			close(fd);
			r->ok++;
			if (!i)
				r->first_ok = 1;
			if (ms_since(&t0) > max_ms)
				break;
		}
		fd = open(argv[3], O_RDONLY);
		r->allowed_errno = fd < 0 ? errno : 0;
		_exit(0);
	}
	if (waitpid(c, &st, 0) < 0)
		return 1;
	if (r->setup_errno) {
		fprintf(stderr, "first_probe: cannot create or join %s: %s\n", argv[1],
			strerror(r->setup_errno));
		return 1;
	}
	printf("forbidden_ok=%ld first=%s denied_after_ms=", r->ok, r->first_ok ? "ok" : "denied");
	if (r->denied_ms < 0)
		printf("never");
	else
		printf("%.1f", r->denied_ms);
	if (r->allowed_errno)
		printf(" allowed=errno=%d", r->allowed_errno);
	else
		printf(" allowed=ok");
	if (r->connect_errno)
		printf(" connect=errno=%d\n", r->connect_errno);
	else
		printf(" connect=ok\n");
	return 0;
}
