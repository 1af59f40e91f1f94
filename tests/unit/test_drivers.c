/* SPDX-License-Identifier: MIT */
/*
 * Processes that drive another (user/lib/drivers.c), read from /proc: another process's
 * memory file held, a seccomp user-notification listener held, a trace, a cgroup file
 * held open for writing (and the descriptors a program started now would inherit), each
 * named; one's own memory file, or a cgroup file read-only or closed on exec, is nothing.
 * Run as root (the cgroup file is a hierarchy's root cgroup.procs, opened, never written).
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "drivers.h"

/* A cgroup.procs to open (never written): cgroup2's, or a v1 hierarchy's on a hybrid
 * machine; NULL if none. */
static const char *cgroup_procs(void)
{
	static char found[256];
	glob_t g;

	if (!access("/sys/fs/cgroup/cgroup.procs", W_OK))
		return "/sys/fs/cgroup/cgroup.procs";
	if (glob("/sys/fs/cgroup/*/cgroup.procs", 0, NULL, &g))
		return NULL;
	snprintf(found, sizeof(found), "%s", g.gl_pathv[0]);
	globfree(&g);
	return found;
}

/* A child that waits to be killed. */
static pid_t sleeper(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		pause();
		_exit(0);
	}
	assert_true(pid > 0);
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void test_nothing_and_own_memory(void **state)
{
	struct driver d;
	char buf[128];
	int fd;

	(void)state;
	assert_int_equal(process_driver(getpid(), true, &d), 0);
	assert_int_equal(d.kind, DRIVER_NONE);
	fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(process_driver(getpid(), true, &d), 0);
	close(fd);
	driver_describe(&d, buf, sizeof(buf));
	assert_string_equal(buf, "it drives no other process");
}

static void test_another_memory_file(void **state)
{
	pid_t child = sleeper();
	struct driver d;
	char path[64], buf[128], want[128];
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)child);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(process_driver(getpid(), true, &d), 1);
	assert_int_equal(d.kind, DRIVER_MEM_FILE);
	assert_int_equal(d.who, child);
	driver_describe(&d, buf, sizeof(buf));
	snprintf(want, sizeof(want), "it holds /proc/%d/mem open", (int)child);
	assert_string_equal(buf, want);
	close(fd);
	reap(child);
}

static void test_seccomp_listener(void **state)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(code) / sizeof(code[0]), .filter = code };
	pid_t child;
	int status;

	(void)state;
	child = fork();
	if (child == 0) {
		/* the filter on a child of ours: the listener is its, and reported by it */
		struct driver d;
		char buf[128];
		int fd, ok;

		prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
				  SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
		ok = fd >= 0 && process_driver(getpid(), true, &d) == 1 &&
		     d.kind == DRIVER_LISTENER && d.who == fd;
		driver_describe(&d, buf, sizeof(buf));
		ok = ok && strstr(buf, "seccomp user-notification listener (descriptor");
		_exit(ok ? 0 : 1);
	}
	assert_true(child > 0);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void test_trace(void **state)
{
	pid_t child = sleeper(), tracer;
	int status;

	(void)state;
	tracer = fork();
	if (tracer == 0) {
		struct driver d;
		int ok;

		if (ptrace(PTRACE_SEIZE, child, NULL, NULL))
			_exit(2);
		ok = process_driver(getpid(), true, &d) == 1 && d.kind == DRIVER_TRACE &&
		     d.who == child && d.tracer == getpid();
		_exit(ok ? 0 : 1);
	}
	assert_true(tracer > 0);
	assert_int_equal(waitpid(tracer, &status, 0), tracer);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	reap(child);
}

static void test_cgroup_file(void **state)
{
	const char *procs = cgroup_procs();
	struct driver d;
	char path[256], buf[512], want[512];
	int w, r;

	(void)state;
	if (!procs)
		skip(); /* no cgroup file system here */
	w = open(procs, O_WRONLY);
	assert_true(w >= 0);
	assert_int_equal(process_driver(getpid(), true, &d), 1);
	assert_int_equal(d.kind, DRIVER_CGROUP_FILE);
	assert_int_equal(d.who, w);
	driver_describe(&d, buf, sizeof(buf));
	snprintf(want, sizeof(want), "it holds a cgroup file open for writing (descriptor %d: %s)",
		 w, procs);
	assert_string_equal(buf, want);
	assert_int_equal(inherited_cgroup_file(path, sizeof(path)), w);
	assert_string_equal(path, procs);
	/* closed on exec: still held (attach refuses it), not inherited */
	assert_int_equal(fcntl(w, F_SETFD, FD_CLOEXEC), 0);
	assert_int_equal(inherited_cgroup_file(path, sizeof(path)), -1);
	close(w);
	/* read-only: no way out */
	r = open(procs, O_RDONLY);
	assert_true(r >= 0);
	assert_int_equal(process_driver(getpid(), true, &d), 0);
	assert_int_equal(inherited_cgroup_file(path, sizeof(path)), -1);
	close(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nothing_and_own_memory),
		cmocka_unit_test(test_another_memory_file),
		cmocka_unit_test(test_seccomp_listener),
		cmocka_unit_test(test_trace),
		cmocka_unit_test(test_cgroup_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
