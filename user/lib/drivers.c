/* SPDX-License-Identifier: MIT */
/* Processes that drive another: drivers.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdbool.h>
#include <sys/vfs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drivers.h"

/*
 * A tracee the process holds (found by an adversary): ptrace's later requests on it
 * (POKEDATA, SETREGS, CONT with a signal) meet no hook, only the attach did, so a process
 * that traced another before it was confined keeps making it run system calls of its choice,
 * outside the sandbox. Called once the process is confined (no new tracee from then on):
 * the first thread found traced by one of its threads, as "tracee tracer", or 0.
 */
static int traced_by(pid_t target, long *tracee, long *tracer)
{
	DIR *procs = opendir("/proc");
	struct dirent *p;
	char f[600], line[128];

	if (!procs)
		return -errno;
	while ((p = readdir(procs))) {
		DIR *tasks;
		struct dirent *t;

		if (p->d_name[0] < '1' || p->d_name[0] > '9')
			continue;
		snprintf(f, sizeof(f), "/proc/%s/task", p->d_name);
		tasks = opendir(f);
		while (tasks && (t = readdir(tasks))) {
			FILE *st;
			long by = 0;

			if (t->d_name[0] < '1' || t->d_name[0] > '9')
				continue;
			snprintf(f, sizeof(f), "/proc/%s/task/%s/status", p->d_name, t->d_name);
			st = fopen(f, "re");
			while (st && fgets(line, sizeof(line), st))
				if (sscanf(line, "TracerPid: %ld", &by) == 1)
					break;
			if (st)
				fclose(st);
			snprintf(f, sizeof(f), "/proc/%d/task/%ld", (int)target, by);
			if (by > 0 && !access(f, F_OK)) {
				*tracee = atol(t->d_name);
				*tracer = by;
				closedir(tasks);
				closedir(procs);
				return 1;
			}
		}
		if (tasks)
			closedir(tasks);
	}
	closedir(procs);
	return 0;
}

/* The kind of driver the descriptor link names, with the pid whose memory it is. */
static enum driver_kind driver_link(const char *link, long *who)
{
	int end = 0;

	/* seccomp_notify_ops' anon inode: whatever process the filter is on */
	if (!strcmp(link, "anon_inode:seccomp notify"))
		return DRIVER_LISTENER;
	if ((sscanf(link, "/proc/%ld/mem%n", who, &end) == 1 ||
	     sscanf(link, "/proc/%*d/task/%ld/mem%n", who, &end) == 1) &&
	    link[end] == '\0')
		return DRIVER_MEM_FILE;
	return DRIVER_NONE;
}

/*
 * Whether descriptor fd of `dir` is a fanotify group of a permission class
 * (FAN_CLASS_CONTENT, FAN_CLASS_PRE_CONTENT: fdinfo's "fanotify flags:"), the only ones
 * whose marks make other processes wait for its answer (found by an adversary, round 23:
 * made before attach, it denied an outside root's open of a file, and one that does not
 * answer hangs them). A notification-class group only reads, as an inotify watch.
 */
static bool permission_fanotify(const char *dir, const char *fd)
{
	char f[600], line[128];
	unsigned int flags = 0;
	bool found = false;
	FILE *in;

	if (snprintf(f, sizeof(f), "%s/fdinfo/%s", dir, fd) >= (int)sizeof(f))
		return true;
	in = fopen(f, "re");
	if (!in)
		return true; /* unknown: taken for one (refused) */
	while (!found && fgets(line, sizeof(line), in))
		found = sscanf(line, "fanotify flags:%x", &flags) == 1;
	fclose(in);
	return !found || (flags & 0xc); /* FAN_CLASS_CONTENT | FAN_CLASS_PRE_CONTENT */
}

/* Whether descriptor fd of the process or thread directory `dir` (/proc/P, /proc/P/task/T,
 * /proc/self) is a cgroup file open for writing. */
static bool writable_cgroup_file(const char *dir, const char *fd)
{
	char f[600], line[64];
	unsigned int flags = 0;
	struct statfs sf;
	FILE *in;

	snprintf(f, sizeof(f), "%s/fd/%s", dir, fd);
	if (statfs(f, &sf) || (sf.f_type != CGROUP2_SUPER_MAGIC && sf.f_type != CGROUP_SUPER_MAGIC))
		return false;
	snprintf(f, sizeof(f), "%s/fdinfo/%s", dir, fd);
	in = fopen(f, "re");
	if (!in)
		return true; /* unknown: as if writable */
	while (fgets(line, sizeof(line), in))
		if (sscanf(line, "flags: %o", &flags) == 1)
			break;
	fclose(in);
	return (flags & O_ACCMODE) != O_RDONLY;
}

int inherited_cgroup_file(char *path, size_t len)
{
	DIR *fds = opendir("/proc/self/fd");
	struct dirent *e;
	char f[64];
	int found = -1;

	while (fds && found < 0 && (e = readdir(fds))) {
		int fd = atoi(e->d_name), fl;
		ssize_t n;

		if (e->d_name[0] == '.' || fd == dirfd(fds))
			continue;
		fl = fcntl(fd, F_GETFD);
		if (fl < 0 || (fl & FD_CLOEXEC) || !writable_cgroup_file("/proc/self", e->d_name))
			continue;
		found = fd;
		snprintf(f, sizeof(f), "/proc/self/fd/%d", fd);
		n = readlink(f, path, len - 1);
		path[n > 0 ? n : 0] = '\0';
	}
	if (fds)
		closedir(fds);
	return found;
}

/*
 * A descriptor a thread of `target` holds that drives another process, the kernel judging
 * its open but not its use (found by adversaries): a process's memory file,
 * /proc/PID/mem, opened before the process was confined, reads and writes that memory
 * whatever the sandbox, which is what a tracee gives; a seccomp user-notification
 * listener answers the system calls of every process its filter is on (the results they
 * see, descriptors installed in them with SECCOMP_IOCTL_NOTIF_ADDFD), and which processes
 * those are it does not say. Or a way out: a cgroup file open for writing. The first
 * found, with in *who the pid of the memory (not one of its own threads) or the
 * descriptor's number, and the cgroup file's name in path. Or a fanotify permission group:
 * every other process's access to what it marked waits for its answer.
 */
static enum driver_kind holds_a_driver(pid_t target, long *who, char *path, size_t len)
{
	char dir[64], f[600], link[128];
	enum driver_kind kind = DRIVER_NONE;
	DIR *tasks, *fds;
	struct dirent *t, *e;

	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)target);
	tasks = opendir(dir);
	while (tasks && !kind && (t = readdir(tasks))) {
		if (t->d_name[0] == '.')
			continue;
		snprintf(f, sizeof(f), "%s/%s/fd", dir, t->d_name);
		fds = opendir(f);
		while (fds && !kind && (e = readdir(fds))) {
			ssize_t n;

			snprintf(f, sizeof(f), "%s/%s/fd/%s", dir, t->d_name, e->d_name);
			n = readlink(f, link, sizeof(link) - 1);
			if (n <= 0)
				continue;
			link[n] = '\0';
			kind = driver_link(link, who);
			snprintf(f, sizeof(f), "%s/%s", dir, t->d_name);
			if (kind == DRIVER_NONE && !strcmp(link, "anon_inode:[fanotify]") &&
			    permission_fanotify(f, e->d_name))
				kind = DRIVER_FANOTIFY;
			if (kind == DRIVER_NONE && writable_cgroup_file(f, e->d_name)) {
				kind = DRIVER_CGROUP_FILE;
				snprintf(path, len, "%s", link);
			}
			if (kind == DRIVER_LISTENER || kind == DRIVER_CGROUP_FILE ||
			    kind == DRIVER_FANOTIFY)
				*who = atol(e->d_name);
			snprintf(f, sizeof(f), "%s/%ld", dir, *who);
			if (kind == DRIVER_MEM_FILE && !access(f, F_OK))
				kind = DRIVER_NONE; /* one of its own threads */
		}
		if (fds)
			closedir(fds);
	}
	if (tasks)
		closedir(tasks);
	return kind;
}

int process_driver(pid_t pid, bool traces, struct driver *d)
{
	int err;

	memset(d, 0, sizeof(*d));
	d->kind = holds_a_driver(pid, &d->who, d->path, sizeof(d->path));
	if (d->kind != DRIVER_NONE)
		return 1;
	if (!traces)
		return 0;
	err = traced_by(pid, &d->who, &d->tracer);
	if (err > 0)
		d->kind = DRIVER_TRACE;
	return err;
}

void driver_describe(const struct driver *d, char *buf, size_t len)
{
	switch (d->kind) {
	case DRIVER_MEM_FILE:
		snprintf(buf, len, "it holds /proc/%ld/mem open", d->who);
		break;
	case DRIVER_LISTENER:
		snprintf(buf, len, "it holds a seccomp user-notification listener (descriptor %ld)",
			 d->who);
		break;
	case DRIVER_CGROUP_FILE:
		snprintf(buf, len, "it holds a cgroup file open for writing (descriptor %ld: %s)",
			 d->who, d->path);
		break;
	case DRIVER_FANOTIFY:
		snprintf(buf, len, "it holds a fanotify permission group (descriptor %ld)", d->who);
		break;
	case DRIVER_TRACE:
		snprintf(buf, len, "its thread %ld traces (ptrace) process %ld", d->tracer, d->who);
		break;
	default:
		snprintf(buf, len, "it drives no other process");
	}
}
