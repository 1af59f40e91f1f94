/* SPDX-License-Identifier: MIT */
/*
 * A seccomp user-notification supervisor: installs on itself a filter that hands getppid(2)
 * to a listener (SECCOMP_FILTER_FLAG_NEW_LISTENER), forks a child, which inherits the
 * filter and stays where it was started, and keeps the listener. Once READY exists, the
 * child calls getppid() and waits for the supervisor's answer; when GO exists, the
 * supervisor answers 4242, which the child prints ("child getppid 4242"): a process that
 * answers another's system calls (and could install descriptors in it, NOTIF_ADDFD).
 *   seccomp_listener READY GO
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void wait_for(const char *path)
{
	while (access(path, F_OK))
		usleep(50000);
}

int main(int argc, char **argv)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(code) / sizeof(code[0]), .filter = code };
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;
	FILE *f;
	pid_t child;
	int fd;

	if (argc != 3) {
		fprintf(stderr, "usage: seccomp_listener READY GO\n");
		return 2;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return perror("no_new_privs"), 1;
	fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
			  &prog);
	if (fd < 0)
		return perror("seccomp"), 1;
	setvbuf(stdout, NULL, _IONBF, 0);
	child = fork();
	if (child < 0)
		return perror("fork"), 1;
	if (child == 0) {
		close(fd);
		wait_for(argv[1]);
		printf("child getppid %ld\n", (long)syscall(SYS_getppid));
		return 0;
	}
	printf("listener fd %d child %d\n", fd, (int)child);
	f = fopen(argv[1], "w");
	if (!f)
		return perror(argv[1]), 1;
	fclose(f);
	wait_for(argv[2]);
	memset(&req, 0, sizeof(req));
	if (ioctl(fd, SECCOMP_IOCTL_NOTIF_RECV, &req))
		return perror("notif_recv"), 1;
	memset(&resp, 0, sizeof(resp));
	resp.id = req.id;
	resp.val = 4242;
	if (ioctl(fd, SECCOMP_IOCTL_NOTIF_SEND, &resp))
		return perror("notif_send"), 1;
	waitpid(child, NULL, 0);
	return 0;
}
