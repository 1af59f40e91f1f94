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

/* One readable line: decision, kind, operation, access, path, pid, tid, comm. */
void event_print_line(FILE *f, const struct pysb_event *e);

#endif /* PYSB_EVENTS_H */
