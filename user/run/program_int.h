/* SPDX-License-Identifier: MIT */
/* Program resolution's own parts (user/run/program.c, user/run/shim.c). */
#ifndef PYSB_PROGRAM_INT_H
#define PYSB_PROGRAM_INT_H

#include <stddef.h>

struct program_opts;

/* Reads up to len - 1 bytes of fd into buf, NUL-terminated; the number read. */
size_t program_read_all(int fd, char *buf, size_t len);

/* What `TOOL which NAME` would print for shim `shim` (text: its content), TOOL pyenv or
 * asdf, found by reading their version files (user/run/shim.c): nothing is run. The
 * program's path into out; 0, or -1 after saying what failed. */
int shim_which(const struct program_opts *o, const char *shim, const char *tool, const char *name,
	       const char *text, char *out, size_t len);

#endif /* PYSB_PROGRAM_INT_H */
