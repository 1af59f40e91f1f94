/* SPDX-License-Identifier: MIT */
/*
 * The privileged operations of issue 16, cause 1, each done for real and each undone at
 * once when it worked (harmless in the test VM; never a real reboot). Prints one line per
 * operation: "<op> ok" or "<op> errno=<n>", so the e2e tests compare the kernel's answer
 * unconfined, confined, and confined with the capability granted.
 *   cap_escape [--dir RWDIR] [--file FILE] [--mnt MOUNT] OP...
 * (RWDIR: mknod, RWDIR/victim: trusted.* xattr; FILE: the immutable flag; MOUNT: remounts)
 *   cap_escape serve OUTFILE OP   (daemon test: OP on each SIGUSR1, the line to OUTFILE)
 * OPs: caps securebits-locked sethostname acct syslog ioperm delete_module reboot-cad-off
 * perf-system-wide fanotify-content fspick mount_setattr immutable mtu trusted-xattr
 * mknod-chr mknod-blk userns-netns bind-80 reexec-caps, and the unprivileged neighbours
 * perf-self (a count of the program's own user time) and syslog-size (the log's size)
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/perf_event.h>
#include <linux/reboot.h>
#include <linux/securebits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/io.h>
#include <sys/ioctl.h>
#include <sys/klog.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

static const char *dir = ".", *file = "victim", *mnt = "mnt", *self;

/* 0 or -errno */
static int neg(long r)
{
	return r < 0 ? -errno : 0;
}

static int is_ro(const char *path)
{
	struct statvfs s;

	return !statvfs(path, &s) && (s.f_flag & ST_RDONLY);
}

static int op_caps(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];
	uint64_t bnd = 0, amb = 0;

	if (syscall(SYS_capget, &h, d))
		return -errno;
	for (int c = 0; c < 64; c++) {
		if (prctl(PR_CAPBSET_READ, c, 0, 0, 0) == 1)
			bnd |= 1ull << c;
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, c, 0, 0) == 1)
			amb |= 1ull << c;
	}
	printf("caps prm=%llx eff=%llx inh=%llx bnd=%llx amb=%llx\n",
	       (unsigned long long)d[1].permitted << 32 | d[0].permitted,
	       (unsigned long long)d[1].effective << 32 | d[0].effective,
	       (unsigned long long)d[1].inheritable << 32 | d[0].inheritable,
	       (unsigned long long)bnd, (unsigned long long)amb);
	return 1; /* printed its own line */
}

/* Root's execve cannot refill the sets: NOROOT is set and locked. */
static int op_securebits_locked(void)
{
	int b = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);

	printf("securebits-locked %s\n",
	       b >= 0 && (b & SECBIT_NOROOT) && (b & SECBIT_NOROOT_LOCKED) &&
			       (b & SECBIT_NO_SETUID_FIXUP) && (b & SECBIT_NO_SETUID_FIXUP_LOCKED)
		       ? "yes"
		       : "no");
	return 1;
}

static int op_sethostname(void)
{
	char name[256] = { 0 };

	if (gethostname(name, sizeof(name) - 1))
		return -errno;
	return neg(sethostname(name, strlen(name))); /* the same name again */
}

static int op_acct(void)
{
	return neg(acct(NULL)); /* accounting off (it is off) */
}

static int op_syslog(void)
{
	static char buf[4096];

	return neg(klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, sizeof(buf)));
}

static int op_ioperm(void)
{
	if (ioperm(0x80, 1, 1))
		return -errno;
	return neg(ioperm(0x80, 1, 0));
}

static int op_delete_module(void)
{
	/* No such module: ENOENT when allowed, EPERM when the capability is refused. */
	return neg(syscall(SYS_delete_module, "pysb_no_such_module", O_NONBLOCK));
}

static int op_reboot_cad_off(void)
{
	/* LINUX_REBOOT_CMD_CAD_OFF: Ctrl-Alt-Del sends SIGINT to init; nothing reboots. */
	return neg(syscall(SYS_reboot, LINUX_REBOOT_MAGIC1, LINUX_REBOOT_MAGIC2,
			   LINUX_REBOOT_CMD_CAD_OFF, NULL));
}

static int op_perf_system_wide(void)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.disabled = 1,
	};
	int fd = syscall(SYS_perf_event_open, &a, -1, 0, -1, 0); /* every task, cpu 0 */

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/* The program's own user-space time, which any user may count: no CPU, no kernel. */
static int op_perf_self(void)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_SW_TASK_CLOCK,
		.disabled = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
	int fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, 0); /* this task, any cpu */

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static int op_syslog_size(void)
{
	int n = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);

	return n > 0 ? 0 : n == 0 ? -ENODATA : -errno;
}

static int op_fanotify_content(void)
{
	int fd = fanotify_init(FAN_CLASS_CONTENT, O_RDONLY);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static int fsconfig_ro(int fd, const char *flag)
{
	if (syscall(SYS_fsconfig, fd, FSCONFIG_SET_FLAG, flag, NULL, 0))
		return -errno;
	return neg(syscall(SYS_fsconfig, fd, FSCONFIG_CMD_RECONFIGURE, NULL, NULL, 0));
}

static int op_fspick(void)
{
	int fd = syscall(SYS_fspick, AT_FDCWD, mnt, FSPICK_CLOEXEC), r;

	if (fd < 0)
		return -errno;
	r = fsconfig_ro(fd, "ro");
	if (!r && !is_ro(mnt))
		r = -EPROTO; /* said "done" but is not read-only */
	if (!r)
		fsconfig_ro(fd, "rw");
	close(fd);
	return r;
}

static int op_mount_setattr(void)
{
	struct mount_attr a = { .attr_set = MOUNT_ATTR_RDONLY };
	int r = neg(syscall(SYS_mount_setattr, AT_FDCWD, mnt, 0, &a, sizeof(a)));

	if (!r && !is_ro(mnt))
		r = -EPROTO;
	if (!r) {
		struct mount_attr c = { .attr_clr = MOUNT_ATTR_RDONLY };

		syscall(SYS_mount_setattr, AT_FDCWD, mnt, 0, &c, sizeof(c));
	}
	return r;
}

static int op_immutable(void)
{
	int fd = open(file, O_RDONLY), flags, r = 0;

	if (fd < 0)
		return -errno;
	if (ioctl(fd, FS_IOC_GETFLAGS, &flags)) {
		r = -errno;
	} else {
		flags |= FS_IMMUTABLE_FL;
		r = neg(ioctl(fd, FS_IOC_SETFLAGS, &flags));
		if (!r) {
			flags &= ~FS_IMMUTABLE_FL;
			ioctl(fd, FS_IOC_SETFLAGS, &flags);
		}
	}
	close(fd);
	return r;
}

static int op_mtu(void)
{
	struct ifreq ifr = { 0 };
	int s = socket(AF_INET, SOCK_DGRAM, 0), r;

	if (s < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	r = neg(ioctl(s, SIOCGIFMTU, &ifr));
	if (!r)
		r = neg(ioctl(s, SIOCSIFMTU, &ifr)); /* the same MTU again */
	close(s);
	return r;
}

/* On RWDIR/victim: the file rules let the program change its attributes. */
static int op_trusted_xattr(void)
{
	char p[4096];
	int r;

	snprintf(p, sizeof(p), "%s/victim", dir);
	r = neg(setxattr(p, "trusted.pysb", "v", 1, 0));
	if (!r)
		removexattr(p, "trusted.pysb");
	return r;
}

static int do_mknod(mode_t type, dev_t dev)
{
	char p[4096];
	int r;

	snprintf(p, sizeof(p), "%s/%s", dir, type == S_IFBLK ? "blk" : "chr");
	r = neg(mknod(p, type | 0600, dev));
	if (!r)
		unlink(p);
	return r;
}

static int op_mknod_chr(void)
{
	return do_mknod(S_IFCHR, makedev(1, 3)); /* /dev/null's numbers */
}

static int op_mknod_blk(void)
{
	return do_mknod(S_IFBLK, makedev(7, 0)); /* loop0's */
}

/* In a user namespace of its own the program holds every capability of that namespace
 * (the kernel's own check passes); lsm/capable still refuses them. */
static int op_userns_netns(void)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		if (unshare(CLONE_NEWUSER))
			_exit(100 + errno);
		_exit(unshare(CLONE_NEWNET) ? errno : 0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
		return -ECHILD;
	if (WEXITSTATUS(st) >= 100) {
		printf("userns-netns userns-errno=%d\n", WEXITSTATUS(st) - 100);
		return 1;
	}
	return -WEXITSTATUS(st);
}

static int op_bind_80(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(80),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int s = socket(AF_INET, SOCK_STREAM, 0), r;

	if (s < 0)
		return -errno;
	r = neg(bind(s, (struct sockaddr *)&a, sizeof(a)));
	close(s);
	return r;
}

/* What a program the sandboxed one executes holds (root's execve under NOROOT). */
static int op_reexec_caps(void)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		char *argv[] = { (char *)self, "caps", NULL };

		execv("/proc/self/exe", argv);
		printf("reexec-caps errno=%d\n", errno);
		fflush(stdout);
		_exit(1);
	}
	waitpid(pid, &st, 0);
	return 1;
}

static const struct {
	const char *name;
	int (*fn)(void);
} ops[] = {
	{ "caps", op_caps },
	{ "securebits-locked", op_securebits_locked },
	{ "sethostname", op_sethostname },
	{ "acct", op_acct },
	{ "syslog", op_syslog },
	{ "ioperm", op_ioperm },
	{ "delete_module", op_delete_module },
	{ "reboot-cad-off", op_reboot_cad_off },
	{ "perf-system-wide", op_perf_system_wide },
	{ "perf-self", op_perf_self },
	{ "syslog-size", op_syslog_size },
	{ "fanotify-content", op_fanotify_content },
	{ "fspick", op_fspick },
	{ "mount_setattr", op_mount_setattr },
	{ "immutable", op_immutable },
	{ "mtu", op_mtu },
	{ "trusted-xattr", op_trusted_xattr },
	{ "mknod-chr", op_mknod_chr },
	{ "mknod-blk", op_mknod_blk },
	{ "userns-netns", op_userns_netns },
	{ "bind-80", op_bind_80 },
	{ "reexec-caps", op_reexec_caps },
};

static void run(const char *name, FILE *out)
{
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		int r;

		if (strcmp(ops[i].name, name))
			continue;
		fflush(stdout);
		r = ops[i].fn();
		if (r == 0)
			fprintf(out, "%s ok\n", name);
		else if (r < 0)
			fprintf(out, "%s errno=%d\n", name, -r);
		fflush(out);
		return;
	}
	fprintf(out, "%s unknown-op\n", name);
	fflush(out);
}

static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

int main(int argc, char **argv)
{
	int i = 1;

	self = argv[0];
	if (argc == 4 && !strcmp(argv[1], "serve")) {
		FILE *out = fopen(argv[2], "a"); /* opened before any confinement */
		sigset_t usr1, old;

		if (!out)
			return 1;
		setvbuf(out, NULL, _IOLBF, 0);
		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		sigprocmask(SIG_BLOCK, &usr1, &old);
		signal(SIGUSR1, on_usr1);
		fprintf(out, "ready\n");
		for (;;) {
			while (!go)
				sigsuspend(&old);
			go = 0;
			run(argv[3], out);
		}
	}
	for (; i + 1 < argc && argv[i][0] == '-' && argv[i][1] == '-'; i += 2) {
		if (!strcmp(argv[i], "--dir"))
			dir = argv[i + 1];
		else if (!strcmp(argv[i], "--file"))
			file = argv[i + 1];
		else if (!strcmp(argv[i], "--mnt"))
			mnt = argv[i + 1];
	}
	for (; i < argc; i++)
		run(argv[i], stdout);
	return 0;
}
