/* SPDX-License-Identifier: MIT */
/*
 * Keeps a file open for writing where no descriptor table shows it: in an io_uring ring's
 * fixed-file table, the descriptor closed; with "ring", the ring itself kept only as a
 * registered ring (IORING_REGISTER_RING_FDS), its descriptor closed too. Then, once GO
 * exists, writes TEXT to the file through the ring (IORING_OP_WRITE, IOSQE_FIXED_FILE)
 * and prints "write ok" or "write errno=<n>", then "cgroup <its cgroup v2 path>". A write of "0" to a cgroup.procs moves the
 * writer into that cgroup: a way out of a sandbox that attach's scan of /proc/PID/fd
 * cannot see (found by an adversary, round 23).
 * With OFFSET (hex), TEXT is written there: an address, for a /proc/PID/mem.
 *   uring_held_write FILE TEXT fixed|ring READY GO [OFFSET]
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	char line[512];
	int fd, err;
	FILE *in;

	if (argc != 6 && argc != 7) {
		fprintf(stderr, "usage: uring_held_write FILE TEXT fixed|ring READY GO [OFFSET]\n");
		return 2;
	}
	fd = open(argv[1], O_WRONLY);
	if (fd < 0 || io_uring_queue_init(4, &ring, 0) || io_uring_register_files(&ring, &fd, 1)) {
		perror("uring_held_write: setup");
		return 1;
	}
	close(fd);
	if (!strcmp(argv[3], "ring") && io_uring_register_ring_fd(&ring) == 1) {
		close(ring.ring_fd); /* liburing enters through the registered index now */
	} else if (!strcmp(argv[3], "ring")) {
		perror("uring_held_write: register ring");
		return 1;
	}
	close(open(argv[4], O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	while (access(argv[5], F_OK))
		usleep(20000);
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_write(sqe, 0, argv[2], strlen(argv[2]),
			    argc == 7 ? strtoull(argv[6], NULL, 16) : 0);
	sqe->flags |= IOSQE_FIXED_FILE;
	if (io_uring_submit(&ring) != 1 || (err = io_uring_wait_cqe(&ring, &cqe))) {
		perror("uring_held_write: submit");
		return 1;
	}
	if (cqe->res >= 0)
		printf("write ok\n");
	else
		printf("write errno=%d\n", -cqe->res);
	in = fopen("/proc/self/cgroup", "re");
	while (in && fgets(line, sizeof(line), in))
		if (!strncmp(line, "0::", 3))
			printf("cgroup %s", line + 3);
	return 0;
}
