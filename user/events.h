/* SPDX-License-Identifier: MIT */
/* Denial events from the BPF ring buffer, rendered for people (stderr) . */
#ifndef PYSB_EVENTS_H
#define PYSB_EVENTS_H

#include <stdio.h>

#include "pysb_abi.h"

/* "read", "write", "read,exec", ... into buf. */
const char *access_str(unsigned access, char *buf, size_t len);
const char *kind_str(unsigned kind);
const char *op_str(unsigned op);

/* The event's path (NUL-terminated), or NULL when it has none. */
const char *event_path(const struct pysb_event *e);

/* One readable line: decision, kind, operation, access, path, pid, tid, comm. */
void event_print_line(FILE *f, const struct pysb_event *e);

/* The compiled policy being enforced, so network denials can name their net= rule. */
struct compiled;
void events_set_compiled(const struct compiled *c);

#endif /* PYSB_EVENTS_H */
