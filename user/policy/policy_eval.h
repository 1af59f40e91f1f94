/* SPDX-License-Identifier: MIT */
/* The eval-* list keys as py-sandboxes' eval_rules checks them (user/policy/policy_eval.c). */
#ifndef PYSB_POLICY_EVAL_H
#define PYSB_POLICY_EVAL_H

#include <stddef.h>

#include "policy.h"

/*
 * Checks the value of a list key (eval-syntax, eval-call, eval-attribute, eval-import,
 * eval-magic). NULL when valid, else a malloc'ed message, *off the offset in v of the
 * offending token.
 */
char *policy_eval_list_error(const char *key, const char *v, size_t *off);

/* The first eval-syntax token of v that only some Python versions know, or NULL; *note
 * says which. */
const char *policy_eval_versioned(const char *v, const char **note);

#endif /* PYSB_POLICY_EVAL_H */
