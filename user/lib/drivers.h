/* SPDX-License-Identifier: MIT */
/*
 * Processes that drive another (found by adversaries): a process confined in place
 * (`attach`, a daemon binding) keeps what it held before, and some of it reaches another
 * process whatever the sandbox, the kernel having judged only its start: a tracee
 * (PTRACE_POKEDATA, SETREGS on a tracee already held meet no hook), another's
 * /proc/PID/mem opened (its reads and writes are not judged), a seccomp user-notification
 * listener (it answers the system calls of every process its filter is on, and installs
 * descriptors in them). Read from /proc.
 */
#ifndef PYSB_DRIVERS_H
#define PYSB_DRIVERS_H

#include <stddef.h>
#include <sys/types.h>

enum driver_kind { DRIVER_NONE, DRIVER_MEM_FILE, DRIVER_LISTENER, DRIVER_TRACE };

struct driver {
	enum driver_kind kind;
	long who;    /* MEM_FILE: whose memory; LISTENER: the descriptor; TRACE: the tracee */
	long tracer; /* TRACE: the thread of the process that traces */
};

/* The first thing `pid` drives: 1 (in *d), 0 for nothing, -errno when /proc cannot be
 * read. Costs a read of every task's status (the tracers) and of pid's descriptors. */
int process_driver(pid_t pid, struct driver *d);

/* "it holds /proc/N/mem open", "it holds a seccomp user-notification listener
 * (descriptor N)", "its thread N traces (ptrace) process M". */
void driver_describe(const struct driver *d, char *buf, size_t len);

#endif
