/* SPDX-License-Identifier: MIT */
/*
 * Opens block device DEV for writing, creates READY, waits for GO (a sandbox may confine
 * the process in between: the descriptor is then one held from before), then discards
 * LEN bytes at OFFSET through io_uring: IORING_OP_URING_CMD with BLOCK_URING_CMD_DISCARD
 * (6.12+; no write(2), no ioctl). Prints "discard ok" or "discard errno=<n>" (EOPNOTSUPP
 * or EINVAL where the kernel has no such command).
 *   uring_blk_discard DEV OFFSET LEN READY GO
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define BLOCK_URING_CMD_DISCARD 0x1200 /* _IO(0x12, 0), linux/fs.h of 6.12 */
#ifndef IORING_OP_URING_CMD
#define IORING_OP_URING_CMD 46
#endif

int main(int argc, char **argv)
{
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	int fd;

	if (argc != 6) {
		fprintf(stderr, "usage: uring_blk_discard DEV OFFSET LEN READY GO\n");
		return 2;
	}
	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		perror("uring_blk_discard: open");
		return 1;
	}
	close(open(argv[4], O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	while (access(argv[5], F_OK))
		usleep(20000);
	if (io_uring_queue_init(4, &ring, 0)) {
		perror("uring_blk_discard: io_uring");
		return 1;
	}
	sqe = io_uring_get_sqe(&ring);
	if (!sqe)
		return 1;
	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
	sqe->cmd_op = BLOCK_URING_CMD_DISCARD;
	sqe->addr = strtoull(argv[2], NULL, 0);
	sqe->addr3 = strtoull(argv[3], NULL, 0);
	if (io_uring_submit(&ring) != 1 || io_uring_wait_cqe(&ring, &cqe)) {
		perror("uring_blk_discard: submit");
		return 1;
	}
	if (cqe->res >= 0)
		printf("discard ok\n");
	else
		printf("discard errno=%d\n", -cqe->res);
	return 0;
}
