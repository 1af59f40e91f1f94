/* SPDX-License-Identifier: MIT */
/*
 * Sets and restores a file's no-dump flag the way a 32-bit program does: ioctl(2) through
 * the ia32 system call gate (int $0x80, which a 64-bit process may use too), with the
 * 32-bit commands FS_IOC32_GETFLAGS and FS_IOC32_SETFLAGS. The kernel takes them through
 * compat_sys_ioctl and its own LSM hook (file_ioctl_compat, 6.8+ and Debian's 6.1), not
 * through file_ioctl. Prints "compat-setflags ok", "compat-setflags errno=N", or
 * "compat-setflags no-ia32" when the kernel has no 32-bit system calls.
 *   compat_ioctl FILE
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#define IA32_IOCTL	   54
#define FS_IOC32_GETFLAGS  0x80046601u
#define FS_IOC32_SETFLAGS  0x40046602u
#define FS_NODUMP_FL	   0x40

/* A 32-bit system call: the return value, or -errno. Its pointers must lie below 4 GiB. */
static long ia32_syscall3(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(nr), "b"(a), "c"(b), "d"(c)
			 : "r8", "r9", "r10", "r11", "memory");
	return ret;
}

int main(int argc, char **argv)
{
	unsigned int *flags;
	long r;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: %s FILE\n", argv[0]);
		return 2;
	}
	fd = open(argv[1], O_RDONLY);
	flags = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT,
		     -1, 0);
	if (fd < 0 || flags == MAP_FAILED) {
		perror(argv[1]);
		return 2;
	}
	r = ia32_syscall3(IA32_IOCTL, fd, (long)FS_IOC32_GETFLAGS, (long)(unsigned long)flags);
	if (r == -ENOSYS) {
		printf("compat-setflags no-ia32\n");
		return 0;
	}
	if (r == 0) {
		unsigned int old = *flags;

		*flags = old | FS_NODUMP_FL;
		r = ia32_syscall3(IA32_IOCTL, fd, (long)FS_IOC32_SETFLAGS,
				  (long)(unsigned long)flags);
		*flags = old;
		if (r == 0)
			ia32_syscall3(IA32_IOCTL, fd, (long)FS_IOC32_SETFLAGS,
				      (long)(unsigned long)flags);
	}
	if (r == 0)
		printf("compat-setflags ok\n");
	else
		printf("compat-setflags errno=%ld\n", -r);
	return 0;
}
