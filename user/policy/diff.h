/* SPDX-License-Identifier: MIT */
/* pysb-bpf diff A B: what policy B grants that A does not, and the reverse (docs/faq.md). */
#ifndef PYSB_DIFF_H
#define PYSB_DIFF_H

#include <stdio.h>

struct policy;

/* Prints "+ RULE  (file:line)" for each rule of b not in a, "- RULE  (file:line)" for each
 * rule of a not in b, rules normalised (canonical paths, net fields spelt out), then a
 * summary line. Returns how many lines differ, or -1 (out of memory). */
int policy_diff_print(FILE *out, const struct policy *a, const struct policy *b);

/* The same facts as one JSON document: {"added": [{"rule", "file", "line"}...],
 * "removed": [...], "summary": {"added": N, "removed": N}}. Same return value. */
int policy_diff_json(FILE *out, const struct policy *a, const struct policy *b);

#endif /* PYSB_DIFF_H */
