/* SPDX-License-Identifier: MIT */
/* Runs one program under one compiled policy: cgroup, BPF, spawn, events, teardown. */
#ifndef PYSB_RUNNER_H
#define PYSB_RUNNER_H

#include <stdbool.h>
#include <sys/types.h>

#include "compile.h"

/* Exit codes of pysb-bpf itself, as env(1) and docker use them. */
#define EXIT_PYSB_ERROR	 125
#define EXIT_CANNOT_EXEC 126
#define EXIT_NOT_FOUND	 127

struct events_json;
struct learn_set;
struct sandbox_prep;

struct run_opts {
	const char *path;  /* what execve runs (absolute); NULL: argv[0] */
	char *const *argv; /* argv[0] as the user typed it (user/run/program.h) */
	char *const *envp; /* the program's environment */
	const struct compiled *compiled;
	bool audit;
	const char *policy;	/* the policy file, for `pysb-bpf status` (user/kernel/status.c) */
	uint32_t ringbuf_bytes; /* the sandbox's event ring buffer; 0: PYSB_RINGBUF_BYTES */
	struct events_json *events; /* JSON rendering of events (--events, --learn), or NULL */
	struct learn_set *learn;    /* --learn: collects what the policy lacks, or NULL */
	uid_t uid;		    /* (uid_t)-1: keep the caller's identity */
	gid_t gid;
	const gid_t *groups;
	size_t n_groups;
	/* sandbox_prep_start's, for this run's ring size: taken (and freed) by sandbox_run */
	struct sandbox_prep *prep;
};

/* Starts the kernel's part of a run's set-up (its cgroup, the pinned instance, a sandbox
 * id with a ring of `ring_bytes`) on a thread, while the caller compiles the policy; the
 * program cannot start before sandbox_run has put the policy's rules in. NULL: none
 * started (the programs not pinned yet, or no thread), sandbox_run does it in its turn. */
struct sandbox_prep *sandbox_prep_start(uint32_t ring_bytes);
/* For a run that will not happen: waits for the thread, undoes its work, frees `sp`. */
void sandbox_prep_cancel(struct sandbox_prep *sp);

/* Puts the running process `pid` (all its threads; not its existing children) under
 * o->compiled from now on, until it exits or pysb-bpf is interrupted (detach: it goes
 * back to its cgroup). Returns 0, or 125 on pysb-bpf errors. */
int sandbox_attach(const struct run_opts *o, pid_t pid);

/* Returns the exit status to exit with: the program's, or 125/126/127. */
/*
 * pysb-bpf's own lines (deny lines, -v) to a pipe whose reader left (`| head`) must not
 * kill it, nor the program it supervises (found by a user: the program killed before it
 * wrote its result, its cgroup left behind): SIGPIPE ignored from the start of a run,
 * the caller's disposition given back to the program.
 */
void run_ignore_sigpipe(void);
int sandbox_run(const struct run_opts *o);
/* -1, said, when a descriptor the program would inherit is a cgroup file open for writing:
 * before anything is set up. */
int refuse_inherited_cgroup_file(void);

#endif /* PYSB_RUNNER_H */
