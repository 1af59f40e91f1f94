/* SPDX-License-Identifier: MIT */
/*
 * Policy compiler: turns a parsed policy (plus the implicit paths a program needs to start)
 * into the exact entries of the BPF maps. Pure user-space work: `pysb-bpf check` runs it
 * without privileges.
 */
#ifndef PYSB_COMPILE_H
#define PYSB_COMPILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.h"
#include "pysb_abi.h"

struct compiled_file {
	char *path;	 /* canonical path the entry was made from */
	uint64_t ino;
	uint32_t dev;	 /* kernel dev_t: MAJOR << 20 | MINOR */
	uint32_t access; /* PYSB_ACC_* */
	bool implicit;
	const char *why;       /* implicit: the reason ("shared libraries", ...) */
	struct policy_src src; /* explicit: the policy line */
};

/* What the policy grants the mount point of a file system (for dentry-only hooks). */
struct compiled_mount {
	uint32_t dev;
	uint32_t access; /* the least over every mount of that file system */
};

struct compiled {
	struct compiled_file *files;
	size_t n_files;
	struct compiled_mount *mounts;
	size_t n_mounts;
	bool exec_allowed;	    /* python-api grants process-exec */
	struct policy_src exec_src; /* the python-api line that decided, if any */
};

struct compile_opts {
	const char *interpreter; /* absolute path of the program executed first, or NULL */
	const char *script;	 /* the .py file run by it, or NULL */
	bool implicit;		 /* add the implicit paths (bpf.implicit, default true) */
};

/* Returns 0, or -1 after printing what failed (pr_err). */
int policy_compile(const struct policy *p, const struct compile_opts *o, struct compiled *out);
void compiled_free(struct compiled *c);

/* Does python-api grant the process-exec category? (last matching line wins) */
bool policy_exec_allowed(const struct policy *p, struct policy_src *src);

/* Kernel dev_t of a user-space st_dev. */
uint32_t kernel_dev(uint64_t st_dev);

/* Implicit paths: the set a program needs to start, documented in docs/policy.md. */
struct implicit_path {
	char *path; /* existing, canonical */
	uint32_t access;
	const char *why;
};

int implicit_paths(const char *interpreter, const char *script, struct implicit_path **out,
		   size_t *n);
void implicit_paths_free(struct implicit_path *v, size_t n);

#endif /* PYSB_COMPILE_H */
