/* SPDX-License-Identifier: MIT */
/*
 * Capabilities: the bpf.capabilities= parameter (names as capabilities(7) spells them), and
 * what the program pysb-bpf starts keeps of them (docs/policy.md, "Capabilities").
 */
#ifndef PYSB_CAPS_H
#define PYSB_CAPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "policy.h"

/* The number of a capability name: "CAP_NET_BIND_SERVICE", "net_bind_service" (any case,
 * with or without CAP_); -1 when the kernel has no such capability. */
int cap_from_name(const char *name);
/* "CAP_CHOWN" for 0 ...; NULL for a number no capability has. */
const char *cap_name(unsigned cap);

/*
 * The capabilities one bpf.capabilities= line grants, added to *mask (bit N: capability
 * N). An empty value grants nothing; an empty or unknown item is an error said as
 * file:line:col. Returns 0, or -1 after reporting every error into d (NULL: on stderr).
 * The whole policy's: policy_capabilities (compile.h, the bpf.* table).
 */
int caps_value(const struct policy_kv *kv, uint64_t *mask, struct diag_list *d);

/* The i-th (from 0) capability of `mask` that reaches past what the other rules
 * confine (CAP_SYS_ADMIN, CAP_SYS_MODULE, ...), said as check's warning into buf; NULL
 * past the last. */
const char *caps_wide(uint64_t mask, unsigned i, char *buf, size_t len);

/* "CAP_CHOWN,CAP_NET_BIND_SERVICE" (or "none") into buf. */
const char *caps_str(uint64_t mask, char *buf, size_t len);

/*
 * In the child of clone3, before execve (raw system calls only): lock the securebits so
 * root's execve grants nothing (SECBIT_NOROOT, SECBIT_NO_SETUID_FIXUP, both locked), then,
 * when uid != -1, switch to uid/gid/groups, then keep only `keep` in every capability
 * set: bounding, permitted, effective, inheritable, and ambient (so a granted capability
 * survives the execve of an ordinary binary). Returns 0 or an errno.
 */
int caps_drop_in_child(uint64_t keep, uid_t uid, gid_t gid, size_t n_groups, const gid_t *groups);

/* The permitted set of this process, as a mask; 0 if it cannot be read. */
uint64_t caps_permitted(void);

#endif /* PYSB_CAPS_H */
