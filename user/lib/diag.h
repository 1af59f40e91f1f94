/* SPDX-License-Identifier: MIT */
/*
 * The one diagnostics channel of the parser and the compiler: each error or warning is a
 * record (file, line, column, message, hint, offending text), collected in a diag_list
 * that the caller owns and then renders: diag_print() as text on stderr (what `run` shows),
 * `check --json` as JSON (user/cli/check.c). Nothing is parsed back from printed text.
 *
 * Two text forms exist, kept as the tool always wrote them: the parser's, like a compiler's
 * ("FILE:LINE:COL: error: MSG" and the offending line under it), and the rest of the tool's
 * ("pysb-bpf: error: FILE:LINE:COL: MSG"; docs/design.md, "The code").
 */
#ifndef PYSB_DIAG_H
#define PYSB_DIAG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum diag_severity {
	DIAG_WARNING,
	DIAG_ERROR,
};

struct diag {
	char *file;	    /* NULL when the message is not tied to a file */
	unsigned line, col; /* 1-based; 0: not known */
	char *text;	    /* offending text (may be truncated for display), or NULL */
	char *msg;	    /* what is wrong; NULL only when memory ran out */
	char *hint;	    /* what to do about it (shown after "; "), or NULL */
	bool tool_form;	    /* "pysb-bpf: error: FILE:LINE:COL: MSG" (else the parser's form) */
};

/* Errors and warnings apart: a caller asks "any error?" without a scan. */
struct diag_list {
	struct diag *errors;
	size_t n_errors;
	struct diag *warnings;
	size_t n_warnings;
};

/* Where a message is about (all zero: nowhere). */
struct diag_at {
	const char *file;
	unsigned line, col;
};

/* A new zeroed record at the end of l's errors or warnings, or NULL (out of memory). */
struct diag *diag_push(struct diag_list *l, enum diag_severity sev);

/*
 * Records one message in the tool's form (the compiler's): at `at`, `hint` (NULL: none).
 * l NULL: printed on stderr at once instead, as pr_err/pr_warn would (log level included),
 * for the callers that only show them. Returns -1 for an error, 0 for a warning, so that
 * `return diag_add(l, DIAG_ERROR, ...)` reads as the failure it reports.
 */
__attribute__((format(printf, 5, 6))) int diag_add(struct diag_list *l, enum diag_severity sev,
						   struct diag_at at, const char *hint,
						   const char *fmt, ...);
int diag_vadd(struct diag_list *l, enum diag_severity sev, struct diag_at at, const char *hint,
	      const char *fmt, va_list ap);

/* One record as text (its offending text on a second line, indented). */
void diag_print_one(FILE *f, enum diag_severity sev, const struct diag *d);
/* Every record: warnings, then errors (the ones that stopped the run, last on screen). */
void diag_print(FILE *f, const struct diag_list *l);
void diag_free(struct diag_list *l);

#endif /* PYSB_DIAG_H */
