/* SPDX-License-Identifier: MIT */
/*
 * python-api= lines as py-sandboxes reads them (guard_api.py): validation of each value,
 * and the one decision the kernel takes from them, whether execve is allowed after the start.
 */
#ifndef PYSB_POLICY_API_H
#define PYSB_POLICY_API_H

#include <stdbool.h>
#include <stddef.h>

#include "policy.h"

/*
 * Checks one python-api value ("ALLOW:threads, os.system"). Returns NULL when it is valid,
 * else a malloc'ed message saying what is wrong and what was expected, with *off set to the
 * byte offset in v of the offending part.
 */
char *policy_api_error(const char *v, size_t *off);

/*
 * Does the policy let the program exec after its start? py-sandboxes resolves python-api by
 * specificity, not by order: a function rule beats its category, a category rule beats `*`,
 * and at equal specificity DENY wins. The kernel cannot tell which Python function makes an
 * execve, so it allows execve when at least one function of the process-exec category that
 * starts a program (not the fork-only ones, not Windows') is allowed. *src (when not NULL)
 * receives the line that decided, or is left untouched when no line says anything.
 */
bool policy_api_exec(const struct policy *p, struct policy_src *src);

/* The first function of a python-api value that starts a program (os.system, ...), or NULL:
 * a rule the kernel can only apply to every execve. */
const char *policy_api_exec_function(const char *v);

#endif /* PYSB_POLICY_API_H */
