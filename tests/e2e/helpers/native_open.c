/* SPDX-License-Identifier: MIT */
/*
 * Opens a file the ways Python cannot: openat2(2) and io_uring's IORING_OP_OPENAT (run
 * by a kernel io-wq worker, not by the calling thread). Prints "<how> ok" or
 * "<how> errno=<n>" for each, so the e2e tests can check the kernel's answer.
 *   native_open PATH
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <liburing.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static void report(const char *how, int fd_or_neg_errno)
{
	if (fd_or_neg_errno >= 0) {
		printf("%s ok\n", how);
		close(fd_or_neg_errno);
	} else {
		printf("%s errno=%d\n", how, -fd_or_neg_errno);
	}
}

int main(int argc, char **argv)
{
	struct open_how how = { .flags = O_RDONLY, .resolve = RESOLVE_NO_MAGICLINKS };
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	long fd;

	if (argc != 2)
		return 2;
	fd = syscall(SYS_openat2, AT_FDCWD, argv[1], &how, sizeof(how));
	report("openat2", fd < 0 ? -errno : (int)fd);

	if (io_uring_queue_init(4, &ring, 0)) {
		printf("io_uring unavailable\n");
		return 0;
	}
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_openat(sqe, AT_FDCWD, argv[1], O_RDONLY, 0);
	/* Force the async path: the open runs in an io-wq worker thread. */
	sqe->flags |= IOSQE_ASYNC;
	io_uring_submit(&ring);
	if (io_uring_wait_cqe(&ring, &cqe) == 0) {
		report("io_uring-openat", cqe->res);
		io_uring_cqe_seen(&ring, cqe);
	}
	io_uring_queue_exit(&ring);
	return 0;
}
