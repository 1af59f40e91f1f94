/* SPDX-License-Identifier: MIT */
/*
 * Reads an extended attribute three ways: getxattr(2); IORING_OP_GETXATTR under a
 * registered personality after a capset(2) that changes nothing; plain IORING_OP_GETXATTR.
 * The capset gives the task new credentials, so the op (run by an io-wq worker started
 * with them) has cred != real_cred, the shape overlayfs has when it reads its layers for
 * a task. A hook that took every such override for the kernel's own doing let it through.
 * Prints "<how> ok <value>" or "<how> errno=<n>" for each.
 *   uring_getxattr PATH NAME
 */
#include <errno.h>
#include <liburing.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

static void report(const char *how, int len_or_neg_errno, const char *value)
{
	if (len_or_neg_errno >= 0)
		printf("%s ok %.*s\n", how, len_or_neg_errno, value);
	else
		printf("%s errno=%d\n", how, -len_or_neg_errno);
}

static int uring_getxattr(struct io_uring *ring, const char *path, const char *name,
			  char *value, unsigned int len, int personality)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct io_uring_cqe *cqe;
	int res;

	io_uring_prep_getxattr(sqe, name, value, path, len);
	sqe->personality = personality;
	if (io_uring_submit(ring) != 1 || io_uring_wait_cqe(ring, &cqe))
		return -EIO;
	res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return res;
}

int main(int argc, char **argv)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];
	struct io_uring ring;
	char value[256];
	ssize_t n;
	int id;

	if (argc != 3)
		return 2;
	n = getxattr(argv[1], argv[2], value, sizeof(value));
	report("syscall", n < 0 ? -errno : (int)n, value);
	if (io_uring_queue_init(4, &ring, 0)) {
		printf("io_uring unavailable\n");
		return 0;
	}
	id = io_uring_register_personality(&ring);
	if (!id) /* an SQE's personality 0 is "none": take the next */
		id = io_uring_register_personality(&ring);
	if (id <= 0) {
		printf("personality errno=%d\n", -id);
		return 0;
	}
	/* the same capabilities again: new credentials, nothing else changed */
	if (syscall(SYS_capget, &hdr, data) || syscall(SYS_capset, &hdr, data)) {
		printf("capset errno=%d\n", errno);
		return 0;
	}
	report("uring-personality",
	       uring_getxattr(&ring, argv[1], argv[2], value, sizeof(value), id), value);
	/* after: the first op punted to io-wq starts the task's worker, with the task's
	 * credentials of that moment (before the capset, they would equal the personality's) */
	report("uring", uring_getxattr(&ring, argv[1], argv[2], value, sizeof(value), 0), value);
	io_uring_queue_exit(&ring);
	return 0;
}
