/* SPDX-License-Identifier: MIT */
/* Can this kernel enforce? Each check prints one line; `run` refuses when one fails. */
#ifndef PYSB_PROBE_H
#define PYSB_PROBE_H

#include <stdbool.h>
#include <stdio.h>

enum {
	/* Also load and attach the programs (then detach), unless this build's instance is
	 * pinned already: its loaded and attached programs answer the check. */
	PROBE_LOAD = 1 << 0,
	PROBE_FRESH = 1 << 1,	/* with PROBE_LOAD: load a private copy even so */
	PROBE_VERBOSE = 1 << 2, /* a line per check (probe); else only the failing ones (run) */
};

/* Runs the checks (PROBE_* flags). Returns 0 when every check passed. */
int probe_run(unsigned flags);

/* probe --json: the same checks as one JSON document on out,
 * {"ok": BOOL, "checks": [{"status": "ok|FAIL|info|skip", "check", "detail"}...]}.
 * Returns 0 when every check passed. */
int probe_run_json(FILE *out, unsigned flags);

/*
 * The helpers, map types and attach types the BPF side uses, looked up in `btf` (the
 * kernel's): a line for each ("ok ... used for ..." with `verbose`, "... missing (Linux
 * X+), needed for ..." when absent). Returns 0 when the kernel has them all.
 */
struct btf;
int probe_features(const struct btf *btf, bool verbose);

/* The "LSM programs load" failure line, with what to do (EPERM: use a VM). */
void probe_report_load_failure(const char *what, int err, bool verbose);

#endif /* PYSB_PROBE_H */
