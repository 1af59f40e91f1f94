/* SPDX-License-Identifier: MIT */
/*
 * The syscalls whose cost a sandbox changes, in tight loops (benchmark, not a test).
 *
 *   syscall_loop OP TARGET [COUNT [ROUNDS]]
 *       COUNT operations, ROUNDS times; prints "median min max" ns per operation.
 *   syscall_loop -m ROUNDS OP:COUNT:TARGET [OP:COUNT:TARGET...]
 *       several operations in one process, their rounds interleaved (round 1 of each, then
 *       round 2 of each, ...) so that a slow moment of the machine hits them alike; prints
 *       one line per operation: "OP median min max" (ns per operation).
 *   syscall_loop -s OP:COUNT:TARGET [OP:COUNT:TARGET...]
 *       stepped: prints "ready", then for each operation name read on stdin runs COUNT of
 *       it in CHUNKS timed chunks and prints the ns per operation of the fastest chunk,
 *       until end of file. A driver keeps one such process per sandbox and lets them take
 *       turns (scripts/bench), so that bare and sandboxed passes follow each other within
 *       seconds. The fastest chunk, because on a shared host interference (other VMs,
 *       the emulator's own threads) only ever slows a chunk down: the minimum is the
 *       estimate of the operation's own cost that it disturbs least.
 *   syscall_loop serve PORT
 *       the peer of connect and sendto, run outside any sandbox: a TCP listener on
 *       127.0.0.1:PORT that accepts and closes, every 5 ms whatever has arrived (not woken
 *       by each connection: a cross-CPU wake-up per connect is costly and erratic under
 *       emulation, and would be timed as part of connect), and a UDP socket bound to the
 *       same port that is never read (datagrams beyond its buffer are dropped, sendto
 *       still succeeds). Prints "ready" once both are bound, then serves until killed.
 *
 * An OP may carry a label, OP@LABEL (open@6, create@12): the same operation on several
 * targets in one process, each asked for (-s) and reported by its labelled name.
 *
 * Operations:
 *   open     open(TARGET, O_RDONLY) + close
 *   stat     stat(TARGET)
 *   create   open(TARGET, O_CREAT|O_WRONLY) + close + unlink   (TARGET: a new file name)
 *   exec     fork + execve(TARGET) + wait                      (TARGET: e.g. /bin/true)
 *   connect  socket + TCP connect(TARGET) + close              (TARGET: ADDR:PORT)
 *   sendto   sendto(TARGET) of 1 byte from one UDP socket      (TARGET: ADDR:PORT)
 *
 * Each operation runs COUNT/10 times before the first round, untimed: under emulation
 * the first pass of a code path pays for its translation.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_ROUNDS 64
#define MAX_OPS	   24
#define CHUNKS	   20 /* per pass in -s mode */

enum op_kind { OP_OPEN, OP_STAT, OP_CREATE, OP_EXEC, OP_CONNECT, OP_SENDTO };

static const char *const op_names[] = { "open", "stat", "create", "exec", "connect", "sendto" };

struct op {
	enum op_kind kind;
	const char *name, *target;
	long count;
	struct sockaddr_in addr; /* connect, sendto */
	int udp_fd;		 /* sendto: one socket for the whole run */
	double ns[MAX_ROUNDS];
};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* "ADDR:PORT" (IPv4) into a, or -1. */
static int parse_addr(const char *s, struct sockaddr_in *a)
{
	char host[64];
	const char *colon = strrchr(s, ':');
	char *end;
	long port;

	if (!colon || colon == s || (size_t)(colon - s) >= sizeof(host))
		return -1;
	memcpy(host, s, colon - s);
	host[colon - s] = '\0';
	port = strtol(colon + 1, &end, 10);
	if (*end || port < 1 || port > 65535)
		return -1;
	memset(a, 0, sizeof(*a));
	a->sin_family = AF_INET;
	a->sin_port = htons((unsigned short)port);
	return inet_pton(AF_INET, host, &a->sin_addr) == 1 ? 0 : -1;
}

static int op_setup(struct op *o, const char *name, const char *target, long count)
{
	size_t kind_len = strcspn(name, "@"), i;

	for (i = 0; i < sizeof(op_names) / sizeof(op_names[0]); i++)
		if (strlen(op_names[i]) == kind_len && !strncmp(name, op_names[i], kind_len))
			break;
	if (i == sizeof(op_names) / sizeof(op_names[0])) {
		fprintf(stderr, "syscall_loop: unknown operation '%s'\n", name);
		return -1;
	}
	o->kind = (enum op_kind)i;
	o->name = name; /* "open", or "open@6": a label, so one process can time several targets */
	o->target = target;
	o->count = count;
	o->udp_fd = -1;
	if (o->kind == OP_CONNECT || o->kind == OP_SENDTO) {
		if (parse_addr(target, &o->addr)) {
			fprintf(stderr, "syscall_loop: %s needs ADDR:PORT (IPv4), not '%s'\n", name,
				target);
			return -1;
		}
	}
	if (o->kind == OP_SENDTO) {
		o->udp_fd = socket(AF_INET, SOCK_DGRAM, 0);
		if (o->udp_fd < 0) {
			perror("syscall_loop: socket(udp)");
			return -1;
		}
	}
	return 0;
}

static int tcp_connect(const struct sockaddr_in *a)
{
	/* RST on close instead of FIN: no TIME_WAIT, so thousands of connections in a row
	 * never run out of ephemeral ports. */
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)) ||
	    connect(fd, (const struct sockaddr *)a, sizeof(*a))) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return close(fd);
}

static int one(const struct op *o)
{
	static const char byte = 'x';
	struct stat st;
	int fd, status;
	pid_t pid;

	switch (o->kind) {
	case OP_OPEN:
		fd = open(o->target, O_RDONLY);
		if (fd < 0)
			return -1;
		return close(fd);
	case OP_STAT:
		return stat(o->target, &st);
	case OP_CREATE:
		fd = open(o->target, O_CREAT | O_WRONLY, 0600);
		if (fd < 0)
			return -1;
		close(fd);
		return unlink(o->target);
	case OP_EXEC:
		pid = fork();
		if (pid == 0) {
			execl(o->target, o->target, (char *)NULL);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &status, 0) < 0)
			return -1;
		if (status) {
			errno = WIFEXITED(status) && WEXITSTATUS(status) == 127 ? ENOEXEC : ECHILD;
			return -1;
		}
		return 0;
	case OP_CONNECT:
		return tcp_connect(&o->addr);
	case OP_SENDTO:
		return sendto(o->udp_fd, &byte, 1, 0, (const struct sockaddr *)&o->addr,
			      sizeof(o->addr)) == 1 ? 0 : -1;
	}
	return -1;
}

/* n operations; -1 with the failure reported. */
static int run(const struct op *o, long n)
{
	for (long i = 0; i < n; i++) {
		if (one(o)) {
			fprintf(stderr, "syscall_loop: %s %s: %s\n", o->name, o->target,
				strerror(errno));
			return -1;
		}
	}
	return 0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Runs every op `rounds` times, interleaved; then sorts each op's samples. */
static int measure(struct op *ops, int n_ops, int rounds)
{
	for (int k = 0; k < n_ops; k++)
		if (run(&ops[k], ops[k].count / 10))
			return -1;
	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k < n_ops; k++) {
			double t0 = now_ns();

			if (run(&ops[k], ops[k].count))
				return -1;
			ops[k].ns[r] = (now_ns() - t0) / ops[k].count;
		}
	}
	for (int k = 0; k < n_ops; k++)
		qsort(ops[k].ns, rounds, sizeof(double), cmp);
	return 0;
}

/* The -s protocol: one operation name per line in, one "ns per operation" line out. */
static int stepped(struct op *ops, int n_ops)
{
	char line[64];

	for (int k = 0; k < n_ops; k++)
		if (run(&ops[k], ops[k].count / 10))
			return 1;
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		int k;

		line[strcspn(line, "\n")] = '\0';
		for (k = 0; k < n_ops && strcmp(line, ops[k].name); k++)
			;
		if (k == n_ops) {
			fprintf(stderr, "syscall_loop: '%s' is not one of this process's operations\n",
				line);
			return 2;
		}
		long chunk = ops[k].count >= CHUNKS ? ops[k].count / CHUNKS : 1;
		double best = 0;

		for (long done = 0; done < ops[k].count; done += chunk) {
			double t0 = now_ns(), ns;

			if (run(&ops[k], chunk))
				return 1;
			ns = (now_ns() - t0) / chunk;
			if (!done || ns < best)
				best = ns;
		}
		printf("%.0f\n", best);
		fflush(stdout);
	}
	return 0;
}

static int serve(const char *port_s)
{
	struct sockaddr_in a;
	char spec[32];
	int one_ = 1, lfd, ufd;

	snprintf(spec, sizeof(spec), "127.0.0.1:%s", port_s);
	if (parse_addr(spec, &a)) {
		fprintf(stderr, "syscall_loop: serve needs a port, not '%s'\n", port_s);
		return 2;
	}
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	ufd = socket(AF_INET, SOCK_DGRAM, 0);
	if (lfd < 0 || ufd < 0 ||
	    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one_, sizeof(one_)) ||
	    bind(lfd, (struct sockaddr *)&a, sizeof(a)) ||
	    bind(ufd, (struct sockaddr *)&a, sizeof(a)) ||
	    /* A full accept queue drops SYNs, and a dropped SYN costs the client a 1 s
	     * retransmission: keep the queue as long as the kernel allows. */
	    listen(lfd, 4096)) {
		fprintf(stderr, "syscall_loop: serve on %s: %s\n", spec, strerror(errno));
		return 1;
	}
	if (fcntl(lfd, F_SETFL, O_NONBLOCK)) {
		perror("syscall_loop: serve: O_NONBLOCK");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		int fd = accept(lfd, NULL, NULL);

		if (fd >= 0) {
			close(fd);
		} else if (errno == EAGAIN || errno == EWOULDBLOCK) {
			nanosleep(&(struct timespec){ .tv_nsec = 5 * 1000 * 1000 }, NULL);
		} else if (errno != EINTR && errno != ECONNABORTED) {
			perror("syscall_loop: accept");
			return 1;
		}
	}
}

/* OP:COUNT:TARGET arguments into ops (TARGET may hold colons: ADDR:PORT). */
static int parse_specs(struct op *ops, char **specs, int n)
{
	for (int i = 0; i < n; i++) {
		char *spec = specs[i], *c1 = strchr(spec, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		long count;

		if (!c2 || (count = atol(c1 + 1)) < 1) {
			fprintf(stderr, "syscall_loop: '%s' is not OP:COUNT:TARGET\n", spec);
			return -1;
		}
		*c1 = '\0';
		if (op_setup(&ops[i], spec, c2 + 1, count))
			return -1;
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: syscall_loop OP TARGET [COUNT [ROUNDS]]\n"
		"       syscall_loop -m ROUNDS OP:COUNT:TARGET [OP:COUNT:TARGET...]\n"
		"       syscall_loop -s OP:COUNT:TARGET [OP:COUNT:TARGET...]\n"
		"       syscall_loop serve PORT\n"
		"OP: open stat create exec connect sendto; ROUNDS 1-%d\n",
		MAX_ROUNDS);
}

int main(int argc, char **argv)
{
	static struct op ops[MAX_OPS];
	int n_ops = 0, rounds;

	if (argc == 3 && !strcmp(argv[1], "serve"))
		return serve(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "-s")) {
		if (argc - 2 > MAX_OPS || parse_specs(ops, argv + 2, argc - 2)) {
			usage();
			return 2;
		}
		return stepped(ops, argc - 2);
	}
	if (argc >= 4 && !strcmp(argv[1], "-m")) {
		rounds = atoi(argv[2]);
		n_ops = argc - 3;
		if (rounds < 1 || rounds > MAX_ROUNDS || n_ops > MAX_OPS ||
		    parse_specs(ops, argv + 3, n_ops)) {
			usage();
			return 2;
		}
		if (measure(ops, n_ops, rounds))
			return 1;
		for (int k = 0; k < n_ops; k++)
			printf("%s %.0f %.0f %.0f\n", ops[k].name, ops[k].ns[rounds / 2], ops[k].ns[0],
			       ops[k].ns[rounds - 1]);
		return 0;
	}
	if (argc < 3 || argc > 5) {
		usage();
		return 2;
	}
	rounds = argc > 4 ? atoi(argv[4]) : 5;
	if (rounds < 1 || rounds > MAX_ROUNDS ||
	    op_setup(&ops[0], argv[1], argv[2], argc > 3 ? atol(argv[3]) : 20000) ||
	    ops[0].count < 1) {
		usage();
		return 2;
	}
	if (measure(ops, 1, rounds))
		return 1;
	printf("%.0f %.0f %.0f\n", ops[0].ns[rounds / 2], ops[0].ns[0], ops[0].ns[rounds - 1]);
	return 0;
}
