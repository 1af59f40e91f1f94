/* SPDX-License-Identifier: MIT */
/*
 * The names of include/pysb_abi.h's values, in one place, both directions: what events,
 * `check`, learning and the daemon's metrics print and read. A new operation is one row in
 * op_str's table (and, if it names an entry judged on its directory, in op_on_parent's).
 */
#ifndef PYSB_ABI_NAMES_H
#define PYSB_ABI_NAMES_H

#include <stdbool.h>
#include <stddef.h>

/* "read", "write", "read,exec", ... into buf ("none" when no bit). */
const char *access_str(unsigned access, char *buf, size_t len);
const char *kind_str(unsigned kind);
/* Operations of the file, exec, self and capability kinds (enum pysb_op). */
const char *op_str(unsigned op);
/* Operations of kind NET and UNIX events (enum pysb_net_op). */
const char *net_op_str(unsigned op);
/* "ringbuf-full", "no-reader", "preempted" (enum pysb_lost). */
const char *events_lost_name(unsigned reason);

/* "stream", "dgram", "raw", "seqpacket" (SOCK_*), or NULL. */
const char *sock_type_name(unsigned type);

/* The reverse of op_str and net_op_str: the operation named `name`, 0 when none is. */
unsigned op_from_name(const char *name);
/* Does the operation need WRITE on the directory holding the entry it names (create,
 * mkdir, rmdir, unlink, rename, link, symlink), rather than on the entry itself? Learning
 * grants such a denial on the directory. */
bool op_on_parent(unsigned op);

#endif
