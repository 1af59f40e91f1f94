/* SPDX-License-Identifier: MIT */
/* The sandbox's cgroup v2: created below <cgroup2>/pysb-bpf, killed and removed at the end. */
#ifndef PYSB_CGROUP_H
#define PYSB_CGROUP_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define PYSB_CGROUP_PARENT "pysb-bpf"
/* Lock files that say which run cgroups have a live pysb-bpf (see sandbox_cgroup_gc). */
#define PYSB_RUN_DIR	   "/run/pysb-bpf"

struct sandbox_cgroup {
	char path[PATH_MAX];
	int fd;		     /* O_DIRECTORY fd, for clone3(CLONE_INTO_CGROUP) */
	uint64_t id;	     /* cgroup id as BPF sees it (kernfs inode number) */
	int level;	     /* depth below the cgroup2 root */
	char lock[PATH_MAX]; /* sandbox_cgroup_create_run: the lock file held, or "" */
	int lock_fd;
};

/* Said after a refusal (EACCES) met as another user than root. */
#define NOT_ROOT_HINT                                                                            \
	" (not root: a sandbox needs root, or CAP_BPF and CAP_SYS_ADMIN; run it with sudo: the " \
	"program still runs as you)"

/* Mount point of the cgroup v2 hierarchy, from /proc/self/mountinfo; -1 if none. */
int cgroup2_mount(char *buf, size_t len);

int sandbox_cgroup_create(struct sandbox_cgroup *cg, const char *name);
/* A run's cgroup: "run-<16 random hex digits>", no pid in it (a sandboxed program reads
 * its cgroup's name), with PYSB_RUN_DIR/<name>.lock flock()ed for as long as this
 * process lives: the gc's sign that the run is alive. */
int sandbox_cgroup_create_run(struct sandbox_cgroup *cg);
/* Kills every task left (cgroup.kill), waits until it is empty, removes it. */
int sandbox_cgroup_destroy(struct sandbox_cgroup *cg);

/*
 * Removes the empty cgroups of runs whose pysb-bpf died (their lock file is not locked;
 * "run-<pid>" of older versions: no such pid), and lists the ids of the sandbox
 * cgroups that still exist (for loader_gc).
 */
int sandbox_cgroup_gc(uint64_t *alive, size_t *n_alive, size_t cap);
/* Is a run cgroup with id `id` there now (or is that unknown)? loader_gc asks it again
 * before it forgets a sandbox: a run may have made and registered its cgroup since the
 * list was read. */
bool sandbox_cgroup_id_listed(uint64_t id);

#endif /* PYSB_CGROUP_H */
