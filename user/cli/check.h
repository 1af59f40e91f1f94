/* SPDX-License-Identifier: MIT */
/*
 * `pysb-bpf check`: parse and compile a policy exactly as `run` does, then report what the
 * kernel will enforce (every map entry with the policy line or the implicit-path reason
 * behind it), what pysb-bpf itself does before the start (the environment), what is left to
 * the Python layer, the bpf.* parameters with their effect, and every warning. No
 * privileges, no BPF. The report is text, or one JSON document (jansson; the schema is in
 * docs/policy.md, "pysb-bpf check --json").
 */
#ifndef PYSB_CHECK_H
#define PYSB_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "policy.h"

struct addrinfo;

struct check_opts {
	const char *policy;			 /* the policy file */
	const struct policy_override *overrides; /* --KEY=VALUE lines, read after the file */
	size_t n_overrides;
	char *const *envp; /* ${VAR} substitution and the environment env= builds */
	const char *cwd;   /* base of relative paths; NULL: the working directory */
	/* The implicit set shown is the one this program gets; NULL: the program's. */
	const char *interpreter;
	/* The program as `run` would be given it (resolved as run does, user/run/program.h);
	 * NULL: python3. */
	char *const *program;
	int n_program;
	/* Where the policy the user meant may be, listed as an error after the parser's when
	 * the policy cannot be read (run's words, user/cli/common.c); NULL: nothing to add. */
	char *missing_hint;
	bool json;    /* one JSON document instead of text */
	bool verbose; /* also the mount entries (mount_access) */
	FILE *out;    /* the report; NULL: stdout. Errors of an invalid text run: stderr */
	/* How host names resolve and where the resolvers are (NULL: as `run` does); tests. */
	int (*resolve)(const char *name, const struct addrinfo *hints, struct addrinfo **res);
	const char *resolv_conf;
};

/* Returns 0 when the policy is valid (the kernel can enforce it as reported), 1 when not. */
int check_main(const struct check_opts *o);

#endif /* PYSB_CHECK_H */
