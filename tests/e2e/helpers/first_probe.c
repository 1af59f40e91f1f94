/* SPDX-License-Identifier: MIT */
/*
 * A workload probed from its first instruction. A child creates cgroup DIR and moves
 * itself into it; with --exec it then executes this program again (as a runtime starts a
 * container's entrypoint or systemd a service), else it goes on as it is. Then, at once,
 * the workload connects a TCP socket to 127.0.0.1:PORT (a closed port: refused when
 * allowed, EPERM when denied), sends a UDP datagram there (sent when allowed, EPERM when
 * denied: a socket made in its own cgroup, bpf/socket.bpf.c nothing_to_judge), sends one
 * with the address's family AF_UNSPEC (IPv4 UDP takes it as AF_INET) and binds a TCP
 * socket to 0.0.0.0:0 written the same way (IPv4 bind takes it too), then opens
 * SECRET again and again until it is denied or MAX_MS have passed, and opens ALLOWED
 * once. --exec executes $FIRST_PROBE_EXEC (a copy of this
 * program: an execve of the program a task already runs does not arm a held cgroup, see
 * bpf/watch.bpf.c), else /proc/self/exe. Its results come back through a pipe; the parent
 * prints:
 *   forbidden_ok=<opens of SECRET that succeeded> first=<ok|denied>
 *   denied_after_ms=<from the mkdir to the first denial, or "never"> allowed=<ok|errno=N>
 *   connect=<ok|errno=N> send=<ok|errno=N> send_unspec=<ok|errno=N> bind_unspec=<ok|errno=N>
 *   first_probe [--exec] DIR SECRET ALLOWED MAX_MS PORT
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	int send_errno;
	int send_unspec_errno;
	int bind_unspec_errno;
};

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* The workload: secret, allowed, max_ms, port; t0 the mkdir's time. */
static void probe(struct result *r, char **a, int64_t t0)
{
	double max_ms = atof(a[2]);
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons((uint16_t)atoi(a[3])),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int s = socket(AF_INET, SOCK_STREAM, 0), fd;

	r->connect_errno = s < 0 ? errno : connect(s, (struct sockaddr *)&sa, sizeof(sa)) ? errno : 0;
	if (s >= 0)
		close(s);
	s = socket(AF_INET, SOCK_DGRAM, 0);
	r->send_errno = s < 0 ? errno
		      : sendto(s, "x", 1, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? errno
										     : 0;
	if (s >= 0)
		close(s);
	s = socket(AF_INET, SOCK_DGRAM, 0);
	sa.sin_family = AF_UNSPEC;
	r->send_unspec_errno = s < 0 ? errno
			     : sendto(s, "x", 1, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? errno
											    : 0;
	if (s >= 0)
		close(s);
	s = socket(AF_INET, SOCK_STREAM, 0);
	sa.sin_port = 0;
	sa.sin_addr.s_addr = htonl(INADDR_ANY);
	r->bind_unspec_errno = s < 0 ? errno : bind(s, (struct sockaddr *)&sa, sizeof(sa)) ? errno : 0;
	if (s >= 0)
		close(s);
	r->denied_ms = -1;
	for (long i = 0;; i++) {
		fd = open(a[0], O_RDONLY);
		if (fd < 0) {
			r->denied_ms = (now_ns() - t0) / 1e6;
			break;
		}
		close(fd);
		r->ok++;
		if (!i)
			r->first_ok = 1;
		if ((now_ns() - t0) / 1e6 > max_ms)
			break;
	}
	fd = open(a[1], O_RDONLY);
	r->allowed_errno = fd < 0 ? errno : 0;
}

static void put(int fd, const struct result *r)
{
	if (write(fd, r, sizeof(*r)) != sizeof(*r))
		_exit(3);
}

int main(int argc, char **argv)
{
	struct result r = { 0 };
	char procs[4096], pid[32], t0s[32], fds[16];
	int p[2], fd, st, exec_mode = 0;
	int64_t t0;
	pid_t c;

	/* the executed workload: --probe FD T0 SECRET ALLOWED MAX_MS PORT */
	if (argc == 8 && !strcmp(argv[1], "--probe")) {
		probe(&r, argv + 4, strtoll(argv[3], NULL, 10));
		put(atoi(argv[2]), &r);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--exec")) {
		exec_mode = 1;
		argv++;
		argc--;
	}
	if (argc != 6 || pipe(p))
		return 2;
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", argv[1]);
	c = fork();
	if (c < 0)
		return 1;
	if (!c) {
		close(p[0]);
		t0 = now_ns();
		if (mkdir(argv[1], 0755)) {
			r.setup_errno = errno;
			put(p[1], &r);
			_exit(1);
		}
		fd = open(procs, O_WRONLY);
		snprintf(pid, sizeof(pid), "%d", getpid());
		if (fd < 0 || write(fd, pid, strlen(pid)) < 0) {
			r.setup_errno = errno;
			put(p[1], &r);
			_exit(1);
		}
		close(fd);
		/* From here on, this process is the new cgroup's workload. */
		if (exec_mode) {
			snprintf(t0s, sizeof(t0s), "%lld", (long long)t0);
			snprintf(fds, sizeof(fds), "%d", p[1]);
			const char *self = getenv("FIRST_PROBE_EXEC");

			execl(self ? self : "/proc/self/exe", "first_probe", "--probe", fds, t0s, argv[2],
			      argv[3], argv[4], argv[5], (char *)NULL);
			r.setup_errno = errno;
			put(p[1], &r);
			_exit(1);
		}
		probe(&r, argv + 2, t0);
		put(p[1], &r);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &r, sizeof(r)) != sizeof(r)) {
		fprintf(stderr, "first_probe: the workload in %s gave no result\n", argv[1]);
		return 1;
	}
	waitpid(c, &st, 0);
	if (r.setup_errno) {
		fprintf(stderr, "first_probe: cannot create, join or execute in %s: %s\n", argv[1],
			strerror(r.setup_errno));
		return 1;
	}
	printf("forbidden_ok=%ld first=%s denied_after_ms=", r.ok, r.first_ok ? "ok" : "denied");
	if (r.denied_ms < 0)
		printf("never");
	else
		printf("%.1f", r.denied_ms);
	if (r.allowed_errno)
		printf(" allowed=errno=%d", r.allowed_errno);
	else
		printf(" allowed=ok");
	if (r.connect_errno)
		printf(" connect=errno=%d", r.connect_errno);
	else
		printf(" connect=ok");
	if (r.send_errno)
		printf(" send=errno=%d", r.send_errno);
	else
		printf(" send=ok");
	if (r.send_unspec_errno)
		printf(" send_unspec=errno=%d", r.send_unspec_errno);
	else
		printf(" send_unspec=ok");
	if (r.bind_unspec_errno)
		printf(" bind_unspec=errno=%d\n", r.bind_unspec_errno);
	else
		printf(" bind_unspec=ok\n");
	return 0;
}
