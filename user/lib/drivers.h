/* SPDX-License-Identifier: MIT */
/*
 * Processes that drive another (found by adversaries): a process confined in place
 * (`attach`, a daemon binding) keeps what it held before, and some of it reaches another
 * process whatever the sandbox, the kernel having judged only its start: a tracee
 * (PTRACE_POKEDATA, SETREGS on a tracee already held meet no hook), another's
 * /proc/PID/mem opened (its reads and writes are not judged), a seccomp user-notification
 * listener (it answers the system calls of every process its filter is on, and installs
 * descriptors in them). Also a way out: a cgroup file opened for writing (cgroup.procs of
 * another cgroup: a write moves the process there, and the kernel judges it with the
 * opener's credentials; no LSM hook sees a migration). A fanotify permission group
 * (FAN_OPEN_PERM...: every other process's access to what it marked waits for its answer,
 * FAN_DENY refuses it). Read from /proc.
 */
#ifndef PYSB_DRIVERS_H
#define PYSB_DRIVERS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum driver_kind {
	DRIVER_NONE,
	DRIVER_MEM_FILE,
	DRIVER_LISTENER,
	DRIVER_CGROUP_FILE,
	DRIVER_FANOTIFY,
	DRIVER_TRACE
};

struct driver {
	enum driver_kind kind;
	long who;	/* MEM_FILE: whose memory; LISTENER, CGROUP_FILE, FANOTIFY: the descriptor;
			    * TRACE: the tracee */
	long tracer;	/* TRACE: the thread of the process that traces */
	char path[128]; /* CGROUP_FILE: the file */
};

/* The first thing `pid` drives: 1 (in *d), 0 for nothing, -errno when /proc cannot be
 * read. Reads pid's descriptors, and with `traces` every task's status (the tracers:
 * costly where thousands of tasks run). */
int process_driver(pid_t pid, bool traces, struct driver *d);

/* The first descriptor this process would pass on to a program it starts (no FD_CLOEXEC)
 * that is a cgroup file open for writing, or -1; its file in path. */
int inherited_cgroup_file(char *path, size_t len);

/* "it holds /proc/N/mem open", "it holds a seccomp user-notification listener
 * (descriptor N)", "its thread N traces (ptrace) process M". */
void driver_describe(const struct driver *d, char *buf, size_t len);

#endif
