/* SPDX-License-Identifier: MIT */
/* Program resolution's own parts (user/run/program.c, user/run/shim.c). */
#ifndef PYSB_PROGRAM_INT_H
#define PYSB_PROGRAM_INT_H

#include <stdbool.h>
#include <stddef.h>

struct program_opts;

/* Reads up to len - 1 bytes of fd into buf, NUL-terminated; the number read. */
size_t program_read_all(int fd, char *buf, size_t len);

/* May `TOOL which NAME` run for shim `shim`: neither the shim nor TOOL's installation is
 * something a program of o->policy may have written? False after saying why not. */
bool shim_trusted(const struct program_opts *o, const char *shim, const char *tool,
		  const char *name);

/* `TOOL which NAME` as the program's user, with the shim's exports: the absolute path it
 * prints, into out. 0, or -1 after saying what failed. */
int shim_which(const struct program_opts *o, const char *shim, const char *tool, const char *name,
	       const char *text, char *out, size_t len);

#endif /* PYSB_PROGRAM_INT_H */
